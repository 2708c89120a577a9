type error =
  | Bad_size
  | Size_overflow
  | Bad_extension
  | Line_too_long
  | Bad_crlf
  | Bad_trailer
  | Forbidden_trailer
  | Trailer_too_large
  | Body_too_large

let error_status = function
  | Body_too_large -> 413
  | Trailer_too_large -> 431
  | Bad_size | Size_overflow | Bad_extension | Line_too_long | Bad_crlf | Bad_trailer
  | Forbidden_trailer -> 400

let error_to_string = function
  | Bad_size -> "bad_size"
  | Size_overflow -> "size_overflow"
  | Bad_extension -> "bad_extension"
  | Line_too_long -> "line_too_long"
  | Bad_crlf -> "bad_crlf"
  | Bad_trailer -> "bad_trailer"
  | Forbidden_trailer -> "forbidden_trailer"
  | Trailer_too_large -> "trailer_too_large"
  | Body_too_large -> "body_too_large"

type status = Data | Need_more | Done | Error

(* One constructor per position in the grammar, so a slice may end
   anywhere and the next call resumes exactly there. *)
type state =
  | Size  (** in chunk-size *)
  | Ext_bws  (** BWS that must be followed by ';' *)
  | Ext_name_pre  (** after ';', BWS before chunk-ext-name *)
  | Ext_name  (** in chunk-ext-name *)
  | Ext_name_bws  (** BWS after the name: '=' or ';' follows *)
  | Ext_val_pre  (** after '=', BWS before chunk-ext-val *)
  | Ext_token  (** in a token chunk-ext-val *)
  | Ext_quoted  (** in a quoted-string *)
  | Ext_quoted_pair  (** after '\\' in a quoted-string *)
  | Ext_after_quoted  (** after the closing quote *)
  | Size_lf  (** CR of the size line seen *)
  | Body  (** in chunk-data *)
  | Body_cr  (** chunk-data done, CR expected *)
  | Body_lf  (** CR after chunk-data seen *)
  | Trailer_start  (** at the start of a trailer line (or the final CRLF) *)
  | Trailer_name
  | Trailer_value
  | Trailer_lf
  | Final_lf
  | Finished
  | Failed

(* Longest name the forbidden list can match; longer names are [Other]. *)
let scratch_len = 32

type t = {
  mutable state : state;
  mutable size : int;  (** chunk size being read, then bytes of it left *)
  mutable digits : int;
  mutable line : int;  (** bytes of the current size line *)
  mutable total : int;  (** sum of the chunk sizes so far *)
  mutable trailer_bytes : int;
  mutable trailers : int;
  mutable name_len : int;
  name : Bigstring.t;  (** lower-cased copy of a trailer name; it may span slices *)
  mutable consumed : int;
  mutable data_off : int;
  mutable data_len : int;
  mutable err : error;
  max_line : int;
  max_trailer : int;
  mutable max_body : int;
}

let default_max_chunk_line = 4096
let default_max_trailer_bytes = 8192

(* The same bound as Request's default Content-Length limit: a chunked body
   must not be a way around the limit a Content-Length body meets. *)
let default_max_body = 1 lsl 30

let create ?(max_chunk_line = default_max_chunk_line)
    ?(max_trailer_bytes = default_max_trailer_bytes) ?(max_body = default_max_body) () =
  if max_chunk_line < 0 || max_trailer_bytes < 0 || max_body < 0 then
    invalid_arg "Chunked.create";
  { state = Size; size = 0; digits = 0; line = 0; total = 0; trailer_bytes = 0;
    trailers = 0; name_len = 0; name = Bigstring.create scratch_len; consumed = 0;
    data_off = 0; data_len = 0; err = Bad_size; max_line = max_chunk_line;
    max_trailer = max_trailer_bytes; max_body }

let reset t =
  t.state <- Size; t.size <- 0; t.digits <- 0; t.line <- 0; t.total <- 0;
  t.trailer_bytes <- 0; t.trailers <- 0; t.name_len <- 0; t.consumed <- 0;
  t.data_off <- 0; t.data_len <- 0

let set_max_body t n = t.max_body <- (if n < 0 then max_int else n)

let consumed t = t.consumed
let data_off t = t.data_off
let data_len t = t.data_len
let error t = t.err
let is_done t = t.state == Finished
let body_bytes t = t.total
let trailer_count t = t.trailers

