(* Handlers written with Route, Respond, Req, Session, Csrf and Sse, run
   through Testing: in memory, over HTTP/1.1 and HTTP/2, with the
   server's own state machines and a virtual clock. *)

open Httpz
open Httpz_server
module T = Testing

let both = [ ("HTTP/1.1", T.Http1); ("HTTP/2", T.Http2) ]

(* {1 The application under test} *)

let key = String.make 32 'k'
let store = Session.signed ~keys:[ key ] ()
let csrf = Csrf.create store
let cancelled = ref 0

let digest s = Digest.to_hex (Digest.string s)

let rec ticks c n =
  if n = 3 then Sse.close c
  else begin
    Sse.event c ~id:(string_of_int n) (Printf.sprintf "tick %d" n);
    Ctx.flush c (fun c -> Ctx.sleep c 1.0 (fun c -> ticks c (n + 1)))
  end

let rec forever c n =
  Sse.event c (string_of_int n);
  Ctx.flush c (fun c -> Ctx.sleep c 1.0 (fun c -> forever c (n + 1)))

let routes () =
  let r = Route.router () in
  Route.get r "/users/:id" (fun c ->
      Respond.json c (Printf.sprintf {|{"id":%S,"q":%S}|} (Route.param c "id")
                        (Option.value (Req.query c "q") ~default:"")));
  Route.get r "/form" (fun c ->
      let s = Session.load store c in
      let token = Csrf.token csrf s in
      Session.commit s c;
      Respond.text c token);
  Route.post_form r "/form" (fun c ->
      Respond.text c ("accepted " ^ Option.value (Req.form_field c "name") ~default:"?"));
  Route.post r "/upload" (fun c ->
      if not (Ctx.body_ready c) then Ctx.await_body c
      else begin
        let b = Req.body_string c in
        Respond.text c (Printf.sprintf "%d %s" (String.length b) (digest b))
      end);
  Route.post r "/stream-in" (fun c ->
      let total = ref 0 and ctx = Digest.string "" in
      ignore ctx;
      let acc = Buffer.create 1024 in
      let rec next c =
        if Ctx.body_ended c then Respond.text c (Printf.sprintf "%d %s" !total (digest (Buffer.contents acc)))
        else begin
          let p = Ctx.body_piece c in
          total := !total + Span.len p;
          Buffer.add_string acc (Bigstring.sub_string (Ctx.body_buffer c) ~off:(Span.off p) ~len:(Span.len p));
          Ctx.read_body c ~limit:10_000_000 next
        end
      in
      Ctx.read_body c ~limit:10_000_000 next);
  Route.get r "/events" (fun c ->
      Sse.start c;
      ticks c 0);
  Route.get r "/forever" (fun c ->
      Ctx.on_cancel c (fun () -> incr cancelled);
      Sse.start c;
      forever c 0);
  Route.get r "/sleep" (fun c ->
      let t0 = Ctx.now_ms c in
      Ctx.sleep c 5.0 (fun c -> Respond.text c (Printf.sprintf "slept %d ms" (Ctx.now_ms c - t0))));
  Route.get r "/offload" (fun c ->
      Ctx.offload c (fun () -> Thread.delay 0.05; 6 * 7) (fun v c -> Respond.text c (string_of_int v)));
  Route.get r "/never" (fun c ->
      Ctx.on_cancel c (fun () -> incr cancelled);
      ignore (Ctx.suspend c (fun c -> Respond.text c "late") : unit -> unit));
  Route.get r "/raise" (fun _ -> failwith "boom");
  Route.get r "/big" (fun c -> Respond.text c (String.init 200_000 (fun i -> Char.chr (97 + (i mod 26)))));
  Route.compile ~csrf r

let app = lazy (T.create ~handler_timeout:30. (Route.handler (routes ())))

let for_both name f =
  List.map (fun (v, p) -> Alcotest.test_case (Printf.sprintf "%s (%s)" name v) `Quick (fun () -> f p)) both

let contains s sub =
  let n = String.length s and m = String.length sub in
  let rec go i = i + m <= n && (String.sub s i m = sub || go (i + 1)) in
  go 0

(* {1 Answers} *)

let get_json protocol =
  let t = Lazy.force app in
  let r = T.request ~protocol t "/users/42?q=a%20b" in
  T.check_status 200 r;
  T.check_header "content-type" "application/json" r;
  T.check_body {|{"id":"42","q":"a b"}|} r;
  Alcotest.(check bool) "complete" true r.complete;
  Alcotest.(check (option string)) "content-length" (Some (string_of_int (String.length r.body))) (T.header r "Content-Length");
  (* HTTP/2 names are lower case on the wire; HTTP/1.1 keeps the server's. *)
  let names = List.map fst r.headers in
  match protocol with
  | T.Http2 -> Alcotest.(check bool) "all lower case" true (List.for_all (fun n -> n = String.lowercase_ascii n) names)
  | T.Http1 -> Alcotest.(check bool) "Content-Type as written" true (List.mem "Content-Type" names)

let automatic protocol =
  let t = Lazy.force app in
  let r = T.request ~protocol t "/nope" in
  T.check_status 404 r;
  let r = T.request ~protocol ~meth:"DELETE" t "/users/1" in
  T.check_status 405 r;
  Alcotest.(check bool) "Allow lists GET" true
    (match T.header r "allow" with Some a -> contains a "GET" | None -> false);
  let r = T.request ~protocol ~meth:"HEAD" t "/users/1" in
  T.check_status 200 r;
  T.check_body "" r

let csrf_form protocol =
  let t = Lazy.force app in
  let jar = T.jar () in
  let r = T.request ~protocol ~jar t "/form" in
  T.check_status 200 r;
  let token = r.body in
  Alcotest.(check bool) "a session cookie kept" true (T.cookie jar "httpz_session" <> None);
  let form = [ ("Content-Type", "application/x-www-form-urlencoded") ] in
  let post ?jar body = T.request ~protocol ~meth:"POST" ~headers:form ~body ?jar t "/form" in
  let r = post ~jar ("name=ann&_csrf=" ^ token) in
  T.check_status 200 r;
  T.check_body "accepted ann" r;
  (* Without the session's cookie, or with another token: refused. *)
  T.check_status 403 (post ("name=ann&_csrf=" ^ token));
  T.check_status 403 (post ~jar "name=ann&_csrf=forged");
  T.check_status 403 (post ~jar "name=ann");
  (* A cross-site browser request is refused even with the token. *)
  let r = T.request ~protocol ~meth:"POST" ~jar ~headers:(("Sec-Fetch-Site", "cross-site") :: form)
      ~body:("_csrf=" ^ token) t "/form" in
  T.check_status 403 r

(* The virtual clock is also the handlers' wall clock (Ctx.now): a signed
   session (7 days) expires when it moves on. *)
let session_expiry () =
  let t = Lazy.force app in
  let jar = T.jar () in
  let token = (T.request ~jar t "/form").body in
  let form = [ ("Content-Type", "application/x-www-form-urlencoded") ] in
  let post () = T.request ~meth:"POST" ~headers:form ~body:("name=bo&_csrf=" ^ token) ~jar t "/form" in
  T.advance (6. *. 86400.);
  T.check_body "accepted bo" (post ());
  T.advance (86400. +. 1.);
  let r = post () in
  T.check_status 403 r;
  Alcotest.(check bool) ("no token in the expired session: " ^ r.body) true (contains r.body "missing CSRF token")

let big_body protocol =
  let t = Lazy.force app in
  (* Ten times the 32 KiB read buffer: the body arrives in many reads, and over HTTP/2
     in many DATA frames, past the first window. *)
  let body = String.init 300_000 (fun i -> Char.chr (32 + (i * 7 mod 95))) in
  let r = T.request ~protocol ~meth:"POST" ~body t "/upload" in
  T.check_status 200 r;
  T.check_body (Printf.sprintf "%d %s" (String.length body) (digest body)) r;
  let r = T.request ~protocol ~meth:"POST" ~body t "/stream-in" in
  T.check_body (Printf.sprintf "%d %s" (String.length body) (digest body)) r;
  (* More than max_body (1 MiB) read whole: 413. *)
  let r = T.request ~protocol ~meth:"POST" ~body:(String.make (1 lsl 20 + 1) 'x') t "/upload" in
  T.check_status 413 r;
  Alcotest.(check int) "no buffer held" 0 (T.in_use t)

let big_response protocol =
  let r = T.request ~protocol (Lazy.force app) "/big" in
  T.check_status 200 r;
  Alcotest.(check int) "every byte" 200_000 (String.length r.body);
  Alcotest.(check bool) "complete" true r.complete

let sse protocol =
  let t = Lazy.force app in
  let v0 = T.now () and r0 = Unix.gettimeofday () in
  let r = T.request ~protocol t "/events" in
  T.check_status 200 r;
  T.check_header "content-type" "text/event-stream" r;
  List.iter (fun n -> Alcotest.(check bool) ("event " ^ string_of_int n) true
                (contains r.body (Printf.sprintf "id: %d\ndata: tick %d\n\n" n n))) [ 0; 1; 2 ];
  Alcotest.(check bool) "complete" true r.complete;
  (match protocol with
   | T.Http1 -> T.check_header "transfer-encoding" "chunked" r
   | T.Http2 -> Alcotest.(check (option string)) "no transfer-encoding" None (T.header r "transfer-encoding"));
  Alcotest.(check bool) "2 s of virtual time passed" true (T.now () -. v0 >= 2.0);
  Alcotest.(check bool) "in well under 2 s of real time" true (Unix.gettimeofday () -. r0 < 1.0)

let sleeping protocol =
  let t = Lazy.force app in
  let r0 = Unix.gettimeofday () in
  let r = T.request ~protocol t "/sleep" in
  T.check_status 200 r;
  (* The handler's own clock (Ctx.now_ms) saw the 5 s pass. *)
  Alcotest.(check bool) ("slept 5 s: " ^ r.body) true
    (match Scanf.sscanf r.body "slept %d ms" (fun n -> n) with n -> n >= 5000 && n < 5200);
  Alcotest.(check bool) "real time: well under 5 s" true (Unix.gettimeofday () -. r0 < 1.0)

let offloaded protocol =
  let r = T.request ~protocol (Lazy.force app) "/offload" in
  T.check_status 200 r;
  T.check_body "42" r

let timeouts protocol =
  let t = Lazy.force app in
  let before = !cancelled in
  let v0 = T.now () in
  let r = T.request ~protocol t "/never" in
  T.check_status 503 r;
  Alcotest.(check bool) "at the handler timeout (30 s, virtual)" true (T.now () -. v0 >= 30.);
  Alcotest.(check int) "its cancel hook ran" (before + 1) !cancelled;
  (* A stream that never ends is cut at [limit]: the client hangs up. *)
  let before = !cancelled in
  let r = T.request ~protocol ~limit:5.5 t "/forever" in
  Alcotest.(check bool) "cut" false r.complete;
  Alcotest.(check bool) "events up to the cut" true (contains r.body "data: 5\n" && not (contains r.body "data: 7\n"));
  Alcotest.(check int) "its cancel hook ran" (before + 1) !cancelled;
  T.check_status 500 (T.request ~protocol t "/raise");
  Alcotest.(check int) "no buffer held" 0 (T.in_use t)

(* {1 Files} The static handler answers with file bodies (sendfile on a
   socket): the memory transport reads them as the kernel would send
   them, over HTTP/1.1 and HTTP/2 alike. *)

let static protocol =
  let dir = Filename.concat (Filename.get_temp_dir_name ()) (Printf.sprintf "testing-%d" (Unix.getpid ())) in
  (try Unix.mkdir dir 0o755 with Unix.Unix_error (Unix.EEXIST, _, _) -> ());
  let content = String.init 150_000 (fun i -> Char.chr (48 + (i mod 43))) in
  let path = Filename.concat dir "big.txt" in
  let oc = open_out_bin path in
  output_string oc content;
  close_out oc;
  let st = match Httpz_static.Static.create { Httpz_static.Static.default_config with root = dir } with
    | Ok st -> st | Error e -> Alcotest.fail e in
  let t = T.create (Httpz_static.Static.handler st) in
  let r = T.request ~protocol t "/big.txt" in
  T.check_status 200 r;
  Alcotest.(check int) "every byte" (String.length content) (String.length r.body);
  Alcotest.(check bool) "the file's bytes" true (r.body = content);
  T.check_status 404 (T.request ~protocol t "/nothing.txt");
  Alcotest.(check int) "no buffer held" 0 (T.in_use t);
  Sys.remove path;
  Unix.rmdir dir

(* {1 Raw HTTP/1.1} *)

let raw () =
  let t = Lazy.force app in
  let out = T.raw t "GET /users/1 HTTP/1.1\r\nHost: x\r\n\r\nGET /users/2 HTTP/1.1\r\nHost: x\r\n\r\n" in
  Alcotest.(check bool) "two answers, in order" true
    (contains out {|"id":"1"|} && contains out {|"id":"2"|});
  let out = T.raw t "GET / HTTP/1.1\r\nHost : x\r\n\r\n" in
  Alcotest.(check bool) "400 for a space before the colon" true (contains out "HTTP/1.1 400 ");
  (* A head that never ends meets the header timeout (10 s, virtual). *)
  let out = T.raw t "GET /users/1 HTTP/1.1\r\nHost: x\r\n" in
  Alcotest.(check bool) ("408: " ^ out) true (contains out "HTTP/1.1 408 ")

(* {1 Slot reuse}
   Every request of a Testing server runs in the same connection slot, as
   a worker reuses its slots (and HTTP/2 exchanges come from its pool):
   whatever one request leaves in the slot must not show in the next. The
   probe answers with what it sees of its request; after any other request
   it must answer exactly what it answers on a fresh server. *)

let slots = ref []

let probe c =
  slots := c :: !slots;
  let req = Ctx.request c in
  let body = if Ctx.body_ready c then Span.len (Ctx.body c) else -1 in
  let headers = List.init (Request.header_count req) (fun i -> Span.to_string (Ctx.buffer c) (Request.header_value req i)) in
  Respond.text c
    (Printf.sprintf "meth=%s target=%s body=%d cookie=%s x=%s headers=[%s]"
       (Meth.to_string (Req.meth c)) (Req.path c) body
       (Option.value (Req.cookie c "a") ~default:"-")
       (Option.value (Req.header c "x-first") ~default:"-")
       (String.concat "," (List.filter (fun v -> v <> "test") headers)))

let leaky c =
  let path = Req.path c in
  if path = "/probe" then probe c
  else if path = "/post" then begin
    if not (Ctx.body_ready c) then Ctx.await_body c
    else begin
      Ctx.start c Status.Created;
      Ctx.header_s c "X-First" "1";
      Ctx.header c Header_name.Set_cookie "a=1";
      Ctx.body_string c (Req.body_string c)
    end
  end
  else if path = "/stream" then begin
    Sse.start c;
    Sse.event c "x";
    Ctx.flush c (fun c -> Ctx.sleep c 100. (fun c -> Sse.close c))
  end
  else if path = "/never" then ignore (Ctx.suspend c (fun _ -> ()) : unit -> unit)
  else if path = "/login" then begin
    (* A session committed (its Set-Cookie queued for Respond), then the
       handler fails: the server's 500 is not written through Respond. *)
    let s = Session.load store c in
    Session.set s "user" "alice";
    Session.commit s c;
    failwith "after the commit"
  end
  else if path = "/queued" then begin
    Respond.add_header c Header_name.Set_cookie "a=alice";
    Ctx.start c Status.Ok;
    Ctx.body_string c "answered through Ctx"
  end
  else failwith "boom"

(* The response but its Date, as text. *)
let without_date (r : T.response) =
  Printf.sprintf "%d %s [%s] %S" r.status (if r.complete then "complete" else "cut")
    (String.concat "; "
       (List.filter_map (fun (n, v) -> if String.lowercase_ascii n = "date" then None else Some (n ^ ": " ^ v)) r.headers))
    r.body

let previous =
  [ ("a POST with a body, a cookie and fields", fun t p ->
        ignore (T.request ~protocol:p ~meth:"POST" ~headers:[ ("X-First", "1"); ("Cookie", "a=1") ]
                  ~body:(String.make 50_000 'b') t "/post"));
    ("a HEAD", fun t p -> ignore (T.request ~protocol:p ~meth:"HEAD" t "/probe"));
    ("a stream cut by the client", fun t p -> ignore (T.request ~protocol:p ~limit:1. t "/stream"));
    ("a handler timed out", fun t p -> ignore (T.request ~protocol:p t "/never"));
    ("a handler that raised", fun t p -> ignore (T.request ~protocol:p t "/raise"));
    ("a session committed, then the handler raised", fun t p -> T.check_status 500 (T.request ~protocol:p t "/login"));
    ("a header queued, the answer written through Ctx", fun t p -> T.check_status 200 (T.request ~protocol:p t "/queued"));
    ("an unread body", fun t p -> ignore (T.request ~protocol:p ~meth:"POST" ~body:(String.make 9000 'u') t "/probe")) ]

let reuse protocol =
  let fresh () = T.create ~handler_timeout:5. leaky in
  let first = T.request ~protocol (fresh ()) "/probe" in
  T.check_status 200 first;
  T.check_body "meth=GET target=/probe body=0 cookie=- x=- headers=[]" first;
  let baseline = without_date first in
  List.iter
    (fun (what, before) ->
      let t = fresh () in
      before t protocol;
      slots := [];
      let r = T.request ~protocol t "/probe" in
      let again = T.request ~protocol t "/probe" in
      (match !slots with
       | [ b; a ] -> Alcotest.(check bool) (what ^ ": one slot, reused") true (a == b)
       | _ -> Alcotest.fail "the probe ran twice");
      Alcotest.(check string) (what ^ ": after it, the answer of a fresh server") baseline (without_date r);
      Alcotest.(check string) (what ^ ": and again") baseline (without_date again);
      Alcotest.(check int) (what ^ ": no buffer held") 0 (T.in_use t))
    previous

(* {1 No I/O while the handler runs} (issue 35)
   The protocols only describe what to write; the runtime writes it once
   the handler returned or flushed. A handler that fails after producing
   far more than its write buffer holds, without flushing, therefore
   still gets its 500: no byte of its response had left (HTTP/1.1 used to
   write to the socket from inside Ctx.chunk, and could then only close
   the connection on the cut response). *)

let raise_after_chunks protocol =
  let t =
    T.create ~write_buffer:1024 (fun c ->
        Ctx.start c Status.Ok;
        Ctx.chunked_start c;
        for _ = 1 to 50 do Ctx.chunk c (String.make 1000 'r') done;
        failwith "after 50 KB")
  in
  let r = T.request ~protocol t "/" in
  T.check_status 500 r;
  Alcotest.(check bool) "the answer is complete" true r.complete;
  let run = String.make 100 'r' in
  let has_run = ref false in
  for i = 0 to String.length r.body - 100 do
    if String.sub r.body i 100 = run then has_run := true
  done;
  Alcotest.(check bool) "no byte of the failed response" false !has_run;
  Alcotest.(check int) "no buffer held" 0 (T.in_use t)

(* {1 No socket} *)

let sockets () =
  let dir = "/proc/self/fd" in
  Array.fold_left
    (fun n f -> match Unix.readlink (Filename.concat dir f) with
       | l when String.length l >= 7 && String.sub l 0 7 = "socket:" -> n + 1
       | _ -> n
       | exception Unix.Unix_error _ -> n)
    0 (Sys.readdir dir)

(* Before any test ran: whatever this process inherited. *)
let sockets_at_start = sockets ()

let no_socket () =
  (* This executable runs no server (no reactor of one): Testing brings
     its own, and opens no socket, listening or not. *)
  let t = T.create (fun c -> Respond.text c "hi") in
  let r = T.request t "/" in
  T.check_body "hi" r;
  let r = T.request ~protocol:T.Http2 t "/" in
  T.check_body "hi" r;
  ignore (T.request (Lazy.force app) "/offload");
  Alcotest.(check int) "no socket opened by this process" sockets_at_start (sockets ())

let checks () =
  let r = T.run (fun c -> Respond.text c ~status:Status.Not_found "gone") "/" in
  T.check_status 404 r;
  Alcotest.check_raises "a wrong status fails"
    (Failure "expected status 200, got 404 (body: \"gone\")") (fun () -> T.check_status 200 r);
  Alcotest.check_raises "a wrong header fails"
    (Failure "header content-type: expected \"text/html\", got \"text/plain; charset=utf-8\"")
    (fun () -> T.check_header "content-type" "text/html" r)

let () =
  Alcotest.run "testing"
    [ ("answers",
       List.concat
         [ for_both "GET JSON" get_json; for_both "404, 405, HEAD" automatic;
           for_both "form with CSRF, cookies kept" csrf_form;
           [ Alcotest.test_case "advance: a session expires" `Quick session_expiry ];
           for_both "300 KB body" big_body;
           for_both "200 KB response" big_response;
           (* HTTP/1.1 only: HTTP/2 queues the HEADERS frame at
              Ctx.chunked_start, so there the 200 stands. *)
           [ Alcotest.test_case "raise after 50 KB of chunks, unflushed: 500 (HTTP/1.1)" `Quick (fun () ->
                 raise_after_chunks T.Http1) ] ]);
      ("async",
       List.concat
         [ for_both "SSE with Ctx.sleep" sse; for_both "Ctx.sleep 5 s" sleeping; for_both "Ctx.offload" offloaded;
           for_both "timeouts, cut stream, 500" timeouts ]);
      ("files", for_both "static handler, 150 KB file" static);
      ("raw", [ Alcotest.test_case "pipelined, 400, 408" `Quick raw ]);
      ("reuse", for_both "the slot keeps nothing" reuse);
      ("plain", [ Alcotest.test_case "no socket" `Quick no_socket; Alcotest.test_case "checks" `Quick checks ]) ]
