type t = (char, Bigarray.int8_unsigned_elt, Bigarray.c_layout) Bigarray.Array1.t

external unsafe_get : t -> int -> char = "%caml_ba_unsafe_ref_1"
external unsafe_set : t -> int -> char -> unit = "%caml_ba_unsafe_set_1"
external unsafe_get64 : t -> int -> int64 = "%caml_bigstring_get64u"
external unsafe_set64 : t -> int -> int64 -> unit = "%caml_bigstring_set64u"
external string_get64 : string -> int -> int64 = "%caml_string_get64u"

let create n = Bigarray.Array1.create Bigarray.char Bigarray.c_layout n
let length (b : t) = Bigarray.Array1.dim b

let unsafe_blit_from_string s ~src_off (b : t) ~dst_off ~len =
  let i = ref 0 in
  while !i + 8 <= len do
    unsafe_set64 b (dst_off + !i) (string_get64 s (src_off + !i));
    i := !i + 8
  done;
  while !i < len do
    unsafe_set b (dst_off + !i) (String.unsafe_get s (src_off + !i));
    incr i
  done

let blit_from_string s ~src_off b ~dst_off ~len =
  if len < 0 || src_off < 0 || src_off > String.length s - len
     || dst_off < 0 || dst_off > length b - len
  then invalid_arg "Bigstring.blit_from_string";
  unsafe_blit_from_string s ~src_off b ~dst_off ~len

let of_string s =
  let b = create (String.length s) in
  unsafe_blit_from_string s ~src_off:0 b ~dst_off:0 ~len:(String.length s);
  b

let sub_string (b : t) ~off ~len =
  if len < 0 || off < 0 || off > length b - len then invalid_arg "Bigstring.sub_string";
  let s = Bytes.create len in
  for i = 0 to len - 1 do
    Bytes.unsafe_set s i (unsafe_get b (off + i))
  done;
  Bytes.unsafe_to_string s

let to_string b = sub_string b ~off:0 ~len:(length b)

let blit ~(src : t) ~src_off ~(dst : t) ~dst_off ~len =
  if len < 0 || src_off < 0 || src_off > length src - len
     || dst_off < 0 || dst_off > length dst - len
  then invalid_arg "Bigstring.blit";
  (* Bigarray.Array1.blit on sub-views is memmove, but [sub] allocates two
     proxies; for the short copies httpz makes a loop is cheaper and
     allocation-free. Copy backwards when the destination overlaps ahead. *)
  if src == dst && dst_off > src_off && dst_off < src_off + len then
    for i = len - 1 downto 0 do
      unsafe_set dst (dst_off + i) (unsafe_get src (src_off + i))
    done
  else begin
    let i = ref 0 in
    while !i + 8 <= len do
      unsafe_set64 dst (dst_off + !i) (unsafe_get64 src (src_off + !i));
      i := !i + 8
    done;
    while !i < len do
      unsafe_set dst (dst_off + !i) (unsafe_get src (src_off + !i));
      incr i
    done
  end

let check_range fn (b : t) ~off ~len =
  if off < 0 || len < 0 || off > length b - len then invalid_arg fn

let index_from (b : t) ~off ~stop c =
  let i = ref off in
  while !i < stop && unsafe_get b !i <> c do incr i done;
  if !i < stop then !i else -1

let equal_string (b : t) ~off ~len s =
  len = String.length s
  && begin
    let i = ref 0 in
    while !i < len && unsafe_get b (off + !i) = String.unsafe_get s !i do incr i done;
    !i = len
  end

let[@inline] lower c = if c >= 'A' && c <= 'Z' then Char.unsafe_chr (Char.code c + 32) else c

let equal_caseless (b : t) ~off ~len s =
  len = String.length s
  && begin
    let i = ref 0 in
    while !i < len && lower (unsafe_get b (off + !i)) = lower (String.unsafe_get s !i) do
      incr i
    done;
    !i = len
  end
