(* A small web application on the server library's application layer:
   routes, JSON, a login form with a session cookie and CSRF protection,
   server-sent events, a streamed upload, static files and blocking work.

   app.exe -p PORT [-d ASSETS_DIR] [--tls-cert F --tls-key F] [--io uring|epoll]
           [--memory-sessions]
   GET  /              hello
   GET  /todos/:id     a todo as JSON (404 JSON if none)
   POST /todos         {"title": "..."} → 201 with the new todo
   GET  /login         a form;  POST /login  user=...&password=secret
   GET  /me            who the session says you are (401 if nobody)
   POST /logout        ends the session
   GET  /events        three server-sent events, 100 ms apart
   POST /upload        counts the bytes of a body of at most 1 MiB (413 above)
   GET  /slow          200 ms of blocking work on the thread pool
   GET  /assets/...    the files of ASSETS_DIR *)

open Httpz
open Httpz_server

let json_string s =
  let b = Buffer.create (String.length s + 2) in
  Buffer.add_char b '"';
  String.iter
    (fun ch ->
      match ch with
      | '"' -> Buffer.add_string b "\\\""
      | '\\' -> Buffer.add_string b "\\\\"
      | '\000' .. '\031' -> Buffer.add_string b (Printf.sprintf "\\u%04x" (Char.code ch))
      | ch -> Buffer.add_char b ch)
    s;
  Buffer.add_char b '"';
  Buffer.contents b

(* The value of "title" in a flat JSON object: enough for a demo that
   imposes no JSON library. *)
let find_sub s sub =
  let n = String.length s and m = String.length sub in
  let rec go i = if i + m > n then None else if String.sub s i m = sub then Some i else go (i + 1) in
  go 0

let json_title body =
  let key = "\"title\"" in
  match find_sub body key with
  | None -> None
  | Some i ->
      let n = String.length body in
      let j = ref (i + String.length key) in
      while !j < n && (body.[!j] = ' ' || body.[!j] = ':') do incr j done;
      if !j >= n || body.[!j] <> '"' then None
      else begin
        let b = Buffer.create 16 in
        let k = ref (!j + 1) and fin = ref false in
        while !k < n && not !fin do
          (match body.[!k] with
           | '"' -> fin := true
           | '\\' when !k + 1 < n -> incr k; Buffer.add_char b body.[!k]
           | ch -> Buffer.add_char b ch);
          incr k
        done;
        if !fin then Some (Buffer.contents b) else None
      end

(* In-memory state, one worker (see main). *)
let todos : (string, string) Hashtbl.t = Hashtbl.create 16
let next_id = ref 1
let todo_json id title = Printf.sprintf {|{"id":%s,"title":%s}|} (json_string id) (json_string title)

let show_todo c =
  let id = Route.param c "id" in
  match Hashtbl.find_opt todos id with
  | Some title -> Respond.json c (todo_json id title)
  | None -> Respond.json c ~status:Status.Not_found (Printf.sprintf {|{"error":"no such todo","id":%s}|} (json_string id))

let add_todo c =
  match Csrf.check_origin c with
  | Error f -> Respond.error_reason c Status.Forbidden (Csrf.failure_to_string f)
  | Ok () when not (Ctx.body_ready c) -> Ctx.await_body c
  | Ok () -> (
      match json_title (Req.body_string c) with
      | None -> Respond.json c ~status:Status.Bad_request {|{"error":"expected {\"title\": \"...\"}"}|}
      | Some title ->
          let id = string_of_int !next_id in
          incr next_id;
          Hashtbl.replace todos id title;
          Respond.json c ~status:Status.Created (todo_json id title))

let login_page csrf store c =
  let s = Session.load store c in
  let field = Csrf.field csrf s in
  Session.commit s c;
  Respond.html c
    ("<!doctype html><title>Log in</title><form method=post action=/login>" ^ field
   ^ "<input name=user><input name=password type=password><button>Log in</button></form>\n")

