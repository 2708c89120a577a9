type t =
  | Continue
  | Switching_protocols
  | Processing
  | Early_hints
  | Ok
  | Created
  | Accepted
  | Non_authoritative_information
  | No_content
  | Reset_content
  | Partial_content
  | Multi_status
  | Already_reported
  | Im_used
  | Multiple_choices
  | Moved_permanently
  | Found
  | See_other
  | Not_modified
  | Use_proxy
  | Temporary_redirect
  | Permanent_redirect
  | Bad_request
  | Unauthorized
  | Payment_required
  | Forbidden
  | Not_found
  | Method_not_allowed
  | Not_acceptable
  | Proxy_authentication_required
  | Request_timeout
  | Conflict
  | Gone
  | Length_required
  | Precondition_failed
  | Content_too_large
  | Uri_too_long
  | Unsupported_media_type
  | Range_not_satisfiable
  | Expectation_failed
  | Im_a_teapot
  | Misdirected_request
  | Unprocessable_content
  | Locked
  | Failed_dependency
  | Too_early
  | Upgrade_required
  | Precondition_required
  | Too_many_requests
  | Request_header_fields_too_large
  | Unavailable_for_legal_reasons
  | Internal_server_error
  | Not_implemented
  | Bad_gateway
  | Service_unavailable
  | Gateway_timeout
  | Http_version_not_supported
  | Variant_also_negotiates
  | Insufficient_storage
  | Loop_detected
  | Not_extended
  | Network_authentication_required

(* Plain matches on constant constructors: ocamlopt compiles each one to a
   jump or a table load, with no allocation. *)
let code = function
  | Continue -> 100
  | Switching_protocols -> 101
  | Processing -> 102
  | Early_hints -> 103
  | Ok -> 200
  | Created -> 201
  | Accepted -> 202
  | Non_authoritative_information -> 203
  | No_content -> 204
  | Reset_content -> 205
  | Partial_content -> 206
  | Multi_status -> 207
  | Already_reported -> 208
  | Im_used -> 226
  | Multiple_choices -> 300
  | Moved_permanently -> 301
  | Found -> 302
  | See_other -> 303
  | Not_modified -> 304
  | Use_proxy -> 305
  | Temporary_redirect -> 307
  | Permanent_redirect -> 308
  | Bad_request -> 400
  | Unauthorized -> 401
  | Payment_required -> 402
  | Forbidden -> 403
  | Not_found -> 404
  | Method_not_allowed -> 405
  | Not_acceptable -> 406
  | Proxy_authentication_required -> 407
  | Request_timeout -> 408
  | Conflict -> 409
  | Gone -> 410
  | Length_required -> 411
  | Precondition_failed -> 412
  | Content_too_large -> 413
  | Uri_too_long -> 414
  | Unsupported_media_type -> 415
  | Range_not_satisfiable -> 416
  | Expectation_failed -> 417
  | Im_a_teapot -> 418
  | Misdirected_request -> 421
  | Unprocessable_content -> 422
  | Locked -> 423
  | Failed_dependency -> 424
  | Too_early -> 425
  | Upgrade_required -> 426
  | Precondition_required -> 428
  | Too_many_requests -> 429
  | Request_header_fields_too_large -> 431
  | Unavailable_for_legal_reasons -> 451
  | Internal_server_error -> 500
  | Not_implemented -> 501
  | Bad_gateway -> 502
  | Service_unavailable -> 503
  | Gateway_timeout -> 504
  | Http_version_not_supported -> 505
  | Variant_also_negotiates -> 506
  | Insufficient_storage -> 507
  | Loop_detected -> 508
  | Not_extended -> 510
  | Network_authentication_required -> 511

