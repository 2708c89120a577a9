type verdict =
  | Valid
  | Not_get
  | Not_http_1_1
  | No_upgrade_websocket
  | No_connection_upgrade
  | No_version
  | Unsupported_version
  | No_key
  | Bad_key
  | Cross_origin

let status = function
  | Valid -> 101
  | Unsupported_version -> 426
  | Cross_origin -> 403
  | Not_get | Not_http_1_1 | No_upgrade_websocket | No_connection_upgrade | No_version | No_key
  | Bad_key -> 400

let verdict_to_string = function
  | Valid -> "valid"
  | Not_get -> "not_get"
  | Not_http_1_1 -> "not_http_1_1"
  | No_upgrade_websocket -> "no_upgrade_websocket"
  | No_connection_upgrade -> "no_connection_upgrade"
  | No_version -> "no_version"
  | Unsupported_version -> "unsupported_version"
  | No_key -> "no_key"
  | Bad_key -> "bad_key"
  | Cross_origin -> "cross_origin"

let find_field req buf name ~after =
  let n = Request.header_count req in
  let i = ref (after + 1) in
  while
    !i < n
    && not
         (Request.header_name req !i == Header_name.Other
          && Span.equal_caseless buf (Request.header_name_span req !i) name)
  do incr i done;
  if !i < n then !i else -1

(* Does the comma-separated list (RFC 9110 §5.6.1) in [s] hold [token]? *)
let list_has buf s token =
  let stop = Span.off s + Span.len s in
  let i = ref (Span.off s) and found = ref false in
  while (not !found) && !i < stop do
    while !i < stop && (Charset.is_ows (Bigstring.unsafe_get buf !i) || Bigstring.unsafe_get buf !i = ',')
    do incr i done;
    let start = !i in
    while !i < stop && Bigstring.unsafe_get buf !i <> ',' do incr i done;
    let e = ref !i in
    while !e > start && Charset.is_ows (Bigstring.unsafe_get buf (!e - 1)) do decr e done;
    if Bigstring.equal_caseless buf ~off:start ~len:(!e - start) token then found := true
  done;
  !found

let any_line_has req buf name token =
  let i = ref (Request.find req name) and found = ref false in
  while (not !found) && !i >= 0 do
    if list_has buf (Request.header_value req !i) token then found := true
    else i := Request.find_next req name ~after:!i
  done;
  !found

let is_base64_char c =
  match c with 'A' .. 'Z' | 'a' .. 'z' | '0' .. '9' | '+' | '/' -> true | _ -> false

(* 16 bytes are 128 bits: 21 characters of 6 bits, one holding 2 more,
   and "==" for the missing byte of the last group. *)
let valid_key buf s =
  Span.len s = 24
  && begin
    let off = Span.off s in
    let i = ref 0 in
    while !i < 22 && is_base64_char (Bigstring.unsafe_get buf (off + !i)) do incr i done;
    !i = 22 && Bigstring.unsafe_get buf (off + 22) = '='
    && Bigstring.unsafe_get buf (off + 23) = '='
  end

let key_name = "sec-websocket-key"
let version_name = "sec-websocket-version"

let check req buf =
  if Request.meth req != Meth.Get then Not_get
  else if Request.version req != Version.Http_1_1 then Not_http_1_1
  else if not (any_line_has req buf Header_name.Upgrade "websocket") then No_upgrade_websocket
  else if not (any_line_has req buf Header_name.Connection "upgrade") then No_connection_upgrade
  else begin
    let v = find_field req buf version_name ~after:(-1) in
    if v < 0 then No_version
    else if not (Span.equal buf (Request.header_value req v) "13") then Unsupported_version
    else begin
      let k = find_field req buf key_name ~after:(-1) in
      if k < 0 then No_key
      else if (not (valid_key buf (Request.header_value req k)))
              || find_field req buf key_name ~after:k >= 0
      then Bad_key
      else Valid
    end
  end

let key req buf =
  let k = find_field req buf key_name ~after:(-1) in
  if k < 0 then Span.empty else Request.header_value req k

let guid = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
let accept_length = 28
let base64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

let[@inline] byte b i = Char.code (Bigstring.unsafe_get b i)
let[@inline] b64 dst i v = Bigstring.unsafe_set dst i (String.unsafe_get base64 (v land 63))

(* The digest goes to the last 20 of the 28 output bytes and is encoded
   forward in place: group g (3 bytes at off+8+3g) is read before its 4
   characters are written at off+4g, which never reaches a later group
   (4g+3 < 8+3(g+1) for every g). *)
