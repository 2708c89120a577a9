(* The server of test/e2e/test_middleware.py: a router behind every
   middleware of Middleware, with routes that answer at once, later, never
   (until the client leaves), and one whose handler registers a hook of
   its own, to show it does not reach the next request. *)

open Httpz
open Httpz_server
module M = Middleware

(* A head hook made once, registered per request by /hook only. *)
let leak_hook c = Ctx.header_s c "X-Hooked" "yes"

let routes metrics =
  let r = Route.router () in
  Route.get r "/users/:id" (fun c -> Respond.text c ("user " ^ Route.param c "id" ^ "\n"));
  Route.post r "/users/:id" (fun c -> Respond.text c ~status:Status.Created "created\n");
  Route.get r "/id" (fun c -> Respond.text c (M.Request_id.get c));
  Route.get r "/later" (fun c -> Ctx.sleep c 0.05 (fun c -> Respond.text c "later\n"));
  Route.get r "/hang" (fun c -> ignore (Ctx.suspend c (fun c -> Respond.text c "never\n") : unit -> unit));
  Route.get r "/hook" (fun c -> Ctx.on_head c leak_hook; Respond.text c "hooked\n");
  (* Registers the hook, then never answers: the client leaves. *)
  Route.get r "/hook-hang" (fun c ->
      Ctx.on_head c leak_hook;
      ignore (Ctx.suspend c (fun c -> Respond.text c "never\n") : unit -> unit));
  Route.get r "/plain" (fun c -> Respond.text c "plain\n");
  Route.get r "/fail" (fun c -> Respond.error c Status.Service_unavailable);
  Route.get r "/metrics" (M.Route_metrics.handler metrics);
  Route.handler (Route.compile r)

let () =
  let port = ref 8080 and cert = ref "" and key = ref "" and plain = ref 0 and io = ref Server.default_config.io in
  Arg.parse
    [ ("-p", Arg.Set_int port, "PORT port");
      ("--tls-cert", Arg.Set_string cert, "FILE PEM certificate chain");
      ("--tls-key", Arg.Set_string key, "FILE PEM key");
      ("--plain-port", Arg.Set_int plain, "PORT with TLS: the same handler in plain HTTP there");
      ("--io", Arg.Symbol ([ "uring"; "epoll" ], fun s -> io := if s = "epoll" then Server.Epoll else Server.Uring),
       " the backend") ]
    (fun _ -> ()) "middleware_server.exe -p PORT [--tls-cert FILE --tls-key FILE [--plain-port PORT]] [--io uring|epoll]";
  let tls =
    if !cert = "" then None
    else
      Some
        { (Server.tls ~cert_file:!cert ~key_file:!key) with
          listen_plain = (if !plain > 0 then [ ("127.0.0.1", !plain) ] else []) }
  in
  let metrics = M.Route_metrics.create () in
  let app =
    M.apply
      [ M.Request_id.middleware ();
        M.Security_headers.(middleware { default with hsts = Some "max-age=4242" });
        M.Cors.(
          middleware
            { default with origins = Origins [ "https://good.example" ]; headers = [ "Content-Type" ];
              methods = [ Meth.Get; Meth.Post; Meth.Delete ]; expose = [ "X-Request-ID" ]; credentials = true });
        M.Route_metrics.middleware metrics ]
      (routes metrics)
  in
  exit
    (Server.run
       { Server.default_config with host = "127.0.0.1"; port = !port; workers = 1; tls; io = !io; handler_timeout = 30. }
       app)