let reason = function
  | Continue -> "Continue"
  | Switching_protocols -> "Switching Protocols"
  | Processing -> "Processing"
  | Early_hints -> "Early Hints"
  | Ok -> "OK"
  | Created -> "Created"
  | Accepted -> "Accepted"
  | Non_authoritative_information -> "Non-Authoritative Information"
  | No_content -> "No Content"
  | Reset_content -> "Reset Content"
  | Partial_content -> "Partial Content"
  | Multi_status -> "Multi-Status"
  | Already_reported -> "Already Reported"
  | Im_used -> "IM Used"
  | Multiple_choices -> "Multiple Choices"
  | Moved_permanently -> "Moved Permanently"
  | Found -> "Found"
  | See_other -> "See Other"
  | Not_modified -> "Not Modified"
  | Use_proxy -> "Use Proxy"
  | Temporary_redirect -> "Temporary Redirect"
  | Permanent_redirect -> "Permanent Redirect"
  | Bad_request -> "Bad Request"
  | Unauthorized -> "Unauthorized"
  | Payment_required -> "Payment Required"
  | Forbidden -> "Forbidden"
  | Not_found -> "Not Found"
  | Method_not_allowed -> "Method Not Allowed"
  | Not_acceptable -> "Not Acceptable"
  | Proxy_authentication_required -> "Proxy Authentication Required"
  | Request_timeout -> "Request Timeout"
  | Conflict -> "Conflict"
  | Gone -> "Gone"
  | Length_required -> "Length Required"
  | Precondition_failed -> "Precondition Failed"
  | Content_too_large -> "Content Too Large"
  | Uri_too_long -> "URI Too Long"
  | Unsupported_media_type -> "Unsupported Media Type"
  | Range_not_satisfiable -> "Range Not Satisfiable"
  | Expectation_failed -> "Expectation Failed"
  | Im_a_teapot -> "I'm a teapot"
  | Misdirected_request -> "Misdirected Request"
  | Unprocessable_content -> "Unprocessable Content"
  | Locked -> "Locked"
  | Failed_dependency -> "Failed Dependency"
  | Too_early -> "Too Early"
  | Upgrade_required -> "Upgrade Required"
  | Precondition_required -> "Precondition Required"
  | Too_many_requests -> "Too Many Requests"
  | Request_header_fields_too_large -> "Request Header Fields Too Large"
  | Unavailable_for_legal_reasons -> "Unavailable For Legal Reasons"
  | Internal_server_error -> "Internal Server Error"
  | Not_implemented -> "Not Implemented"
  | Bad_gateway -> "Bad Gateway"
  | Service_unavailable -> "Service Unavailable"
  | Gateway_timeout -> "Gateway Timeout"
  | Http_version_not_supported -> "HTTP Version Not Supported"
  | Variant_also_negotiates -> "Variant Also Negotiates"
  | Insufficient_storage -> "Insufficient Storage"
  | Loop_detected -> "Loop Detected"
  | Not_extended -> "Not Extended"
  | Network_authentication_required -> "Network Authentication Required"

let index = function
  | Continue -> 0
  | Switching_protocols -> 1
  | Processing -> 2
  | Early_hints -> 3
  | Ok -> 4
  | Created -> 5
  | Accepted -> 6
  | Non_authoritative_information -> 7
  | No_content -> 8
  | Reset_content -> 9
  | Partial_content -> 10
  | Multi_status -> 11
  | Already_reported -> 12
  | Im_used -> 13
  | Multiple_choices -> 14
  | Moved_permanently -> 15
  | Found -> 16
  | See_other -> 17
  | Not_modified -> 18
  | Use_proxy -> 19
  | Temporary_redirect -> 20
  | Permanent_redirect -> 21
  | Bad_request -> 22
  | Unauthorized -> 23
  | Payment_required -> 24
  | Forbidden -> 25
  | Not_found -> 26
  | Method_not_allowed -> 27
  | Not_acceptable -> 28
  | Proxy_authentication_required -> 29
  | Request_timeout -> 30
  | Conflict -> 31
  | Gone -> 32
  | Length_required -> 33
  | Precondition_failed -> 34
  | Content_too_large -> 35
  | Uri_too_long -> 36
  | Unsupported_media_type -> 37
  | Range_not_satisfiable -> 38
  | Expectation_failed -> 39
  | Im_a_teapot -> 40
  | Misdirected_request -> 41
  | Unprocessable_content -> 42
  | Locked -> 43
  | Failed_dependency -> 44
  | Too_early -> 45
  | Upgrade_required -> 46
  | Precondition_required -> 47
  | Too_many_requests -> 48
  | Request_header_fields_too_large -> 49
  | Unavailable_for_legal_reasons -> 50
  | Internal_server_error -> 51
  | Not_implemented -> 52
  | Bad_gateway -> 53
  | Service_unavailable -> 54
  | Gateway_timeout -> 55
  | Http_version_not_supported -> 56
  | Variant_also_negotiates -> 57
  | Insufficient_storage -> 58
  | Loop_detected -> 59
  | Not_extended -> 60
  | Network_authentication_required -> 61

