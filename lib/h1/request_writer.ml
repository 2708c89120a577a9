type error = No_error | No_space | Bad_method | Bad_target | Bad_name | Bad_value | Bad_framing | Bad_order

let error_to_string = function
  | No_error -> "no_error" | No_space -> "no_space" | Bad_method -> "bad_method"
  | Bad_target -> "bad_target" | Bad_name -> "bad_name" | Bad_value -> "bad_value"
  | Bad_framing -> "bad_framing" | Bad_order -> "bad_order"

type body = No_body_yet | Fixed | Chunked_body

(* Where the message is, so a call out of turn (a field after the head, a
   chunk in a fixed-length body) is refused instead of landing in the
   body. [Chunk_open]: a {!chunk_header} awaits its {!chunk_end}. *)
type phase = Ready | Head | Body_fixed | Body_chunked | Chunk_open | Trailers | Done

type t = {
  mutable buf : Bigstring.t;
  mutable start : int;
  mutable pos : int;
  mutable stop : int;
  mutable error : error;
  mutable body : body;
  mutable host : bool;
  mutable phase : phase;
  scratch : Bigstring.t;
}

let empty = Bigstring.create 0

let create () =
  { buf = empty; start = 0; pos = 0; stop = 0; error = No_error; body = No_body_yet; host = false;
    phase = Ready; scratch = Bigstring.create 64 }

let start t b ~off ~len =
  Bigstring.check_range "Httpz.Request_writer.start" b ~off ~len;
  t.buf <- b; t.start <- off; t.pos <- off; t.stop <- off + len;
  t.error <- No_error; t.body <- No_body_yet; t.host <- false; t.phase <- Ready

let resume t b ~off ~len =
  Bigstring.check_range "Httpz.Request_writer.resume" b ~off ~len;
  t.buf <- b; t.start <- off; t.pos <- off; t.stop <- off + len;
  t.error <- No_error

let error t = t.error
let ok t = t.error = No_error
let written t = t.pos - t.start
let pos t = t.pos

let finish t = if t.error = No_error then t.pos - t.start else -1

let[@inline] set_error t e = if t.error = No_error then t.error <- e

let[@inline] room t n = t.error = No_error && (t.stop - t.pos >= n || (set_error t No_space; false))

(* [in_phase t p]: the call belongs here; otherwise [Bad_order]. *)
let[@inline] in_phase t p = t.phase = p || (set_error t Bad_order; false)

(* Moves on only if the call wrote all it had to. *)
let[@inline] advance t p = if t.error = No_error then t.phase <- p

let[@inline] put t c = Bigstring.unsafe_set t.buf t.pos c; t.pos <- t.pos + 1

let[@inline] unsafe_string t s =
  let n = String.length s in
  Bigstring.unsafe_blit_from_string s ~src_off:0 t.buf ~dst_off:t.pos ~len:n;
  t.pos <- t.pos + n

let raw t s = if room t (String.length s) then unsafe_string t s

let crlf t = if room t 2 then begin put t '\r'; put t '\n' end

(* --- What may go in --------------------------------------------------------- *)

(* A field value from the caller holds no control byte but HTAB: CR, LF
   and NUL would let it end the field or the head (header injection,
   request smuggling), and the others no recipient has to accept. *)
let value_ok_string s =
  let ok = ref true in
  for i = 0 to String.length s - 1 do
    let c = String.unsafe_get s i in
    if (c < ' ' && c <> '\t') || c = '\127' then ok := false
  done;
  !ok

let value_ok_span b off len =
  let stop = off + len in
  let p = ref (Swar.skip_field_value b off stop) in
  while !p < stop && Bigstring.unsafe_get b !p = '\t' do p := Swar.skip_field_value b (!p + 1) stop done;
  !p = stop

let token_ok s =
  String.length s > 0
  &&
  let ok = ref true in
  for i = 0 to String.length s - 1 do
    if not (Charset.is_tchar (String.unsafe_get s i)) then ok := false
  done;
  !ok

