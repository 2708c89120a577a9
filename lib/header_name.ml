type t =
  | Accept
  | Accept_charset
  | Accept_encoding
  | Accept_language
  | Accept_ranges
  | Access_control_allow_origin
  | Age
  | Allow
  | Authorization
  | Cache_control
  | Connection
  | Content_disposition
  | Content_encoding
  | Content_language
  | Content_length
  | Content_location
  | Content_range
  | Content_security_policy
  | Content_type
  | Cookie
  | Date
  | Dnt
  | Etag
  | Expect
  | Expires
  | Forwarded
  | From
  | Host
  | If_match
  | If_modified_since
  | If_none_match
  | If_range
  | If_unmodified_since
  | Keep_alive
  | Last_modified
  | Link
  | Location
  | Max_forwards
  | Origin
  | Pragma
  | Proxy_authenticate
  | Proxy_authorization
  | Range
  | Referer
  | Retry_after
  | Sec_fetch_dest
  | Sec_fetch_mode
  | Sec_fetch_site
  | Sec_fetch_user
  | Server
  | Set_cookie
  | Strict_transport_security
  | Te
  | Trailer
  | Transfer_encoding
  | Upgrade
  | Upgrade_insecure_requests
  | User_agent
  | Vary
  | Via
  | Www_authenticate
  | X_content_type_options
  | X_forwarded_for
  | X_forwarded_host
  | X_forwarded_proto
  | X_frame_options
  | X_request_id
  | X_requested_with
  | Other

let to_string = function
  | Accept -> "Accept"
  | Accept_charset -> "Accept-Charset"
  | Accept_encoding -> "Accept-Encoding"
  | Accept_language -> "Accept-Language"
  | Accept_ranges -> "Accept-Ranges"
  | Access_control_allow_origin -> "Access-Control-Allow-Origin"
  | Age -> "Age"
  | Allow -> "Allow"
  | Authorization -> "Authorization"
  | Cache_control -> "Cache-Control"
  | Connection -> "Connection"
  | Content_disposition -> "Content-Disposition"
  | Content_encoding -> "Content-Encoding"
  | Content_language -> "Content-Language"
  | Content_length -> "Content-Length"
  | Content_location -> "Content-Location"
  | Content_range -> "Content-Range"
  | Content_security_policy -> "Content-Security-Policy"
  | Content_type -> "Content-Type"
  | Cookie -> "Cookie"
  | Date -> "Date"
  | Dnt -> "DNT"
  | Etag -> "ETag"
  | Expect -> "Expect"
  | Expires -> "Expires"
  | Forwarded -> "Forwarded"
  | From -> "From"
  | Host -> "Host"
  | If_match -> "If-Match"
  | If_modified_since -> "If-Modified-Since"
  | If_none_match -> "If-None-Match"
  | If_range -> "If-Range"
  | If_unmodified_since -> "If-Unmodified-Since"
  | Keep_alive -> "Keep-Alive"
  | Last_modified -> "Last-Modified"
  | Link -> "Link"
  | Location -> "Location"
  | Max_forwards -> "Max-Forwards"
  | Origin -> "Origin"
  | Pragma -> "Pragma"
  | Proxy_authenticate -> "Proxy-Authenticate"
  | Proxy_authorization -> "Proxy-Authorization"
  | Range -> "Range"
  | Referer -> "Referer"
  | Retry_after -> "Retry-After"
  | Sec_fetch_dest -> "Sec-Fetch-Dest"
  | Sec_fetch_mode -> "Sec-Fetch-Mode"
  | Sec_fetch_site -> "Sec-Fetch-Site"
  | Sec_fetch_user -> "Sec-Fetch-User"
  | Server -> "Server"
  | Set_cookie -> "Set-Cookie"
  | Strict_transport_security -> "Strict-Transport-Security"
  | Te -> "TE"
  | Trailer -> "Trailer"
  | Transfer_encoding -> "Transfer-Encoding"
  | Upgrade -> "Upgrade"
  | Upgrade_insecure_requests -> "Upgrade-Insecure-Requests"
  | User_agent -> "User-Agent"
  | Vary -> "Vary"
  | Via -> "Via"
  | Www_authenticate -> "WWW-Authenticate"
  | X_content_type_options -> "X-Content-Type-Options"
  | X_forwarded_for -> "X-Forwarded-For"
  | X_forwarded_host -> "X-Forwarded-Host"
  | X_forwarded_proto -> "X-Forwarded-Proto"
  | X_frame_options -> "X-Frame-Options"
  | X_request_id -> "X-Request-ID"
  | X_requested_with -> "X-Requested-With"
  | Other -> "Other"

