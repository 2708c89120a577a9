(* The application of the helpers' tests (test_helpers.exe in process,
   helpers_server.exe for test/e2e/test_helpers.py): Req's typed headers,
   media types and JSON bodies, Respond's ?headers and pending headers,
   Html escaping, and the static handler mounted once under Route. *)

open Httpz
open Httpz_server

(* A stand-in for the JSON library an application would pick: accepts
   exactly an object {"title":"..."} without escapes, and says why not. *)
let parse_todo s =
  let s = String.trim s in
  let pre = {|{"title":"|} in
  let n = String.length s and p = String.length pre in
  if n = 0 then Error "empty body"
  else if n < p + 2 || String.sub s 0 p <> pre || String.sub s (n - 2) 2 <> {|"}|} then
    Error "expected {\"title\": \"...\"}"
  else
    let t = String.sub s p (n - p - 2) in
    if String.contains t '"' || String.contains t '\\' then Error "no escapes, please" else Ok t

let create_todo c =
  Req.json c ~limit:1024 ~parse:parse_todo (fun c title ->
      Respond.json c ~status:Status.Created ~headers:[ (Header_name.Location, "/todos/1") ]
        (Printf.sprintf {|{"id":1,"title":"%s"}|} title))

let offered = [| "application/json"; "text/html"; "text/plain" |]

let negotiate c =
  match Req.negotiate c offered with
  | 0 -> Respond.json c ~headers:[ (Header_name.Vary, "Accept") ] {|{"greeting":"hello"}|}
  | 1 -> Respond.html c ~headers:[ (Header_name.Vary, "Accept") ] "<p>hello</p>"
  | 2 -> Respond.text c ~headers:[ (Header_name.Vary, "Accept") ] "hello\n"
  | _ -> Respond.text c ~status:Status.Not_acceptable "406: offered application/json, text/html, text/plain\n"

let accepts c =
  let t = Option.value (Req.query c "type") ~default:"text/html" in
  Respond.text c (string_of_int (Req.accepts c t) ^ "\n")

(* What a handler can read of the request's fields, typed. *)
let fields c =
  let show = function None -> "-" | Some v -> v in
  Respond.text c
    (String.concat "\n"
       [ "user-agent=" ^ show (Req.header_of c Header_name.User_agent);
         "accept=" ^ String.concat "|" (Req.headers_of c Header_name.Accept);
         "has-cookie=" ^ string_of_bool (Req.has_header c Header_name.Cookie);
         "span=" ^ Span.to_string (Ctx.buffer c) (Req.header_span c Header_name.Accept_language);
         "json=" ^ string_of_bool (Req.is_json c);
         "form=" ^ string_of_bool (Req.content_type_is c "application/x-www-form-urlencoded");
         "" ])

let with_headers c =
  Respond.text c
    ~headers:[ (Header_name.Cache_control, "no-store"); (Header_name.Content_language, "en") ]
    "with headers\n"

let csv c = Respond.text c ~headers:[ (Header_name.Content_type, "text/csv; charset=utf-8") ] "a,b\n1,2\n"
let no_content c = Respond.empty c ~headers:[ (Header_name.Etag, {|"v1"|}) ] Status.No_content

let moved c = Respond.redirect c ~headers:[ (Header_name.Cache_control, "no-store") ] "/fast"

let pending c =
  Respond.add_header_s c "X-Request-Id" "req-42";
  Respond.add_header c Header_name.Cache_control "private";
  let show = function None -> "-" | Some v -> v in
  Respond.text c
    (Printf.sprintf "x-request-id=%s cache-control=%s vary=%s\n"
       (show (Respond.pending_header_s c "x-request-id"))
       (show (Respond.pending_header c Header_name.Cache_control))
       (show (Respond.pending_header c Header_name.Vary)))

let hello c =
  let name = Option.value (Req.query c "name") ~default:"world" in
  Respond.html c ("<p title=\"" ^ Html.escape name ^ "\">Hello, " ^ Html.escape name ^ "</p>\n")

(* The steady-state route: typed checks and ?headers given as a
   preallocated option cost nothing per request. *)
let fast_headers = Some [ (Header_name.Cache_control, "no-store") ]
let fast_offered = [| "text/plain"; "application/json" |]

let fast c =
  if Req.is_json c || Req.content_type_is c "text/plain" then Respond.empty c Status.No_content
  else if Req.negotiate c fast_offered = 1 then Respond.json c ?headers:fast_headers "{}"
  else Respond.text c ?headers:fast_headers "fast\n"

let routes ~static =
  let r = Route.router () in
  Route.post r "/todos" create_todo;
  Route.get r "/negotiate" negotiate;
  Route.get r "/accepts" accepts;
  Route.get r "/fields" fields;
  Route.post r "/fields" fields;
  Route.get r "/with-headers" with_headers;
  Route.get r "/csv" csv;
  Route.get r "/no-content" no_content;
  Route.get r "/moved" moved;
  Route.get r "/pending" pending;
  Route.get r "/hello" hello;
  Route.get r "/fast" fast;
  Route.post r "/fast" fast;
  (* Given once: Static's config keeps its default mount "/". *)
  Route.mount r "/assets" (Httpz_static.Static.handler static);
  Route.compile r

let handler ~root =
  match Httpz_static.Static.create { Httpz_static.Static.default_config with root } with
  | Error e -> failwith e
  | Ok static -> Route.handler (routes ~static)
