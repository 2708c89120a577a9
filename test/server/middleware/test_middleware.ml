(* Middleware (server/middleware.ml) and the hooks it stands on
   (Ctx.on_head, Ctx.on_complete), driven from memory: a connection slot
   fed requests through H1's entry points (HTTP/1.1, and HTTP/2 frames
   for its exchanges), as a backend would. *)

open Httpz
open Httpz_server
module S = Httpz_test_support
module K = H2conn_client
module M = Middleware

let find = S.find_sub
let has_line head line = find head ("\r\n" ^ line ^ "\r\n") >= 0

let shared () =
  Slot.create_shared ~server_name:"t" ~read_buffer:4096 ~write_buffer:4096 ~max_body:65536
    ~header_ms:1000 ~idle_ms:2000 ~body_ms:1000 ~write_ms:1000 ~handler_ms:3000 ~headers:""
    ~listener_headers:[| "" |] ~keep:4

(* {1 HTTP/1.1 from memory} *)

type h1 = { c : Slot.t; wire : Buffer.t; mutable capture : bool }

let rec go p (a : Connection.action) =
  match a with
  | Write ->
      let c = p.c in
      if p.capture then Buffer.add_string p.wire (Bigstring.sub_string c.out ~off:c.out_sent ~len:(c.out_len - c.out_sent));
      Output.advance c (Output.pending c);
      go p (Connection.written c)
  | Read | Close | Linger | Wait | Detach | Nothing | Read_buffered | Push -> a

(* A connection to [handler] on slot 0 of a fresh worker. *)
let h1 handler =
  let sh = shared () in
  let app c = handler (Ctx.of_conn c) in
  sh.hooks.handler <- app;
  sh.hooks.app <- app;
  let c = Slot.create sh ~slot:0 ~peer:false in
  let p = { c; wire = Buffer.create 256; capture = true } in
  sh.hooks.resume <- (fun c gen k -> ignore (go p (Connection.resume c ~gen k) : Connection.action));
  ignore (Connection.opened c ~fd:(-1) ~listener:0 ~peer_len:0 : Connection.action);
  p

(* [send p req]: what the server wrote back for [req] (heads and small
   bodies: everything here fits in [out]). *)
let send p req =
  Buffer.clear p.wire;
  let n = String.length req in
  (match Connection.prepare_read p.c with
   | Read ->
       Bigstring.blit_from_string req ~src_off:0 p.c.in_buf ~dst_off:p.c.in_off ~len:n;
       ignore (go p (Connection.received p.c n) : Connection.action)
   | _ -> Alcotest.fail "not reading");
  Buffer.contents p.wire

let get ?(meth = "GET") ?(extra = "") path = Printf.sprintf "%s %s HTTP/1.1\r\nHost: t\r\n%s\r\n" meth path extra

(* {1 A handler with hooks} *)

let target c = Span.to_string (Ctx.buffer c) (Request.target (Ctx.request c))

(* What completion hooks saw: status, body bytes sent, completed. *)
let seen : (int * int * bool) list ref = ref []
let later : (unit -> unit) option ref = ref None
let head_hook c = Ctx.header_s c "X-Hooked" "yes"
let done_hook c = seen := (Ctx.status_code c, Ctx.body_bytes_sent c, Ctx.completed c) :: !seen

let handler c =
  match target c with
  | "/hooked" ->
      Ctx.on_head c head_hook;
      Ctx.on_complete c done_hook;
      Respond.text c "hello"
  | "/later" ->
      Ctx.on_head c head_hook;
      Ctx.on_complete c done_hook;
      later := Some (Ctx.suspend c (fun c -> Respond.text c ~status:Status.Created "later"))
  | "/stream" ->
      (* A body flushed in two pieces: the head hook before the first,
         the completion after the last. *)
      Ctx.on_head c head_hook;
      Ctx.on_complete c done_hook;
      Ctx.start c Status.Ok;
      Ctx.chunked_start c;
      Ctx.chunk c "abc";
      Ctx.flush c (fun c ->
          if !seen <> [] then failwith "completed before the end";
          Ctx.chunk c "de";
          Ctx.chunked_end c)
  | _ -> Respond.text c "plain"

