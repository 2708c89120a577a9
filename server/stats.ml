open Httpz

let path = "/__httpz/stats"
let text_path = "/__httpz/stats.txt"

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

(* [1]: the JSON report asked for, [2]: the text one, [0]: neither. *)
let asked c =
  let req = Ctx.request c and buf = Ctx.buffer c in
  match Request.meth req with
  | Meth.Get | Meth.Head ->
      let target = Request.target req in
      if Span.equal buf target path then 1 else if Span.equal buf target text_path then 2 else 0
  | _ -> 0

let authorized ~credentials c =
  let req = Ctx.request c in
  let i = Request.find req Header_name.Authorization in
  i >= 0 && same_secret (Ctx.buffer c) (Request.header_value req i) credentials

let answer c ~text body =
  Ctx.start c Status.Ok;
  Ctx.header c Header_name.Content_type (if text then "text/plain; charset=utf-8" else "application/json");
  Ctx.header c Header_name.Cache_control "no-store";
  Ctx.body_string c body

let handler ~credentials ~report ~app c =
  match asked c with
  | 0 -> app c
  | k -> if authorized ~credentials c then answer c ~text:(k = 2) (report ~text:(k = 2)) else app c

let status_handler ~report c =
  match asked c with
  | 0 ->
      Ctx.start c Status.Not_found;
      Ctx.header c Header_name.Content_type "text/plain; charset=utf-8";
      Ctx.body_string c "404 Not Found: this listener answers /__httpz/stats and /__httpz/stats.txt only\n"
  | k -> answer c ~text:(k = 2) (report ~text:(k = 2))
