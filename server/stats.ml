open Httpz

let path = "/__httpz/stats"

(* The token is a secret: compared in time that depends on its length
   only, not on how many leading bytes match. *)
let same_secret buf span secret =
  let n = String.length secret in
  Span.len span = n
  &&
  let off = Span.off span and d = ref 0 in
  for i = 0 to n - 1 do
    d := !d lor (Char.code (Bigstring.unsafe_get buf (off + i)) lxor Char.code (String.unsafe_get secret i))
  done;
  !d = 0

let is_request ~credentials c =
  let req = Ctx.request c and buf = Ctx.buffer c in
  (match Request.meth req with Meth.Get | Meth.Head -> true | _ -> false)
  && Span.equal buf (Request.target req) path
  &&
  let i = Request.find req Header_name.Authorization in
  i >= 0 && same_secret buf (Request.header_value req i) credentials

let answer c json =
  Ctx.start c Status.Ok;
  Ctx.header c Header_name.Content_type "application/json";
  Ctx.header c Header_name.Cache_control "no-store";
  Ctx.body_string c json

let handler ~credentials ~report ~app c = if is_request ~credentials c then answer c (report ()) else app c