let forbidden_trailer (n : Header_name.t) =
  match n with
  | Transfer_encoding | Content_length | Trailer | Connection | Keep_alive | Upgrade | Te
  | Host
  | Expect | Max_forwards | Range | If_match | If_none_match | If_modified_since
  | If_unmodified_since | If_range | Cache_control | Pragma
  | Authorization | Proxy_authorization | Www_authenticate | Proxy_authenticate | Cookie
  | Set_cookie
  | Content_encoding | Content_type | Content_range -> true
  | _ -> false

(* 15 hex digits: 0xFFF_FFFF_FFFF_FFFF = 2^60 - 1 < max_int = 2^62 - 1. *)
let max_hex_digits = 15

let[@inline] hex_value c =
  match c with
  | '0' .. '9' -> Char.code c - 48
  | 'a' .. 'f' -> Char.code c - 87
  | 'A' .. 'F' -> Char.code c - 55
  | _ -> -1

(* [step] answers for one byte: [k_next] consumed it, [k_done] consumed the
   final LF, [k_error] refused it (not consumed). Ints, not a variant, so
   the hot loop tests them with one compare. *)
let k_next = 0
let k_done = 1
let k_error = 2

let fail t e = t.err <- e; t.state <- Failed; k_error

(* A byte of the size line other than its CRLF. *)
let[@inline] line_byte t next =
  t.line <- t.line + 1;
  if t.line > t.max_line then fail t Line_too_long
  else begin t.state <- next; k_next end

(* End of the digits: enforce the body limit before any data is accepted.
   [t.size > max_body - total] rather than [total + size > max_body],
   which could overflow when [max_body] is near [max_int]. *)
let size_done t next counted =
  if t.size > t.max_body - t.total then fail t Body_too_large
  else begin
    t.total <- t.total + t.size;
    if counted then line_byte t next else begin t.state <- next; k_next end
  end

let[@inline] trailer_byte t next =
  t.trailer_bytes <- t.trailer_bytes + 1;
  if t.trailer_bytes > t.max_trailer then fail t Trailer_too_large
  else begin t.state <- next; k_next end

let[@inline] is_ws c = c = ' ' || c = '\t'

(* quoted-string (RFC 9110 §5.6.4):
   qdtext = HTAB / SP / %x21 / %x23-5B / %x5D-7E / obs-text *)
let[@inline] is_qdtext c =
  c = '\t' || c = ' ' || c = '!' || (c >= '#' && c <= '[') || (c >= ']' && c <= '~')
  || c >= '\128'

let[@inline] lower c = if c >= 'A' && c <= 'Z' then Char.unsafe_chr (Char.code c + 32) else c

