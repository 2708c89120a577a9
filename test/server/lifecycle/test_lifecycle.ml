(* How a request ends, over real sockets on each backend, HTTP/1.1 and
   HTTP/2 (h2c prior knowledge):
   - Ctx.on_cancel hooks run only when the request ends before the
     handler answered in full (the client left while it slept), never
     after a complete answer (at once, after a sleep, after the body);
   - Ws.accept over HTTP/2 answers 400 "WebSocket needs HTTP/1.1", with
     no handler failure logged;
   - the development 500 page written through Ctx (any protocol). *)

open Httpz
open Httpz_server
open Httpz_live
module K = H2conn_client

let backend = ref Server.Uring

(* {1 The server's handler} One worker: the count lives in its process. *)

let cancelled = ref 0
let hook c = Ctx.on_cancel c (fun () -> incr cancelled)
let answer c text = Ctx.start c Status.Ok; Ctx.body_string c text
let ws_handlers = { Ws.on_message = (fun _ _ _ ~off:_ ~len:_ -> ()); on_close = (fun _ _ -> ()) }

let handler c =
  let req = Ctx.request c and buf = Ctx.buffer c in
  let is s = Span.equal buf (Request.target req) s in
  if is "/sync" then begin
    hook c;
    answer c "sync-ok"
  end
  else if is "/sleep" then begin
    hook c;
    Ctx.sleep c 0.05 (fun c -> answer c "slept-ok")
  end
  else if is "/body" then begin
    (* Registered on each call (HTTP/1.1 calls the handler again once the
       body is here; HTTP/2 may call it once): any hook counts. *)
    hook c;
    if not (Ctx.body_ready c) then Ctx.await_body c
    else answer c (Printf.sprintf "body-ok %d" (Span.len (Ctx.body c)))
  end
  else if is "/hang" then begin
    hook c;
    Ctx.sleep c 10. (fun c -> answer c "too late")
  end
  else if is "/ws" then ignore (Ws.accept c ws_handlers : bool)
  else if is "/raise" then begin
    hook c;
    failwith "raised on purpose"
  end
  else if is "/noanswer" then hook c
  else if is "/boom" then failwith "<b>boom</b>"
  else if is "/count" then answer c (string_of_int !cancelled)
  else begin
    Ctx.start c Status.Not_found;
    Ctx.body_string c "no"
  end

let config () = { Server.default_config with workers = 1; io = !backend; http2 = true }

(* {1 Clients} *)

let count port =
  with_client port (fun cl ->
      send cl (get "/count");
      int_of_string (read_response cl).body)

let find = Httpz_test_support.find_sub

(* Reads until [needle] arrived (a read that times out fails). *)
let wait_for cl needle =
  while find (pending cl) needle < 0 do
    if not (recv_more cl) then Alcotest.failf "the stream ended before %S" needle
  done

let h2_connect port =
  let cl = connect port in
  send cl (H2_frame.preface ^ K.settings []);
  cl

let h2_get ?(extra = []) cl sid path =
  send cl (K.request sid (K.get ~path ~extra ()))

let h2_post cl sid path body =
  send cl
    (K.request ~end_stream:false sid
       [ (":method", "POST"); (":scheme", "http"); (":path", path); (":authority", "127.0.0.1");
         ("content-length", string_of_int (String.length body)) ]);
  Unix.sleepf 0.05;
  send cl (K.data ~end_stream:true sid body)

let settle () = Unix.sleepf 0.2

(* {1 Cases} *)

let h1_answered () =
  with_server ~config:(config ()) handler (fun s ->
      with_client s.port (fun cl ->
          send cl (get "/sync");
          Alcotest.(check string) "sync" "sync-ok" (read_response cl).body;
          send cl (get "/sleep");
          Alcotest.(check string) "after a sleep" "slept-ok" (read_response cl).body;
          send cl "POST /body HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\n\r\n";
          Unix.sleepf 0.05;
          send cl "hello";
          Alcotest.(check string) "after the body" "body-ok 5" (read_response cl).body);
      settle ();
      Alcotest.(check int) "no hook ran after a complete answer" 0 (count s.port);
      (* The client leaves while the handler sleeps: the hook runs. *)
      with_client s.port (fun cl -> send cl (get "/hang"); Unix.sleepf 0.1);
      settle ();
      Alcotest.(check int) "the hook ran for the client that left" 1 (count s.port);
      (* A handler that raised did not answer: the server's 500 is not its
         answer, and the hook runs. *)
      with_client s.port (fun cl ->
          send cl (get "/raise");
          Alcotest.(check int) "500" 500 (read_response cl).status);
      Alcotest.(check int) "the hook ran for the handler that raised" 2 (count s.port))

let h2_answered () =
  with_server ~config:(config ()) handler (fun s ->
      let cl = h2_connect s.port in
      h2_get cl 1 "/sync";
      wait_for cl "sync-ok";
      h2_get cl 3 "/sleep";
      wait_for cl "slept-ok";
      h2_post cl 5 "/body" "hello";
      wait_for cl "body-ok 5";
      settle ();
      close cl;
      settle ();
      Alcotest.(check int) "no hook ran after a complete answer" 0 (count s.port);
      let cl = h2_connect s.port in
      h2_get cl 1 "/hang";
      Unix.sleepf 0.1;
      close cl;
      settle ();
      Alcotest.(check int) "the hook ran for the client that left" 1 (count s.port);
      let cl = h2_connect s.port in
      h2_get cl 1 "/raise";
      wait_for cl "Internal Server Error";
      close cl;
      Alcotest.(check int) "the hook ran for the handler that raised" 2 (count s.port))

(* A WebSocket upgrade over HTTP/2 (the fields a client that does not know
   RFC 8441 may send): a clean 400, no failure in the log. *)
let h2_websocket () =
  let s = start ~config:(config ()) handler in
  killing s (fun () ->
      let cl = h2_connect s.port in
      h2_get cl 1 "/ws"
        ~extra:[ ("sec-websocket-key", "dGhlIHNhbXBsZSBub25jZQ=="); ("sec-websocket-version", "13") ];
      wait_for cl "WebSocket needs HTTP/1.1";
      (* The HEADERS frame, its status a literal ":status: 400" or the
         static table's entry 400 (index 12: 0x8c). *)
      let p = pending cl in
      Alcotest.(check bool) "status 400" true (find p "\x8c" >= 0 || find p "400" >= 0);
      (* The connection goes on. *)
      h2_get cl 3 "/sync";
      wait_for cl "sync-ok";
      close cl;
      (* Over HTTP/1.1 the same handler still upgrades. *)
      with_client s.port (fun cl ->
          send cl
            "GET /ws HTTP/1.1\r\nHost: t\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
             Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n";
          Alcotest.(check string) "101 over HTTP/1.1" "HTTP/1.1 101 Switching Protocols" (take_line cl));
      let log = stop s in
      Alcotest.(check bool) ("no handler failure logged: " ^ log) true
        (find log "raised" < 0 && find log "Invalid_argument" < 0 && find log "rror" < 0))

(* {1 The development page, protocol-independent} Handler_failure.write_page
   writes through Ctx, so the same call answers an HTTP/2 stream; here on an
   HTTP/1.1 slot in memory, over a head the handler had started. *)
let dev_page () =
  let sh =
    Slot.create_shared ~server_name:"t" ~read_buffer:4096 ~write_buffer:1024 ~max_body:(1 lsl 20)
      ~header_ms:1000 ~idle_ms:2000 ~body_ms:1000 ~write_ms:1000 ~handler_ms:3000 ~headers:""
      ~listener_headers:[| "" |] ~keep:4
  in
  sh.dev_errors <- true;
  let c = Slot.create sh ~slot:0 ~peer:false in
  ignore (H1.opened c ~fd:(-1) ~listener:0 ~peer_len:0 : Conn_action.t);
  Alcotest.(check bool) "no peer: not a loopback client" false (Handler_failure.wants_page c);
  let cx = Ctx.of_conn c in
  Ctx.start cx Status.Ok;
  Ctx.header cx Header_name.Etag "\"half\"";
  let bt = Printexc.get_callstack 5 in
  Handler_failure.write_page c (Failure "<b>boom</b>") bt;
  Alcotest.(check int) "500" 500 (Status.code c.status);
  Alcotest.(check bool) "complete" true (c.resp = Slot.Done);
  (* A short page is copied behind the head, a long one is sent from
     where it is. *)
  let out = Bigstring.sub_string c.out ~off:0 ~len:c.out_len in
  let head_end = find out "\r\n\r\n" + 4 in
  let head = String.sub out 0 head_end in
  let body =
    String.sub out head_end (String.length out - head_end) ^ if c.ext = Slot.Ext_string then c.ext_str else ""
  in
  Alcotest.(check bool) ("the status line: " ^ head) true (find head "HTTP/1.1 500" = 0);
  Alcotest.(check bool) "HTML" true (find head "text/html" > 0);
  Alcotest.(check bool) "the started head is gone" true (find head "half" < 0);
  Alcotest.(check bool) "the exception, escaped" true (find body "Failure(&quot;&lt;b&gt;boom&lt;/b&gt;&quot;)" > 0);
  Alcotest.(check int) "Content-Length: the page" (String.length body)
    (let i = find head "Content-Length: " + 16 in
     int_of_string (String.sub head i (String.index_from head i '\r' - i)))

let wired () =
  with_server ~config:{ (config ()) with dev_errors = true } handler (fun s ->
      with_client s.port (fun cl ->
          send cl (get "/noanswer");
          Alcotest.(check int) "500" 500 (read_response cl).status);
      Alcotest.(check int) "h1 hook ran" 1 (count s.port);
      let cl = h2_connect s.port in
      h2_get cl 1 "/noanswer";
      wait_for cl "Internal Server Error";
      h2_get cl 3 "/boom";
      wait_for cl "</html>";
      Alcotest.(check bool) "the exception shown" true (find (pending cl) "&lt;b&gt;boom" > 0);
      close cl;
      Alcotest.(check int) "h2 hook ran" 2 (count s.port))

(* The server, not the handler, ends a request the handler waits on: a
   body that stops coming gets 408 (body_timeout), and the hook runs, as
   for a client that left (HTTP/1.1 and HTTP/2). *)
let body_timeout () =
  with_server ~config:{ (config ()) with body_timeout = 1. } handler (fun s ->
      with_client s.port (fun cl ->
          send cl "POST /body HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\n\r\nhe";
          Alcotest.(check int) "HTTP/1.1: 408" 408 (read_response cl).status);
      settle ();
      Alcotest.(check int) "HTTP/1.1: the hook ran" 1 (count s.port);
      let cl = h2_connect s.port in
      send cl
        (K.request ~end_stream:false 1
           [ (":method", "POST"); (":scheme", "http"); (":path", "/body"); (":authority", "127.0.0.1");
             ("content-length", "5") ]);
      send cl (K.data 1 "he");
      wait_for cl "Request Timeout";
      close cl;
      settle ();
      Alcotest.(check int) "HTTP/2: the hook ran" 2 (count s.port))

let group name io =
  ( name,
    List.map
      (fun (n, f) -> Alcotest.test_case n `Quick (fun () -> backend := io; f ()))
      [ ("on_cancel over HTTP/1.1", h1_answered);
        ("on_cancel over HTTP/2", h2_answered);
        ("Ws.accept over HTTP/2: 400", h2_websocket);
        ("a handler without an answer runs its hooks; the dev page over HTTP/2", wired);
        ("the server's 408 for a body the handler waits on runs its hooks", body_timeout) ] )

let () =
  Httpz_sys.Syscall.ignore_sigpipe ();
  Alcotest.run "lifecycle"
    [ group "uring" Server.Uring; group "epoll" Server.Epoll;
      ("units", [ Alcotest.test_case "the dev page through Ctx" `Quick dev_page ]) ]
