module B = Httpz.Bigstring

let kind_empty = 0
let kind_file = 1
let kind_absent = 2

let zip_untried = 0
let zip_ready = 1
let zip_refused = 2

type t = {
  mask : int;
  max_file : int;
  max_bytes : int;
  ttl_ms : int;
  mutable bytes : int;
  kinds : int array;
  hashes : int array;
  keys : B.t array;
  key_lens : int array;
  contents : B.t array;
  zipped : B.t array;  (** the gzip form, once made; [empty_buffer] before *)
  zip_states : int array;
  sizes : int array;
  mtimes : int array;
  mtime_nss : int array;
  inos : int array;
  devs : int array;
  checked : int array;  (** monotonic ms of the last check *)
  used : int array;  (** monotonic ms of the last hit, for eviction *)
  notes : int array;  (** the caller's, per key; [-1] when the key is set *)
}

(* Linear probing is bounded: a lookup reads at most [window] slots, and an
   insert into a full window evicts its least recently used entry. *)
let window = 16
let empty_buffer = B.create 0

let create ?(capacity = 4096) ~max_file ~max_bytes ~ttl_ms () =
  if capacity <= 0 || max_file < 0 || max_bytes < 0 || ttl_ms < 0 then
    invalid_arg "File_cache.create";
  let cap = ref window in
  while !cap < capacity do cap := !cap * 2 done;
  let n = !cap in
  { mask = n - 1; max_file; max_bytes; ttl_ms; bytes = 0;
    kinds = Array.make n kind_empty; hashes = Array.make n 0;
    keys = Array.make n empty_buffer; key_lens = Array.make n 0;
    contents = Array.make n empty_buffer; zipped = Array.make n empty_buffer;
    zip_states = Array.make n zip_untried; sizes = Array.make n 0; mtimes = Array.make n 0;
    mtime_nss = Array.make n 0; inos = Array.make n 0; devs = Array.make n 0;
    checked = Array.make n 0; used = Array.make n 0; notes = Array.make n (-1) }

let enabled t = t.max_file > 0
let max_file t = t.max_file
let bytes t = t.bytes

(* Bytes [i .. len-1] of [p] (fewer than 8) as one int, first byte
   lowest: a single load when [p] has 8 bytes at [i] (a key buffer always
   has, see [set_key]), else byte by byte. The same value either way, so
   a key hashes and compares alike in any buffer. *)
let[@inline] tail (p : B.t) i len =
  if (not Sys.big_endian) && i + 8 <= B.length p then
    Int64.to_int (Int64.logand (B.unsafe_get64 p i) (Int64.pred (Int64.shift_left 1L (8 * (len - i)))))
  else begin
    let v = ref 0 in
    for j = len - 1 downto i do v := (!v lsl 8) lor Char.code (B.unsafe_get p j) done;
    !v
  end

(* FNV-1a on OCaml's 63-bit ints (offset basis with its top bit dropped),
   eight bytes a step, the last few as one more. *)
let hash (p : B.t) len =
  let h = ref 0x4bf29ce484222325 and i = ref 0 in
  while !i + 8 <= len do
    h := (!h lxor Int64.to_int (B.unsafe_get64 p !i)) * 0x100000001b3;
    h := !h lxor (!h lsr 29);
    i := !i + 8
  done;
  if !i < len then begin
    h := (!h lxor tail p !i len) * 0x100000001b3;
    h := !h lxor (!h lsr 29)
  end;
  !h land max_int

let same_key t slot (p : B.t) len =
  Array.unsafe_get t.key_lens slot = len
  && begin
    let k = Array.unsafe_get t.keys slot in
    let i = ref 0 in
    while !i + 8 <= len && (B.unsafe_get64 k !i : int64) = B.unsafe_get64 p !i do i := !i + 8 done;
    !i + 8 > len && tail k !i len = tail p !i len
  end

let find t p ~len =
  if t.max_file = 0 then -1
  else begin
    let h = hash p len in
    let found = ref (-1) and i = ref 0 in
    (* The whole window is read, empty slots included: an insert that fails
       after claiming a slot may leave a hole before other entries. *)
    while !i < window do
      let slot = (h + !i) land t.mask in
      let k = Array.unsafe_get t.kinds slot in
      if k <> kind_empty && Array.unsafe_get t.hashes slot = h && same_key t slot p len then begin
        found := slot; i := window
      end
      else incr i
    done;
    !found
  end

let fresh t slot ~now_ms = now_ms - Array.unsafe_get t.checked slot < t.ttl_ms
let is_absent t slot = Array.unsafe_get t.kinds slot = kind_absent
let content t slot = Array.unsafe_get t.contents slot
let size t slot = Array.unsafe_get t.sizes slot
let mtime_s t slot = Array.unsafe_get t.mtimes slot
let mtime_ns t slot = Array.unsafe_get t.mtime_nss slot

let touch t slot ~now_ms = Array.unsafe_set t.used slot now_ms

let revalidate t slot st ~now_ms =
  if Array.unsafe_get t.kinds slot = kind_file
  && Syscall.stat_is_regular st
  && Syscall.stat_ino st = Array.unsafe_get t.inos slot
  && Syscall.stat_dev st = Array.unsafe_get t.devs slot
  && Syscall.stat_size st = Array.unsafe_get t.sizes slot
  && Syscall.stat_mtime_s st = Array.unsafe_get t.mtimes slot
  && Syscall.stat_mtime_ns st = Array.unsafe_get t.mtime_nss slot
  then begin
    Array.unsafe_set t.checked slot now_ms;
    touch t slot ~now_ms;
    true
  end
  else false

(* The slot for [p]: its own if present, else an empty one in the window,
   else the window's least recently used, whose contents are released. *)
let claim t p len h =
  let existing = ref (-1) and empty = ref (-1) and lru = ref (-1) in
  for i = 0 to window - 1 do
    let slot = (h + i) land t.mask in
    let k = t.kinds.(slot) in
    if k = kind_empty then (if !empty < 0 then empty := slot)
    else if !existing < 0 && t.hashes.(slot) = h && same_key t slot p len then existing := slot
    else if !lru < 0 || t.used.(slot) < t.used.(!lru) then lru := slot
  done;
  (* The entry itself if present, else an empty slot, else evict. *)
  let slot = if !existing >= 0 then !existing else if !empty >= 0 then !empty else !lru in
  if t.kinds.(slot) = kind_file then
    t.bytes <- t.bytes - t.sizes.(slot) - B.length t.zipped.(slot);
  t.kinds.(slot) <- kind_empty;
  t.contents.(slot) <- empty_buffer;
  t.zipped.(slot) <- empty_buffer;
  t.zip_states.(slot) <- zip_untried;
  slot

let set_key t slot p len h =
  (* 7 bytes of slack: [tail] reads the key's last bytes as one word. *)
  let k = B.create (len + 7) in
  B.blit ~src:p ~src_off:0 ~dst:k ~dst_off:0 ~len;
  t.keys.(slot) <- k;
  t.key_lens.(slot) <- len;
  t.hashes.(slot) <- h;
  t.notes.(slot) <- -1

(* Reads [size] bytes from [fd]'s current position into [dst]; [false] on
   a short read or an error (the file changed, or was truncated). *)
let read_all fd (dst : B.t) size =
  let got = ref 0 and ok = ref true in
  while !ok && !got < size do
    let n = Syscall.read fd dst !got (size - !got) in
    if n > 0 then got := !got + n
    else if n = - Syscall.eintr then ()
    else ok := false
  done;
  !ok

let insert t p ~len ~fd st ~now_ms =
  let size = Syscall.stat_size st in
  if t.max_file = 0 || size > t.max_file || not (Syscall.stat_is_regular st) then -1
  else begin
    let h = hash p len in
    let slot = claim t p len h in
    if t.bytes + size > t.max_bytes then -1
    else begin
      let content = B.create size in
      if not (read_all fd content size) then -1
      else begin
        set_key t slot p len h;
        t.contents.(slot) <- content;
        t.sizes.(slot) <- size;
        t.mtimes.(slot) <- Syscall.stat_mtime_s st;
        t.mtime_nss.(slot) <- Syscall.stat_mtime_ns st;
        t.inos.(slot) <- Syscall.stat_ino st;
        t.devs.(slot) <- Syscall.stat_dev st;
        t.checked.(slot) <- now_ms;
        t.used.(slot) <- now_ms;
        t.kinds.(slot) <- kind_file;
        t.bytes <- t.bytes + size;
        slot
      end
    end
  end

let note t slot = Array.unsafe_get t.notes slot
let set_note t slot v = t.notes.(slot) <- v

let zipped t slot = Array.unsafe_get t.zipped slot
let zip_state t slot = Array.unsafe_get t.zip_states slot

let set_zipped t slot z =
  if t.kinds.(slot) = kind_file && t.zip_states.(slot) = zip_untried then
    if B.length z < t.sizes.(slot) && t.bytes + B.length z <= t.max_bytes then begin
      t.zipped.(slot) <- z;
      t.zip_states.(slot) <- zip_ready;
      t.bytes <- t.bytes + B.length z
    end
    else t.zip_states.(slot) <- zip_refused

let refuse_zip t slot = if t.kinds.(slot) = kind_file then t.zip_states.(slot) <- zip_refused

let insert_absent t p ~len ~now_ms =
  if t.max_file > 0 then begin
    let h = hash p len in
    let slot = claim t p len h in
    (* Refreshing the entry (once per TTL for a sidecar that stays absent)
       keeps its key: nothing allocated. *)
    if same_key t slot p len then t.hashes.(slot) <- h else set_key t slot p len h;
    t.sizes.(slot) <- 0;
    t.checked.(slot) <- now_ms;
    t.used.(slot) <- now_ms;
    t.kinds.(slot) <- kind_absent
  end
