module B = Bigstring
module E = Hpack_encoder
module P = Prepared_fields

let ring_entries = 64
let memo_size = 8 (* [find] is unrolled for eight *)

type t = {
  ring : Bytes.t;
      (** live entries' sizes, two bytes each (an entry is at most the
          table's size, 4096 bytes), oldest at [first] *)
  mutable first : int;
  mutable live : int;
  mutable size : int;
  mutable max_size : int;
  mutable inserted : int;  (** entries ever inserted: the newest is number [inserted] *)
  mutable pending : int;  (** a size update to write, or [-1] *)
  mutable dirty : bool;  (** a block since [start_block] inserted *)
  mutable off : bool;
  memo_sets : P.t array;
  memo_versions : int array;
  memo_first : int array;  (** insertion number of the set's first inserted field *)
  memo_used : int array;  (** [uses] when the entry last served: the least is replaced *)
  mutable uses : int;
}

let no_set = P.create ~capacity:0 ()

let create () =
  { ring = Bytes.make (2 * ring_entries) '\000'; first = 0; live = 0; size = 0;
    max_size = H2_settings.default_header_table_size; inserted = 0; pending = -1; dirty = false;
    off = false; memo_sets = Array.make memo_size no_set; memo_versions = Array.make memo_size 0;
    memo_first = Array.make memo_size 0; memo_used = Array.make memo_size 0; uses = 0 }

let reset t =
  t.first <- 0; t.live <- 0; t.size <- 0; t.max_size <- H2_settings.default_header_table_size;
  t.inserted <- 0; t.pending <- -1; t.dirty <- false; t.off <- false;
  (* Versions of sets are not reused: the old memo could only name
     entries this connection never got. *)
  for i = 0 to memo_size - 1 do
    if Array.unsafe_get t.memo_sets i != no_set then t.memo_sets.(i) <- no_set;
    t.memo_versions.(i) <- 0;
    t.memo_first.(i) <- 0;
    t.memo_used.(i) <- 0
  done;
  t.uses <- 0

let evict_one t =
  t.size <- t.size - Bytes.get_uint16_le t.ring (2 * t.first);
  t.first <- (t.first + 1) land (ring_entries - 1);
  t.live <- t.live - 1

(* The caller checked [s <= t.max_size]. *)
let insert t s =
  while t.size + s > t.max_size || t.live = ring_entries do evict_one t done;
  Bytes.set_uint16_le t.ring (2 * ((t.first + t.live) land (ring_entries - 1))) s;
  t.live <- t.live + 1;
  t.size <- t.size + s;
  t.inserted <- t.inserted + 1

let set_peer_max t n =
  if n >= 0 && n < t.max_size then begin
    t.max_size <- n;
    while t.size > n do evict_one t done;
    t.pending <- n
  end

let start_block t buf ~off =
  (* The block before inserted and was never sent (abandoned: a field
     that did not fit): the peer's table is behind. *)
  if t.dirty then t.off <- true;
  t.dirty <- false;
  if t.pending < 0 then off
  else begin
    if E.integer_length t.pending ~prefix:5 > B.length buf - off then raise_notrace E.No_space;
    let o = E.encode_integer buf ~off ~prefix:5 ~first:0x20 t.pending in
    t.pending <- -1;
    o
  end

let copy buf off src len =
  if len > B.length buf - off then raise_notrace E.No_space;
  B.blit ~src ~src_off:0 ~dst:buf ~dst_off:off ~len;
  off + len

(* Every field as an index: static ones as written, inserted ones from
   number [first] on. An index of the dynamic table is at most 61 + 64,
   so at most two bytes. *)
let indices t buf off p ~first =
  let n = P.count p in
  if 2 * n > B.length buf - off then raise_notrace E.No_space;
  let top = Hpack_static.length + 1 + t.inserted - first in
  if P.inserted p = n && top <= 126 then begin
    (* No static field, every index one byte: they count down from [top]. *)
    if n <= 8 && 8 <= B.length buf - off && not Sys.big_endian then begin
      (* All eight bytes in one store: byte [i] is [0x80 + top - i], and
         [top - i] > 0 for every [i < 8] ([top] is at least [61 + n]), so
         no byte borrows from the next. The bytes past [n] are free space. *)
      B.unsafe_set64 buf off (Int64.sub (Int64.mul (Int64.of_int (0x80 + top)) 0x0101010101010101L) 0x0706050403020100L);
      off + n
    end
    else begin
    for i = 0 to n - 1 do
      B.unsafe_set buf (off + i) (Char.unsafe_chr (0x80 lor (top - i)))
    done;
    off + n
    end
  end
  else
  let o = ref off and a = ref first in
  for i = 0 to n - 1 do
    if P.entry_size p i = 0 then begin
      let s = P.field_start p i in
      let len = P.field_start p (i + 1) - s in
      B.blit ~src:(P.hpack p) ~src_off:s ~dst:buf ~dst_off:!o ~len;
      o := !o + len
    end
    else begin
      o := E.indexed buf ~off:!o (Hpack_static.length + 1 + t.inserted - !a);
      incr a
    end
  done;
  !o

(* The memo entry of [p], or [-1]. A search, not a slot by id: the few
   sets a server sends on every response (its own head, a file's) must
   not push one another out whatever their ids. Unrolled: a hit is one
   load and compare per set ahead of it. *)
let find t p =
  let s = t.memo_sets in
  if Array.unsafe_get s 0 == p then 0
  else if Array.unsafe_get s 1 == p then 1
  else if Array.unsafe_get s 2 == p then 2
  else if Array.unsafe_get s 3 == p then 3
  else if Array.unsafe_get s 4 == p then 4
  else if Array.unsafe_get s 5 == p then 5
  else if Array.unsafe_get s 6 == p then 6
  else if Array.unsafe_get s 7 == p then 7
  else -1

(* The least recently used entry, to be replaced. *)
let victim t =
  let m = ref 0 in
  for j = 1 to memo_size - 1 do
    if Array.unsafe_get t.memo_used j < Array.unsafe_get t.memo_used !m then m := j
  done;
  !m

let[@inline] touch t m =
  let u = t.uses + 1 in
  t.uses <- u;
  Array.unsafe_set t.memo_used m u

let block t buf ~off p =
  if t.off || P.inserted p = 0 || P.inserted p > ring_entries || P.table_size p > t.max_size then copy buf off (P.hpack p) (P.hpack_length p)
  else
  let m = find t p in
  if m >= 0 && Array.unsafe_get t.memo_versions m = P.version p && Array.unsafe_get t.memo_first m > t.inserted - t.live
  then begin
    touch t m;
    indices t buf off p ~first:(Array.unsafe_get t.memo_first m)
  end
  else begin
    let o = copy buf off (P.indexed p) (P.indexed_length p) in
    let m = if m >= 0 then m else victim t in
    let first = t.inserted + 1 in
    for i = 0 to P.count p - 1 do
      let s = P.entry_size p i in
      if s > 0 then insert t s
    done;
    t.dirty <- true;
    touch t m;
    if Array.unsafe_get t.memo_sets m != p then t.memo_sets.(m) <- p;
    t.memo_versions.(m) <- P.version p;
    t.memo_first.(m) <- first;
    o
  end

let inserted_since_start t = t.dirty
let sent t = t.dirty <- false
let disable t = t.off <- true
let enabled t = not t.off