let all = [|
  Continue;
  Switching_protocols;
  Processing;
  Early_hints;
  Ok;
  Created;
  Accepted;
  Non_authoritative_information;
  No_content;
  Reset_content;
  Partial_content;
  Multi_status;
  Already_reported;
  Im_used;
  Multiple_choices;
  Moved_permanently;
  Found;
  See_other;
  Not_modified;
  Use_proxy;
  Temporary_redirect;
  Permanent_redirect;
  Bad_request;
  Unauthorized;
  Payment_required;
  Forbidden;
  Not_found;
  Method_not_allowed;
  Not_acceptable;
  Proxy_authentication_required;
  Request_timeout;
  Conflict;
  Gone;
  Length_required;
  Precondition_failed;
  Content_too_large;
  Uri_too_long;
  Unsupported_media_type;
  Range_not_satisfiable;
  Expectation_failed;
  Im_a_teapot;
  Misdirected_request;
  Unprocessable_content;
  Locked;
  Failed_dependency;
  Too_early;
  Upgrade_required;
  Precondition_required;
  Too_many_requests;
  Request_header_fields_too_large;
  Unavailable_for_legal_reasons;
  Internal_server_error;
  Not_implemented;
  Bad_gateway;
  Service_unavailable;
  Gateway_timeout;
  Http_version_not_supported;
  Variant_also_negotiates;
  Insufficient_storage;
  Loop_detected;
  Not_extended;
  Network_authentication_required;
|]

let count = Array.length all

(* [by_code.(n - 100)] is the index of the status with code [n], or -1. *)
let by_code =
  let t = Array.make 500 (-1) in
  Array.iteri (fun i s -> t.(code s - 100) <- i) all;
  t

let[@inline] lookup n = if n < 100 || n > 599 then -1 else Array.unsafe_get by_code (n - 100)

let of_code n = let i = lookup n in if i < 0 then None else Some (Array.unsafe_get all i)

let of_code_or ~default n =
  let i = lookup n in
  if i < 0 then default else Array.unsafe_get all i

let is_informational s = code s < 200
let is_success s = let c = code s in c >= 200 && c < 300
let is_redirection s = let c = code s in c >= 300 && c < 400
let is_client_error s = let c = code s in c >= 400 && c < 500
let is_server_error s = code s >= 500

let forbids_content s =
  match s with
  | No_content | Not_modified -> true
  | _ -> is_informational s

(* One string per (version, status), built at start-up so that writing a
   status line is a single blit: HTTP/1.0 lines first, then HTTP/1.1. *)
let lines =
  let mk v s = Version.to_string v ^ " " ^ string_of_int (code s) ^ " " ^ reason s ^ "\r\n" in
  Array.append
    (Array.map (mk Version.Http_1_0) all)
    (Array.map (mk Version.Http_1_1) all)

let line v s =
  let base =
    match v with
    | Version.Http_1_0 -> 0
    | Version.Http_1_1 -> count
    | Version.Http_2 -> invalid_arg "Status.line: HTTP/2 has no status line"
  in
  Array.unsafe_get lines (base + index s)
