open Httpz

let target = Target.create ()
let scratch = Bigstring.create 4096

let meth c = Request.meth (Ctx.request c)

let split c =
  let buf = Ctx.buffer c in
  match Target.split target buf (Request.target (Ctx.request c)) with
  | Target.Origin | Target.Absolute -> true
  | Target.Asterisk | Target.Error -> false

let path c =
  let buf = Ctx.buffer c in
  if not (split c) then Span.to_string buf (Request.target (Ctx.request c))
  else
    let n = Target.decode_path buf (Target.path target) ~dst:scratch in
    if n < 0 then Span.to_string buf (Target.path target)
    else Bigstring.sub_string scratch ~off:0 ~len:n

let query c name = if split c then Form.get (Ctx.buffer c) (Target.query target) name else None
let queries c = if split c then Form.to_list (Ctx.buffer c) (Target.query target) else []

let header c name =
  let req = Ctx.request c in
  let i = Request.find_string req (Ctx.buffer c) name in
  if i < 0 then None else Some (Span.to_string (Ctx.buffer c) (Request.header_value req i))

let cookie c name = Cookie.get (Ctx.buffer c) (Ctx.request c) name

let body_string c = Span.to_string (Ctx.body_buffer c) (Ctx.body c)
let form c = Form.to_list (Ctx.body_buffer c) (Ctx.body c)
let form_field c name = Form.get (Ctx.body_buffer c) (Ctx.body c) name
