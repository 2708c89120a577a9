(* Transcript tests of the HTTP/1.1 state machine (H1), driven
   from memory alone (Testing.Conn, the runtime Testing runs handlers
   on): no socket, no event loop. A peer feeds request bytes
   where the connection asks for them, takes its output (optionally a few
   bytes at a time, as a slow socket would), and moves the clock. *)

open Httpz
open Httpz_server
module S = Httpz_test_support

let later = ref None
let flushes = ref 0
let largest_piece = ref 0
let upgraded = ref None

let answer_later c =
  Ctx.start c Status.Ok;
  Ctx.body_string c "later"

let long_raise = "/raise-" ^ String.make 300 'x'

(* Answering twice, raising in each kind of continuation: [true] when the
   target was one of those. *)
let failing buf t c =
  if Span.equal buf t "/twice" then begin
    Ctx.start c Status.Ok;
    Ctx.body_string c "first";
    Ctx.start c Status.Ok;
    Ctx.body_string c "second";
    true
  end
  else if Span.equal buf t "/stream-raise" then begin
    Ctx.start c Status.Ok;
    Ctx.chunked_start c;
    Ctx.chunk c "one\n";
    Ctx.flush c (fun _ -> failwith "late");
    true
  end
  else if Span.equal buf t "/later-raise" then begin
    later := Some (Ctx.suspend c (fun _ -> failwith "later"));
    true
  end
  else if Span.equal buf t "/read-raise" then begin
    Ctx.read_body c ~limit:1000 (fun _ -> failwith "piece");
    true
  end
  else if Span.equal buf t long_raise then raise Not_found
  else if Span.equal buf t "/unbounded" then begin
    (* 17 MiB in one handler call, never flushed. *)
    Ctx.start c Status.Ok;
    Ctx.chunked_start c;
    let mib = String.make (1 lsl 20) 'u' in
    for _ = 1 to 17 do Ctx.chunk c mib done;
    Ctx.chunked_end c;
    true
  end
  else false

