module B = Bigstring

exception Invalid_field
exception No_space

external string_get64 : string -> int -> int64 = "%caml_string_get64u"

(* Capacity is checked once, up front, for the whole line: that is what
   makes every writer all-or-nothing. [need > length - off] cannot
   overflow, unlike [off + need > length]. *)
let[@inline] space buf off need =
  if off < 0 || need > B.length buf - off then raise_notrace No_space

let[@inline] crlf buf o =
  B.unsafe_set buf o '\r';
  B.unsafe_set buf (o + 1) '\n'

(* {1 Validation} *)

let is_token s =
  let n = String.length s in
  n > 0
  && begin
    let i = ref 0 in
    while !i < n && Charset.is_tchar (String.unsafe_get s !i) do incr i done;
    !i = n
  end

(* field-vchar / SP / HTAB: everything but the CTLs other than HTAB, and DEL. *)
let[@inline] value_byte c = (c >= ' ' && c <> '\127') || c = '\t'

(* SWAR: is any of the 8 bytes of [w] below 0x20, or equal to 0x7F?
   [(x - 0x01..01 * n) land (lnot x) land 0x80..80] is non-zero iff some
   byte of [x] is below [n] (for n <= 0x80); a borrow can only mark bytes
   above a byte that really is below [n], so the test as a whole is exact.
   DEL is "a zero byte in w xor 0x7F..7F". HTAB also trips the first test,
   so a hit is settled byte by byte; tabs are rare in values. The int64s
   never leave this function once inlined, so they stay unboxed. *)
let[@inline] word_suspect w =
  let lt = Int64.logand (Int64.sub w 0x2020202020202020L) (Int64.lognot w) in
  let x = Int64.logxor w 0x7F7F7F7F7F7F7F7FL in
  let del = Int64.logand (Int64.sub x 0x0101010101010101L) (Int64.lognot x) in
  Int64.logand (Int64.logor lt del) 0x8080808080808080L <> 0L

let is_field_value s =
  let n = String.length s in
  if n = 0 then true
  else if Charset.is_ows (String.unsafe_get s 0) || Charset.is_ows (String.unsafe_get s (n - 1)) then false
  else begin
    let i = ref 0 and ok = ref true in
    while !ok && !i + 8 <= n do
      if word_suspect (string_get64 s !i) then
        for j = !i to !i + 7 do
          if not (value_byte (String.unsafe_get s j)) then ok := false
        done;
      i := !i + 8
    done;
    while !ok && !i < n do
      if not (value_byte (String.unsafe_get s !i)) then ok := false;
      incr i
    done;
    !ok
  end

(* The request parser's scanner stops at every CTL, HTAB included; an HTAB
   is allowed inside a value, so step over it and scan on. *)
let is_field_value_b b off n =
  if n = 0 then true
  else if Charset.is_ows (B.unsafe_get b off) || Charset.is_ows (B.unsafe_get b (off + n - 1)) then false
  else begin
    let stop = off + n in
    let i = ref (Swar.skip_field_value b off stop) in
    while !i < stop && B.unsafe_get b !i = '\t' do
      i := Swar.skip_field_value b (!i + 1) stop
    done;
    !i = stop
  end

let known_name = function
  | Header_name.Other -> raise_notrace Invalid_field
  | n -> Header_name.to_string n

(* {1 Numbers} *)

let decimal_digits n =
  let d = ref 1 and n = ref n in
  while !n >= 10 do
    n := !n / 10;
    incr d
  done;
  !d

(* Digits are produced least significant first, so fill from the right. *)
let put_decimal buf o digits n =
  let n = ref n in
  for i = o + digits - 1 downto o do
    B.unsafe_set buf i (Char.unsafe_chr (48 + (!n mod 10)));
    n := !n / 10
  done

let hex_digits n =
  let d = ref 1 and n = ref n in
  while !n >= 16 do
    n := !n lsr 4;
    incr d
  done;
  !d

let hex = "0123456789abcdef"

let put_hex buf o digits n =
  let n = ref n in
  for i = o + digits - 1 downto o do
    B.unsafe_set buf i (String.unsafe_get hex (!n land 15));
    n := !n lsr 4
  done

(* {1 Lines} *)

let[@inline] put_name buf off name =
  let nl = String.length name in
  B.unsafe_blit_from_string name ~src_off:0 buf ~dst_off:off ~len:nl;
  B.unsafe_set buf (off + nl) ':';
  B.unsafe_set buf (off + nl + 1) ' ';
  off + nl + 2