(* request-target: visible ASCII only (no SP, control, DEL, or byte
   >= 0x80, which RFC 3986 has percent-encoded), no '#' (a fragment is not
   sent). *)
let target_ok s =
  String.length s > 0
  &&
  let ok = ref true in
  for i = 0 to String.length s - 1 do
    let c = String.unsafe_get s i in
    if c <= ' ' || c >= '\127' || c = '#' then ok := false
  done;
  !ok

(* --- The head --------------------------------------------------------------- *)

let request_line_token t ~meth ~target =
  if not (in_phase t Ready) then ()
  else if not (token_ok meth) then set_error t Bad_method
  else if not (target_ok target) then set_error t Bad_target
  else if room t (String.length meth + String.length target + 12) then begin
    unsafe_string t meth; put t ' '; unsafe_string t target; unsafe_string t " HTTP/1.1\r\n";
    t.phase <- Head
  end

let request_line t (m : Meth.t) ~target =
  match m with
  | _ when t.phase <> Ready -> set_error t Bad_order
  | Other -> set_error t Bad_method
  | _ -> request_line_token t ~meth:(Meth.to_string m) ~target

(* Fields whose writing decides framing or routing go through their own
   functions, so a head cannot say two things. *)
let reserved (n : Header_name.t) =
  match n with Content_length | Transfer_encoding | Host | Expect -> true | _ -> false

(* The known name a string spells, through the scratch buffer:
   [Header_name.of_string] would allocate. No known name is longer than
   the scratch. *)
let name_id t s =
  let n = String.length s in
  if n > Bigstring.length t.scratch then Header_name.Other
  else begin
    Bigstring.unsafe_blit_from_string s ~src_off:0 t.scratch ~dst_off:0 ~len:n;
    Header_name.of_buffer t.scratch ~off:0 ~len:n
  end

let[@inline] field_head t name vlen =
  room t (String.length name + vlen + 4)
  && begin unsafe_string t name; put t ':'; put t ' '; true end

let field_string_raw t name value =
  if field_head t name (String.length value) then begin
    unsafe_string t value; put t '\r'; put t '\n'
  end

let field t (n : Header_name.t) value =
  if not (in_phase t Head) then ()
  else if n = Other || reserved n then set_error t Bad_name
  else if not (value_ok_string value) then set_error t Bad_value
  else field_string_raw t (Header_name.to_string n) value

let field_other t ~name value =
  if not (in_phase t Head) then ()
  else if not (token_ok name) then set_error t Bad_name
  else if reserved (name_id t name) then set_error t Bad_name
  else if not (value_ok_string value) then set_error t Bad_value
  else field_string_raw t name value

let field_span t src (n : Header_name.t) v =
  let off = Span.off v and len = Span.len v in
  if not (in_phase t Head) then ()
  else if n = Other || reserved n then set_error t Bad_name
  else if off + len > Bigstring.length src then set_error t Bad_value
  else if not (value_ok_span src off len) then set_error t Bad_value
  else if field_head t (Header_name.to_string n) len then begin
    Bigstring.blit ~src ~src_off:off ~dst:t.buf ~dst_off:t.pos ~len;
    t.pos <- t.pos + len;
    put t '\r'; put t '\n'
  end

(* Decimal digits of [n >= 0], written backwards from the end. *)
let digits n = if n < 10 then 1 else begin
    let d = ref 0 and v = ref n in
    while !v > 0 do incr d; v := !v / 10 done; !d end

let put_decimal t n =
  let d = digits n in
  let v = ref n in
  for i = d - 1 downto 0 do
    Bigstring.unsafe_set t.buf (t.pos + i) (Char.unsafe_chr (48 + !v mod 10));
    v := !v / 10
  done;
  t.pos <- t.pos + d

