type t = (char, Bigarray.int8_unsigned_elt, Bigarray.c_layout) Bigarray.Array1.t

external unsafe_get : t -> int -> char = "%caml_ba_unsafe_ref_1"
external unsafe_set : t -> int -> char -> unit = "%caml_ba_unsafe_set_1"
external unsafe_get64 : t -> int -> int64 = "%caml_bigstring_get64u"
external unsafe_set64 : t -> int -> int64 -> unit = "%caml_bigstring_set64u"
external string_get64 : string -> int -> int64 = "%caml_string_get64u"
external unsafe_set32 : t -> int -> int32 -> unit = "%caml_bigstring_set32u"
external string_get32 : string -> int -> int32 = "%caml_string_get32u"

(* memmove/memcpy in C (lib/core/simd_stubs.c): a call costs a few dozen
   instructions, so copies of at least [c_copy_min] bytes go there and
   shorter ones stay in the OCaml loops (8 bytes at a time). *)
external c_memmove : t -> (int[@untagged]) -> t -> (int[@untagged]) -> (int[@untagged]) -> unit
  = "httpz_bigstring_memmove_byte" "httpz_bigstring_memmove"
  [@@noalloc]

external c_copy_from_string : string -> (int[@untagged]) -> t -> (int[@untagged]) -> (int[@untagged]) -> unit
  = "httpz_bigstring_of_string_copy_byte" "httpz_bigstring_of_string_copy"
  [@@noalloc]

let c_copy_min = 64

let create n = Bigarray.Array1.create Bigarray.char Bigarray.c_layout n
let length (b : t) = Bigarray.Array1.dim b

let unsafe_blit_from_string s ~src_off (b : t) ~dst_off ~len =
  if len >= c_copy_min then c_copy_from_string s src_off b dst_off len
  else
  if len >= 8 then begin
    (* Whole words, the last one overlapping those before: no byte tail. *)
    let i = ref 0 in
    while !i + 8 < len do
      unsafe_set64 b (dst_off + !i) (string_get64 s (src_off + !i));
      i := !i + 8
    done;
    unsafe_set64 b (dst_off + len - 8) (string_get64 s (src_off + len - 8))
  end
  else if len >= 4 then begin
    unsafe_set32 b dst_off (string_get32 s src_off);
    unsafe_set32 b (dst_off + len - 4) (string_get32 s (src_off + len - 4))
  end
  else
    for i = 0 to len - 1 do
      unsafe_set b (dst_off + i) (String.unsafe_get s (src_off + i))
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
     proxies: longer copies call memmove directly, short ones loop (copying
     backwards when the destination overlaps ahead). *)
  if len >= c_copy_min then c_memmove src src_off dst dst_off len
  else if src == dst && dst_off > src_off && dst_off < src_off + len then
    for i = len - 1 downto 0 do
      unsafe_set dst (dst_off + i) (unsafe_get src (src_off + i))
    done
  else if len >= 8 && src != dst then begin
    (* Whole words, the last one overlapping those before: no byte tail
       (distinct buffers only: within one, it could read bytes just
       written). *)
    let i = ref 0 in
    while !i + 8 < len do
      unsafe_set64 dst (dst_off + !i) (unsafe_get64 src (src_off + !i));
      i := !i + 8
    done;
    unsafe_set64 dst (dst_off + len - 8) (unsafe_get64 src (src_off + len - 8))
  end
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

(* Do eight bytes agree ignoring ASCII case? They may differ only in bit
   0x20 of bytes that are letters (x's byte with 0x20 set is 'a'..'z', so
   y's is the same letter in the other case). Per-byte arithmetic with no
   carry between bytes, so it holds in either byte order. *)
let[@inline] words_equal_caseless (x : int64) (y : int64) =
  let d = Int64.logxor x y in
  (d : int64) = 0L
  || (Int64.logand d 0xDFDFDFDFDFDFDFDFL : int64) = 0L
     && (let z = Int64.logor x 0x2020202020202020L in
         let low = Int64.logand z 0x7F7F7F7F7F7F7F7FL in
         (* 0x80 where low >= 'a' (0x61), where low >= '{' (0x7b), and
            where z has its top bit (not ASCII). *)
         let ge_a = Int64.add low 0x1F1F1F1F1F1F1F1FL in
         let ge_brace = Int64.add low 0x0505050505050505L in
         let letter =
           Int64.logand (Int64.logand ge_a (Int64.lognot ge_brace))
             (Int64.logand (Int64.lognot z) 0x8080808080808080L)
         in
         (Int64.logand (Int64.shift_left d 2) (Int64.lognot letter) : int64) = 0L)

let equal_caseless (b : t) ~off ~len s =
  len = String.length s
  && begin
    if len >= 8 then begin
      (* Whole words, the last one overlapping the one before. *)
      let i = ref 0 and ok = ref true in
      while !ok && !i + 8 < len do
        ok := words_equal_caseless (unsafe_get64 b (off + !i)) (string_get64 s !i);
        i := !i + 8
      done;
      !ok && words_equal_caseless (unsafe_get64 b (off + len - 8)) (string_get64 s (len - 8))
    end else begin
      let i = ref 0 in
      while !i < len && lower (unsafe_get b (off + !i)) = lower (String.unsafe_get s !i) do
        incr i
      done;
      !i = len
    end
  end
