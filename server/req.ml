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

(* {1 Typed headers} *)

let header_span c name =
  let req = Ctx.request c in
  let i = Request.find req name in
  if i < 0 then Span.empty else Request.header_value req i

let has_header c name = Request.find (Ctx.request c) name >= 0

let header_of c name =
  let req = Ctx.request c in
  let i = Request.find req name in
  if i < 0 then None else Some (Span.to_string (Ctx.buffer c) (Request.header_value req i))

let headers_of c name =
  let req = Ctx.request c and buf = Ctx.buffer c in
  let rec from i acc =
    if i < 0 then List.rev acc
    else from (Request.find_next req name ~after:i) (Span.to_string buf (Request.header_value req i) :: acc)
  in
  from (Request.find req name) []

(* {1 Media types} *)

let content_type_is c pattern = Media_type.request_is (Ctx.buffer c) (Ctx.request c) pattern
let is_json c = Media_type.request_is_json (Ctx.buffer c) (Ctx.request c)
let accepts c offered = Media_type.accepts_request (Ctx.buffer c) (Ctx.request c) offered
let negotiate c offered = Media_type.best_request (Ctx.buffer c) (Ctx.request c) offered

(* {1 JSON bodies} *)

let default_json_limit = 1 lsl 20

(* A parser's message goes into a text/plain answer: keep it short and
   printable, whatever bytes of the body it quotes. *)
let clean_reason msg =
  let n = min (String.length msg) 200 in
  String.init n (fun i -> let ch = msg.[i] in if ch < ' ' || ch = '\127' then ' ' else ch)

let deliver c parse k s =
  match parse s with
  | Ok v -> k c v
  | Error msg -> Respond.error_reason c Status.Bad_request ("malformed JSON body: " ^ clean_reason msg)
  | exception (Out_of_memory as e) -> raise e
  | exception _ -> Respond.error_reason c Status.Bad_request "malformed JSON body"

let too_large c limit =
  Respond.error_reason c Status.Content_too_large (Printf.sprintf "a JSON body is limited to %d bytes" limit)

let rec read_pieces acc limit parse k c =
  if Ctx.body_ended c then deliver c parse k (Buffer.contents acc)
  else begin
    let p = Ctx.body_piece c in
    Buffer.add_string acc (Bigstring.sub_string (Ctx.body_buffer c) ~off:(Span.off p) ~len:(Span.len p));
    Ctx.read_body c ~limit (read_pieces acc limit parse k)
  end

let json c ?(limit = default_json_limit) ~parse k =
  if not (is_json c) then
    Respond.error_reason c Status.Unsupported_media_type "expected a JSON body (Content-Type: application/json)"
  else if Ctx.body_ready c then begin
    let b = Ctx.body c in
    if Span.len b > limit then too_large c limit else deliver c parse k (Span.to_string (Ctx.body_buffer c) b)
  end
  else begin
    let cl = Request.content_length (Ctx.request c) in
    if cl > limit then too_large c limit
    else Ctx.read_body c ~limit (read_pieces (Buffer.create (if cl > 0 then cl else 4096)) limit parse k)
  end