let write_accept sha src ~key dst ~off =
  Bigstring.check_range "Httpz.Ws_handshake.write_accept" dst ~off ~len:accept_length;
  Sha1.reset sha;
  Sha1.feed_bigstring sha src ~off:(Span.off key) ~len:(Span.len key);
  Sha1.feed_string sha guid ~off:0 ~len:(String.length guid);
  let d = off + 8 in
  Sha1.finish sha dst ~off:d;
  for g = 0 to 6 do
    let p = d + (3 * g) in
    let b0 = byte dst p and b1 = byte dst (p + 1) in
    let b2 = if g < 6 then byte dst (p + 2) else 0 in
    let o = off + (4 * g) in
    b64 dst o (b0 lsr 2);
    b64 dst (o + 1) ((b0 lsl 4) lor (b1 lsr 4));
    b64 dst (o + 2) ((b1 lsl 2) lor (b2 lsr 6));
    if g < 6 then b64 dst (o + 3) b2 else Bigstring.unsafe_set dst (o + 3) '='
  done;
  off + accept_length

let head_start =
  "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
   Sec-WebSocket-Accept: "

let write_response_head sha src ~key dst ~off =
  let n = String.length head_start in
  Bigstring.check_range "Httpz.Ws_handshake.write_response_head" dst ~off
    ~len:(n + accept_length + 2);
  Bigstring.unsafe_blit_from_string head_start ~src_off:0 dst ~dst_off:off ~len:n;
  let p = write_accept sha src ~key dst ~off:(off + n) in
  Bigstring.unsafe_set dst p '\r';
  Bigstring.unsafe_set dst (p + 1) '\n';
  p + 2

let accept_of_key k =
  let src = Bigstring.of_string k and dst = Bigstring.create accept_length in
  ignore (write_accept (Sha1.create ()) src ~key:(Span.make ~off:0 ~len:(String.length k)) dst ~off:0 : int);
  Bigstring.to_string dst

(* {1 Origins} *)

type origins = Same_origin of string array | Any_origin

let same_origin = Same_origin [||]
let any_origin = Any_origin
let allow_origins l = Same_origin (Array.of_list (List.filter (fun o -> o <> "") l))

let listed buf v allowed =
  let found = ref false and i = ref 0 in
  while (not !found) && !i < Array.length allowed do
    if Span.equal_caseless buf v (Array.unsafe_get allowed !i) then found := true;
    incr i
  done;
  !found

(* The host (and port) of an origin "scheme://host[:port]": after "://",
   up to a '/' if any; [-1] for one without "://" ("null", garbage). *)
let host_start buf v =
  let off = Span.off v and stop = Span.off v + Span.len v in
  let i = ref off in
  while !i + 2 < stop && not (Bigstring.unsafe_get buf !i = ':'
                              && Bigstring.unsafe_get buf (!i + 1) = '/'
                              && Bigstring.unsafe_get buf (!i + 2) = '/') do incr i done;
  if !i + 2 < stop then !i + 3 else -1

let host_end buf start stop =
  let i = ref start in
  while !i < stop && Bigstring.unsafe_get buf !i <> '/' do incr i done;
  !i

let same_host req buf v =
  let start = host_start buf v in
  start >= 0
  && Request.has_host req
  &&
  let h = Request.host req in
  let stop = host_end buf start (Span.off v + Span.len v) in
  stop - start = Span.len h
  && Span.len h > 0
  && begin
    let eq = ref true and k = ref 0 in
    while !eq && !k < Span.len h do
      if Char.lowercase_ascii (Bigstring.unsafe_get buf (start + !k))
         <> Char.lowercase_ascii (Bigstring.unsafe_get buf (Span.off h + !k))
      then eq := false;
      incr k
    done;
    !eq
  end

let check_origin policy req buf =
  match policy with
  | Any_origin -> Valid
  | Same_origin allowed ->
      let o = Request.find req Header_name.Origin in
      if o >= 0 && Request.find_next req Header_name.Origin ~after:o >= 0 then Cross_origin
      else if o >= 0 && listed buf (Request.header_value req o) allowed then Valid
      else begin
        let f = Request.find req Header_name.Sec_fetch_site in
        if f >= 0 && Span.equal_caseless buf (Request.header_value req f) "cross-site" then Cross_origin
        else if o < 0 then Valid
        else if same_host req buf (Request.header_value req o) then Valid
        else Cross_origin
      end
