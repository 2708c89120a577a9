(* RFC 7541 Appendix B: (code, bit length) for symbols 0-255 and EOS (256),
   code right-aligned. The one hand-copied part; everything else is derived. *)
let code_table = [|
  0x1ff8; 13; 0x7fffd8; 23; 0xfffffe2; 28; 0xfffffe3; 28;
  0xfffffe4; 28; 0xfffffe5; 28; 0xfffffe6; 28; 0xfffffe7; 28;
  0xfffffe8; 28; 0xffffea; 24; 0x3ffffffc; 30; 0xfffffe9; 28;
  0xfffffea; 28; 0x3ffffffd; 30; 0xfffffeb; 28; 0xfffffec; 28;
  0xfffffed; 28; 0xfffffee; 28; 0xfffffef; 28; 0xffffff0; 28;
  0xffffff1; 28; 0xffffff2; 28; 0x3ffffffe; 30; 0xffffff3; 28;
  0xffffff4; 28; 0xffffff5; 28; 0xffffff6; 28; 0xffffff7; 28;
  0xffffff8; 28; 0xffffff9; 28; 0xffffffa; 28; 0xffffffb; 28;
  0x14; 6; 0x3f8; 10; 0x3f9; 10; 0xffa; 12;
  0x1ff9; 13; 0x15; 6; 0xf8; 8; 0x7fa; 11;
  0x3fa; 10; 0x3fb; 10; 0xf9; 8; 0x7fb; 11;
  0xfa; 8; 0x16; 6; 0x17; 6; 0x18; 6;
  0x0; 5; 0x1; 5; 0x2; 5; 0x19; 6;
  0x1a; 6; 0x1b; 6; 0x1c; 6; 0x1d; 6;
  0x1e; 6; 0x1f; 6; 0x5c; 7; 0xfb; 8;
  0x7ffc; 15; 0x20; 6; 0xffb; 12; 0x3fc; 10;
  0x1ffa; 13; 0x21; 6; 0x5d; 7; 0x5e; 7;
  0x5f; 7; 0x60; 7; 0x61; 7; 0x62; 7;
  0x63; 7; 0x64; 7; 0x65; 7; 0x66; 7;
  0x67; 7; 0x68; 7; 0x69; 7; 0x6a; 7;
  0x6b; 7; 0x6c; 7; 0x6d; 7; 0x6e; 7;
  0x6f; 7; 0x70; 7; 0x71; 7; 0x72; 7;
  0xfc; 8; 0x73; 7; 0xfd; 8; 0x1ffb; 13;
  0x7fff0; 19; 0x1ffc; 13; 0x3ffc; 14; 0x22; 6;
  0x7ffd; 15; 0x3; 5; 0x23; 6; 0x4; 5;
  0x24; 6; 0x5; 5; 0x25; 6; 0x26; 6;
  0x27; 6; 0x6; 5; 0x74; 7; 0x75; 7;
  0x28; 6; 0x29; 6; 0x2a; 6; 0x7; 5;
  0x2b; 6; 0x76; 7; 0x2c; 6; 0x8; 5;
  0x9; 5; 0x2d; 6; 0x77; 7; 0x78; 7;
  0x79; 7; 0x7a; 7; 0x7b; 7; 0x7ffe; 15;
  0x7fc; 11; 0x3ffd; 14; 0x1ffd; 13; 0xffffffc; 28;
  0xfffe6; 20; 0x3fffd2; 22; 0xfffe7; 20; 0xfffe8; 20;
  0x3fffd3; 22; 0x3fffd4; 22; 0x3fffd5; 22; 0x7fffd9; 23;
  0x3fffd6; 22; 0x7fffda; 23; 0x7fffdb; 23; 0x7fffdc; 23;
  0x7fffdd; 23; 0x7fffde; 23; 0xffffeb; 24; 0x7fffdf; 23;
  0xffffec; 24; 0xffffed; 24; 0x3fffd7; 22; 0x7fffe0; 23;
  0xffffee; 24; 0x7fffe1; 23; 0x7fffe2; 23; 0x7fffe3; 23;
  0x7fffe4; 23; 0x1fffdc; 21; 0x3fffd8; 22; 0x7fffe5; 23;
  0x3fffd9; 22; 0x7fffe6; 23; 0x7fffe7; 23; 0xffffef; 24;
  0x3fffda; 22; 0x1fffdd; 21; 0xfffe9; 20; 0x3fffdb; 22;
  0x3fffdc; 22; 0x7fffe8; 23; 0x7fffe9; 23; 0x1fffde; 21;
  0x7fffea; 23; 0x3fffdd; 22; 0x3fffde; 22; 0xfffff0; 24;
  0x1fffdf; 21; 0x3fffdf; 22; 0x7fffeb; 23; 0x7fffec; 23;
  0x1fffe0; 21; 0x1fffe1; 21; 0x3fffe0; 22; 0x1fffe2; 21;
  0x7fffed; 23; 0x3fffe1; 22; 0x7fffee; 23; 0x7fffef; 23;
  0xfffea; 20; 0x3fffe2; 22; 0x3fffe3; 22; 0x3fffe4; 22;
  0x7ffff0; 23; 0x3fffe5; 22; 0x3fffe6; 22; 0x7ffff1; 23;
  0x3ffffe0; 26; 0x3ffffe1; 26; 0xfffeb; 20; 0x7fff1; 19;
  0x3fffe7; 22; 0x7ffff2; 23; 0x3fffe8; 22; 0x1ffffec; 25;
  0x3ffffe2; 26; 0x3ffffe3; 26; 0x3ffffe4; 26; 0x7ffffde; 27;
  0x7ffffdf; 27; 0x3ffffe5; 26; 0xfffff1; 24; 0x1ffffed; 25;
  0x7fff2; 19; 0x1fffe3; 21; 0x3ffffe6; 26; 0x7ffffe0; 27;
  0x7ffffe1; 27; 0x3ffffe7; 26; 0x7ffffe2; 27; 0xfffff2; 24;
  0x1fffe4; 21; 0x1fffe5; 21; 0x3ffffe8; 26; 0x3ffffe9; 26;
  0xffffffd; 28; 0x7ffffe3; 27; 0x7ffffe4; 27; 0x7ffffe5; 27;
  0xfffec; 20; 0xfffff3; 24; 0xfffed; 20; 0x1fffe6; 21;
  0x3fffe9; 22; 0x1fffe7; 21; 0x1fffe8; 21; 0x7ffff3; 23;
  0x3fffea; 22; 0x3fffeb; 22; 0x1ffffee; 25; 0x1ffffef; 25;
  0xfffff4; 24; 0xfffff5; 24; 0x3ffffea; 26; 0x7ffff4; 23;
  0x3ffffeb; 26; 0x7ffffe6; 27; 0x3ffffec; 26; 0x3ffffed; 26;
  0x7ffffe7; 27; 0x7ffffe8; 27; 0x7ffffe9; 27; 0x7ffffea; 27;
  0x7ffffeb; 27; 0xffffffe; 28; 0x7ffffec; 27; 0x7ffffed; 27;
  0x7ffffee; 27; 0x7ffffef; 27; 0x7fffff0; 27; 0x3ffffee; 26;
  0x3fffffff; 30;
|]