(* [name] and [value] already validated. *)
let field buf off name value =
  let vl = String.length value in
  space buf off (String.length name + vl + 4);
  let o = put_name buf off name in
  B.unsafe_blit_from_string value ~src_off:0 buf ~dst_off:o ~len:vl;
  crlf buf (o + vl);
  o + vl + 2

let status_line buf ~off v s =
  let line = Status.line v s in
  let n = String.length line in
  space buf off n;
  B.unsafe_blit_from_string line ~src_off:0 buf ~dst_off:off ~len:n;
  off + n

let header buf ~off name value =
  let name = known_name name in
  if not (is_field_value value) then raise_notrace Invalid_field;
  field buf off name value

let header_s buf ~off name value =
  if not (is_token name && is_field_value value) then raise_notrace Invalid_field;
  field buf off name value

let header_int buf ~off name n =
  let name = known_name name in
  if n < 0 then raise_notrace Invalid_field;
  let digits = decimal_digits n in
  space buf off (String.length name + digits + 4);
  let o = put_name buf off name in
  put_decimal buf o digits n;
  crlf buf (o + digits);
  o + digits + 2

let header_span buf ~off name src s =
  let name = known_name name in
  let so = Span.off s and sl = Span.len s in
  if so > B.length src - sl then invalid_arg "Response.header_span";
  if not (is_field_value_b src so sl) then raise_notrace Invalid_field;
  space buf off (String.length name + sl + 4);
  let o = put_name buf off name in
  B.blit ~src ~src_off:so ~dst:buf ~dst_off:o ~len:sl;
  crlf buf (o + sl);
  o + sl + 2

let header_date buf ~off name t =
  let name = known_name name in
  if t < Date.min_time || t > Date.max_time then raise_notrace Invalid_field;
  space buf off (String.length name + 29 + 4);
  let o = put_name buf off name in
  let o = Date.write_imf_fixdate buf ~off:o t in
  crlf buf o;
  o + 2

let header_date_cached buf ~off name cache t =
  let name = known_name name in
  if t < Date.min_time || t > Date.max_time then raise_notrace Invalid_field;
  space buf off (String.length name + 29 + 4);
  let o = put_name buf off name in
  let o = Date.Cache.write cache buf ~off:o ~now:t in
  crlf buf o;
  o + 2

let date buf ~off cache ~now =
  if now < Date.min_time || now > Date.max_time then raise_notrace Invalid_field;
  space buf off 37;
  let o = put_name buf off "Date" in
  let o = Date.Cache.write cache buf ~off:o ~now in
  crlf buf o;
  o + 2

let end_head buf ~off =
  space buf off 2;
  crlf buf off;
  off + 2

(* {1 Chunks} *)

(* Chunk sizes stop below 2^60 (15 hex digits): the most httpz's own
   decoder, like most, accepts. A size it would refuse must not be written. *)
let max_chunk_size = (1 lsl 60) - 1
let max_chunk_header_length = 19

let chunk_header buf ~off n =
  if n <= 0 || n > max_chunk_size then raise_notrace Invalid_field;
  let digits = hex_digits n in
  space buf off (digits + 2);
  put_hex buf off digits n;
  crlf buf (off + digits);
  off + digits + 2

let chunk_header_after_data buf ~off n =
  if n <= 0 || n > max_chunk_size then raise_notrace Invalid_field;
  let digits = hex_digits n in
  space buf off (digits + 4);
  crlf buf off;
  put_hex buf (off + 2) digits n;
  crlf buf (off + 2 + digits);
  off + digits + 4

let end_chunk buf ~off = end_head buf ~off

let last_chunk buf ~off =
  space buf off 5;
  B.unsafe_set buf off '0';
  crlf buf (off + 1);
  crlf buf (off + 3);
  off + 5

let last_chunk_after_data buf ~off =
  space buf off 7;
  crlf buf off;
  B.unsafe_set buf (off + 2) '0';
  crlf buf (off + 3);
  crlf buf (off + 5);
  off + 7

(* {1 Primitives} *)

let write_string buf ~off s =
  let n = String.length s in
  space buf off n;
  B.unsafe_blit_from_string s ~src_off:0 buf ~dst_off:off ~len:n;
  off + n

let write_int buf ~off n =
  if n < 0 then raise_notrace Invalid_field;
  let digits = decimal_digits n in
  space buf off digits;
  put_decimal buf off digits n;
  off + digits
