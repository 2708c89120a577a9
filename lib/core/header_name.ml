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


(* Recognition by words. A name of [len] bytes is read as little-endian
   words of eight bytes with 0x20 ORed into every byte, the bytes past
   [len] masked off, and compared with the known names' words, written
   below as integer literals. On bytes 0x21-0x7E (the parser's name scan
   guarantees that range), ORing 0x20 folds ASCII case, and it turns a token
   byte into a letter, digit or '-' only if the byte already was one in the
   other case: equal words also prove the bytes a token. Such bytes are
   below 0x80, so a word fits an OCaml int: [Int64.to_int] drops only the
   top bit, which is clear. One load, an OR, a mask and a few compares for
   a short name. *)

let[@inline] lw b o = Int64.to_int (Bigstring.unsafe_get64 b o) lor 0x2020202020202020

(* Generated from [to_string] by scripts/gen_header_names.py: run it again
   when a name is added. test_request's "word and byte paths agree" test
   compares it with the byte-wise path below on every name, in three
   cases and with each byte changed. *)
let of_token_words b off len =
  match len with
  | 2 ->
    let w0 = lw b (off + 0) land 0xffff in
    if w0 = 0x6574 then Te
    else Other
  | 3 ->
    let w0 = lw b (off + 0) land 0xffffff in
    if w0 = 0x656761 then Age
    else if w0 = 0x746e64 then Dnt
    else if w0 = 0x616976 then Via
    else Other
  | 4 ->
    let w0 = lw b (off + 0) land 0xffffffff in
    if w0 = 0x65746164 then Date
    else if w0 = 0x67617465 then Etag
    else if w0 = 0x6d6f7266 then From
    else if w0 = 0x74736f68 then Host
    else if w0 = 0x6b6e696c then Link
    else if w0 = 0x79726176 then Vary
    else Other
  | 5 ->
    let w0 = lw b (off + 0) land 0xffffffffff in
    if w0 = 0x776f6c6c61 then Allow
    else if w0 = 0x65676e6172 then Range
    else Other
  | 6 ->
    let w0 = lw b (off + 0) land 0xffffffffffff in
    if w0 = 0x747065636361 then Accept
    else if w0 = 0x65696b6f6f63 then Cookie
    else if w0 = 0x746365707865 then Expect
    else if w0 = 0x6e696769726f then Origin
    else if w0 = 0x616d67617270 then Pragma
    else if w0 = 0x726576726573 then Server
    else Other
  | 7 ->
    let w0 = lw b (off + 0) land 0xffffffffffffff in
    if w0 = 0x73657269707865 then Expires
    else if w0 = 0x72657265666572 then Referer
    else if w0 = 0x72656c69617274 then Trailer
    else if w0 = 0x65646172677075 then Upgrade
    else Other
  | 8 ->
    let w0 = lw b (off + 0) in
    if w0 = 0x686374616d2d6669 then If_match
    else if w0 = 0x65676e61722d6669 then If_range
    else if w0 = 0x6e6f697461636f6c then Location
    else Other
  | 9 ->
    let w0 = lw b (off + 0) in
    if w0 = 0x6564726177726f66 && lw b (off + 8) land 0xff = 0x64 then Forwarded
    else Other
  | 10 ->
    let w0 = lw b (off + 0) in
    if w0 = 0x697463656e6e6f63 && lw b (off + 8) land 0xffff = 0x6e6f then Connection
    else if w0 = 0x696c612d7065656b && lw b (off + 8) land 0xffff = 0x6576 then Keep_alive
    else if w0 = 0x6b6f6f632d746573 && lw b (off + 8) land 0xffff = 0x6569 then Set_cookie
    else if w0 = 0x6567612d72657375 && lw b (off + 8) land 0xffff = 0x746e then User_agent
    else Other
  | 11 ->
    let w0 = lw b (off + 0) in
    if w0 = 0x66612d7972746572 && lw b (off + 8) land 0xffffff = 0x726574 then Retry_after
    else Other
  | 12 ->
    let w0 = lw b (off + 0) in
    if w0 = 0x2d746e65746e6f63 && lw b (off + 8) land 0xffffffff = 0x65707974 then Content_type
    else if w0 = 0x77726f662d78616d && lw b (off + 8) land 0xffffffff = 0x73647261 then Max_forwards
    else if w0 = 0x7365757165722d78 && lw b (off + 8) land 0xffffffff = 0x64692d74 then X_request_id
    else Other
  | 13 ->
    let w0 = lw b (off + 0) in
    if w0 = 0x722d747065636361 && lw b (off + 8) land 0xffffffffff = 0x7365676e61 then Accept_ranges
    else if w0 = 0x7a69726f68747561 && lw b (off + 8) land 0xffffffffff = 0x6e6f697461 then Authorization
    else if w0 = 0x6f632d6568636163 && lw b (off + 8) land 0xffffffffff = 0x6c6f72746e then Cache_control
    else if w0 = 0x2d746e65746e6f63 && lw b (off + 8) land 0xffffffffff = 0x65676e6172 then Content_range
    else if w0 = 0x2d656e6f6e2d6669 && lw b (off + 8) land 0xffffffffff = 0x686374616d then If_none_match
    else if w0 = 0x646f6d2d7473616c && lw b (off + 8) land 0xffffffffff = 0x6465696669 then Last_modified
    else Other
  | 14 ->
    let w0 = lw b (off + 0) in
    if w0 = 0x632d747065636361 && lw b (off + 8) land 0xffffffffffff = 0x746573726168 then Accept_charset
    else if w0 = 0x2d746e65746e6f63 && lw b (off + 8) land 0xffffffffffff = 0x6874676e656c then Content_length
    else if w0 = 0x637465662d636573 && lw b (off + 8) land 0xffffffffffff = 0x747365642d68 then Sec_fetch_dest
    else if w0 = 0x637465662d636573 && lw b (off + 8) land 0xffffffffffff = 0x65646f6d2d68 then Sec_fetch_mode
    else if w0 = 0x637465662d636573 && lw b (off + 8) land 0xffffffffffff = 0x657469732d68 then Sec_fetch_site
    else if w0 = 0x637465662d636573 && lw b (off + 8) land 0xffffffffffff = 0x726573752d68 then Sec_fetch_user
    else Other
  | 15 ->
    let w0 = lw b (off + 0) in
    if w0 = 0x652d747065636361 && lw b (off + 8) land 0xffffffffffffff = 0x676e69646f636e then Accept_encoding
    else if w0 = 0x6c2d747065636361 && lw b (off + 8) land 0xffffffffffffff = 0x65676175676e61 then Accept_language
    else if w0 = 0x726177726f662d78 && lw b (off + 8) land 0xffffffffffffff = 0x726f662d646564 then X_forwarded_for
    else if w0 = 0x2d656d6172662d78 && lw b (off + 8) land 0xffffffffffffff = 0x736e6f6974706f then X_frame_options
    else Other
  | 16 ->
    let w0 = lw b (off + 0) in
    if w0 = 0x2d746e65746e6f63 && lw b (off + 8) = 0x676e69646f636e65 then Content_encoding
    else if w0 = 0x2d746e65746e6f63 && lw b (off + 8) = 0x65676175676e616c then Content_language
    else if w0 = 0x2d746e65746e6f63 && lw b (off + 8) = 0x6e6f697461636f6c then Content_location
    else if w0 = 0x687475612d777777 && lw b (off + 8) = 0x6574616369746e65 then Www_authenticate
    else if w0 = 0x726177726f662d78 && lw b (off + 8) = 0x74736f682d646564 then X_forwarded_host
    else if w0 = 0x7365757165722d78 && lw b (off + 8) = 0x687469772d646574 then X_requested_with
    else Other
  | 17 ->
    let w0 = lw b (off + 0) in
    if w0 = 0x6669646f6d2d6669 && lw b (off + 8) = 0x636e69732d646569 && lw b (off + 16) land 0xff = 0x65 then If_modified_since
    else if w0 = 0x726566736e617274 && lw b (off + 8) = 0x6e69646f636e652d && lw b (off + 16) land 0xff = 0x67 then Transfer_encoding
    else if w0 = 0x726177726f662d78 && lw b (off + 8) = 0x746f72702d646564 && lw b (off + 16) land 0xff = 0x6f then X_forwarded_proto
    else Other
  | 18 ->
    let w0 = lw b (off + 0) in
    if w0 = 0x75612d79786f7270 && lw b (off + 8) = 0x616369746e656874 && lw b (off + 16) land 0xffff = 0x6574 then Proxy_authenticate
    else Other
  | 19 ->
    let w0 = lw b (off + 0) in
    if w0 = 0x2d746e65746e6f63 && lw b (off + 8) = 0x7469736f70736964 && lw b (off + 16) land 0xffffff = 0x6e6f69 then Content_disposition
    else if w0 = 0x646f6d6e752d6669 && lw b (off + 8) = 0x69732d6465696669 && lw b (off + 16) land 0xffffff = 0x65636e then If_unmodified_since
    else if w0 = 0x75612d79786f7270 && lw b (off + 8) = 0x74617a69726f6874 && lw b (off + 16) land 0xffffff = 0x6e6f69 then Proxy_authorization
    else Other
  | 22 ->
    let w0 = lw b (off + 0) in
    if w0 = 0x6e65746e6f632d78 && lw b (off + 8) = 0x6f2d657079742d74 && lw b (off + 16) land 0xffffffffffff = 0x736e6f697470 then X_content_type_options
    else Other
  | 23 ->
    let w0 = lw b (off + 0) in
    if w0 = 0x2d746e65746e6f63 && lw b (off + 8) = 0x7974697275636573 && lw b (off + 16) land 0xffffffffffffff = 0x7963696c6f702d then Content_security_policy
    else Other
  | 25 ->
    let w0 = lw b (off + 0) in
    if w0 = 0x742d746369727473 && lw b (off + 8) = 0x74726f70736e6172 && lw b (off + 16) = 0x746972756365732d && lw b (off + 24) land 0xff = 0x79 then Strict_transport_security
    else if w0 = 0x2d65646172677075 && lw b (off + 8) = 0x6572756365736e69 && lw b (off + 16) = 0x747365757165722d && lw b (off + 24) land 0xff = 0x73 then Upgrade_insecure_requests
    else Other
  | 27 ->
    let w0 = lw b (off + 0) in
    if w0 = 0x632d737365636361 && lw b (off + 8) = 0x612d6c6f72746e6f && lw b (off + 16) = 0x69726f2d776f6c6c && lw b (off + 24) land 0xffffff = 0x6e6967 then Access_control_allow_origin
    else Other
  | _ -> Other

