open Httpz

let path = "/__httpz/stats"

let is_request ~credentials c =
  let req = Ctx.request c and buf = Ctx.buffer c in
  (match Request.meth req with Meth.Get | Meth.Head -> true | _ -> false)
  && Span.equal buf (Request.target req) path
  &&
  let i = Request.find req Header_name.Authorization in
  i >= 0 && Span.equal buf (Request.header_value req i) credentials

let answer c json =
  Ctx.start c Status.Ok;
  Ctx.header c Header_name.Content_type "application/json";
  Ctx.header c Header_name.Cache_control "no-store";
  Ctx.body_string c json

let handler ~credentials ~report ~app c = if is_request ~credentials c then answer c (report ()) else app c