let eos = 256
let code sym = Array.unsafe_get code_table (2 * sym)
let length sym = Array.unsafe_get code_table ((2 * sym) + 1)

let error_eos = -1
let error_padding = -2
let error_no_space = -3

(* The code tree: internal nodes numbered from 0 (the root);
   [children.(2 * node + bit)] is a node number, or [-1 - sym] for a leaf.
   257 leaves make 256 internal nodes, so a node number fits in 8 bits. *)
let nodes = 256

let children =
  let t = Array.make (2 * nodes) max_int in
  let next = ref 1 in
  for sym = 0 to eos do
    let c = code sym and l = length sym in
    let node = ref 0 in
    for b = l - 1 downto 0 do
      let slot = (2 * !node) + ((c lsr b) land 1) in
      if b = 0 then t.(slot) <- -1 - sym
      else begin
        if t.(slot) = max_int then begin t.(slot) <- !next; incr next end;
        node := t.(slot)
      end
    done
  done;
  assert (!next = nodes && Array.for_all (fun x -> x <> max_int) t);
  t

(* The decoder looks the next [window_bits] bits up in [window]. Every code
   of at most that many bits (printable ASCII but for 11 symbols) is decoded
   in one step, and two at once when both fit: the usual 5- to 6-bit
   letters, digits and [/.-] do. A longer code's first [window_bits] bits
   lead to an internal node, from which the tree is walked a bit at a time.
   An entry is 32 bits:
   - bits 0-15: the first symbol, then the second, as [set16] stores them;
   - 16-20: the first code's length, 0 for a code longer than the window,
     whose node is then in bits 0-7;
   - 21-26: both codes' length, or [no_pair] when the second code does
     not fit: more bits than the decoder ever holds, so that one test
     tells a pair that is there from one that is not.
   16 KiB: it stays in L1 or L2. *)