let h1_hooks () =
  seen := [];
  let p = h1 handler in
  let r = send p (get "/hooked") in
  Alcotest.(check bool) ("head hook wrote its field: " ^ r) true (has_line r "X-Hooked: yes");
  Alcotest.(check bool) "completion: 200, 5 bytes, complete" true (!seen = [ (200, 5, true) ]);
  (* The same connection (keep-alive), the same slot: nothing carried over. *)
  let r = send p (get "/plain") in
  Alcotest.(check bool) ("answered: " ^ r) true (find r "HTTP/1.1 200 " = 0 && find r "plain" > 0);
  Alcotest.(check bool) ("no hook field on the next request: " ^ r) false (has_line r "X-Hooked: yes");
  Alcotest.(check int) "no completion for the next request" 1 (List.length !seen);
  (* HEAD: the head hook runs, no body bytes. *)
  let r = send p (get ~meth:"HEAD" "/hooked") in
  Alcotest.(check bool) ("HEAD keeps the hook's field: " ^ r) true (has_line r "X-Hooked: yes" && has_line r "Content-Length: 5");
  Alcotest.(check bool) "HEAD: 200, 0 bytes" true (List.hd !seen = (200, 0, true));
  seen := [];
  let r = send p (get "/stream") in
  Alcotest.(check bool) ("streamed: " ^ r) true (has_line r "X-Hooked: yes" && find r "3\r\nabc\r\n" > 0 && find r "2\r\nde\r\n0\r\n\r\n" > 0);
  Alcotest.(check bool) "completion after the last piece: 5 body bytes" true (!seen = [ (200, 5, true) ])

let h1_later () =
  seen := [];
  later := None;
  let p = h1 handler in
  let r = send p (get "/later") in
  Alcotest.(check string) "nothing yet" "" r;
  Alcotest.(check int) "no completion while it waits" 0 (List.length !seen);
  Buffer.clear p.wire;
  (match !later with Some k -> k () | None -> Alcotest.fail "no continuation");
  let r = Buffer.contents p.wire in
  Alcotest.(check bool) ("answered later, with the hook's field: " ^ r) true
    (find r "HTTP/1.1 201 " = 0 && has_line r "X-Hooked: yes");
  Alcotest.(check bool) "completion after the late answer" true (!seen = [ (201, 5, true) ]);
  let r = send p (get "/plain") in
  Alcotest.(check bool) r false (has_line r "X-Hooked: yes");
  Alcotest.(check int) "once" 1 (List.length !seen)

