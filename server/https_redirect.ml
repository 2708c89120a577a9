open Httpz

(* "example.com:80" -> "example.com"; "[::1]:80" -> "[::1]". *)
let strip_port host =
  let n = String.length host in
  if n > 0 && host.[0] = '[' then
    match String.index_opt host ']' with Some i -> String.sub host 0 (i + 1) | None -> host
  else match String.rindex_opt host ':' with Some i -> String.sub host 0 i | None -> host

let path_of target =
  let n = String.length target in
  if n > 0 && target.[0] = '/' then target
  else
    (* absolute-form: scheme "://" authority path *)
    let rec scheme_end i =
      if i + 3 > n then None else if String.sub target i 3 = "://" then Some i else scheme_end (i + 1)
    in
    match scheme_end 0 with
    | None -> "/"
    | Some i -> (
        match String.index_from_opt target (i + 3) '/' with
        | Some j -> String.sub target j (n - j)
        | None -> "/")

let location ~host ~port ~target =
  let host = strip_port host in
  let port = if port = 443 then "" else ":" ^ string_of_int port in
  "https://" ^ host ^ port ^ path_of target

let local_host c =
  let a, _ = Ctx.local c in
  if String.contains a ':' then "[" ^ a ^ "]" else a

let handler ~port c =
  let req = Ctx.request c and buf = Ctx.buffer c in
  let host =
    let i = Request.find req Header_name.Host in
    if i >= 0 then Span.to_string buf (Request.header_value req i) else local_host c
  in
  let target = Span.to_string buf (Request.target req) in
  Ctx.start c Status.Moved_permanently;
  Ctx.header c Header_name.Location (location ~host ~port ~target);
  Ctx.header c Header_name.Content_type "text/plain; charset=utf-8";
  Ctx.body_string c "This site is served over https.\n"