let window_bits = 12
let window_mask = (1 lsl window_bits) - 1
let no_pair = 63

external string_get32 : string -> int -> int32 = "%caml_string_get32u"
external bytes_set32 : Bytes.t -> int -> int32 -> unit = "%caml_bytes_set32u"
external bigstring_set16 : Bigstring.t -> int -> int -> unit = "%caml_bigstring_set16u"
external bswap64 : int64 -> int64 = "%bswap_int64"

(* The code at the top of the [bits]-bit [w]: [(sym, length)] when it has
   at most [bits] bits, else [(node, 0)], the node its bits lead to. *)
let first_code w ~bits =
  let rec go node b =
    let child = children.((2 * node) + ((w lsr b) land 1)) in
    if child < 0 then (-1 - child, bits - b)
    else if b = 0 then (child, 0)
    else go child (b - 1)
  in
  if bits = 0 then (0, 0) else go 0 (bits - 1)

let window =
  let t = Bytes.create (4 * (window_mask + 1)) in
  for w = 0 to window_mask do
    let sym1, l1 = first_code w ~bits:window_bits in
    let rest = window_bits - l1 in
    let sym2, l2 = first_code (w land ((1 lsl rest) - 1)) ~bits:rest in
    let entry =
      if l1 = 0 then (no_pair lsl 21) lor sym1
      else if l2 = 0 then (no_pair lsl 21) lor (l1 lsl 16) lor sym1
      else begin
        let pair = if Sys.big_endian then (sym1 lsl 8) lor sym2 else (sym2 lsl 8) lor sym1 in
        ((l1 + l2) lsl 21) lor (l1 lsl 16) lor pair
      end
    in
    bytes_set32 t (4 * w) (Int32.of_int entry)
  done;
  Bytes.unsafe_to_string t

(* [word_be src i] is the 8 bytes at [i], first byte most significant. *)
let[@inline] word_be (src : Bigstring.t) i =
  let w = Bigstring.unsafe_get64 src i in
  if Sys.big_endian then w else bswap64 w

(* The bits not yet decoded sit in the low [nbits] bits of [acc] (bits above
   them are stale). A refill happens below [window_bits] bits and appends as
   many bytes as fit under 63 bits, read a word at a time from inside the
   buffer. Once the string is all read, [window_bits] ones follow it in
   [acc] ([tail]): the bits then always fill a window, and a code is real
   when it ends before the tail. [status] is [0] while decoding, [1] once
   done, or the error. Not inlined: inlined twice into Hpack_decoder's
   string reader, it cost more there in spilled registers than a call. *)