let max_known = Array.fold_left (fun m n -> max m (String.length (to_string n))) 0 all

(* The names of each length, lower-cased, for the byte-wise path. *)
let by_length =
  Array.init (max_known + 1) (fun l ->
      Array.of_list (List.filter (fun n -> String.length (to_string n) = l) (Array.to_list all)))

let lower_names = Array.map (Array.map (fun n -> String.lowercase_ascii (to_string n))) by_length

(* The same answer byte by byte: when the words would reach past the end of
   [b], or on a big-endian host. *)
let of_token_bytes b off len =
  let r = ref Other in
  if len <= max_known then begin
    let names = Array.unsafe_get lower_names len in
    let c = ref 0 in
    while !c < Array.length names do
      let s = Array.unsafe_get names !c in
      let i = ref 0 in
      while !i < len && Char.code (Bigstring.unsafe_get b (off + !i)) lor 0x20 = Char.code (String.unsafe_get s !i) do
        incr i
      done;
      if !i = len then begin r := Array.unsafe_get (Array.unsafe_get by_length len) !c; c := max_int end
      else incr c
    done
  end;
  !r

let of_token b ~off ~len =
  if (not Sys.big_endian) && off + ((len + 7) land -8) <= Bigstring.length b then of_token_words b off len
  else of_token_bytes b off len

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