let field_int t (n : Header_name.t) v =
  if not (in_phase t Head) then ()
  else if n = Other || reserved n then set_error t Bad_name
  else if v < 0 then set_error t Bad_value
  else if field_head t (Header_name.to_string n) (digits v) then begin
    put_decimal t v; put t '\r'; put t '\n'
  end

let host t h =
  if not (in_phase t Head) then ()
  else if t.host then set_error t Bad_name
  else if String.length h = 0 || not (value_ok_string h) then set_error t Bad_value
  else begin t.host <- true; field_string_raw t "Host" h end

let content_length t n =
  if not (in_phase t Head) then ()
  else if n < 0 then set_error t Bad_value
  else if t.body <> No_body_yet then set_error t Bad_framing
  else if field_head t "Content-Length" (digits n) then begin
    t.body <- Fixed; put_decimal t n; put t '\r'; put t '\n'
  end

let chunked t =
  if not (in_phase t Head) then ()
  else if t.body <> No_body_yet then set_error t Bad_framing
  else begin
    t.body <- Chunked_body;
    raw t "Transfer-Encoding: chunked\r\n"
  end

let expect_continue t = if in_phase t Head then raw t "Expect: 100-continue\r\n"
let connection_close t = if in_phase t Head then raw t "Connection: close\r\n"

let end_head t =
  if not (in_phase t Head) then ()
  else if not t.host then set_error t Bad_framing (* HTTP/1.1 requires Host (RFC 9112 §3.2) *)
  else begin
    crlf t;
    advance t (match t.body with Fixed -> Body_fixed | Chunked_body -> Body_chunked | No_body_yet -> Done)
  end

(* --- Chunked request bodies (RFC 9112 §7.1) -------------------------------------- *)

let hex_digits n = if n = 0 then 1 else begin
    let d = ref 0 and v = ref n in
    while !v > 0 do incr d; v := !v lsr 4 done; !d end

let hex = "0123456789abcdef"

let chunk_header t n =
  if not (in_phase t Body_chunked) then ()
  else if n <= 0 then set_error t Bad_value (* a zero size would end the body *)
  else begin
    let d = hex_digits n in
    if room t (d + 2) then begin
      for i = d - 1 downto 0 do
        Bigstring.unsafe_set t.buf (t.pos + i) (String.unsafe_get hex ((n lsr (4 * (d - 1 - i))) land 15))
      done;
      t.pos <- t.pos + d;
      put t '\r'; put t '\n';
      t.phase <- Chunk_open
    end
  end

let chunk_end t = if in_phase t Chunk_open then begin crlf t; advance t Body_chunked end

let chunk t src ~off ~len =
  if in_phase t Body_chunked && len > 0 then begin
    if off < 0 || len < 0 || off > Bigstring.length src - len then set_error t Bad_value
    else if room t (hex_digits len + 4 + len) then begin
      chunk_header t len;
      Bigstring.blit ~src ~src_off:off ~dst:t.buf ~dst_off:t.pos ~len;
      t.pos <- t.pos + len;
      put t '\r'; put t '\n';
      t.phase <- Body_chunked
    end
  end

let last_chunk t = if in_phase t Body_chunked then begin raw t "0\r\n"; advance t Trailers end

let trailer t (n : Header_name.t) value =
  if not (in_phase t Trailers) then ()
  else if n = Other || Chunked.forbidden_trailer n then set_error t Bad_name
  else if not (value_ok_string value) then set_error t Bad_value
  else field_string_raw t (Header_name.to_string n) value

let trailer_other t ~name value =
  if not (in_phase t Trailers) then ()
  else if not (token_ok name) then set_error t Bad_name
  else if Chunked.forbidden_trailer (name_id t name) then set_error t Bad_name
  else if not (value_ok_string value) then set_error t Bad_value
  else field_string_raw t name value

let end_trailers t = if in_phase t Trailers then begin crlf t; advance t Done end