let login store c =
  match (Req.form_field c "user", Req.form_field c "password") with
  | Some user, Some "secret" when user <> "" && String.for_all (fun ch -> ch >= ' ' && ch < '\127') user ->
      let s = Session.load store c in
      Session.regenerate s;
      Session.set s "user" user;
      Session.commit s c;
      Respond.redirect c "/me"
  | _ -> Respond.text c ~status:Status.Unauthorized "wrong user or password\n"

let me store c =
  match Session.get (Session.load store c) "user" with
  | Some u -> Respond.text c ("you are " ^ u ^ "\n")
  | None -> Respond.text c ~status:Status.Unauthorized "nobody\n"

let logout store c =
  let s = Session.load store c in
  Session.clear s;
  Session.commit s c;
  Respond.redirect c "/"

let events c =
  Sse.start c;
  let rec send i c =
    Sse.event c ~event:"tick" ~id:(string_of_int i) (Printf.sprintf "tick %d\nof 3" i);
    Ctx.flush c (fun c -> if i = 3 then Sse.close c else Ctx.sleep c 0.1 (send (i + 1)))
  in
  send 1 c

let upload_limit = 1 lsl 20

let upload c =
  let bytes = ref 0 in
  let rec next c =
    if Ctx.body_ended c then Respond.text c (Printf.sprintf "received %d bytes\n" !bytes)
    else begin
      bytes := !bytes + Span.len (Ctx.body_piece c);
      Ctx.read_body c ~limit:upload_limit next
    end
  in
  Ctx.read_body c ~limit:upload_limit next

let slow c = Ctx.offload c (fun () -> Unix.sleepf 0.2) (fun () c -> Respond.text c "slow done\n")

let routes ~store ~csrf ~assets =
  let r = Route.router () in
  Route.get r "/" (fun c -> Respond.text c "hello from httpz\n");
  Route.get r "/todos/:id" show_todo;
  Route.post r "/todos" add_todo;
  Route.get r "/login" (login_page csrf store);
  Route.post_form r "/login" (login store);
  Route.get r "/me" (me store);
  Route.post_form r "/logout" (logout store);
  Route.get r "/events" events;
  Route.post r "/upload" upload;
  Route.get r "/slow" slow;
  Route.mount r "/assets" (Httpz_static.Static.handler assets);
  Route.compile ~csrf r

let () =
  let port = ref 8080 and dir = ref "." and cert = ref "" and key = ref "" and io = ref Server.default_config.io
  and memory = ref false and max_sessions = ref 100_000 in
  Arg.parse
    [ ("-p", Arg.Set_int port, "PORT port (default 8080)"); ("-d", Arg.Set_string dir, "DIR served under /assets/");
      ("--tls-cert", Arg.Set_string cert, "FILE serve HTTPS with this PEM certificate chain");
      ("--tls-key", Arg.Set_string key, "FILE and this PEM key");
      ("--io", Arg.Symbol ([ "uring"; "epoll" ], fun s -> io := if s = "epoll" then Server.Epoll else Server.Uring),
       " the backend (default uring)");
      ("--memory-sessions", Arg.Set memory, " keep sessions in memory (default: signed cookies)");
      ("--max-sessions", Arg.Set_int max_sessions, "N sessions kept in memory at most (100000)") ]
    (fun _ -> ()) "app.exe [-p PORT] [-d DIR] [--tls-cert FILE --tls-key FILE] [--io uring|epoll] [--memory-sessions [--max-sessions N]]";
  let tls = if !cert = "" then None else Some (Server.tls ~cert_file:!cert ~key_file:!key) in
  (* A fresh key per start: sessions end when the server restarts. A real
     application reads its keys from a secret store. *)
  let store = if !memory then Session.memory ~max_sessions:!max_sessions () else Session.signed ~keys:[ Httpz_sys.Entropy.bytes 32 ] () in
  match Httpz_static.Static.create { Httpz_static.Static.default_config with root = !dir; mount = "/assets/" } with
  | Error e ->
      prerr_endline ("app: " ^ e);
      exit 1
  | Ok assets ->
      (* One worker: the todos (and memory sessions) live in this process;
         with several, each worker would have its own. *)
      exit
        (Server.run { Server.default_config with port = !port; workers = 1; tls; io = !io }
           (Route.handler (routes ~store ~csrf:(Csrf.create store) ~assets)))
