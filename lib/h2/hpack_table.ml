(* Stdlib's min and max compare polymorphically (a C call) unless inlined. *)
let[@inline] min (a : int) b = if a < b then a else b
let[@inline] max (a : int) b = if a > b then a else b

type t = {
  ring : Bigstring.t;
  capacity : int;
  max_slots : int;
  mutable slots : int;
  mutable offs : int array;  (** ring offset of the entry's name; its value follows *)
  mutable name_lens : int array;
  mutable value_lens : int array;
  mutable header_names : Header_name.t array;
  mutable pseudos : Hpack_static.pseudo array;
  mutable marks : int array;  (** the caller's facts about the entry; 0 when added *)
  mutable oldest : int;  (** slot of the oldest entry *)
  mutable count : int;
  mutable size : int;
  mutable max_size : int;
  mutable write : int;  (** ring offset where the next entry's bytes go *)
}

let entry_overhead = 32

let initial_slots = 8

let create ~capacity =
  if capacity < 0 then invalid_arg "Hpack_table.create";
  let max_slots = (capacity / entry_overhead) + 1 in
  let slots = min max_slots initial_slots in
  { ring = Bigstring.create (max capacity 1); capacity; max_slots; slots;
    offs = Array.make slots 0; name_lens = Array.make slots 0; value_lens = Array.make slots 0;
    header_names = Array.make slots Header_name.Other;
    pseudos = Array.make slots Hpack_static.Regular; marks = Array.make slots 0;
    oldest = 0; count = 0; size = 0; max_size = capacity; write = 0 }

let length t = t.count
let size t = t.size
let max_size t = t.max_size
let capacity t = t.capacity

let clear t = t.oldest <- 0; t.count <- 0; t.size <- 0; t.write <- 0

let evict_oldest t =
  let s = t.oldest in
  t.size <- t.size - (Array.unsafe_get t.name_lens s + Array.unsafe_get t.value_lens s + entry_overhead);
  t.oldest <- (if s + 1 = t.slots then 0 else s + 1);
  t.count <- t.count - 1;
  if t.count = 0 then t.write <- 0

let evict_to t limit = while t.count > 0 && t.size > limit do evict_oldest t done

let set_max_size t n =
  if n < 0 || n > t.capacity then invalid_arg "Hpack_table.set_max_size";
  t.max_size <- n;
  evict_to t n

let[@inline] slot t i =
  let s = t.oldest + t.count - i in
  if s >= t.slots then s - t.slots else s

(* Copies [len] bytes into the ring at [pos], wrapping at its end. *)
let copy_in t src ~src_off ~pos ~len =
  let first = min len (t.capacity - pos) in
  Bigstring.blit ~src ~src_off ~dst:t.ring ~dst_off:pos ~len:first;
  if first < len then
    Bigstring.blit ~src ~src_off:(src_off + first) ~dst:t.ring ~dst_off:0 ~len:(len - first)

external unsafe_get32 : Bigstring.t -> int -> int32 = "%caml_bigstring_get32u"
external unsafe_set32 : Bigstring.t -> int -> int32 -> unit = "%caml_bigstring_set32u"

(* Up to 32 bytes between distinct buffers, ranges unchecked: whole
   words, the last one overlapping the one before, with no loop (a loop
   would poll for the GC, and the caller would reload all it holds in
   registers after it). *)
let[@inline] copy_short (src : Bigstring.t) ~src_off (dst : Bigstring.t) ~dst_off ~len =
  if len >= 8 then begin
    Bigstring.unsafe_set64 dst dst_off (Bigstring.unsafe_get64 src src_off);
    if len > 16 then begin
      Bigstring.unsafe_set64 dst (dst_off + 8) (Bigstring.unsafe_get64 src (src_off + 8));
      if len > 24 then
        Bigstring.unsafe_set64 dst (dst_off + 16) (Bigstring.unsafe_get64 src (src_off + 16))
    end;
    Bigstring.unsafe_set64 dst (dst_off + len - 8) (Bigstring.unsafe_get64 src (src_off + len - 8))
  end
  else begin
    if len >= 4 then begin
      unsafe_set32 dst dst_off (unsafe_get32 src src_off);
      unsafe_set32 dst (dst_off + len - 4) (unsafe_get32 src (src_off + len - 4))
    end
    else if len > 0 then begin
      Bigstring.unsafe_set dst dst_off (Bigstring.unsafe_get src src_off);
      Bigstring.unsafe_set dst (dst_off + len - 1) (Bigstring.unsafe_get src (src_off + len - 1));
      if len = 3 then Bigstring.unsafe_set dst (dst_off + 1) (Bigstring.unsafe_get src (src_off + 1))
    end
  end

let[@inline] copy_bytes src ~src_off dst ~dst_off ~len =
  if len <= 32 then copy_short src ~src_off dst ~dst_off ~len
  else Bigstring.blit ~src ~src_off ~dst ~dst_off ~len

let copy_out t ~pos ~len dst ~dst_off =
  let first = min len (t.capacity - pos) in
  Bigstring.blit ~src:t.ring ~src_off:pos ~dst ~dst_off ~len:first;
  if first < len then
    Bigstring.blit ~src:t.ring ~src_off:0 ~dst ~dst_off:(dst_off + first) ~len:(len - first)

(* [copy_out] for a [dst] range the caller has checked. *)
let[@inline] copy_out_unchecked t ~pos ~len dst ~dst_off =
  if pos + len <= t.capacity && len <= 32 then copy_short t.ring ~src_off:pos dst ~dst_off ~len
  else copy_out t ~pos ~len dst ~dst_off

let[@inline] wrap t pos = if pos >= t.capacity then pos - t.capacity else pos

(* §4.4: evict until the entry fits; an entry larger than the table
   empties it and is not added. The bytes are read before the write
   position is taken, but they are never in the ring: callers pass copies
   held elsewhere (the decoder's output), so an evicted entry whose name is
   being reused cannot be overwritten under our feet. Live bytes are at
   most [max_size - 32 * count], so the new bytes land on free ring. *)
(* All slots hold entries: twice as many (up to [max_slots]), the entries
   laid out again from slot 0, oldest first. The byte ring stays. *)
let grow t =
  let n = min t.max_slots (2 * t.slots) in
  let move a fill =
    let b = Array.make n fill in
    for k = 0 to t.count - 1 do
      let s = t.oldest + k in
      Array.unsafe_set b k (Array.unsafe_get a (if s >= t.slots then s - t.slots else s))
    done;
    b
  in
  t.offs <- move t.offs 0;
  t.name_lens <- move t.name_lens 0;
  t.value_lens <- move t.value_lens 0;
  t.header_names <- move t.header_names Header_name.Other;
  t.pseudos <- move t.pseudos Hpack_static.Regular;
  t.marks <- move t.marks 0;
  t.oldest <- 0;
  t.slots <- n

let add t src ~name_off ~name_len ~value_off ~value_len header_name pseudo =
  let esize = name_len + value_len + entry_overhead in
  evict_to t (t.max_size - esize);
  if esize <= t.max_size then begin
    if t.count = t.slots then grow t;
    let s = slot t 0 in
    let pos = t.write in
    Array.unsafe_set t.offs s pos;
    Array.unsafe_set t.name_lens s name_len;
    Array.unsafe_set t.value_lens s value_len;
    Array.unsafe_set t.header_names s header_name;
    Array.unsafe_set t.pseudos s pseudo;
    Array.unsafe_set t.marks s 0;
    copy_in t src ~src_off:name_off ~pos ~len:name_len;
    copy_in t src ~src_off:value_off ~pos:(wrap t (pos + name_len)) ~len:value_len;
    t.write <- wrap t (pos + name_len + value_len);
    t.count <- t.count + 1;
    t.size <- t.size + esize
  end

let name_len t i = Array.unsafe_get t.name_lens (slot t i)
let value_len t i = Array.unsafe_get t.value_lens (slot t i)
let header_name t i = Array.unsafe_get t.header_names (slot t i)
let pseudo t i = Array.unsafe_get t.pseudos (slot t i)
let marks t i = Array.unsafe_get t.marks (slot t i)
let set_marks t i m = Array.unsafe_set t.marks (slot t i) m

let copy_name t i dst ~dst_off =
  let s = slot t i in
  copy_out t ~pos:(Array.unsafe_get t.offs s) ~len:(Array.unsafe_get t.name_lens s) dst ~dst_off

let copy_value t i dst ~dst_off =
  let s = slot t i in
  let pos = wrap t (Array.unsafe_get t.offs s + Array.unsafe_get t.name_lens s) in
  copy_out t ~pos ~len:(Array.unsafe_get t.value_lens s) dst ~dst_off

let[@inline] slot_of t i = slot t i
let[@inline] name_len_at t s = Array.unsafe_get t.name_lens s
let[@inline] value_len_at t s = Array.unsafe_get t.value_lens s
let[@inline] header_name_at t s = Array.unsafe_get t.header_names s
let[@inline] pseudo_at t s = Array.unsafe_get t.pseudos s
let[@inline] marks_at t s = Array.unsafe_get t.marks s

let copy_at t s dst ~dst_off ~len =
  copy_out_unchecked t ~pos:(Array.unsafe_get t.offs s) ~len dst ~dst_off

let equal_at t ~pos b ~off ~len =
  let i = ref 0 and p = ref pos in
  while !i < len && Bigstring.unsafe_get t.ring !p = Bigstring.unsafe_get b (off + !i) do
    incr i;
    incr p;
    if !p = t.capacity then p := 0
  done;
  !i = len

let find t b ~name_off ~name_len ~value_off ~value_len =
  let found = ref 0 and i = ref 1 in
  while !i <= t.count do
    let s = slot t !i in
    if Array.unsafe_get t.name_lens s = name_len
       && equal_at t ~pos:(Array.unsafe_get t.offs s) b ~off:name_off ~len:name_len
    then begin
      if Array.unsafe_get t.value_lens s = value_len
         && equal_at t ~pos:(wrap t (Array.unsafe_get t.offs s + name_len)) b ~off:value_off
              ~len:value_len
      then begin found := !i; i := max_int - 1 end
      else if !found = 0 then found := - !i
    end;
    incr i
  done;
  !found

let entry t i =
  let b = Bigstring.create (name_len t i + value_len t i) in
  copy_name t i b ~dst_off:0;
  copy_value t i b ~dst_off:(name_len t i);
  (Bigstring.sub_string b ~off:0 ~len:(name_len t i),
   Bigstring.sub_string b ~off:(name_len t i) ~len:(value_len t i))
