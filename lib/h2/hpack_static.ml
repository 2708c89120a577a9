type pseudo = Regular | Authority | Method | Path | Scheme | Status | Protocol | Unknown_pseudo

(* RFC 7541 Appendix A; index 0 is unused so that [names.(i)] is entry [i]. *)
let table = [|
  "", "";
  ":authority", ""; ":method", "GET"; ":method", "POST"; ":path", "/";
  ":path", "/index.html"; ":scheme", "http"; ":scheme", "https"; ":status", "200";
  ":status", "204"; ":status", "206"; ":status", "304"; ":status", "400";
  ":status", "404"; ":status", "500"; "accept-charset", ""; "accept-encoding", "gzip, deflate";
  "accept-language", ""; "accept-ranges", ""; "accept", ""; "access-control-allow-origin", "";
  "age", ""; "allow", ""; "authorization", ""; "cache-control", "";
  "content-disposition", ""; "content-encoding", ""; "content-language", ""; "content-length", "";
  "content-location", ""; "content-range", ""; "content-type", ""; "cookie", "";
  "date", ""; "etag", ""; "expect", ""; "expires", "";
  "from", ""; "host", ""; "if-match", ""; "if-modified-since", "";
  "if-none-match", ""; "if-range", ""; "if-unmodified-since", ""; "last-modified", "";
  "link", ""; "location", ""; "max-forwards", ""; "proxy-authenticate", "";
  "proxy-authorization", ""; "range", ""; "referer", ""; "refresh", "";
  "retry-after", ""; "server", ""; "set-cookie", ""; "strict-transport-security", "";
  "transfer-encoding", ""; "user-agent", ""; "vary", ""; "via", "";
  "www-authenticate", "";
|]

let length = Array.length table - 1
let names = Array.map fst table
let values = Array.map snd table
let name i = Array.unsafe_get names i
let value i = Array.unsafe_get values i

let pseudo_of_string s =
  match s with
  | ":authority" -> Authority
  | ":method" -> Method
  | ":path" -> Path
  | ":scheme" -> Scheme
  | ":status" -> Status
  | ":protocol" -> Protocol
  | _ -> if String.length s > 0 && s.[0] = ':' then Unknown_pseudo else Regular

let pseudo_names = [| ":authority"; ":method"; ":path"; ":scheme"; ":status"; ":protocol" |]
let pseudo_kinds = [| Authority; Method; Path; Scheme; Status; Protocol |]

let pseudo_of_buffer b ~off ~len =
  if len = 0 || Bigstring.unsafe_get b off <> ':' then Regular
  else begin
    let r = ref Unknown_pseudo and i = ref 0 in
    while !i < Array.length pseudo_names do
      if Bigstring.equal_string b ~off ~len (Array.unsafe_get pseudo_names !i) then begin
        r := Array.unsafe_get pseudo_kinds !i;
        i := max_int - 1
      end;
      incr i
    done;
    !r
  end

let header_names = Array.map Header_name.of_string names
let pseudos = Array.map pseudo_of_string names
let header_name i = Array.unsafe_get header_names i
let pseudo i = Array.unsafe_get pseudos i

(* The first entry of each known name; a match, not a search, on the
   encoder's hot path. *)
let index_of_name (n : Header_name.t) =
  match n with
  | Accept_charset -> 15
  | Accept_encoding -> 16
  | Accept_language -> 17
  | Accept_ranges -> 18
  | Accept -> 19
  | Access_control_allow_origin -> 20
  | Age -> 21
  | Allow -> 22
  | Authorization -> 23
  | Cache_control -> 24
  | Content_disposition -> 25
  | Content_encoding -> 26
  | Content_language -> 27
  | Content_length -> 28
  | Content_location -> 29
  | Content_range -> 30
  | Content_type -> 31
  | Cookie -> 32
  | Date -> 33
  | Etag -> 34
  | Expect -> 35
  | Expires -> 36
  | From -> 37
  | Host -> 38
  | If_match -> 39
  | If_modified_since -> 40
  | If_none_match -> 41
  | If_range -> 42
  | If_unmodified_since -> 43
  | Last_modified -> 44
  | Link -> 45
  | Location -> 46
  | Max_forwards -> 47
  | Proxy_authenticate -> 48
  | Proxy_authorization -> 49
  | Range -> 50
  | Referer -> 51
  | Retry_after -> 53
  | Server -> 54
  | Set_cookie -> 55
  | Strict_transport_security -> 56
  | Transfer_encoding -> 57
  | User_agent -> 58
  | Vary -> 59
  | Via -> 60
  | Www_authenticate -> 61
  | _ -> 0

let status_index code =
  match code with
  | 200 -> 8 | 204 -> 9 | 206 -> 10 | 304 -> 11 | 400 -> 12 | 404 -> 13 | 500 -> 14
  | _ -> 0

let known = Header_name.all
let lower_known = Array.map (fun n -> String.lowercase_ascii (Header_name.to_string n)) known

let lowercase_name (n : Header_name.t) =
  let i = ref 0 in
  while !i < Array.length known && Array.unsafe_get known !i != n do incr i done;
  if !i < Array.length known then Array.unsafe_get lower_known !i else ""

let () =
  (* [index_of_name] agrees with the table it abbreviates. *)
  Array.iter
    (fun n ->
      let i = index_of_name n in
      assert (
        if i = 0 then not (Array.exists (fun s -> s = lowercase_name n) names)
        else names.(i) = lowercase_name n && header_names.(i) == n))
    Header_name.all