let step t c =
  match t.state with
  | Size ->
      let h = hex_value c in
      if h >= 0 then begin
        if t.digits >= max_hex_digits then fail t Size_overflow
        else begin
          t.size <- (t.size lsl 4) lor h;
          t.digits <- t.digits + 1;
          line_byte t Size
        end
      end
      else if t.digits = 0 then (if c = '\n' then fail t Bad_crlf else fail t Bad_size)
      else if c = '\r' then size_done t Size_lf false
      else if c = ';' then size_done t Ext_name_pre true
      else if is_ws c then size_done t Ext_bws true
      else if c = '\n' then fail t Bad_crlf
      else fail t Bad_size
  | Ext_bws ->
      if is_ws c then line_byte t Ext_bws
      else if c = ';' then line_byte t Ext_name_pre
      else fail t Bad_extension
  | Ext_name_pre ->
      if is_ws c then line_byte t Ext_name_pre
      else if Charset.is_tchar c then line_byte t Ext_name
      else fail t Bad_extension
  | Ext_name ->
      if Charset.is_tchar c then line_byte t Ext_name
      else if c = '\r' then begin t.state <- Size_lf; k_next end
      else if c = ';' then line_byte t Ext_name_pre
      else if c = '=' then line_byte t Ext_val_pre
      else if is_ws c then line_byte t Ext_name_bws
      else if c = '\n' then fail t Bad_crlf
      else fail t Bad_extension
  | Ext_name_bws ->
      if is_ws c then line_byte t Ext_name_bws
      else if c = '=' then line_byte t Ext_val_pre
      else if c = ';' then line_byte t Ext_name_pre
      else fail t Bad_extension
  | Ext_val_pre ->
      if is_ws c then line_byte t Ext_val_pre
      else if c = '"' then line_byte t Ext_quoted
      else if Charset.is_tchar c then line_byte t Ext_token
      else fail t Bad_extension
  | Ext_token ->
      if Charset.is_tchar c then line_byte t Ext_token
      else if c = '\r' then begin t.state <- Size_lf; k_next end
      else if c = ';' then line_byte t Ext_name_pre
      else if is_ws c then line_byte t Ext_bws
      else if c = '\n' then fail t Bad_crlf
      else fail t Bad_extension
  | Ext_quoted ->
      if c = '"' then line_byte t Ext_after_quoted
      else if c = '\\' then line_byte t Ext_quoted_pair
      else if is_qdtext c then line_byte t Ext_quoted
      else fail t Bad_extension
  | Ext_quoted_pair ->
      (* quoted-pair = backslash ( HTAB / SP / VCHAR / obs-text ) *)
      if c = '\t' || (c >= ' ' && c <> '\127') then line_byte t Ext_quoted
      else fail t Bad_extension
  | Ext_after_quoted ->
      if c = '\r' then begin t.state <- Size_lf; k_next end
      else if c = ';' then line_byte t Ext_name_pre
      else if is_ws c then line_byte t Ext_bws
      else if c = '\n' then fail t Bad_crlf
      else fail t Bad_extension
  | Size_lf ->
      if c <> '\n' then fail t Bad_crlf
      else if t.size = 0 then begin t.state <- Trailer_start; k_next end
      else begin t.state <- Body; k_next end
  | Body ->
      (* [decode] takes data in bulk and never calls [step] here. *)
      assert false
  | Body_cr -> if c = '\r' then begin t.state <- Body_lf; k_next end else fail t Bad_crlf
  | Body_lf ->
      if c = '\n' then begin
        t.state <- Size; t.size <- 0; t.digits <- 0; t.line <- 0; k_next
      end
      else fail t Bad_crlf
  | Trailer_start ->
      if c = '\r' then begin t.state <- Final_lf; k_next end
      else if Charset.is_tchar c then begin
        Bigstring.unsafe_set t.name 0 (lower c);
        t.name_len <- 1;
        trailer_byte t Trailer_name
      end
      else if c = '\n' then fail t Bad_crlf
      (* a leading SP/HTAB would be obs-fold (RFC 9112 §5.2), which has
         nothing to continue here; anything else is not a field name *)
      else fail t Bad_trailer
  | Trailer_name ->
      if Charset.is_tchar c then begin
        if t.name_len < scratch_len then Bigstring.unsafe_set t.name t.name_len (lower c);
        t.name_len <- t.name_len + 1;
        trailer_byte t Trailer_name
      end
      else if c = ':' then begin
        let n =
          if t.name_len <= scratch_len then Header_name.of_buffer t.name ~off:0 ~len:t.name_len
          else Header_name.Other
        in
        if forbidden_trailer n then fail t Forbidden_trailer
        else trailer_byte t Trailer_value
      end
      (* whitespace before the colon included: RFC 9112 §5.1 *)
      else fail t Bad_trailer
  | Trailer_value ->
      if Charset.is_field_vchar c || is_ws c then trailer_byte t Trailer_value
      else if c = '\r' then trailer_byte t Trailer_lf
      else if c = '\n' then fail t Bad_crlf
      else fail t Bad_trailer
  | Trailer_lf ->
      if c = '\n' then begin
        let k = trailer_byte t Trailer_start in
        if k = k_next then t.trailers <- t.trailers + 1;
        k
      end
      else fail t Bad_crlf
  | Final_lf -> if c = '\n' then begin t.state <- Finished; k_done end else fail t Bad_crlf
  | Finished | Failed -> assert false

let decode t buf ~off ~len =
  Bigstring.check_range "Httpz.Chunked.decode" buf ~off ~len;
  t.consumed <- 0;
  t.data_off <- off;
  t.data_len <- 0;
  match t.state with
  | Finished -> Done
  | Failed -> Error
  | _ ->
      let stop = off + len in
      let i = ref off and r = ref 0 in
      (* r: 0 running, 1 data, 2 done, 3 error *)
      while !r = 0 && !i < stop do
        if t.state == Body then begin
          let avail = stop - !i in
          let n = if t.size < avail then t.size else avail in
          t.data_off <- !i;
          t.data_len <- n;
          t.size <- t.size - n;
          if t.size = 0 then t.state <- Body_cr;
          i := !i + n;
          r := 1
        end
        else begin
          let k = step t (Bigstring.unsafe_get buf !i) in
          if k = k_error then r := 3
          else begin
            incr i;
            if k = k_done then r := 2
          end
        end
      done;
      t.consumed <- !i - off;
      if !r = 0 then Need_more else if !r = 1 then Data else if !r = 2 then Done else Error
