(* The nine-step application: routes, a JSON resource, a login with a
   session and CSRF, server-sent events, an upload, static files,
   blocking work off the loop, WebSocket; errors as JSON and middleware
   around it. examples/app.ml runs it (HTTPS beside plain HTTP) and
   test/server/app/test_todo_app.ml tests its handlers without a socket.

   GET  /               hello                 GET  /todos/:id   a todo as JSON
   POST /todos          {"title": "..."}      GET  /login       a form
   POST /login          user=...&password=secret (CSRF-checked)
   GET  /me             who you are           POST /logout      ends the session
   GET  /events         three server-sent events, 100 ms apart
   POST /upload         multipart files stored in the upload directory
   GET  /slow           200 ms of blocking work on the thread pool
   GET  /ws             WebSocket echo        GET  /assets/...  static files
   GET  /metrics        requests by route, Prometheus text *)

open Httpz_server

let todos : (string, string) Hashtbl.t = Hashtbl.create 16
let next_id = ref 1
let json v = Yojson.Safe.to_string v
let todo id title = json (`Assoc [ ("id", `String id); ("title", `String title) ])

let show_todo c =
  let id = Route.param c "id" in
  match Hashtbl.find_opt todos id with
  | Some title -> Respond.json c (todo id title)
  | None -> Respond.json c ~status:Not_found (json (`Assoc [ ("error", `String "no such todo"); ("id", `String id) ]))

let title body =
  match Yojson.Safe.from_string body with
  | `Assoc l -> ( match List.assoc_opt "title" l with Some (`String t) -> Ok t | _ -> Error "no \"title\" string")
  | _ -> Error "not an object"
  | exception Yojson.Json_error e -> Error e

let add_todo c =
  match Csrf.check_origin c with
  | Error f -> Respond.error_reason c Forbidden (Csrf.failure_to_string f)
  | Ok () ->
      Req.json c ~parse:title (fun c t ->
          let id = string_of_int !next_id in
          incr next_id; Hashtbl.replace todos id t; Respond.json c ~status:Created (todo id t))

let login_page csrf store c =
  let s = Session.load store c in
  let field = Csrf.field csrf s in
  Session.commit s c; Respond.html c ("<!doctype html><title>Log in</title><form method=post action=/login>" ^ field
                  ^ "<input name=user><input name=password type=password><button>Log in</button></form>\n")

let login store c =
  match (Req.form_field c "user", Req.form_field c "password") with
  | Some user, Some "secret" when user <> "" ->
      let s = Session.load store c in
      Session.(regenerate s; set s "user" user; commit s c); Respond.redirect c "/me"
  | _ -> Respond.text c ~status:Unauthorized "wrong user or password\n"

let me store c =
  match Session.get (Session.load store c) "user" with
  | Some u -> Respond.text c ("you are " ^ Html.escape u ^ "\n")
  | None -> Respond.text c ~status:Unauthorized "nobody\n"

let logout store c =
  let s = Session.load store c in
  Session.(clear s; commit s c); Respond.redirect c "/"

let events c =
  Sse.start c;
  let rec send i c =
    Sse.event c ~event:"tick" ~id:(string_of_int i) (Printf.sprintf "tick %d\nof 3" i);
    Ctx.flush c (fun c -> if i = 3 then Sse.close c else Ctx.sleep c 0.1 (send (i + 1)))
  in
  send 1 c

let upload dir c =
  Upload.multipart c ~dir (fun c -> function
    | Error e -> Upload.respond_error c e
    | Ok form ->
        let file (f : Upload.file) = `Assoc [ ("name", `String f.filename); ("bytes", `Int f.size) ] in
        Respond.json c (json (`List (List.map file form.files))))

let echo = { Ws.on_message = (fun ws kind buf ~off ~len -> Ws.send ws kind buf ~off ~len); on_close = (fun _ _ -> ()) }

let handler ~store ~assets ~uploads =
  let csrf = Csrf.create store and metrics = Middleware.Route_metrics.create () and r = Route.router () in
  Route.get r "/" (fun c -> Respond.text c "hello from httpz\n");
  Route.get r "/todos/:id" show_todo;
  Route.post r "/todos" add_todo;
  Route.get r "/login" (login_page csrf store);
  Route.post_form r "/login" (login store);
  Route.get r "/me" (me store);
  Route.post_form r "/logout" (logout store);
  Route.get r "/events" events;
  Route.post r "/upload" (upload uploads);
  Route.get r "/slow" (fun c -> Ctx.offload c (fun () -> Unix.sleepf 0.2) (fun () c -> Respond.text c "slow done\n"));
  Route.get r "/ws" (fun c -> ignore (Ws.accept c echo : bool));
  Route.mount r "/assets" (Httpz_static.Static.handler assets);
  Route.get r "/metrics" (Middleware.Route_metrics.handler metrics);
  Middleware.apply
    [ Middleware.Request_id.middleware (); Middleware.Security_headers.middleware Middleware.Security_headers.default;
      Middleware.Route_metrics.middleware metrics ]
    (Route.handler (Route.compile ~csrf r))