let h1_cancelled () =
  seen := [];
  later := None;
  let p = h1 handler in
  ignore (send p (get "/later"));
  (* The client leaves while the handler waits. *)
  Connection.closed p.c;
  Alcotest.(check bool) "completion: no status, not complete" true (!seen = [ (0, 0, false) ]);
  (match !later with Some k -> k () | None -> ());
  Alcotest.(check int) "a late continuation completes nothing" 1 (List.length !seen);
  (* The slot's next connection. *)
  ignore (Connection.opened p.c ~fd:(-1) ~listener:0 ~peer_len:0 : Connection.action);
  let r = send p (get "/plain") in
  Alcotest.(check bool) r true (find r "HTTP/1.1 200 " = 0 && not (has_line r "X-Hooked: yes"));
  Alcotest.(check int) "nothing ran for it" 1 (List.length !seen)

(* The handler timeout: the request is cancelled (its completion says so),
   the server's own 503 carries none of its hooks' fields. *)
let h1_timeout () =
  seen := [];
  later := None;
  let p = h1 handler in
  ignore (send p (get "/later"));
  Buffer.clear p.wire;
  ignore (go p (Connection.timeout p.c) : Connection.action);
  let r = Buffer.contents p.wire in
  Alcotest.(check bool) ("503: " ^ r) true (find r "HTTP/1.1 503 " = 0 && not (has_line r "X-Hooked: yes"));
  Alcotest.(check bool) "completion: no status, not complete" true (!seen = [ (0, 0, false) ]);
  Connection.closed p.c;
  Alcotest.(check int) "once" 1 (List.length !seen)

(* A wrapper called twice for one request (the body read whole): its
   hooks run once. *)
let h1_await_twice () =
  seen := [];
  let calls = ref 0 in
  let app c =
    incr calls;
    if not (Ctx.body_ready c) then Ctx.await_body c else Respond.text c "got it"
  in
  let m = M.make ~head:head_hook ~complete:done_hook () in
  let p = h1 (m app) in
  let r = send p "POST /x HTTP/1.1\r\nHost: t\r\nContent-Length: 4\r\n\r\n" in
  Alcotest.(check string) "waits for the body" "" r;
  let r = send p "abcd" in
  Alcotest.(check int) "the application ran twice" 2 !calls;
  Alcotest.(check int) ("one hook field: " ^ r) 1
    (List.length (String.split_on_char '\n' r |> List.filter (fun l -> find l "X-Hooked" = 0)));
  Alcotest.(check bool) "one completion" true (!seen = [ (200, 6, true) ])

(* Hooks that raise: logged, the response and the other hooks go on. *)
let h1_raising () =
  seen := [];
  let bad_head (_ : Ctx.t) = failwith "head hook" and bad_done (_ : Ctx.t) = failwith "done hook" in
  let app c =
    Ctx.on_head c bad_head;
    Ctx.on_head c head_hook;
    Ctx.on_complete c done_hook;
    Ctx.on_complete c bad_done;
    Respond.text c "fine"
  in
  let p = h1 app in
  let r = send p (get "/") in
  Alcotest.(check bool) ("answered, with the next hook's field: " ^ r) true
    (find r "HTTP/1.1 200 " = 0 && has_line r "X-Hooked: yes" && find r "fine" > 0);
  Alcotest.(check bool) "the other completion hook ran" true (!seen = [ (200, 4, true) ]);
  let r = send p (get "/") in
  Alcotest.(check bool) ("the connection goes on: " ^ r) true (find r "HTTP/1.1 200 " = 0)

(* {1 HTTP/2 from memory} *)

type h2 = { hc : Slot.t; hout : Buffer.t; dec : K.session; mutable pending : string }

let hcur = ref (Buffer.create 1)

module Memory = Output.Walk (struct
  let budget = max_int
  let holds_last = false
  let rest (c : Slot.t) = Bigstring.sub_string c.out ~off:c.out_sent ~len:(c.out_len - c.out_sent)
  let take s = Buffer.add_string !hcur s; String.length s
  let head c ~more:_ = take (rest c)
  let head_string (c : Slot.t) ~len:_ ~more:_ = take (rest c)
  let head_bigstring (c : Slot.t) ~len ~more:_ = take (rest c ^ Bigstring.sub_string c.ext_bs ~off:c.ext_off ~len)
  let file _ ~len:_ = Alcotest.fail "no file bodies here"

  let gathered (c : Slot.t) ~more:_ = take (Testing.Conn.gathered_bytes c)

  let unsent _ = 0
  let send_unsent _ = Alcotest.fail "the memory peer holds nothing"
end)

let rec drive p (a : Connection.action) =
  match a with
  | Write -> (
      hcur := p.hout;
      match Memory.write p.hc with
      | Output.Flushed -> drive p (Connection.written p.hc)
      | Output.Blocked | Output.Dead -> Alcotest.fail "the memory peer takes everything")
  | Close -> Connection.closed p.hc
  | Read | Linger | Wait | Detach | Nothing | Read_buffered | Push -> ()

let h2_send p s =
  match Connection.prepare_read p.hc with
  | Read ->
      let c = p.hc in
      let n = String.length s in
      if n > c.in_len then Alcotest.fail "no room";
      Bigstring.blit_from_string s ~src_off:0 c.in_buf ~dst_off:c.in_off ~len:n;
      drive p (Connection.received c n)
  | a -> drive p a

let h2_frames p =
  let all = p.pending ^ Buffer.contents p.hout in
  Buffer.clear p.hout;
  let buf = Bigstring.of_string all in
  let r = p.dec.reader in
  let out = ref [] and pos = ref 0 and continue = ref true in
  while !continue do
    match H2_frame.read r buf ~off:!pos ~len:(String.length all - !pos) with
    | H2_frame.Frame ->
        out := K.describe_frame p.dec buf !pos :: !out;
        pos := !pos + H2_frame.consumed r
    | _ -> continue := false
  done;
  p.pending <- String.sub all !pos (String.length all - !pos);
  List.rev !out

let h2 handler =
  let sh = shared () in
  let app c = handler (Ctx.of_conn c) in
  sh.hooks.handler <- app;
  sh.hooks.app <- app;
  let p = { hc = Slot.create sh ~slot:0 ~peer:false; hout = Buffer.create 1024; dec = K.create (); pending = "" } in
  sh.hooks.resume <-
    (fun c gen k ->
      let conn = Slot.carrier c in
      match Connection.resume c ~gen k with Connection.Nothing -> () | a -> if conn == p.hc then drive p a);
  ignore (Connection.opened p.hc ~fd:3 ~listener:0 ~peer_len:0 : Connection.action);
  h2_send p (H2_frame.preface ^ K.settings []);
  Alcotest.(check bool) "HTTP/2 mode" true (p.hc.mode = Slot.H2_conn);
  ignore (h2_frames p);
  (p, sh)

let h2_get sid path = K.request sid (K.get ~path ())
let headers_of fs sid = List.filter (fun f -> find f (Printf.sprintf "HEADERS %d " sid) = 0) fs

let h2_hooks () =
  seen := [];
  let p, sh = h2 handler in
  h2_send p (h2_get 1 "/hooked");
  let fs = h2_frames p in
  Alcotest.(check bool) (String.concat " | " fs) true
    (List.exists (fun f -> find f "x-hooked=yes" > 0) (headers_of fs 1));
  Alcotest.(check bool) "completion: 200, 5 bytes, complete" true (!seen = [ (200, 5, true) ]);
  Alcotest.(check int) "the exchange went back to the pool" 1 sh.nexchanges_free;
  let x = sh.exchanges_free.(0) in
  (* The next stream takes the same pooled exchange. *)
  h2_send p (h2_get 3 "/plain");
  let fs = h2_frames p in
  Alcotest.(check bool) "the same exchange served it" true (sh.exchanges_free.(0) == x);
  Alcotest.(check bool) ("answered: " ^ String.concat " | " fs) true (List.mem "DATA 3 5 ES" fs);
  Alcotest.(check bool) ("no hook field on the next stream: " ^ String.concat " | " fs) false
    (List.exists (fun f -> find f "x-hooked" > 0) (headers_of fs 3));
  Alcotest.(check int) "no completion for the next stream" 1 (List.length !seen)

let h2_reset () =
  seen := [];
  later := None;
  let p, _ = h2 handler in
  h2_send p (h2_get 1 "/later");
  Alcotest.(check int) "waiting" 0 (List.length !seen);
  h2_send p (K.rst 1 H2_error.Cancel);
  Alcotest.(check bool) "completion on the reset: no status, not complete" true (!seen = [ (0, 0, false) ]);
  (match !later with Some k -> k () | None -> ());
  ignore (h2_frames p);
  h2_send p (h2_get 3 "/plain");
  let fs = h2_frames p in
  Alcotest.(check bool) "the connection goes on" true (List.mem "DATA 3 5 ES" fs);
  Alcotest.(check bool) "without the hooks" false (List.exists (fun f -> find f "x-hooked" > 0) fs);
  Alcotest.(check int) "once" 1 (List.length !seen)

(* {1 The middlewares} *)

let origin_ok = "https://app.example"

let cors_cfg = { M.Cors.default with origins = Origins [ origin_ok ]; headers = [ "Content-Type" ]; credentials = true }

let routed () =
  let r = Route.router () in
  Route.get r "/users/:id" (fun c -> Respond.text c ("user " ^ Route.param c "id"));
  Route.post r "/users/:id" (fun c -> Respond.text c ~status:Status.Created "made");
  Route.get r "/fail" (fun c -> Respond.error c Status.Service_unavailable);
  Route.handler (Route.compile r)

let cors () =
  let p = h1 (M.Cors.middleware cors_cfg (routed ())) in
  let pre o = get ~meth:"OPTIONS" ~extra:(Printf.sprintf "Origin: %s\r\nAccess-Control-Request-Method: POST\r\nAccess-Control-Request-Headers: content-type\r\n" o) "/users/1" in
  let r = send p (pre origin_ok) in
  Alcotest.(check bool) ("preflight: " ^ r) true
    (find r "HTTP/1.1 204 " = 0
    && has_line r ("Access-Control-Allow-Origin: " ^ origin_ok)
    && has_line r "Access-Control-Allow-Methods: GET, HEAD, POST"
    && has_line r "Access-Control-Allow-Headers: Content-Type"
    && has_line r "Access-Control-Allow-Credentials: true"
    && has_line r "Access-Control-Max-Age: 600"
    && has_line r "Vary: Origin"
    && not (has_line r "Allow: GET, HEAD, POST, OPTIONS"));
  let r = send p (pre "https://evil.example") in
  Alcotest.(check bool) ("preflight from elsewhere: " ^ r) true
    (find r "HTTP/1.1 403 " = 0 && find r "Access-Control-Allow-Origin" < 0);
  (* Not a preflight: the router's own OPTIONS answer. *)
  let r = send p (get ~meth:"OPTIONS" "/users/1") in
  Alcotest.(check bool) ("plain OPTIONS: " ^ r) true (find r "HTTP/1.1 204 " = 0 && find r "\r\nAllow: " > 0);
  let r = send p (get ~extra:("Origin: " ^ origin_ok ^ "\r\n") "/users/7") in
  Alcotest.(check bool) ("actual: " ^ r) true
    (find r "HTTP/1.1 200 " = 0 && has_line r ("Access-Control-Allow-Origin: " ^ origin_ok) && has_line r "Vary: Origin");
  let r = send p (get ~extra:"Origin: HTTPS://APP.example\r\n" "/users/7") in
  Alcotest.(check bool) ("origin case: " ^ r) true (has_line r "Access-Control-Allow-Origin: HTTPS://APP.example");
  let r = send p (get ~extra:"Origin: https://app.example.evil\r\n" "/users/7") in
  Alcotest.(check bool) ("actual from elsewhere: " ^ r) true
    (find r "HTTP/1.1 200 " = 0 && find r "Access-Control-Allow-Origin" < 0 && has_line r "Vary: Origin");
  let r = send p (get "/users/7") in
  Alcotest.(check bool) ("no Origin: " ^ r) true (find r "Access-Control" < 0 && has_line r "Vary: Origin");
  let p = h1 (M.Cors.middleware { M.Cors.default with origins = Any; headers = [ "*" ] } (routed ())) in
  let r = send p (get ~extra:"Origin: https://x.example\r\n" "/users/7") in
  Alcotest.(check bool) ("any: " ^ r) true (has_line r "Access-Control-Allow-Origin: *" && not (has_line r "Vary: Origin"));
  let r = send p (pre "https://x.example") in
  Alcotest.(check bool) ("any, headers echoed: " ^ r) true
    (find r "HTTP/1.1 204 " = 0 && has_line r "Access-Control-Allow-Headers: content-type");
  let p = h1 (M.Cors.middleware { M.Cors.default with origins = Allow_if (fun o -> o = "https://pred.example") } (routed ())) in
  let r = send p (get ~extra:"Origin: https://pred.example\r\n" "/users/7") in
  Alcotest.(check bool) ("predicate: " ^ r) true (has_line r "Access-Control-Allow-Origin: https://pred.example")

let security () =
  let p = h1 (M.Security_headers.middleware M.Security_headers.default (routed ())) in
  List.iter
    (fun path ->
      let r = send p (get path) in
      Alcotest.(check bool) ("security headers: " ^ r) true
        (find r "X-Content-Type-Options" < 0
        && has_line r "X-Frame-Options: DENY"
        && has_line r "Content-Security-Policy: frame-ancestors 'none'"
        && has_line r "Referrer-Policy: strict-origin-when-cross-origin"
        && find r "Strict-Transport-Security" < 0))
    [ "/users/1"; "/nowhere" ];
  let p =
    h1
      (M.Security_headers.middleware
         { M.Security_headers.default with frame_options = None; content_type_options = true;
           others = [ ("Permissions-Policy", "camera=()") ] }
         (routed ()))
  in
  let r = send p (get "/users/1") in
  Alcotest.(check bool) r true
    (find r "X-Frame-Options" < 0 && has_line r "Permissions-Policy: camera=()"
    && has_line r "X-Content-Type-Options: nosniff");
  Alcotest.check_raises "a value that would split the head"
    Response.Invalid_field
    (fun () -> ignore (M.Security_headers.middleware { M.Security_headers.default with referrer_policy = Some "a\r\nb" } : M.t))

let id_of r =
  let i = find r "\r\nX-Request-ID: " in
  if i < 0 then Alcotest.failf "no id: %s" r;
  let s = i + 16 in
  String.sub r s (String.index_from r s '\r' - s)

let request_id () =
  let inside = ref "" in
  let app c = inside := M.Request_id.get c; Respond.text c "ok" in
  let p = h1 (M.Request_id.middleware () app) in
  let r = send p (get ~extra:"X-Request-Id: abc-123.x\r\n" "/") in
  Alcotest.(check string) "an incoming id is echoed" "abc-123.x" (id_of r);
  Alcotest.(check string) "and read by the handler" "abc-123.x" !inside;
  let a = id_of (send p (get "/")) in
  let b = id_of (send p (get "/")) in
  Alcotest.(check bool) ("generated, unique: " ^ a ^ " " ^ b) true (a <> b && M.Request_id.valid a && String.length a > 12);
  Alcotest.(check string) "the handler saw the generated one" b !inside;
  List.iter
    (fun bad ->
      let r = send p (get ~extra:("X-Request-Id: " ^ bad ^ "\r\n") "/") in
      let id = id_of r in
      Alcotest.(check bool) ("not reused: " ^ bad) true (id <> bad && M.Request_id.valid id))
    [ String.make 129 'a'; "a b"; "<script>"; "a\"b" ];
  let p = h1 (M.Request_id.middleware ~trust_incoming:false () app) in
  Alcotest.(check bool) "untrusted" true (id_of (send p (get ~extra:"X-Request-Id: mine\r\n" "/")) <> "mine");
  (* The id belongs to its request. *)
  let p = h1 (fun c -> if target c = "/with" then M.Request_id.middleware () app c else app c) in
  ignore (send p (get "/with"));
  ignore (send p (get "/without"));
  Alcotest.(check string) "gone with its request" "" !inside

let metrics () =
  let m = M.Route_metrics.create () in
  let p = h1 (M.Route_metrics.middleware m (routed ())) in
  List.iter (fun r -> ignore (send p r))
    [ get "/users/1"; get "/users/2"; get ~meth:"POST" "/users/3"; get "/fail"; get "/nowhere"; get ~meth:"DELETE" "/users/1";
      get "/users/%zz" ];
  let text = M.Route_metrics.text m in
  let line l = Alcotest.(check bool) (l ^ " in\n" ^ text) true (find text (l ^ "\n") >= 0) in
  line {|httpz_route_requests_total{route="/users/:id",status="2xx"} 3|};
  line {|httpz_route_requests_total{route="/fail",status="5xx"} 1|};
  (* 404, 405 and the malformed parameter: no route ran. *)
  line {|httpz_route_requests_total{route="(unmatched)",status="4xx"} 3|};
  line {|httpz_route_duration_seconds_count{route="/users/:id"} 3|};
  line {|httpz_route_duration_seconds_bucket{route="/users/:id",le="+Inf"} 3|};
  line {|httpz_route_incomplete_total{route="/fail"} 0|};
  Alcotest.(check bool) "keyed by pattern, never the path" false (find text "/users/1" >= 0);
  let rows = M.Route_metrics.rows m in
  Alcotest.(check (list string)) "rows" [ "(unmatched)"; "/fail"; "/users/:id" ] (List.map (fun r -> r.M.Route_metrics.route) rows);
  (* Served by its handler. *)
  let r = send (h1 (M.Route_metrics.handler m)) (get "/metrics") in
  Alcotest.(check bool) r true
    (find r "text/plain; version=0.0.4" > 0
    && has_line r (Printf.sprintf "Content-Length: %d" (String.length (M.Route_metrics.text m))))

(* The pattern is recorded for requests with hooks only, and a request no
   route ran for is not counted under the previous request's route. *)
let pattern_per_request () =
  let inside = ref "?" in
  let r = Route.router () in
  Route.get r "/users/:id" (fun c -> inside := Ctx.route_pattern c; Respond.text c "u");
  let routes = Route.handler (Route.compile r) in
  let m = M.Route_metrics.create () in
  let metered = M.Route_metrics.middleware m routes in
  ignore (send (h1 routes) (get "/users/1"));
  Alcotest.(check string) "without hooks: not recorded" "" !inside;
  (* One connection: /users/2 and /nowhere metered, /users/3 between them not. *)
  let p = h1 (fun c -> if target c = "/users/3" then routes c else metered c) in
  ignore (send p (get "/users/2"));
  Alcotest.(check string) "with a completion hook: recorded" "/users/:id" !inside;
  ignore (send p (get "/users/3"));
  ignore (send p (get "/nowhere"));
  let text = M.Route_metrics.text m in
  Alcotest.(check bool) text true
    (find text {|httpz_route_requests_total{route="/users/:id",status="2xx"} 1|} >= 0
    && find text {|httpz_route_requests_total{route="(unmatched)",status="4xx"} 1|} >= 0)

let compose () =
  let order = Buffer.create 16 in
  let mark s = M.make ~before:(fun _ -> Buffer.add_string order s; true) () in
  let stop = M.make ~before:(fun c -> Respond.text c ~status:Status.Forbidden "no"; false) () in
  let app c = Buffer.add_string order "h"; Respond.text c "ok" in
  let r = send (h1 (M.apply [ mark "a"; mark "b"; M.identity ] app)) (get "/") in
  Alcotest.(check string) "outermost first" "abh" (Buffer.contents order);
  Alcotest.(check bool) r true (find r "HTTP/1.1 200 " = 0);
  Buffer.clear order;
  let r = send (h1 (M.compose [ mark "a"; stop; mark "b" ] app)) (get "/") in
  Alcotest.(check string) "a wrapper that answers stops the chain" "a" (Buffer.contents order);
  Alcotest.(check bool) r true (find r "HTTP/1.1 403 " = 0);
  Alcotest.(check bool) "make () is the handler itself" true (M.make () app == app);
  Alcotest.(check bool) "compose [] is the handler itself" true (M.compose [] app == app)

(* {1 Allocation} The whole exchange through H1, per request. *)

let cycle handler req =
  let p = h1 handler in
  p.capture <- false;
  let b = Bigstring.of_string req in
  let n = Bigstring.length b in
  let c = p.c in
  fun () ->
    match Connection.prepare_read c with
    | Read ->
        Bigstring.blit ~src:b ~src_off:0 ~dst:c.in_buf ~dst_off:c.in_off ~len:n;
        ignore (go p (Connection.received c n) : Connection.action)
    | _ -> Alcotest.fail "not reading"

let ok_app c = Ctx.start c Status.Ok; Ctx.body_string c "ok"
let nop (_ : Ctx.t) = ()

let zero_alloc =
  let plain = get "/users/1" in
  [
    S.zero_alloc "an empty chain: 0 words" (cycle (M.apply [] ok_app) plain);
    S.zero_alloc "no-op middlewares (hooks that do nothing): 0 words"
      (cycle (M.apply [ M.make (); M.make ~before:(fun _ -> true) ~head:nop ~complete:nop (); M.identity ] ok_app) plain);
    S.zero_alloc "security headers: 0 words" (cycle (M.Security_headers.middleware M.Security_headers.default ok_app) plain);
    S.zero_alloc "CORS, an allowed origin's request: 0 words"
      (cycle (M.Cors.middleware cors_cfg ok_app) (get ~extra:("Origin: " ^ origin_ok ^ "\r\n") "/users/1"));
    (let m = M.Route_metrics.create () in
     let r = Route.router () in
     Route.get r "/users" ok_app;
     S.zero_alloc "route metrics over a routed request: 0 words"
       (cycle (M.Route_metrics.middleware m (Route.handler (Route.compile r))) (get "/users")));
  ]

(* Review findings: a middleware's queued header survives the router (it
   is the request's own), and CORS refuses credentials for every origin. *)
let queued_before_router () =
  let r = Route.router () in
  Route.get r "/" (fun c -> Respond.text c "hi\n");
  let before c = Respond.add_header_s c "X-From-Before" "yes"; true in
  let h = Middleware.apply [ Middleware.make ~before () ] (Route.handler (Route.compile r)) in
  let t = Testing.create h in
  List.iter
    (fun p ->
      let r = Testing.request ~protocol:p t "/" in
      Testing.check_status 200 r;
      Testing.check_header "x-from-before" "yes" r)
    [ Testing.Http1; Testing.Http2 ]

let cors_any_credentials () =
  match Middleware.Cors.middleware { Middleware.Cors.default with origins = Any; credentials = true } with
  | _ -> Alcotest.fail "Any with credentials accepted"
  | exception Invalid_argument _ -> ()

let () =
  Alcotest.run "middleware"
    [
      ( "hooks",
        [
          Alcotest.test_case "HTTP/1.1: head and completion hooks, not for the next request (keep-alive)" `Quick h1_hooks;
          Alcotest.test_case "HTTP/1.1: a handler answering later completes then" `Quick h1_later;
          Alcotest.test_case "HTTP/1.1: the client leaves while the handler waits" `Quick h1_cancelled;
          Alcotest.test_case "HTTP/1.1: the handler timeout" `Quick h1_timeout;
          Alcotest.test_case "HTTP/1.1: called twice for one body, hooks once" `Quick h1_await_twice;
          Alcotest.test_case "HTTP/1.1: hooks that raise are logged, the response goes on" `Quick h1_raising;
          Alcotest.test_case "HTTP/2: hooks of one stream not on the next (pooled exchange)" `Quick h2_hooks;
          Alcotest.test_case "HTTP/2: a reset stream completes, not complete" `Quick h2_reset;
        ] );
      ( "middlewares",
        [
          Alcotest.test_case "compose and make" `Quick compose;
          Alcotest.test_case "a header queued before the router is kept" `Quick queued_before_router;
          Alcotest.test_case "CORS: credentials for every origin refused" `Quick cors_any_credentials;
          Alcotest.test_case "CORS: preflight before the router, actual requests, origins" `Quick cors;
          Alcotest.test_case "security headers (plain: no HSTS)" `Quick security;
          Alcotest.test_case "request ids: echoed when valid, generated and unique" `Quick request_id;
          Alcotest.test_case "route metrics: by pattern and status class" `Quick metrics;
          Alcotest.test_case "route pattern: per request, only with hooks" `Quick pattern_per_request;
        ] );
      ("allocation", zero_alloc);
    ]