(* Every field writer of Ctx but those that would frame the message
   (Connection, Transfer-Encoding are the server's over HTTP/1.1), and
   a line of one's own through the head's text. *)
let span_src = Bigstring.of_string "\ta\"tag\"b max-age=5"
let date_cache = Date.Cache.create ()
let prepared = Prepared_fields.of_list [ (Header_name.Content_type, "text/html") ]
let own_line = "X-Own: 1\r\n"

let all_fields c =
  Ctx.start c Status.Ok;
  Ctx.header c Header_name.Content_type "text/plain";
  Ctx.header c Header_name.X_request_id "req-1";
  Ctx.header_s c "X-Mixed-Case" "v 1";
  Ctx.header_int c Header_name.Age 42;
  Ctx.header_date c Header_name.Last_modified 784111777;
  Ctx.header_date_cached c Header_name.Expires date_cache 784111778;
  Ctx.header_span c Header_name.Etag span_src (Span.make ~off:2 ~len:5);
  Ctx.header_bytes c Header_name.Cache_control span_src ~off:9 ~len:9;
  Ctx.fields c prepared;
  let pos = Ctx.head_pos c in
  Ctx.set_head_pos c (Response.write_string (Ctx.head_buffer c) ~off:pos own_line);
  Ctx.header_s c "x-after" "";
  Ctx.body_string c "fields"

let handler c =
  let req = Ctx.request c and buf = Ctx.buffer c in
  let t = Request.target req in
  if Span.equal buf t "/fields" then all_fields c
  else if Span.equal buf t "/version" then begin
    Ctx.start c Status.Ok;
    Ctx.header_s c "X-Ctx-Version" (Version.to_string (Ctx.version c));
    Ctx.body_string c "v"
  end
  else if Span.equal buf t "/echo" then begin
    if not (Ctx.body_ready c) then Ctx.await_body c
    else begin
      let b = Ctx.body c in
      Ctx.start c Status.Ok;
      Ctx.body_bigstring c (Ctx.body_buffer c) ~off:(Span.off b) ~len:(Span.len b)
    end
  end
  else if Span.equal buf t "/raise" then failwith "boom"
  else if Span.equal buf t "/big-sync" then begin
    Ctx.start c Status.Ok;
    Ctx.chunked_start c;
    for i = 0 to 199 do Ctx.chunk c (String.make 1000 (Char.chr (97 + (i mod 26)))) done;
    Ctx.chunked_end c
  end
  else if Span.equal buf t "/later" then later := Some (Ctx.suspend c answer_later)
  else if Span.equal buf t "/at-once" then (Ctx.suspend c answer_later) ()
  else if Span.equal buf t "/stream" then begin
    Ctx.start c Status.Ok;
    Ctx.chunked_start c;
    Ctx.chunk c "one\n";
    Ctx.flush c (fun c ->
        incr flushes;
        Ctx.chunk c "two\n";
        Ctx.flush c (fun c ->
            incr flushes;
            Ctx.chunked_end c))
  end
  else if Span.equal buf t "/count" then begin
    let total = ref 0 in
    let rec next c =
      if Ctx.body_ended c then begin
        Ctx.start c Status.Ok;
        Ctx.body_string c (Printf.sprintf "%d bytes" !total)
      end
      else begin
        total := !total + Span.len (Ctx.body_piece c);
        largest_piece := max !largest_piece (Span.len (Ctx.body_piece c));
        Ctx.read_body c ~limit:10_000_000 next
      end
    in
    Ctx.read_body c ~limit:10_000_000 next
  end
  else if failing buf t c then ()
  else if Span.equal buf t "/upgrade" then begin
    Ctx.start c Status.Switching_protocols;
    Ctx.header c Header_name.Upgrade "echo";
    Ctx.upgrade c (fun _fd rest -> upgraded := Some rest)
  end
  else begin
    Ctx.start c Status.Ok;
    Ctx.header c Header_name.Content_type "text/plain";
    Ctx.body_bigstring c buf ~off:(Span.off t) ~len:(Span.len t)
  end

let resumed = ref None


let shared ?(read_buffer = 4096) ?(max_body = 1 lsl 20) ?(headers = "X-Content-Type-Options: nosniff\r\n") () =
  let sh =
    Slot.create_shared ~server_name:"t" ~read_buffer ~write_buffer:1024 ~max_body
      ~header_ms:1000 ~idle_ms:2000 ~body_ms:1000 ~write_ms:1000 ~handler_ms:3000
      ~headers ~listener_headers:[| "" |] ~keep:4
  in
  let app c = handler (Ctx.of_conn c) in
  sh.hooks.handler <- app;
  sh.hooks.app <- app;
  (* The backend's part of a resume, without a loop: a continuation that
     comes while the handler runs waits for it to return. *)
  sh.hooks.resume <-
    (fun c gen k ->
      if c.Slot.gen = gen then
        (* What the backends do (Loop.resume_conn): the state machine
           decides; an action is driven by the test. *)
        match H1.resume c ~gen k with
        | H1.Nothing -> ()
        | a -> resumed := Some a);
  sh

(* {1 The in-memory peer}
   Httpz_server.Testing's runtime, one action at a time (Testing.Conn):
   Output's walk over a client that takes [window] bytes per write call
   (then its "socket" is full until the next call), as the backends drive
   the state machine. *)

module Conn = Testing.Conn

type outcome = Conn.outcome = Waiting | Closed | Lingering | Suspended | Detached | Idle
type peer = { c : Slot.t; conn : Conn.t }

let peer ?window sh =
  let conn = Conn.create ?window sh in
  { c = Conn.slot conn; conn }

let drive p a = Conn.drive p.conn a
let send p s = Conn.send p.conn s
let take p = Conn.take p.conn
let open_ p = drive p (H1.opened p.c ~fd:3 ~listener:0 ~peer_len:0)
let exchange p s = Conn.exchange p.conn s

let outcome =
  Alcotest.testable
    (fun f o ->
      Format.pp_print_string f
        (match o with
         | Waiting -> "waiting"
         | Closed -> "closed"
         | Lingering -> "lingering"
         | Suspended -> "suspended"
         | Detached -> "detached"
         | Idle -> "nothing to do"))
    ( = )

let index = S.find_sub
let contains s sub = index s sub >= 0

let count s sub =
  let n = String.length s and m = String.length sub in
  let rec go i k = if i + m > n then k else if String.sub s i m = sub then go (i + m) (k + 1) else go (i + 1) k in
  go 0 0

let get path = Printf.sprintf "GET %s HTTP/1.1\r\nHost: t\r\n\r\n" path
let check_has what s sub = Alcotest.(check bool) (what ^ ": " ^ String.escaped sub) true (contains s sub)

(* {1 Transcripts} *)

let keep_alive () =
  let sh = shared () in
  let p = peer sh in
  Alcotest.check outcome "opened" Waiting (open_ p);
  Alcotest.check outcome "answered, waiting for more" Waiting (exchange p (get "/a"));
  let out = take p in
  check_has "status" out "HTTP/1.1 200 OK\r\n";
  check_has "length" out "Content-Length: 2\r\n";
  Alcotest.(check bool) "body last" true (String.length out > 2 && String.sub out (String.length out - 2) 2 = "/a");
  Alcotest.(check bool) "no Connection: close" false (contains out "Connection: close");
  (* Idle between requests: no buffer held. *)
  Alcotest.(check int) "idle: no read buffer" 0 (Bigstring.length p.c.rbuf);
  Alcotest.(check int) "idle: no write buffer" 0 (Bigstring.length p.c.out);
  Alcotest.(check int) "idle: nothing taken from the pools" 0
    (Buffer_pool.in_use sh.reads + Buffer_pool.in_use sh.writes + Buffer_pool.in_use sh.bodies);
  Alcotest.check outcome "second request" Waiting (exchange p (get "/b"));
  check_has "second" (take p) "\r\n\r\n/b";
  Alcotest.check outcome "client closes" Closed (drive p (H1.received p.c 0))

(* Over HTTP/1.1 the writers give text lines, exactly, in order, after
   the server's own; the head's text is open to writers of one's own. *)
let text_fields () =
  let p = peer (shared ()) in
  ignore (open_ p : outcome);
  Alcotest.check outcome "answered" Waiting (exchange p (get "/fields"));
  let out = take p in
  let from = index out "X-Content-Type-Options: nosniff\r\n" in
  Alcotest.(check bool) "the server's fields first" true (from > 0);
  Alcotest.(check string) "the handler's lines, exactly"
    (String.concat ""
       [ "X-Content-Type-Options: nosniff\r\n"; "Content-Type: text/plain\r\n"; "X-Request-ID: req-1\r\n";
         "X-Mixed-Case: v 1\r\n"; "Age: 42\r\n"; "Last-Modified: Sun, 06 Nov 1994 08:49:37 GMT\r\n";
         "Expires: Sun, 06 Nov 1994 08:49:38 GMT\r\n"; "ETag: \"tag\"\r\n"; "Cache-Control: max-age=5\r\n";
         "Content-Type: text/html\r\n"; own_line; "x-after: \r\n"; "Content-Length: 6\r\n\r\nfields" ])
    (String.sub out from (String.length out - from))

(* Ctx.version: the request's HTTP/1.x version. *)
let version_h1 () =
  let p = peer (shared ()) in
  ignore (open_ p : outcome);
  ignore (exchange p (get "/version") : outcome);
  check_has "HTTP/1.1" (take p) "X-Ctx-Version: HTTP/1.1\r\n";
  ignore (exchange p "GET /version HTTP/1.0\r\nConnection: keep-alive\r\n\r\n" : outcome);
  check_has "HTTP/1.0" (take p) "X-Ctx-Version: HTTP/1.0\r\n"

(* Configured headers larger than the write buffer (Server.check refuses
   them; a library that builds its own configuration may not): every
   answer still goes out, as a bare 500, and the connection survives to
   close cleanly. *)
let headers_too_large () =
  let sh = shared ~headers:("X-Big: " ^ String.make 1500 'a' ^ "\r\n") () in
  let p = peer sh in
  ignore (open_ p : outcome);
  Alcotest.check outcome "answered, then a lingering close" Lingering (exchange p (get "/a"));
  let out = take p in
  check_has "a 500" out "HTTP/1.1 500 Internal Server Error\r\n";
  Alcotest.(check bool) "without the headers that do not fit" false (contains out "X-Big")

let pipelining () =
  let p = peer (shared ()) in
  ignore (open_ p);
  Alcotest.check outcome "three at once" Waiting (exchange p (get "/1" ^ get "/2" ^ get "/3"));
  let out = take p in
  Alcotest.(check int) "three answers" 3 (count out "HTTP/1.1 200 OK");
  let i1 = index out "\r\n/1" and i2 = index out "\r\n/2" and i3 = index out "\r\n/3" in
  Alcotest.(check bool) "in order" true (0 <= i1 && i1 < i2 && i2 < i3)

let byte_at_a_time () =
  let p = peer (shared ()) in
  ignore (open_ p);
  String.iter (fun ch -> ignore (exchange p (String.make 1 ch))) (get "/slow" ^ get "/next");
  let out = take p in
  Alcotest.(check int) "both answered" 2 (count out "HTTP/1.1 200 OK");
  check_has "first" out "/slow";
  check_has "second" out "/next"

let slow_reader () =
  let p = peer ~window:7 (shared ()) in
  ignore (open_ p);
  let big = "/" ^ String.make 3000 'x' in
  Alcotest.check outcome "written in 7-byte pieces" Waiting (exchange p (get big));
  let out = take p in
  Alcotest.(check bool) "whole body, copied when blocked" true (contains out ("\r\n\r\n" ^ big))

let expect_continue () =
  let p = peer (shared ()) in
  ignore (open_ p);
  Alcotest.check outcome "asks for the body" Waiting
    (exchange p "POST /echo HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n");
  Alcotest.(check string) "100 Continue, only that" "HTTP/1.1 100 Continue\r\n\r\n" (take p);
  Alcotest.check outcome "body" Waiting (exchange p "hel");
  Alcotest.(check string) "nothing before the whole body" "" (take p);
  Alcotest.check outcome "rest" Waiting (exchange p "lo");
  let out = take p in
  check_has "echo" out "\r\n\r\nhello";
  Alcotest.(check bool) "kept alive" false (contains out "Connection: close")

let large_body () =
  let sh = shared ~read_buffer:1024 () in
  let p = peer sh in
  ignore (open_ p);
  let body = String.init 100_000 (fun i -> Char.chr (97 + (i mod 26))) in
  ignore (exchange p (Printf.sprintf "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: %d\r\n\r\n" 100_000));
  Alcotest.(check bool) "a body buffer taken" true (Buffer_pool.in_use sh.bodies >= 100_000);
  Alcotest.check outcome "read and echoed" Waiting (exchange p body);
  check_has "echo" (take p) ("\r\n\r\n" ^ body);
  Alcotest.(check int) "body buffer given back" 0 (Buffer_pool.in_use sh.bodies)

let unwanted_body () =
  let p = peer (shared ()) in
  ignore (open_ p);
  Alcotest.check outcome "answered, then lingers" Lingering
    (exchange p "GET /x HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\nContent-Length: 1048576\r\n\r\n");
  let out = take p in
  Alcotest.(check bool) "no 100 Continue" false (contains out "100 Continue");
  check_has "answered" out "HTTP/1.1 200 OK";
  check_has "closes" out "Connection: close"

let parse_error () =
  let p = peer (shared ()) in
  ignore (open_ p);
  Alcotest.check outcome "lingers" Lingering (exchange p "GET / HTTP/1.1\r\nHost : t\r\n\r\n");
  let out = take p in
  check_has "400" out "HTTP/1.1 400 ";
  check_has "nosniff" out "X-Content-Type-Options: nosniff\r\n";
  check_has "closes" out "Connection: close"

let handler_raises () =
  let p = peer (shared ()) in
  ignore (open_ p);
  Alcotest.check outcome "lingers" Lingering (exchange p (get "/raise"));
  check_has "500" (take p) "HTTP/1.1 500 "

let timeouts () =
  let sh = shared () in
  let p = peer sh in
  ignore (open_ p);
  ignore (exchange p "GET / HT");
  Alcotest.(check bool) "header timer" true (p.c.timer = Slot.Header_timer);
  sh.tick <- p.c.deadline;
  Alcotest.check outcome "408, then lingers" Lingering (drive p (H1.timeout p.c));
  check_has "408" (take p) "HTTP/1.1 408 ";
  (* An idle keep-alive connection is just closed. *)
  let p = peer sh in
  ignore (open_ p);
  ignore (exchange p (get "/"));
  ignore (take p);
  Alcotest.(check bool) "idle timer" true (p.c.timer = Slot.Idle_timer);
  Alcotest.check outcome "closed" Closed (drive p (H1.timeout p.c))

(* A body trickling in below the minimum rate keeps its first deadline; one
   arriving fast enough moves it, never further than the timeout ahead. *)
let body_clock () =
  let sh = shared () in
  let p = peer sh in
  ignore (open_ p);
  ignore (exchange p "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 100000\r\n\r\n");
  let first = p.c.deadline in
  Alcotest.(check bool) "body timer" true (p.c.timer = Slot.Body_timer);
  for _ = 1 to 50 do ignore (exchange p "x") done;
  Alcotest.(check int) "50 bytes buy no time" first p.c.deadline;
  ignore (exchange p (String.make 20_000 'y'));
  Alcotest.(check int) "20 KB: capped at the timeout from now" (sh.tick + sh.body_ticks + 1) p.c.deadline

(* {2 Answering later} *)

let suspended () =
  let sh = shared () in
  let p = peer sh in
  ignore (open_ p);
  Alcotest.check outcome "handler waits" Suspended (exchange p (get "/later"));
  Alcotest.(check string) "nothing written yet" "" (take p);
  Alcotest.(check bool) "handler timer" true (p.c.timer = Slot.Handler_timer);
  (match !later with Some resume -> resume () | None -> Alcotest.fail "no resume");
  (match !resumed with
   | Some a ->
       resumed := None;
       Alcotest.check outcome "answered later" Waiting (drive p a)
   | None -> Alcotest.fail "not resumed");
  check_has "the answer" (take p) "\r\n\r\nlater";
  (* Resumed before the handler even returned. *)
  Alcotest.check outcome "at once" Waiting (exchange p (get "/at-once"));
  check_has "answered" (take p) "later";
  (* A stale resume (the request is over) does nothing. *)
  (match !later with Some resume -> resume () | None -> ());
  Alcotest.(check bool) "stale resume dropped" true (!resumed = None)

let handler_timeout () =
  let sh = shared () in
  let p = peer sh in
  ignore (open_ p);
  Alcotest.check outcome "waits" Suspended (exchange p (get "/later"));
  let gen = p.c.gen in
  Alcotest.check outcome "503, then lingers" Lingering (drive p (H1.timeout p.c));
  check_has "503" (take p) "HTTP/1.1 503 ";
  Alcotest.(check bool) "the late continuation is dropped" true (p.c.gen <> gen)

let streamed_response () =
  let p = peer (shared ()) in
  ignore (open_ p);
  flushes := 0;
  Alcotest.check outcome "streamed" Waiting (exchange p (get "/stream"));
  let out = take p in
  Alcotest.(check int) "continued after each flush" 2 !flushes;
  check_has "chunked" out "Transfer-Encoding: chunked\r\n";
  check_has "pieces and end" out "\r\n\r\n4\r\none\n\r\n4\r\ntwo\n\r\n0\r\n\r\n"

(* The sans-I/O shape of a streamed body (issue 35): nothing is written
   while the handler runs, whatever it produces; the connection writes it
   after. A body far larger than [out] (1 KiB here) arrives whole and in
   order through a client that takes 1000 bytes per write call. *)
let synchronous_stream () =
  let p = peer ~window:1000 (shared ()) in
  ignore (open_ p);
  Alcotest.check outcome "answered" Waiting (exchange p (get "/big-sync"));
  let out = take p in
  let piece i = Printf.sprintf "3e8\r\n%s\r\n" (String.make 1000 (Char.chr (97 + (i mod 26)))) in
  let body = String.concat "" (List.init 200 piece) ^ "0\r\n\r\n" in
  check_has "chunked" out "Transfer-Encoding: chunked\r\n";
  Alcotest.(check bool) "200 KB, whole and in order" true (contains out ("\r\n\r\n" ^ body))

(* What may wait unflushed is bounded: 17 MiB without Ctx.flush fails the
   handler (Invalid_argument), answered 500, instead of a buffer as large
   as whatever the handler makes. *)
let unflushed_bound () =
  let p = peer (shared ()) in
  ignore (open_ p);
  Alcotest.check outcome "500, then lingers" Lingering (exchange p (get "/unbounded"));
  let out = take p in
  check_has "a 500" out "HTTP/1.1 500 ";
  Alcotest.(check bool) "not the body" true (String.length out < 100_000)

let streamed_request_body () =
  let sh = shared ~read_buffer:1024 () in
  let p = peer sh in
  ignore (open_ p);
  largest_piece := 0;
  let n = 300_000 in
  ignore (exchange p (Printf.sprintf "POST /count HTTP/1.1\r\nHost: t\r\nContent-Length: %d\r\n\r\n" n));
  Alcotest.check outcome "counted" Waiting (exchange p (String.make n 'b'));
  check_has "all of it" (take p) (Printf.sprintf "%d bytes" n);
  Alcotest.(check bool) "pieces no larger than the read buffer" true (!largest_piece <= 1024);
  Alcotest.(check int) "no body buffer" 0 (Buffer_pool.in_use sh.bodies);
  (* Chunked, and pipelined after it. *)
  let chunks = String.concat "" (List.init 50 (fun _ -> "3e8\r\n" ^ String.make 1000 'c' ^ "\r\n")) in
  Alcotest.check outcome "chunked counted" Waiting
    (exchange p ("POST /count HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n" ^ chunks ^ "0\r\n\r\n" ^ get "/after"));
  let out = take p in
  check_has "50,000 bytes" out "50000 bytes";
  check_has "then the next request" out "\r\n\r\n/after"

let upgrade () =
  let p = peer (shared ()) in
  ignore (open_ p);
  upgraded := None;
  Alcotest.check outcome "handed over" Detached
    (exchange p "GET /upgrade HTTP/1.1\r\nHost: t\r\nUpgrade: echo\r\nConnection: Upgrade\r\n\r\nhello");
  let out = take p in
  check_has "101" out "HTTP/1.1 101 Switching Protocols\r\n";
  check_has "upgrade" out "Upgrade: echo\r\nConnection: Upgrade\r\n\r\n";
  Alcotest.(check string) "the bytes after the head" "hello" (H1.detach p.c)

(* {2 Failures and the access log} *)

(* Runs [f] with standard error (where Log.msg writes) going to a file:
   its result and what was written. *)
let capture_stderr f =
  let path = Filename.temp_file "httpz_h1" ".err" in
  let fd = Unix.openfile path [ Unix.O_WRONLY; Unix.O_TRUNC ] 0o600 in
  flush stderr;
  let saved = Unix.dup Unix.stderr in
  Unix.dup2 fd Unix.stderr;
  let restore () =
    flush stderr;
    Unix.dup2 saved Unix.stderr;
    Unix.close saved;
    Unix.close fd
  in
  match f () with
  | r ->
      restore ();
      let text = S.read_file path in
      Sys.remove path;
      (r, text)
  | exception e ->
      restore ();
      raise e

(* The server's access log (common format) on [sh], into a file: a
   function that flushes it and is the lines written since. *)
let access_log sh =
  let path = Filename.temp_file "httpz_h1" ".log" in
  let fd = Unix.openfile path [ Unix.O_WRONLY; Unix.O_TRUNC ] 0o600 in
  let log = Access_log.create ~fd:(Httpz_sys.Syscall.fd_of_unix fd) ~format:Access_log.Common in
  sh.Slot.hooks.log <- (fun c parsed complete -> Access_log.request log c ~parsed ~complete);
  let seen = ref 0 in
  fun () ->
    Access_log.flush log;
    let all = S.read_file path in
    let fresh = String.sub all !seen (String.length all - !seen) in
    seen := String.length all;
    List.filter (( <> ) "") (String.split_on_char '\n' fresh)

let one_line lines =
  match lines with
  | [ l ] -> l
  | l -> Alcotest.failf "one log line expected, got %d: %s" (List.length l) (String.concat " | " l)

(* A fresh server with an access log, a connection, and [path] asked on
   it: the log's reader, the peer, the outcome and what went to stderr. *)
let logged_exchange path =
  let sh = shared () in
  let lines = access_log sh in
  let p = peer sh in
  ignore (open_ p);
  let o, err = capture_stderr (fun () -> exchange p (get path)) in
  (sh, lines, p, o, err)

let raise_logged () =
  let sh, lines, p, o, err = logged_exchange "/raise" in
  Alcotest.check outcome "500, then lingers" Lingering o;
  check_has "500" (take p) "HTTP/1.1 500 ";
  check_has "the exception" err "handler raised Failure(\"boom\")";
  check_has "method, target, client" err "(GET /raise from -)";
  check_has "logged complete" (one_line (lines ())) "\"GET /raise HTTP/1.1\" 500 22 0";
  Alcotest.(check bool) "not cut" false (contains err " cut");
  (* A long target is cut in the message, and odd bytes escaped. *)
  let p = peer sh in
  ignore (open_ p);
  let _, err = capture_stderr (fun () -> exchange p (get long_raise)) in
  check_has "Not_found" err "handler raised Not_found (GET /raise-xxx";
  check_has "cut at the bound" err (String.make (Handler_failure.max_target - 7) 'x' ^ "... from");
  ignore (lines ())

(* The backtrace is in the message when recorded; the development page
   only for a client on the loopback. *)
let dev_errors () =
  let sh = shared () in
  sh.dev_errors <- true;
  let recording = Printexc.backtrace_status () in
  Printexc.record_backtrace true;
  let p = peer sh in
  ignore (open_ p);
  let _, err = capture_stderr (fun () -> exchange p (get "/raise")) in
  check_has "a backtrace" err "Raised at";
  let out = take p in
  check_has "not on the loopback: the short 500" out "\r\n\r\nInternal Server Error\n";
  (* A real loopback connection, whose accepted socket the slot holds. *)
  let l = Unix.socket Unix.PF_INET Unix.SOCK_STREAM 0 in
  Unix.bind l (Unix.ADDR_INET (Unix.inet_addr_loopback, 0));
  Unix.listen l 1;
  let client = Unix.socket Unix.PF_INET Unix.SOCK_STREAM 0 in
  Unix.connect client (Unix.getsockname l);
  let server, _ = Unix.accept l in
  let p = peer sh in
  ignore (drive p (H1.opened p.c ~fd:(Httpz_sys.Syscall.fd_of_unix server) ~listener:0 ~peer_len:0));
  let _, err = capture_stderr (fun () -> exchange p (get "/raise")) in
  check_has "the client's address" err "from 127.0.0.1)";
  let out = take p in
  check_has "500" out "HTTP/1.1 500 ";
  check_has "HTML" out "Content-Type: text/html";
  check_has "the exception, escaped" out "Failure(&quot;boom&quot;)";
  check_has "the backtrace" out "Raised at";
  sh.dev_errors <- false;
  let p = peer sh in
  ignore (drive p (H1.opened p.c ~fd:(Httpz_sys.Syscall.fd_of_unix server) ~listener:0 ~peer_len:0));
  ignore (capture_stderr (fun () -> exchange p (get "/raise")));
  check_has "without dev_errors: the short 500" (take p) "\r\n\r\nInternal Server Error\n";
  List.iter Unix.close [ client; server; l ];
  Printexc.record_backtrace recording

let answered_twice () =
  let _, lines, p, o, err = logged_exchange "/twice" in
  Alcotest.check outcome "kept alive" Waiting o;
  let out = take p in
  check_has "the first answer" out "HTTP/1.1 200 OK\r\n";
  check_has "its body" out "\r\n\r\nfirst";
  Alcotest.(check int) "one response" 1 (count out "HTTP/1.1");
  Alcotest.(check bool) "no second body" false (contains out "second");
  (* One line: "<ISO time> [error] httpz[PID]: <message>". *)
  let marker = "] httpz[" in
  let i = S.find_sub err marker in
  Alcotest.(check bool) "a timestamped error line" true (i > 0 && S.find_sub err "Z [error] httpz[" = i - 8);
  let msg = String.sub err (String.index_from err i ':' + 2) (String.length err - String.index_from err i ':' - 2) in
  Alcotest.(check string) "logged once" "the handler answered twice (GET /twice from -)\n" msg;
  check_has "access log: the first" (one_line (lines ())) "\"GET /twice HTTP/1.1\" 200 5 0";
  Alcotest.check outcome "the connection goes on" Waiting (exchange p (get "/a"));
  check_has "next" (take p) "\r\n\r\n/a"

let continuation_raises () =
  (* In a flush continuation: the head and a chunk left. *)
  let sh, lines, p, o, err = logged_exchange "/stream-raise" in
  Alcotest.check outcome "closed" Closed o;
  let out = take p in
  check_has "200 sent" out "HTTP/1.1 200 OK\r\n";
  check_has "the chunk" out "4\r\none\n";
  Alcotest.(check bool) "no 500 after it" false (contains out "500");
  check_has "logged" err "handler raised Failure(\"late\") (GET /stream-raise from -)";
  check_has "access log: status sent, body bytes, cut" (one_line (lines ()))
    "\"GET /stream-raise HTTP/1.1\" 200 4 0 cut";
  (* In a suspend continuation, in a read_body one: nothing left yet. *)
  let p = peer sh in
  ignore (open_ p);
  Alcotest.check outcome "waits" Suspended (exchange p (get "/later-raise"));
  let err =
    snd
      (capture_stderr (fun () ->
           (match !later with Some resume -> resume () | None -> Alcotest.fail "no resume");
           match !resumed with
           | Some a ->
               resumed := None;
               Alcotest.check outcome "500, lingers" Lingering (drive p a)
           | None -> Alcotest.fail "not resumed"))
  in
  check_has "suspend: logged" err "handler raised Failure(\"later\") (GET /later-raise from -)";
  check_has "suspend: 500" (take p) "HTTP/1.1 500 ";
  check_has "suspend: access log" (one_line (lines ())) "\" 500 22 0";
  let p = peer sh in
  ignore (open_ p);
  let o, err =
    capture_stderr (fun () ->
        exchange p "POST /read-raise HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\n\r\nabc")
  in
  Alcotest.check outcome "read_body: 500, lingers" Lingering o;
  check_has "read_body: logged" err "handler raised Failure(\"piece\") (POST /read-raise from -)";
  check_has "read_body: 500" (take p) "HTTP/1.1 500 ";
  ignore (lines ())

(* The client leaves part way: the line says what it got. *)
let cut_download () =
  let sh = shared () in
  let lines = access_log sh in
  let big = "/" ^ String.make 3000 'x' in
  let p = peer ~window:100 sh in
  ignore (open_ p);
  (* The client leaves (the connection is reset) once it took 1000 bytes. *)
  Conn.set_leaves_after p.conn 1000;
  let o = exchange p (get big) in
  Alcotest.check outcome "closed" Closed o;
  let out = take p in
  let head_len = index out "\r\n\r\n" + 4 in
  let line = one_line (lines ()) in
  check_has "status, bytes that left, cut" line (Printf.sprintf " 200 %d 0 cut" (1000 - head_len));
  (* The same, whole: its size, complete. *)
  let p = peer ~window:100 sh in
  ignore (open_ p);
  Alcotest.check outcome "served" Waiting (exchange p (get big));
  let line = one_line (lines ()) in
  check_has "complete, whole body" line " 200 3001 0";
  Alcotest.(check bool) "not cut" false (contains line "cut")

(* {1 Allocation} *)

(* The whole exchange — bytes in, parse, handler, response out, idle —
   from preallocated buffers: the peer here copies and counts only. *)
let zero_alloc_cycle () =
  let sh = shared () in
  let c = Slot.create sh ~slot:0 ~peer:false in
  let req = Bigstring.of_string (get "/z") in
  let n = Bigstring.length req in
  let rec go (a : H1.action) =
    match a with
    | Write ->
        Output.advance c (Output.pending c);
        go (H1.written c)
    | Read | Close | Linger | Wait | Detach | Nothing | Read_buffered | Push -> a
  in
  ignore (H1.opened c ~fd:3 ~listener:0 ~peer_len:0 : H1.action);
  S.zero_alloc "request/response cycle" (fun () ->
      (match H1.prepare_read c with
       | Read ->
           Bigstring.blit ~src:req ~src_off:0 ~dst:c.in_buf ~dst_off:c.in_off ~len:n;
           ignore (go (H1.received c n) : H1.action)
       | _ -> Alcotest.fail "not reading"))

(* The same with every field writer (all_fields). *)
let zero_alloc_fields () =
  let sh = shared () in
  let c = Slot.create sh ~slot:0 ~peer:false in
  let req = Bigstring.of_string (get "/fields") in
  let n = Bigstring.length req in
  let rec go (a : H1.action) =
    match a with
    | Write ->
        Output.advance c (Output.pending c);
        go (H1.written c)
    | Read | Read_buffered | Push | Close | Linger | Wait | Detach | Nothing -> a
  in
  ignore (H1.opened c ~fd:3 ~listener:0 ~peer_len:0 : H1.action);
  S.zero_alloc "request/response cycle, every field writer" (fun () ->
      match H1.prepare_read c with
      | Read ->
          Bigstring.blit ~src:req ~src_off:0 ~dst:c.in_buf ~dst_off:c.in_off ~len:n;
          ignore (go (H1.received c n) : H1.action)
      | _ -> Alcotest.fail "not reading")

(* Parse states by index: reused, reset when given back, dropped beyond the
   spares kept, and their index reused. *)
let parse_states () =
  let limits = Httpz.Request.default_limits in
  let t = Parse_states.create ~limits ~keep:2 in
  let a = Parse_states.take t and b = Parse_states.take t and c = Parse_states.take t in
  Alcotest.(check bool) "distinct, never the placeholder" true
    (a <> b && b <> c && a <> c && List.for_all (fun i -> i <> Parse_states.none) [ a; b; c ]);
  let buf = Httpz.Bigstring.of_string "GET / HTTP/1.1\r\nHo" in
  let r = Parse_states.request t a in
  Alcotest.(check bool) "partial" true
    (Httpz.Request.parse r buf ~off:0 ~len:(Httpz.Bigstring.length buf) = Httpz.Request.Partial);
  List.iter (Parse_states.give t) [ a; b; c ];
  Alcotest.(check int) "two spares kept" 2 (Parse_states.spare t);
  let again = Parse_states.take t in
  Alcotest.(check bool) "a kept index comes back" true (again = b || again = a);
  let d = Parse_states.take t and e = Parse_states.take t in
  Alcotest.(check bool) "the dropped index is reused with new states" true (List.mem c [ d; e; again ]);
  Parse_states.give t Parse_states.none;
  Alcotest.(check int) "giving back none does nothing" 0 (Parse_states.spare t);
  (* What was given back does not continue a partial head. *)
  let full = Httpz.Bigstring.of_string "GET /x HTTP/1.1\r\nHost: h\r\n\r\n" in
  List.iter
    (fun i ->
      Alcotest.(check bool) "a reused parser starts afresh" true
        (Httpz.Request.parse (Parse_states.request t i) full ~off:0 ~len:(Httpz.Bigstring.length full)
         = Httpz.Request.Complete))
    [ again; d; e ]

(* The log route a site chose belongs to its request: the next request on
   the slot (on this connection, or a pooled HTTP/2 exchange's next
   stream) starts with none, even when the last one ended without a log
   line (its client left before any response). *)
let log_route_per_request () =
  let c = Slot.create (shared ()) ~slot:0 ~peer:false in
  Slot.set_log_route c 3;
  Slot.stamp c;
  Alcotest.(check int) "a new request: no route" 0 c.Slot.log_route

let () =
  Alcotest.run "connection"
    [
      ( "transcripts",
        [
          Alcotest.test_case "keep-alive, idle holds no buffer" `Quick keep_alive;
          Alcotest.test_case "field writers: text lines, exactly" `Quick text_fields;
          Alcotest.test_case "Ctx.version: HTTP/1.1, HTTP/1.0" `Quick version_h1;
          Alcotest.test_case "pipelining in order" `Quick pipelining;
          Alcotest.test_case "byte at a time" `Quick byte_at_a_time;
          Alcotest.test_case "slow reader: 7-byte writes" `Quick slow_reader;
          Alcotest.test_case "100-continue when asked" `Quick expect_continue;
          Alcotest.test_case "large body: pool buffer, given back" `Quick large_body;
          Alcotest.test_case "unwanted body: answer, linger" `Quick unwanted_body;
          Alcotest.test_case "parse error: 400, linger" `Quick parse_error;
          Alcotest.test_case "handler raises: 500" `Quick handler_raises;
          Alcotest.test_case "configured headers too large: 500" `Quick headers_too_large;
          Alcotest.test_case "timeouts" `Quick timeouts;
          Alcotest.test_case "body clock" `Quick body_clock;
          Alcotest.test_case "suspend and resume" `Quick suspended;
          Alcotest.test_case "handler timeout: 503" `Quick handler_timeout;
          Alcotest.test_case "streamed response, flush" `Quick streamed_response;
          Alcotest.test_case "streamed request body" `Quick streamed_request_body;
          Alcotest.test_case "synchronous stream: written after the handler" `Quick synchronous_stream;
          Alcotest.test_case "unflushed body bounded: 500" `Quick unflushed_bound;
          Alcotest.test_case "upgrade: 101, hand over" `Quick upgrade;
        ] );
      ( "failures and the access log",
        [
          Alcotest.test_case "handler raises: logged with its request" `Quick raise_logged;
          Alcotest.test_case "dev_errors: the page on the loopback only" `Quick dev_errors;
          Alcotest.test_case "answered twice: the first stands" `Quick answered_twice;
          Alcotest.test_case "raising continuations" `Quick continuation_raises;
          Alcotest.test_case "cut download: what left, cut" `Quick cut_download;
        ] );
      ("allocation", [ zero_alloc_cycle (); zero_alloc_fields () ]);
      ("parse states", [ Alcotest.test_case "by index, reused, dropped" `Quick parse_states ]);
      ("log route", [ Alcotest.test_case "one request's, not the next's" `Quick log_route_per_request ]);
    ]