let all = [|
  Accept;
  Accept_charset;
  Accept_encoding;
  Accept_language;
  Accept_ranges;
  Access_control_allow_origin;
  Age;
  Allow;
  Authorization;
  Cache_control;
  Connection;
  Content_disposition;
  Content_encoding;
  Content_language;
  Content_length;
  Content_location;
  Content_range;
  Content_security_policy;
  Content_type;
  Cookie;
  Date;
  Dnt;
  Etag;
  Expect;
  Expires;
  Forwarded;
  From;
  Host;
  If_match;
  If_modified_since;
  If_none_match;
  If_range;
  If_unmodified_since;
  Keep_alive;
  Last_modified;
  Link;
  Location;
  Max_forwards;
  Origin;
  Pragma;
  Proxy_authenticate;
  Proxy_authorization;
  Range;
  Referer;
  Retry_after;
  Sec_fetch_dest;
  Sec_fetch_mode;
  Sec_fetch_site;
  Sec_fetch_user;
  Server;
  Set_cookie;
  Strict_transport_security;
  Te;
  Trailer;
  Transfer_encoding;
  Upgrade;
  Upgrade_insecure_requests;
  User_agent;
  Vary;
  Via;
  Www_authenticate;
  X_content_type_options;
  X_forwarded_for;
  X_forwarded_host;
  X_forwarded_proto;
  X_frame_options;
  X_request_id;
  X_requested_with;
|]


external string_get64 : string -> int -> int64 = "%caml_string_get64u"

(* [eq_lower b off len s]: do the [len] bytes at [off], with 0x20 ORed into
   each, equal the lower-case literal [s]? Eight bytes per step; the last
   partial word is compared under a mask when the buffer extends far enough
   (reading bytes past [off + len] that the mask then discards), otherwise
   byte by byte. *)
let eq_lower b off len s =
  let i = ref 0 and ok = ref true in
  while !ok && !i + 8 <= len do
    if (Int64.logor (Bigstring.unsafe_get64 b (off + !i)) 0x2020202020202020L : int64)
       = string_get64 s !i
    then i := !i + 8
    else ok := false
  done;
  let rem = len - !i in
  if !ok && rem > 0 then begin
    if (not Sys.big_endian) && off + !i + 8 <= Bigstring.length b then begin
      let mask = Int64.pred (Int64.shift_left 1L (8 * rem)) in
      ok := (Int64.logand (Int64.logor (Bigstring.unsafe_get64 b (off + !i)) 0x2020202020202020L) mask
             : int64)
            = Int64.logand (string_get64 s !i) mask
    end else
      while !ok && !i < len do
        if Char.code (Bigstring.unsafe_get b (off + !i)) lor 0x20
           = Char.code (String.unsafe_get s !i)
        then incr i
        else ok := false
      done
  end;
  !ok

(* Generated dispatch: length, then first letter, then one word-at-a-time
   comparison. [eq_lower] ORs 0x20 into each byte, which folds ASCII case;
   on bytes 0x21-0x7E it can only make a known name's letters, digits and
   '-' out of token characters, so a match also proves the name a token. *)
