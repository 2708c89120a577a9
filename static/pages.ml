open Httpz

let page code reason =
  Printf.sprintf
    "<!DOCTYPE html>\n<html><head><title>%d %s</title></head>\
     <body><h1>%d %s</h1></body></html>\n" code reason code reason

let page_of (s : Status.t) = page (Status.code s) (Status.reason s)
let p301 = page_of Moved_permanently
let p400 = page_of Bad_request
let p403 = page_of Forbidden
let p404 = page_of Not_found
let p405 = page_of Method_not_allowed
let p412 = page_of Precondition_failed
let p414 = page_of Uri_too_long
let p416 = page_of Range_not_satisfiable
let p500 = page_of Internal_server_error
let p503 = page_of Service_unavailable
let p401 = page_of Unauthorized
let p429 = page_of Too_many_requests
let p502 = page_of Bad_gateway

let html_type = "text/html; charset=utf-8"
let allow = "GET, HEAD, OPTIONS"

(* The application's error renderer, when one is set, with the fields
   the answer needs. *)
let rendered c (status : Status.t) extra =
  (match status, extra with
   | _, Some (name, value) -> Errors.require name value
   | Method_not_allowed, None -> Errors.require Allow allow
   | _ -> ());
  Errors.answer c status ~reason:(Status.reason status)

let error_page_extra c (status : Status.t) extra =
  if Errors.active None then rendered c status extra else
  let body =
    match status with
    | Bad_request -> p400 | Forbidden -> p403 | Not_found -> p404
    | Method_not_allowed -> p405 | Precondition_failed -> p412 | Uri_too_long -> p414
    | Range_not_satisfiable -> p416 | Service_unavailable -> p503
    | Unauthorized -> p401 | Too_many_requests -> p429 | Bad_gateway -> p502
    | _ -> p500
  in
  Ctx.start c status;
  (match status with Method_not_allowed -> Ctx.header c Allow allow | _ -> ());
  (match extra with Some (name, value) -> Ctx.header c name value | None -> ());
  Ctx.header c Content_type html_type;
  Ctx.body_string c body

let error_page c status = error_page_extra c status None

let status_of_errno e =
  let e = -e in
  if e = Syscall.enoent || e = Syscall.enotdir || e = Syscall.exdev || e = Syscall.eloop
     || e = Syscall.enametoolong || e = Syscall.einval
  then Status.Not_found
  else if e = Syscall.eacces || e = Syscall.eperm || e = Syscall.enxio then Status.Forbidden
  else if e = Syscall.emfile || e = Syscall.enfile || e = Syscall.enomem then Status.Service_unavailable
  else Status.Internal_server_error