let[@inline never] decode (src : Bigstring.t) ~off ~len (dst : Bigstring.t) ~dst_off ~dst_stop =
  let stop = off + len in
  let i = ref off and acc = ref 0 and nbits = ref 0 and tail = ref 0 in
  let o = ref dst_off and status = ref 0 in
  while !status = 0 do
    if !nbits < window_bits then begin
      let left = stop - !i in
      if left > 0 then begin
        let fit = (62 - !nbits) lsr 3 (* 6 or 7 *) in
        let bytes = if left < fit then left else fit in
        if !i + 8 <= Bigstring.length src then
          acc := (!acc lsl (8 * bytes))
                 lor Int64.to_int (Int64.shift_right_logical (word_be src !i) (64 - (8 * bytes)))
        else if stop >= 8 then
          (* the buffer's last 8 bytes, up to [stop], hold the [left] unread *)
          acc := (!acc lsl (8 * bytes))
                 lor (Int64.to_int (Int64.shift_right_logical (word_be src (stop - 8)) (8 * (left - bytes)))
                      land ((1 lsl (8 * bytes)) - 1))
        else
          for k = !i to !i + bytes - 1 do
            acc := (!acc lsl 8) lor Char.code (Bigstring.unsafe_get src k)
          done;
        nbits := !nbits + (8 * bytes);
        i := !i + bytes
      end;
      if !i = stop && !nbits <= 62 - window_bits then begin
        acc := (!acc lsl window_bits) lor window_mask;
        nbits := !nbits + window_bits;
        tail := window_bits
      end
    end
    else begin
      let e = Int32.to_int (string_get32 window (4 * ((!acc lsr (!nbits - window_bits)) land window_mask))) in
      let both = e lsr 21 in
      if !nbits - both >= !tail && !o + 2 <= dst_stop then begin
        bigstring_set16 dst !o (e land 0xffff);
        o := !o + 2;
        nbits := !nbits - both
      end
      else
      let first = (e lsr 16) land 31 in
      if first <> 0 && !nbits - first >= !tail then begin
        if !o >= dst_stop then status := error_no_space
        else begin
          Bigstring.unsafe_set dst !o (Char.unsafe_chr (e land 0xff));
          incr o;
          nbits := !nbits - first
        end
      end
      else if first = 0 && !nbits - window_bits >= !tail then begin
        (* a code longer than the window: walk on from node [e] *)
        nbits := !nbits - window_bits;
        let node = ref (e land 0xff) in
        while !node >= 0 do
          if !nbits = !tail && !i < stop then begin
            acc := (!acc lsl 8) lor Char.code (Bigstring.unsafe_get src !i);
            incr i;
            nbits := 8
          end;
          if !nbits = !tail then begin
            (* the string ends inside a code of more than 7 bits *)
            status := error_padding;
            node := -1
          end
          else begin
            decr nbits;
            let child = Array.unsafe_get children ((2 * !node) lor ((!acc lsr !nbits) land 1)) in
            if child >= 0 then node := child
            else begin
              node := -1;
              let sym = -1 - child in
              if sym = eos then status := error_eos
              else if !o >= dst_stop then status := error_no_space
              else begin
                Bigstring.unsafe_set dst !o (Char.unsafe_chr sym);
                incr o
              end
            end
          end
        done
      end
      else begin
        (* no code ends before the tail: what is left must be at most 7
           ones (the tail is ones too) *)
        let ones = (1 lsl !nbits) - 1 in
        status := if !nbits - !tail <= 7 && !acc land ones = ones then 1 else error_padding
      end
    end
  done;
  if !status < 0 then !status else !o - dst_off

let bits_to_bytes bits = (bits + 7) lsr 3

let encoded_length (src : Bigstring.t) ~off ~len =
  let bits = ref 0 in
  for i = off to off + len - 1 do
    bits := !bits + length (Char.code (Bigstring.unsafe_get src i))
  done;
  bits_to_bytes !bits

let encoded_length_string s ~off ~len =
  let bits = ref 0 in
  for i = off to off + len - 1 do
    bits := !bits + length (Char.code (String.unsafe_get s i))
  done;
  bits_to_bytes !bits

(* The bit writer's state in one immediate int: output offset, then up to
   7 pending bits and their count. Between symbols fewer than 8 bits are
   pending, so with a code's 30 at most the accumulator stays far inside 63
   bits. *)
let[@inline] writer ~o ~acc ~nbits = (o lsl 11) lor (acc lsl 3) lor nbits

let[@inline] put (dst : Bigstring.t) w sym =
  let o = ref (w lsr 11) in
  let l = length sym in
  let nbits = ref ((w land 7) + l) in
  let acc = (((w lsr 3) land 0xff) lsl l) lor code sym in
  while !nbits >= 8 do
    nbits := !nbits - 8;
    Bigstring.unsafe_set dst !o (Char.unsafe_chr ((acc lsr !nbits) land 0xff));
    incr o
  done;
  writer ~o:!o ~acc:(acc land ((1 lsl !nbits) - 1)) ~nbits:!nbits

(* Padding: the most significant bits of EOS, i.e. ones. *)
let finish (dst : Bigstring.t) w =
  let o = w lsr 11 and nbits = w land 7 in
  if nbits = 0 then o
  else begin
    let pad = 8 - nbits in
    let acc = (w lsr 3) land 0xff in
    Bigstring.unsafe_set dst o (Char.unsafe_chr (((acc lsl pad) lor ((1 lsl pad) - 1)) land 0xff));
    o + 1
  end

let encode (src : Bigstring.t) ~off ~len dst ~dst_off =
  let w = ref (writer ~o:dst_off ~acc:0 ~nbits:0) in
  for i = off to off + len - 1 do w := put dst !w (Char.code (Bigstring.unsafe_get src i)) done;
  finish dst !w

let encode_string s ~off ~len dst ~dst_off =
  let w = ref (writer ~o:dst_off ~acc:0 ~nbits:0) in
  for i = off to off + len - 1 do w := put dst !w (Char.code (String.unsafe_get s i)) done;
  finish dst !w