let of_token b ~off ~len =
  match len with
  | 2 ->
    (match Char.code (Bigstring.unsafe_get b off) lor 0x20 with
     | 116 (* t *) -> if eq_lower b off 2 "te" then Te else Other
     | _ -> Other)
  | 3 ->
    (match Char.code (Bigstring.unsafe_get b off) lor 0x20 with
     | 97 (* a *) -> if eq_lower b off 3 "age" then Age else Other
     | 100 (* d *) -> if eq_lower b off 3 "dnt" then Dnt else Other
     | 118 (* v *) -> if eq_lower b off 3 "via" then Via else Other
     | _ -> Other)
  | 4 ->
    (match Char.code (Bigstring.unsafe_get b off) lor 0x20 with
     | 100 (* d *) -> if eq_lower b off 4 "date" then Date else Other
     | 101 (* e *) -> if eq_lower b off 4 "etag" then Etag else Other
     | 102 (* f *) -> if eq_lower b off 4 "from" then From else Other
     | 104 (* h *) -> if eq_lower b off 4 "host" then Host else Other
     | 108 (* l *) -> if eq_lower b off 4 "link" then Link else Other
     | 118 (* v *) -> if eq_lower b off 4 "vary" then Vary else Other
     | _ -> Other)
  | 5 ->
    (match Char.code (Bigstring.unsafe_get b off) lor 0x20 with
     | 97 (* a *) -> if eq_lower b off 5 "allow" then Allow else Other
     | 114 (* r *) -> if eq_lower b off 5 "range" then Range else Other
     | _ -> Other)
  | 6 ->
    (match Char.code (Bigstring.unsafe_get b off) lor 0x20 with
     | 97 (* a *) -> if eq_lower b off 6 "accept" then Accept else Other
     | 99 (* c *) -> if eq_lower b off 6 "cookie" then Cookie else Other
     | 101 (* e *) -> if eq_lower b off 6 "expect" then Expect else Other
     | 111 (* o *) -> if eq_lower b off 6 "origin" then Origin else Other
     | 112 (* p *) -> if eq_lower b off 6 "pragma" then Pragma else Other
     | 115 (* s *) -> if eq_lower b off 6 "server" then Server else Other
     | _ -> Other)
  | 7 ->
    (match Char.code (Bigstring.unsafe_get b off) lor 0x20 with
     | 101 (* e *) -> if eq_lower b off 7 "expires" then Expires else Other
     | 114 (* r *) -> if eq_lower b off 7 "referer" then Referer else Other
     | 116 (* t *) -> if eq_lower b off 7 "trailer" then Trailer else Other
     | 117 (* u *) -> if eq_lower b off 7 "upgrade" then Upgrade else Other
     | _ -> Other)
  | 8 ->
    (match Char.code (Bigstring.unsafe_get b off) lor 0x20 with
     | 105 (* i *) -> if eq_lower b off 8 "if-match" then If_match else if eq_lower b off 8 "if-range" then If_range else Other
     | 108 (* l *) -> if eq_lower b off 8 "location" then Location else Other
     | _ -> Other)
  | 9 ->
    (match Char.code (Bigstring.unsafe_get b off) lor 0x20 with
     | 102 (* f *) -> if eq_lower b off 9 "forwarded" then Forwarded else Other
     | _ -> Other)
  | 10 ->
    (match Char.code (Bigstring.unsafe_get b off) lor 0x20 with
     | 99 (* c *) -> if eq_lower b off 10 "connection" then Connection else Other
     | 107 (* k *) -> if eq_lower b off 10 "keep-alive" then Keep_alive else Other
     | 115 (* s *) -> if eq_lower b off 10 "set-cookie" then Set_cookie else Other
     | 117 (* u *) -> if eq_lower b off 10 "user-agent" then User_agent else Other
     | _ -> Other)
  | 11 ->
    (match Char.code (Bigstring.unsafe_get b off) lor 0x20 with
     | 114 (* r *) -> if eq_lower b off 11 "retry-after" then Retry_after else Other
     | _ -> Other)
  | 12 ->
    (match Char.code (Bigstring.unsafe_get b off) lor 0x20 with
     | 99 (* c *) -> if eq_lower b off 12 "content-type" then Content_type else Other
     | 109 (* m *) -> if eq_lower b off 12 "max-forwards" then Max_forwards else Other
     | 120 (* x *) -> if eq_lower b off 12 "x-request-id" then X_request_id else Other
     | _ -> Other)
  | 13 ->
    (match Char.code (Bigstring.unsafe_get b off) lor 0x20 with
     | 97 (* a *) -> if eq_lower b off 13 "accept-ranges" then Accept_ranges else if eq_lower b off 13 "authorization" then Authorization else Other
     | 99 (* c *) -> if eq_lower b off 13 "cache-control" then Cache_control else if eq_lower b off 13 "content-range" then Content_range else Other
     | 105 (* i *) -> if eq_lower b off 13 "if-none-match" then If_none_match else Other
     | 108 (* l *) -> if eq_lower b off 13 "last-modified" then Last_modified else Other
     | _ -> Other)
  | 14 ->
    (match Char.code (Bigstring.unsafe_get b off) lor 0x20 with
     | 97 (* a *) -> if eq_lower b off 14 "accept-charset" then Accept_charset else Other
     | 99 (* c *) -> if eq_lower b off 14 "content-length" then Content_length else Other
     | 115 (* s *) -> if eq_lower b off 14 "sec-fetch-dest" then Sec_fetch_dest else if eq_lower b off 14 "sec-fetch-mode" then Sec_fetch_mode else if eq_lower b off 14 "sec-fetch-site" then Sec_fetch_site else if eq_lower b off 14 "sec-fetch-user" then Sec_fetch_user else Other
     | _ -> Other)
  | 15 ->
    (match Char.code (Bigstring.unsafe_get b off) lor 0x20 with
     | 97 (* a *) -> if eq_lower b off 15 "accept-encoding" then Accept_encoding else if eq_lower b off 15 "accept-language" then Accept_language else Other
     | 120 (* x *) -> if eq_lower b off 15 "x-forwarded-for" then X_forwarded_for else if eq_lower b off 15 "x-frame-options" then X_frame_options else Other
     | _ -> Other)
  | 16 ->
    (match Char.code (Bigstring.unsafe_get b off) lor 0x20 with
     | 99 (* c *) -> if eq_lower b off 16 "content-encoding" then Content_encoding else if eq_lower b off 16 "content-language" then Content_language else if eq_lower b off 16 "content-location" then Content_location else Other
     | 119 (* w *) -> if eq_lower b off 16 "www-authenticate" then Www_authenticate else Other
     | 120 (* x *) -> if eq_lower b off 16 "x-forwarded-host" then X_forwarded_host else if eq_lower b off 16 "x-requested-with" then X_requested_with else Other
     | _ -> Other)
  | 17 ->
    (match Char.code (Bigstring.unsafe_get b off) lor 0x20 with
     | 105 (* i *) -> if eq_lower b off 17 "if-modified-since" then If_modified_since else Other
     | 116 (* t *) -> if eq_lower b off 17 "transfer-encoding" then Transfer_encoding else Other
     | 120 (* x *) -> if eq_lower b off 17 "x-forwarded-proto" then X_forwarded_proto else Other
     | _ -> Other)
  | 18 ->
    (match Char.code (Bigstring.unsafe_get b off) lor 0x20 with
     | 112 (* p *) -> if eq_lower b off 18 "proxy-authenticate" then Proxy_authenticate else Other
     | _ -> Other)
  | 19 ->
    (match Char.code (Bigstring.unsafe_get b off) lor 0x20 with
     | 99 (* c *) -> if eq_lower b off 19 "content-disposition" then Content_disposition else Other
     | 105 (* i *) -> if eq_lower b off 19 "if-unmodified-since" then If_unmodified_since else Other
     | 112 (* p *) -> if eq_lower b off 19 "proxy-authorization" then Proxy_authorization else Other
     | _ -> Other)
  | 22 ->
    (match Char.code (Bigstring.unsafe_get b off) lor 0x20 with
     | 120 (* x *) -> if eq_lower b off 22 "x-content-type-options" then X_content_type_options else Other
     | _ -> Other)
  | 23 ->
    (match Char.code (Bigstring.unsafe_get b off) lor 0x20 with
     | 99 (* c *) -> if eq_lower b off 23 "content-security-policy" then Content_security_policy else Other
     | _ -> Other)
  | 25 ->
    (match Char.code (Bigstring.unsafe_get b off) lor 0x20 with
     | 115 (* s *) -> if eq_lower b off 25 "strict-transport-security" then Strict_transport_security else Other
     | 117 (* u *) -> if eq_lower b off 25 "upgrade-insecure-requests" then Upgrade_insecure_requests else Other
     | _ -> Other)
  | 27 ->
    (match Char.code (Bigstring.unsafe_get b off) lor 0x20 with
     | 97 (* a *) -> if eq_lower b off 27 "access-control-allow-origin" then Access_control_allow_origin else Other
     | _ -> Other)
  | _ -> Other

let is_token b off len =
  let i = ref 0 in
  while !i < len && Charset.is_tchar (Bigstring.unsafe_get b (off + !i)) do incr i done;
  !i = len

let of_buffer b ~off ~len =
  Bigstring.check_range "Httpz.Header_name.of_buffer" b ~off ~len;
  if is_token b off len then of_token b ~off ~len else Other

let of_string s =
  let b = Bigstring.of_string s in
  of_buffer b ~off:0 ~len:(String.length s)
