(* The server core over real sockets: each test forks a server on
   127.0.0.1 with an ephemeral port (its stderr goes to a temporary file),
   talks to it with blocking sockets that time out after 5 s, then stops it
   with SIGTERM and checks that it exits 0. Plus unit tests of the timer
   wheel and the access-log time format. *)

open Httpz
open Httpz_sys
open Httpz_server

(* {1 Servers and clients: Httpz_live, on the backend of the current group} *)

open Httpz_live

let find_sub = Httpz_test_support.find_sub

let backend = ref Server.Uring

let on_backend config = { config with Server.io = !backend }

let start ?(config = Server.default_config) handler =
  Httpz_live.start ~config:(on_backend config) handler

let with_server ?(config = Server.default_config) handler f =
  Httpz_live.with_server ~config:(on_backend config) handler f

(* {1 The test handler} *)

let hello = "hello, world\n"

(* No local closure here (it would allocate): the steady-state test
   measures this handler's path. *)
let is = Span.equal

let huge_size = 8 * 1024 * 1024
let huge = Bigstring.of_string (String.init huge_size (fun i -> Char.chr (65 + (i mod 23))))

let cancelled = ref 0

let handler c =
  let req = Ctx.request c and buf = Ctx.buffer c in
  let t = Request.target req in
  if is buf t "/" then begin
    Ctx.start c Status.Ok;
    Ctx.header c Header_name.Content_type "text/plain";
    Ctx.body_string c hello
  end
  else if is buf t "/echo" then begin
    if not (Ctx.body_ready c) then Ctx.await_body c
    else begin
      let b = Ctx.body c in
      Ctx.start c Status.Ok;
      Ctx.body_bigstring c (Ctx.body_buffer c) ~off:(Span.off b) ~len:(Span.len b)
    end
  end
  else if is buf t "/count" then begin
    if not (Ctx.body_ready c) then Ctx.await_body c
    else begin
      Ctx.start c Status.Ok;
      Ctx.body_string c (string_of_int (Span.len (Ctx.body c)))
    end
  end
  else if is buf t "/pipe" then begin
    (* Waits for a descriptor of its own: a pipe written by a timer. *)
    let r, w = Unix.pipe ~cloexec:true () in
    Unix.set_nonblock r;
    ignore
      (Reactor.after (Reactor.current ()) 0.05 (fun () ->
           ignore (Unix.write_substring w "p" 0 1 : int);
           Unix.close w)
        : Reactor.timer);
    Ctx.when_readable c r (fun c ->
        let b = Bytes.create 1 in
        let n = Unix.read r b 0 1 in
        Unix.close r;
        Ctx.start c Status.Ok;
        Ctx.body_string c (if n = 1 then "read " ^ Bytes.to_string b else "nothing"))
  end
  else if is buf t "/forever" then begin
    Ctx.on_cancel c (fun () -> incr cancelled);
    ignore (Ctx.suspend c (fun c -> Ctx.start c Status.Ok; Ctx.body_string c "never") : unit -> unit)
  end
  else if is buf t "/cancelled" then begin
    Ctx.start c Status.Ok;
    Ctx.body_string c (string_of_int !cancelled)
  end
  else if is buf t "/stream-raise" then begin
    Ctx.start c Status.Ok;
    Ctx.chunked_start c;
    Ctx.chunk c "first";
    Ctx.flush c (fun _ -> failwith "after the head")
  end
  else if is buf t "/client" then begin
    let addr, port = Ctx.client c in
    Ctx.start c Status.Ok;
    Ctx.body_string c (Printf.sprintf "%s %d" addr port)
  end
  else if is buf t "/refuse" then begin
    (* Answers without looking at the body. *)
    Ctx.start c Status.Method_not_allowed;
    Ctx.body_string c "no"
  end
  else if is buf t "/chunked" then begin
    Ctx.start c Status.Ok;
    Ctx.chunked_start c;
    Ctx.chunk c "one,";
    Ctx.chunk c "";
    Ctx.chunk c "two,";
    Ctx.chunk c "three";
    Ctx.chunked_end c
  end
  else if is buf t "/big-chunked" then begin
    Ctx.start c Status.Ok;
    Ctx.chunked_start c;
    let s = String.make 10_000 'x' in
    for _ = 1 to 100 do Ctx.chunk c s done;
    Ctx.chunked_end c
  end
  else if is buf t "/big" then begin
    Ctx.start c Status.Ok;
    Ctx.body_string c (String.make 200_000 'b')
  end
  else if is buf t "/huge" then begin
    Ctx.start c Status.Ok;
    Ctx.body_bigstring c huge ~off:0 ~len:(Bigstring.length huge)
  end
  else if is buf t "/raise" then failwith "boom"
  else if is buf t "/unanswered" then Ctx.start c Status.Ok
  else if is buf t "/bad-header" then begin
    Ctx.start c Status.Ok;
    Ctx.header c Header_name.Content_type "a\r\nInjected: yes";
    Ctx.body_string c "never"
  end
  else if is buf t "/close" then begin
    Ctx.close_after c;
    Ctx.start c Status.Ok;
    Ctx.body_string c "bye"
  end
  else if is buf t "/no-content" then begin
    Ctx.start c Status.No_content;
    Ctx.body_string c "dropped"
  end
  else begin
    (* Echo the target: shows which request a response answers. *)
    Ctx.start c Status.Ok;
    Ctx.body_bigstring c buf ~off:(Span.off t) ~len:(Span.len t)
  end

let check_status = Alcotest.(check int)
let check_str = Alcotest.(check string)
let check_hdr r name v = Alcotest.(check (option string)) name v (header r name)

(* {1 Tests} *)

let keep_alive () =
  with_server handler (fun s ->
      with_client s.port (fun cl ->
          for _ = 1 to 5 do
            send cl (get "/");
            let r = read_response cl in
            check_status "status" 200 r.status;
            check_str "body" hello r.body;
            check_hdr r "connection" None;
            check_hdr r "server" (Some "httpz");
            Alcotest.(check bool) "date" true (header r "date" <> None)
          done;
          (* HTTP/1.0 keeps the connection only when asked to. *)
          send cl "GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n";
          let r = read_response cl in
          check_hdr r "connection" (Some "keep-alive");
          send cl "GET / HTTP/1.0\r\n\r\n";
          let r = read_response cl in
          check_hdr r "connection" (Some "close");
          Alcotest.(check bool) "closed after HTTP/1.0" true (at_eof cl)))

let pipelining () =
  with_server handler (fun s ->
      with_client s.port (fun cl ->
          send cl (get "/a" ^ get "/b" ^ get "/c");
          List.iter
            (fun p ->
              let r = read_response cl in
              check_status "status" 200 r.status;
              check_str "in order" p r.body)
            [ "/a"; "/b"; "/c" ];
          (* A request split at every byte is still one request. *)
          String.iter (fun ch -> send cl (String.make 1 ch)) (get "/slow");
          check_str "byte at a time" "/slow" (read_response cl).body;
          (* Pipelined with bodies, and a HEAD in the middle. *)
          send cl
            ("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\n\r\nabc"
           ^ "HEAD / HTTP/1.1\r\nHost: t\r\n\r\n"
           ^ "POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nde\r\n0\r\n\r\n"
           ^ get "/d");
          check_str "first body" "abc" (read_response cl).body;
          let h = read_response ~head:true cl in
          check_hdr h "content-length" (Some (string_of_int (String.length hello)));
          check_str "chunked body" "de" (read_response cl).body;
          check_str "last" "/d" (read_response cl).body))

let many_pipelined () =
  (* More pipelined requests than fit in one read buffer. *)
  with_server handler (fun s ->
      with_client s.port (fun cl ->
          let n = 2000 in
          let reqs = String.concat "" (List.init n (fun i -> get (Printf.sprintf "/r%d" i))) in
          (* ~30 KB of requests: fits in the socket buffers, so one blocking
             write cannot deadlock against the responses. *)
          send cl reqs;
          for i = 0 to n - 1 do
            check_str "order" (Printf.sprintf "/r%d" i) (read_response cl).body
          done))

let head_request () =
  with_server handler (fun s ->
      with_client s.port (fun cl ->
          send cl "HEAD / HTTP/1.1\r\nHost: t\r\n\r\n";
          let r = read_response ~head:true cl in
          check_status "status" 200 r.status;
          check_hdr r "content-length" (Some (string_of_int (String.length hello)));
          (* No body bytes: the next response starts right after the head. *)
          send cl (get "/next");
          check_str "next response" "/next" (read_response cl).body;
          send cl "HEAD /big HTTP/1.1\r\nHost: t\r\n\r\n";
          let r = read_response ~head:true cl in
          check_hdr r "content-length" (Some "200000");
          send cl "HEAD /chunked HTTP/1.1\r\nHost: t\r\n\r\n";
          let r = read_response ~head:true cl in
          check_hdr r "transfer-encoding" (Some "chunked");
          send cl (get "/after");
          check_str "after HEAD of chunked" "/after" (read_response cl).body;
          send cl (get "/no-content");
          let r = read_response cl in
          check_status "204" 204 r.status;
          check_hdr r "content-length" None;
          send cl (get "/after204");
          check_str "after 204" "/after204" (read_response cl).body))

let expect_continue () =
  with_server handler (fun s ->
      with_client s.port (fun cl ->
          send cl
            "POST /echo HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n";
          check_str "interim" "HTTP/1.1 100 Continue" (take_line cl);
          check_str "interim end" "" (take_line cl);
          send cl "12345";
          let r = read_response cl in
          check_status "final" 200 r.status;
          check_str "body" "12345" r.body;
          (* Body already sent along: no 100. *)
          send cl
            "POST /echo HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\nok";
          let r = read_response cl in
          check_status "no interim" 200 r.status;
          check_str "body" "ok" r.body;
          (* Too large: 413 at once, no 100. *)
          send cl
            "POST /echo HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\nContent-Length: 99999999\r\n\r\n";
          check_status "413" 413 (read_response cl).status))

let chunked_body () =
  with_server handler (fun s ->
      with_client s.port (fun cl ->
          send cl
            "POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n\
             5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\nX-Trailer: v\r\n\r\n";
          check_str "decoded" "hello world" (read_response cl).body;
          (* Split across writes, at awkward places. *)
          List.iter
            (fun piece -> send cl piece; Unix.sleepf 0.01)
            [ "POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n"; "3";
              "\r\nab"; "c\r"; "\n0\r\n"; "\r\n" ];
          check_str "split" "abc" (read_response cl).body;
          (* A body larger than the read buffer, in many chunks. *)
          let piece = String.make 1000 'z' in
          let b = Buffer.create 100_000 in
          Buffer.add_string b
            "POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n";
          for _ = 1 to 100 do
            Buffer.add_string b "3e8\r\n";
            Buffer.add_string b piece;
            Buffer.add_string b "\r\n"
          done;
          Buffer.add_string b "0\r\n\r\n";
          send cl (Buffer.contents b);
          let r = read_response cl in
          Alcotest.(check int) "large chunked" 100_000 (String.length r.body);
          (* A Content-Length body larger than the read buffer. *)
          let big = String.init 300_000 (fun i -> Char.chr (97 + (i mod 26))) in
          send cl (Printf.sprintf "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: %d\r\n\r\n" 300_000);
          send cl big;
          check_str "large content-length" big (read_response cl).body;
          (* Malformed chunk size: 400 and close. *)
          send cl "POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n";
          let r = read_response cl in
          check_status "bad chunk" 400 r.status;
          check_hdr r "connection" (Some "close");
          Alcotest.(check bool) "closed" true (at_eof cl)))

let small_body_config = { Server.default_config with max_body = 1000; workers = 1 }

let oversized_body () =
  with_server ~config:small_body_config handler (fun s ->
      with_client s.port (fun cl ->
          send cl "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 1000\r\n\r\n";
          send cl (String.make 1000 'a');
          check_status "at the limit" 200 (read_response cl).status;
          send cl "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 1001\r\n\r\n";
          send cl (String.make 1001 'a');
          let r = read_response cl in
          check_status "one past the limit" 413 r.status;
          check_hdr r "connection" (Some "close");
          Alcotest.(check bool) "closed" true (at_eof cl));
      with_client s.port (fun cl ->
          send cl "POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n";
          send cl "3e9\r\n";
          let r = read_response cl in
          check_status "chunked past the limit" 413 r.status;
          Alcotest.(check bool) "closed" true (at_eof cl)))

let bad_request () =
  with_server handler (fun s ->
      with_client s.port (fun cl ->
          send cl "GET / HTTP/1.1\r\nHost: t\r\nBad Name: x\r\n\r\n";
          let r = read_response cl in
          check_status "400" 400 r.status;
          check_hdr r "connection" (Some "close");
          Alcotest.(check bool) "has a text body" true (String.length r.body > 1);
          Alcotest.(check bool) "does not echo the request" false (find_sub r.body "Bad Name" >= 0);
          Alcotest.(check bool) "closed" true (at_eof cl));
      (* Garbage sent after the bad request must not turn the answer into a
         reset: the lingering close drains it. *)
      with_client s.port (fun cl ->
          send cl ("\x01\x02garbage\r\n\r\n" ^ String.make 100_000 'g');
          let r = read_response cl in
          check_status "400 despite trailing garbage" 400 r.status);
      with_client s.port (fun cl ->
          send cl "GET / HTTP/2.0\r\nHost: t\r\n\r\n";
          check_status "505" 505 (read_response cl).status);
      with_client s.port (fun cl ->
          send cl "GET / HTTP/1.1\r\n\r\n";
          check_status "missing host" 400 (read_response cl).status);
      with_client s.port (fun cl ->
          send cl ("GET /" ^ String.make 40_000 'a' ^ " HTTP/1.1\r\nHost: t\r\n\r\n");
          let r = read_response cl in
          Alcotest.(check bool) "huge head refused" true (r.status = 414 || r.status = 431)))

let timeout_config =
  {
    Server.default_config with
    workers = 1;
    header_timeout = 0.3;
    idle_timeout = 0.5;
    body_timeout = 0.3;
  }

let elapsed f =
  let t0 = Unix.gettimeofday () in
  let v = f () in
  (v, Unix.gettimeofday () -. t0)

let timeouts () =
  (* Silent connection, accepted at once (no TCP_DEFER_ACCEPT): closed after
     the header timeout. *)
  with_server ~config:{ timeout_config with defer_accept = false } handler (fun s ->
      with_client s.port (fun cl ->
          let eof, dt = elapsed (fun () -> at_eof cl) in
          Alcotest.(check bool) "silent connection closed" true eof;
          Alcotest.(check bool) (Printf.sprintf "after ~0.3 s (%.2f)" dt) true (dt >= 0.25 && dt < 1.)));
  with_server ~config:timeout_config handler (fun s ->
      (* With TCP_DEFER_ACCEPT (1 s) the kernel hands a silent connection
         over at its first SYN-ACK retransmission after that second; the
         header timeout runs from then. *)
      with_client s.port (fun cl ->
          let eof, dt = elapsed (fun () -> at_eof cl) in
          Alcotest.(check bool) "silent deferred connection closed" true eof;
          Alcotest.(check bool) (Printf.sprintf "after ~1.3 s (%.2f)" dt) true (dt >= 1. && dt < 4.));
      (* Slowloris: a head trickling in is answered 408 and closed,
         although bytes keep arriving. *)
      with_client s.port (fun cl ->
          let t0 = Unix.gettimeofday () in
          send cl "GET / HTTP/1.1\r\n";
          (try
             for _ = 1 to 10 do
               Unix.sleepf 0.1;
               send cl "X-A: b\r\n"
             done
           with Unix.Unix_error _ -> ());
          let r = read_response cl in
          check_status "408" 408 r.status;
          let dt = Unix.gettimeofday () -. t0 in
          Alcotest.(check bool) (Printf.sprintf "within ~0.3 s (%.2f)" dt) true (dt < 1.5));
      (* Idle keep-alive connection: closed after the idle timeout. *)
      with_client s.port (fun cl ->
          send cl (get "/");
          ignore (read_response cl);
          let eof, dt = elapsed (fun () -> at_eof cl) in
          Alcotest.(check bool) "idle closed" true eof;
          Alcotest.(check bool) (Printf.sprintf "after ~0.5 s (%.2f)" dt) true (dt >= 0.4 && dt < 2.));
      (* A body that stops arriving. *)
      with_client s.port (fun cl ->
          send cl "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 10\r\n\r\nabc";
          check_status "body timeout" 408 (read_response cl).status))

(* {2 Request bodies: read only when the handler asks} *)

let unwanted_body () =
  with_server handler (fun s ->
      (* A GET announcing 1 MiB it never sends is answered at once. *)
      with_client s.port (fun cl ->
          send cl "GET /x HTTP/1.1\r\nHost: t\r\nContent-Length: 1048576\r\n\r\n";
          let r, dt = elapsed (fun () -> read_response cl) in
          check_str "answered without the body" "/x" r.body;
          check_hdr r "connection" (Some "close");
          Alcotest.(check bool) (Printf.sprintf "at once (%.2f s)" dt) true (dt < 1.));
      (* Expect: 100-continue to a handler that refuses: no 100 first. *)
      with_client s.port (fun cl ->
          send cl
            "POST /refuse HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\nContent-Length: 100000\r\n\r\n";
          let r = read_response cl in
          check_status "the final answer, no 100 Continue" 405 r.status;
          check_hdr r "connection" (Some "close");
          Alcotest.(check bool) "closed" true (at_eof cl));
      (* The client sends the refused body anyway: the answer survives (no
         reset), and the connection ends. *)
      with_client s.port (fun cl ->
          send cl
            ("POST /refuse HTTP/1.1\r\nHost: t\r\nContent-Length: 300000\r\n\r\n"
            ^ String.make 100_000 'a');
          check_status "refused" 405 (read_response cl).status;
          (try send cl (String.make 200_000 'a') with Unix.Unix_error _ -> ());
          Alcotest.(check bool) "closed" true (at_eof cl));
      (* A small body that came with its head is skipped: keep-alive holds. *)
      with_client s.port (fun cl ->
          send cl
            "GET /a HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\n\r\nabcGET /b HTTP/1.1\r\nHost: t\r\n\r\n";
          check_str "first" "/a" (read_response cl).body;
          check_str "second, same connection" "/b" (read_response cl).body);
      (* A chunked body to a handler that does not want it. *)
      with_client s.port (fun cl ->
          send cl "POST /refuse HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab";
          let r = read_response cl in
          check_status "chunked refused" 405 r.status;
          check_hdr r "connection" (Some "close")))

(* A body trickling in below the minimum rate is cut at the body timeout,
   however often bytes arrive; one arriving well above it may take longer. *)
let body_deadline () =
  let config = { timeout_config with body_timeout = 0.5 } in
  with_server ~config handler (fun s ->
      with_client s.port (fun cl ->
          send cl "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 100\r\n\r\n";
          let t0 = Unix.gettimeofday () in
          let answered = ref false in
          (try
             while (not !answered) && Unix.gettimeofday () -. t0 < 4. do
               Unix.sleepf 0.1;
               send cl "x";
               match Unix.select [ fd cl ] [] [] 0. with
               | [], _, _ -> ()
               | _ -> answered := true
             done
           with Unix.Unix_error _ -> answered := true);
          let dt = Unix.gettimeofday () -. t0 in
          Alcotest.(check bool) (Printf.sprintf "cut after %.2f s" dt) true (!answered && dt < 1.5);
          check_status "408" 408 (read_response cl).status);
      with_client s.port (fun cl ->
          let piece = String.make 4096 'p' in
          send cl "POST /count HTTP/1.1\r\nHost: t\r\nContent-Length: 40960\r\n\r\n";
          for _ = 1 to 10 do
            Unix.sleepf 0.2;
            send cl piece
          done;
          let r = read_response cl in
          check_status "2 s upload at 20 KiB/s" 200 r.status;
          check_str "all of it" "40960" r.body))

let vm_rss_kib pid =
  let ic = open_in (Printf.sprintf "/proc/%d/status" pid) in
  Fun.protect ~finally:(fun () -> close_in ic) (fun () ->
      let rec go () =
        let l = input_line ic in
        if String.length l > 6 && String.sub l 0 6 = "VmRSS:" then
          Scanf.sscanf l "VmRSS: %d kB" Fun.id
        else go ()
      in
      go ())

(* Bodies held at once cost memory while they last, and none after. *)
let body_memory_returns () =
  with_server ~config:{ Server.default_config with workers = 1 } handler (fun s ->
      let n = 64 and size = 1 lsl 20 in
      let before = vm_rss_kib s.pid in
      let body = String.make (size - 1) 'm' in
      let clients =
        List.init n (fun _ ->
            let cl = connect s.port in
            send cl (Printf.sprintf "POST /count HTTP/1.1\r\nHost: t\r\nContent-Length: %d\r\n\r\n" size);
            send cl body;
            cl)
      in
      Unix.sleepf 0.2;
      let peak = vm_rss_kib s.pid in
      List.iter
        (fun cl ->
          send cl "m";
          check_str "counted" (string_of_int size) (read_response cl).body;
          close cl)
        clients;
      Unix.sleepf 0.3;
      let after = vm_rss_kib s.pid in
      Alcotest.(check bool)
        (Printf.sprintf "held while in flight (%d -> %d KiB)" before peak)
        true (peak - before > n * 512);
      Alcotest.(check bool)
        (Printf.sprintf "given back after (%d KiB, before %d)" after before)
        true (after - before < 8 * 1024))

let connect_requests () =
  with_server handler (fun s ->
      (* CONNECT with content: 400, and what follows is never a request. *)
      with_client s.port (fun cl ->
          send cl
            "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\nContent-Length: 32\r\n\r\n\
             GET /smuggled HTTP/1.1\r\nHost: t\r\n\r\n";
          let r = read_response cl in
          check_status "400" 400 r.status;
          check_hdr r "connection" (Some "close");
          Alcotest.(check bool) "closed, nothing smuggled" true (at_eof cl));
      (* Without content: answered, then closed, since tunnel bytes follow. *)
      with_client s.port (fun cl ->
          send cl
            "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n\
             GET /smuggled HTTP/1.1\r\nHost: t\r\n\r\n";
          let r = read_response cl in
          check_hdr r "connection" (Some "close");
          Alcotest.(check bool) "closed, nothing smuggled" true (at_eof cl)))

let client_address () =
  with_server handler (fun s ->
      with_client s.port (fun cl ->
          let port = match Unix.getsockname (fd cl) with Unix.ADDR_INET (_, p) -> p | _ -> -1 in
          send cl (get "/client");
          check_str "address and port" (Printf.sprintf "127.0.0.1 %d" port) (read_response cl).body))

(* A port nobody listens on right now (bound, read, released). *)
let free_port () =
  let fd = Unix.socket Unix.PF_INET Unix.SOCK_STREAM 0 in
  Unix.bind fd (Unix.ADDR_INET (Unix.inet_addr_loopback, 0));
  let p = match Unix.getsockname fd with Unix.ADDR_INET (_, p) -> p | _ -> 0 in
  Unix.close fd;
  p

let several_listeners () =
  let second = free_port () in
  let config = { Server.default_config with listen = [ ("127.0.0.1", 0); ("localhost", second) ] } in
  with_server ~config handler (fun s ->
      List.iter
        (fun port ->
          with_client port (fun cl ->
              send cl (get "/");
              check_str (Printf.sprintf "answered on port %d" port) hello (read_response cl).body))
        [ s.port; second ])

let waiting_handlers () =
  let config = { Server.default_config with workers = 1; handler_timeout = 0.3 } in
  with_server ~config handler (fun s ->
      with_client s.port (fun cl ->
          send cl (get "/pipe");
          check_str "woken by its own descriptor" "read p" (read_response cl).body;
          (* Never answers: 503 after the handler timeout, then closed. *)
          let r, dt = elapsed (fun () -> send cl (get "/forever"); read_response cl) in
          check_status "503" 503 r.status;
          Alcotest.(check bool) (Printf.sprintf "after ~0.3 s (%.2f)" dt) true (dt >= 0.25 && dt < 1.5));
      (* The client leaves while the handler waits: its cancel hook runs. *)
      with_client s.port (fun cl -> send cl (get "/forever"); Unix.sleepf 0.1);
      Unix.sleepf 0.2;
      with_client s.port (fun cl ->
          send cl (get "/cancelled");
          check_str "two cancels (timeout, hang-up)" "2" (read_response cl).body);
      (* Raising after the head left: the connection is closed. *)
      with_client s.port (fun cl ->
          send cl (get "/stream-raise");
          let head = take_line cl in
          check_str "head sent" "HTTP/1.1 200 OK" head;
          (* Read to the end of the stream (a timeout would raise). *)
          let rec drain () = if recv_more cl then drain () in
          drain ();
          Alcotest.(check bool) "then closed, the body cut short" false
            (find_sub (pending cl) "0\r\n\r\n" >= 0)))

let stats_token = "t0ken"
let get_stats = stats_request ~token:stats_token

(* The counters answer the token only: a loopback peer without it (every
   client of a reverse proxy on the same host) reaches the handler. *)
let stats_token_required () =
  let config = { Server.default_config with workers = 1; stats = Some stats_token } in
  with_server ~config handler (fun s ->
      with_client s.port (fun cl ->
          send cl (get "/__httpz/stats");
          check_str "no token: the handler answers" "/__httpz/stats" (read_response cl).body;
          send cl "GET /__httpz/stats HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer wrong\r\n\r\n";
          check_str "a wrong token: the handler answers" "/__httpz/stats" (read_response cl).body;
          send cl get_stats;
          let r = read_response cl in
          check_status "the token: the counters" 200 r.status;
          Alcotest.(check bool) "JSON with the pid" true (find_sub r.body "\"pid\"" >= 0)))

(* At the limit a new client is first left to other workers (accepting
   pauses for 100 ms); one still waiting then gets the slot of the
   connection idle longest, as nginx does. With none idle, it waits. *)
let max_connections () =
  let config = { Server.default_config with workers = 1; max_connections = 2 } in
  with_server ~config handler (fun s ->
      let a = connect s.port in
      send a (get "/a");
      check_str "a served" "/a" (read_response a).body;
      Unix.sleepf 0.05;
      let b = connect s.port in
      send b (get "/b");
      check_str "b served" "/b" (read_response b).body;
      let c, dt = elapsed (fun () ->
          let c = connect s.port in
          send c (get "/c");
          check_str "c served at the limit" "/c" (read_response c).body;
          c)
      in
      Alcotest.(check bool) (Printf.sprintf "within a second (%.2f s)" dt) true (dt < 1.0);
      Alcotest.(check bool) "the connection idle longest (a) was closed for it" true (at_eof a);
      send b (get "/b2");
      check_str "b, idle for less time, still served" "/b2" (read_response b).body;
      List.iter close [ a; b; c ];
      Unix.sleepf 0.2;
      (* Two connections busy (waiting handlers): nobody to close, so a
         third client is refused at once rather than left waiting. *)
      let a = connect s.port and b = connect s.port in
      send a (get "/forever");
      send b (get "/forever");
      Unix.sleepf 0.2;
      let refused, dt = elapsed (fun () ->
          let c = connect s.port in
          (try send c (get "/c") with Unix.Unix_error _ -> ());
          let r = at_eof c in
          close c;
          r)
      in
      Alcotest.(check bool) (Printf.sprintf "a third client is closed at once (%.2f s)" dt) true
        (refused && dt < 1.0);
      close a;
      Unix.sleepf 0.2;
      let c = connect s.port in
      send c (get "/c");
      check_str "served once a slot frees" "/c" (read_response c).body;
      close b;
      close c)

let handler_errors () =
  with_server handler (fun s ->
      List.iter
        (fun path ->
          with_client s.port (fun cl ->
              send cl (get path);
              let r = read_response cl in
              check_status (path ^ ": 500") 500 r.status;
              check_hdr r "connection" (Some "close");
              Alcotest.(check bool) (path ^ ": not injected") true (header r "injected" = None);
              Alcotest.(check bool) (path ^ ": closed") true (at_eof cl)))
        [ "/raise"; "/unanswered"; "/bad-header" ];
      (* The worker is still serving. *)
      with_client s.port (fun cl ->
          send cl (get "/");
          check_status "still serving" 200 (read_response cl).status))

let responses () =
  with_server handler (fun s ->
      with_client s.port (fun cl ->
          send cl (get "/chunked");
          let r = read_response cl in
          check_hdr r "transfer-encoding" (Some "chunked");
          check_str "chunks" "one,two,three" r.body;
          send cl (get "/big-chunked");
          let r = read_response cl in
          Alcotest.(check int) "big chunked" 1_000_000 (String.length r.body);
          send cl (get "/big");
          let r = read_response cl in
          check_str "big string" (String.make 200_000 'b') r.body;
          send cl "GET /chunked HTTP/1.0\r\nConnection: keep-alive\r\n\r\n";
          let r = read_response cl in
          check_hdr r "transfer-encoding" None;
          check_hdr r "connection" (Some "close");
          check_str "close-delimited for HTTP/1.0" "one,two,three" r.body);
      with_client s.port (fun cl ->
          send cl (get "/close" ^ get "/ignored");
          let r = read_response cl in
          check_hdr r "connection" (Some "close");
          check_str "body" "bye" r.body;
          Alcotest.(check bool) "closed" true (at_eof cl)))

(* A client that reads slowly: the response waits for EPOLLOUT, and the
   next pipelined request is answered only after it. *)
let backpressure () =
  with_server handler (fun s ->
      with_client s.port (fun cl ->
          Unix.setsockopt_int (fd cl) Unix.SO_RCVBUF 65536;
          send cl (get "/huge" ^ get "/big" ^ get "/big-chunked" ^ get "/after");
          Unix.sleepf 0.3;
          check_str "huge bigstring" (Bigstring.to_string huge) (read_response cl).body;
          check_str "big" (String.make 200_000 'b') (read_response cl).body;
          Alcotest.(check int) "big chunked" 1_000_000 (String.length (read_response cl).body);
          check_str "in order" "/after" (read_response cl).body))

(* {2 Files: sent with sendfile, always closed} *)

let open_fds pid = Array.length (Sys.readdir (Printf.sprintf "/proc/%d/fd" pid))

let files () =
  let path = Filename.temp_file "httpz_test" ".bin" in
  let size = 4 * 1024 * 1024 in
  let content = String.init size (fun i -> Char.chr (i * 7 mod 251)) in
  let oc = open_out_bin path in
  output_string oc content;
  close_out oc;
  let file_handler c =
    let fd = Syscall.fd_of_unix (Unix.openfile path [ Unix.O_RDONLY; Unix.O_CLOEXEC ] 0) in
    Ctx.start c Status.Ok;
    if Span.equal (Ctx.buffer c) (Request.target (Ctx.request c)) "/part" then
      Ctx.body_file c ~fd ~off:10 ~len:100 ~close:true
    else Ctx.body_file c ~fd ~off:0 ~len:size ~close:true
  in
  Fun.protect ~finally:(fun () -> Sys.remove path) (fun () ->
      with_server file_handler (fun s ->
          with_client s.port (fun cl ->
              send cl (get "/part");
              check_str "range of the file" (String.sub content 10 100) (read_response cl).body);
          let base = open_fds s.pid in
          with_client s.port (fun cl ->
              send cl (get "/" ^ get "/part");
              check_str "whole file" content (read_response cl).body;
              check_str "then part" (String.sub content 10 100) (read_response cl).body;
              send cl "HEAD / HTTP/1.1\r\nHost: t\r\n\r\n";
              let r = read_response ~head:true cl in
              check_hdr r "content-length" (Some (string_of_int size)));
          (* Clients that vanish in the middle of a sendfile. *)
          for _ = 1 to 5 do
            let cl = connect s.port in
            Unix.setsockopt_int (fd cl) Unix.SO_RCVBUF 4096;
            send cl (get "/");
            ignore (read_head cl);
            close cl
          done;
          (* Give the server a moment to notice the resets. *)
          let deadline = Unix.gettimeofday () +. 5. in
          while open_fds s.pid > base && Unix.gettimeofday () < deadline do
            Unix.sleepf 0.05
          done;
          Alcotest.(check int) "no fd leaked" base (open_fds s.pid)))

(* {2 Out of file descriptors} *)

let hoard = ref []

let fd_handler c =
  let buf = Ctx.buffer c and t = Request.target (Ctx.request c) in
  if is buf t "/exhaust" then begin
    (try
       while true do
         hoard := Unix.openfile "/dev/null" [ Unix.O_RDONLY; Unix.O_CLOEXEC ] 0 :: !hoard
       done
     with Unix.Unix_error (Unix.EMFILE, _, _) -> ());
    Ctx.start c Status.Ok;
    Ctx.body_string c (string_of_int (List.length !hoard))
  end
  else if is buf t "/release" then begin
    List.iter Unix.close !hoard;
    hoard := [];
    Ctx.start c Status.Ok;
    Ctx.body_string c "released"
  end
  else handler c

(* /proc files report a length of 0: read a line instead. *)
let read_proc path =
  let ic = open_in path in
  Fun.protect ~finally:(fun () -> close_in ic) (fun () -> input_line ic)

let cpu_ticks pid =
  let stat = read_proc (Printf.sprintf "/proc/%d/stat" pid) in
  let rest = String.sub stat (String.rindex stat ')' + 2) (String.length stat - String.rindex stat ')' - 2) in
  let f = Array.of_list (String.split_on_char ' ' rest) in
  (* utime and stime: fields 14 and 15 of /proc/PID/stat. *)
  int_of_string f.(11) + int_of_string f.(12)

let emfile () =
  let s = start ~config:{ Server.default_config with workers = 1 } fd_handler in
  killing s @@ fun () ->
  let a = connect s.port in
  send a (get "/exhaust");
  check_status "exhausted" 200 (read_response a).status;
  let b = connect s.port in
  send b (get "/b");
  let t0 = cpu_ticks s.pid in
  (match Unix.select [ fd b ] [] [] 0.5 with
   | [], _, _ -> ()
   | _ -> Alcotest.fail "accepted without a free fd");
  (* The open connection is still served meanwhile … *)
  send a (get "/a");
  check_str "existing connection served" "/a" (read_response a).body;
  (* … and the loop does not spin on the readable listening socket. *)
  let used = cpu_ticks s.pid - t0 in
  Alcotest.(check bool) (Printf.sprintf "no spinning (%d ticks in 0.5 s)" used) true (used < 20);
  send a (get "/release");
  check_str "released" "released" (read_response a).body;
  check_str "accepted once fds are free" "/b" (read_response b).body;
  close a;
  close b;
  let log = stop s in
  Alcotest.(check bool) ("logged: " ^ log) true (find_sub log "accept: EMFILE" >= 0)

(* {2 Zero allocation in steady state} *)

let zero_alloc_steady_state () =
  let config = { Server.default_config with workers = 1; stats = Some stats_token } in
  with_server ~config handler (fun s ->
      with_client s.port (fun cl ->
          (* A batch of pipelined requests of every kind the loop handles
             without a handler that allocates: plain GETs, HEAD, HTTP/1.0
             keep-alive, bodies by Content-Length and chunked, 100-continue
             with the body already sent, a chunked response. *)
          let kinds =
            [
              (get "/", false);
              (get "/", false);
              ("HEAD / HTTP/1.1\r\nHost: t\r\n\r\n", true);
              ("GET /x HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", false);
              ("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\n\r\nhello", false);
              ( "POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n\
                 3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n",
                false );
              ( "POST /echo HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\nok",
                false );
              (get "/chunked", false);
              (get "/", false);
              (get "/", false);
            ]
          in
          let batch = List.length kinds in
          let reqs = String.concat "" (List.map fst kinds) in
          let run n =
            for _ = 1 to n / batch do
              send cl reqs;
              List.iter
                (fun (_, head) ->
                  let r = read_response ~head cl in
                  if r.status <> 200 then Alcotest.fail "unexpected status")
                kinds
            done
          in
          let stats () =
            send cl get_stats;
            let r = read_response cl in
            check_hdr r "content-type" (Some "application/json");
            r.body
          in
          run 2_000;
          let s1 = stats () in
          run 10_000;
          let s2 = stats () in
          let requests = stats_field s2 "requests" - stats_field s1 "requests" in
          let words = stats_field s2 "minor_words" - stats_field s1 "minor_words" in
          Alcotest.(check int) "requests counted" 10_000 requests;
          Alcotest.(check int) "connections" 1 (stats_field s2 "connections");
          Alcotest.(check int) "pid" s.pid (stats_field s2 "pid");
          Alcotest.(check (float 0.0)) "minor words per request" 0.0
            (float_of_int words /. float_of_int requests)));
  (* The exit line reports the same figure. *)
  let s = start ~config:{ Server.default_config with workers = 1 } handler in
  with_client s.port (fun cl ->
      for _ = 1 to 1_500 do
        send cl (get "/");
        ignore (read_response cl)
      done);
  let log = stop s in
  Alcotest.(check bool) ("exit line: " ^ log) true
    (find_sub log "served 1500 requests, minor words/request 0.00" >= 0)

(* {2 Processes} *)

let stats_pid port =
  with_client port (fun cl ->
      send cl get_stats;
      stats_field (read_response cl).body "pid")

let workers () =
  let config = { Server.default_config with workers = 2; stats = Some stats_token } in
  let s = start ~config handler in
  killing s @@ fun () ->
  let pids = Hashtbl.create 4 in
  let deadline = Unix.gettimeofday () +. 10. in
  while Hashtbl.length pids < 2 && Unix.gettimeofday () < deadline do
    Hashtbl.replace pids (stats_pid s.port) ()
  done;
  Alcotest.(check int) "two workers answer" 2 (Hashtbl.length pids);
  Hashtbl.iter (fun pid () -> Alcotest.(check bool) "worker is a child" true (pid <> s.pid)) pids;
  (* Kill one: the supervisor starts another. *)
  let victim = Hashtbl.fold (fun pid () _ -> pid) pids 0 in
  Unix.kill victim Sys.sigkill;
  let deadline = Unix.gettimeofday () +. 10. in
  let fresh = ref false in
  while (not !fresh) && Unix.gettimeofday () < deadline do
    (* Connections queued on the killed worker's socket are reset. *)
    match stats_pid s.port with
    | pid -> if not (Hashtbl.mem pids pid) then fresh := true
    | exception _ -> Unix.sleepf 0.01
  done;
  Alcotest.(check bool) "restarted worker serves" true !fresh;
  let log = stop s in
  Alcotest.(check bool) "restart logged" true (find_sub log "restarting" >= 0);
  Alcotest.(check bool) "start line" true (find_sub log "listening on http://127.0.0.1:" >= 0);
  Alcotest.(check bool) "each worker reports" true (find_sub log "served" >= 0);
  Hashtbl.iter
    (fun pid () ->
      Alcotest.(check bool) "workers gone" false (Sys.file_exists (Printf.sprintf "/proc/%d/stat" pid)
        && not (String.contains (read_proc (Printf.sprintf "/proc/%d/stat" pid)) 'Z')))
    pids

let orphaned_workers () =
  let config = { Server.default_config with workers = 2; stats = Some stats_token } in
  let s = start ~config handler in
  let worker = killing s (fun () -> stats_pid s.port) in
  kill s;
  (* PR_SET_PDEATHSIG: the worker gets SIGTERM and shuts down. It is
     reparented, so it may linger as a zombie if nobody reaps it. *)
  let gone () =
    match read_proc (Printf.sprintf "/proc/%d/stat" worker) with
    | stat -> String.contains (String.sub stat (String.rindex stat ')') 3) 'Z'
    | exception Sys_error _ -> true
  in
  let deadline = Unix.gettimeofday () +. 5. in
  while (not (gone ())) && Unix.gettimeofday () < deadline do Unix.sleepf 0.02 done;
  Alcotest.(check bool) "worker exits with its supervisor" true (gone ())

let graceful_shutdown () =
  let s = start ~config:{ Server.default_config with workers = 1 } handler in
  killing s @@ fun () ->
  let idle = connect s.port in
  send idle (get "/");
  ignore (read_response idle);
  let busy = connect s.port in
  send busy "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 4\r\n\r\nab";
  Unix.sleepf 0.1;
  Unix.kill s.pid Sys.sigterm;
  Alcotest.(check bool) "idle connection closed" true (at_eof idle);
  (* The in-flight request may finish, and is told the connection closes. *)
  send busy "cd";
  let r = read_response busy in
  check_str "in-flight answered" "abcd" r.body;
  check_hdr r "connection" (Some "close");
  (match wait_exit s.pid with
   | Unix.WEXITED 0 -> ()
   | _ -> Alcotest.fail "exit code");
  (try Unix.connect (Unix.socket Unix.PF_INET Unix.SOCK_STREAM 0)
         (Unix.ADDR_INET (Unix.inet_addr_loopback, s.port));
       Alcotest.fail "still listening"
   with Unix.Unix_error (Unix.ECONNREFUSED, _, _) -> ());
  close idle;
  close busy;
  Sys.remove s.stderr_file

let access_log () =
  let path = Filename.temp_file "httpz_test" ".log" in
  let rotated = path ^ ".1" in
  let config = { Server.default_config with workers = 1; access_log = Some path } in
  with_server ~config handler (fun s ->
      with_client s.port (fun cl ->
          send cl (get "/a\"b");
          ignore (read_response cl);
          send cl (get "/");
          ignore (read_response cl);
          (* logrotate: move the file, SIGHUP, and the server writes a new
             one at the path and keeps serving (the same connection too). *)
          Unix.sleepf 1.2;
          Sys.rename path rotated;
          Unix.kill s.pid Sys.sighup;
          Unix.sleepf 0.3;
          send cl (get "/after-rotation");
          check_str "still serving" "/after-rotation" (read_response cl).body));
  let rotated_log = Httpz_test_support.read_file rotated in
  let log = Httpz_test_support.read_file path in
  Sys.remove path;
  Sys.remove rotated;
  Alcotest.(check bool) ("the new file has the request after SIGHUP: " ^ log) true
    (find_sub log "/after-rotation" >= 0 && find_sub log "/a\\x22b" < 0);
  let log = rotated_log in
  let lines = String.split_on_char '\n' (String.trim log) in
  Alcotest.(check int) "two lines" 2 (List.length lines);
  let l = List.nth lines 1 in
  Alcotest.(check bool) ("client address: " ^ l) true (String.sub l 0 14 = "127.0.0.1 - - ");
  Alcotest.(check bool) ("request and status: " ^ l) true
    (find_sub l "\"GET / HTTP/1.1\" 200 13" >= 0);
  Alcotest.(check bool) ("escaped quote: " ^ log) true (find_sub log "/a\\x22b" >= 0)

let start_failures () =
  let s = start handler in
  killing s @@ fun () ->
  let config = { Server.default_config with workers = 1; port = s.port } in
  (* Port taken: run answers 1 at once. *)
  let err = Filename.temp_file "httpz_test" ".err" in
  let code =
    match run_in_child ~stderr_file:err (fun () -> Server.run (on_backend config) handler) with
    | Unix.WEXITED n -> n
    | _ -> -1
  in
  Alcotest.(check int) "address in use" 1 code;
  Alcotest.(check bool) "reason logged" true
    (find_sub (Httpz_test_support.read_file err) "EADDRINUSE" >= 0);
  Sys.remove err;
  ignore (stop s : string);
  Alcotest.(check int) "bad host" 1
    (Server.run { Server.default_config with host = "not an address"; workers = 1 } handler);
  Alcotest.(check int) "bad server name" 1
    (Server.run { Server.default_config with server_name = "a\r\nb" } handler)

(* {1 Units} *)

let wheel_basics () =
  let t = Timer_wheel.create ~ids:8 ~size:4 ~now:100 in
  Timer_wheel.set t 1 105;
  Timer_wheel.set t 2 102;
  Timer_wheel.set t 3 102;
  Timer_wheel.set t 4 120;
  (* 120 shares a bucket with 104 and 108, … *)
  Alcotest.(check int) "count" 4 (Timer_wheel.count t);
  Alcotest.(check int) "nothing yet" (-1) (Timer_wheel.pop_expired t ~now:101);
  let a = Timer_wheel.pop_expired t ~now:102 in
  let b = Timer_wheel.pop_expired t ~now:102 in
  Alcotest.(check (list int)) "both at 102" [ 2; 3 ] (List.sort compare [ a; b ]);
  Alcotest.(check int) "then none" (-1) (Timer_wheel.pop_expired t ~now:102);
  Timer_wheel.cancel t 1;
  Alcotest.(check int) "cancelled" (-1) (Timer_wheel.deadline t 1);
  Alcotest.(check int) "not early" (-1) (Timer_wheel.pop_expired t ~now:119);
  Alcotest.(check int) "later turn" 4 (Timer_wheel.pop_expired t ~now:125);
  Alcotest.(check int) "empty" 0 (Timer_wheel.count t);
  Timer_wheel.set t 5 3;
  Alcotest.(check int) "past deadline fires next" 5 (Timer_wheel.pop_expired t ~now:126)

(* The wheel against a model: a list of (id, deadline). *)
let wheel_model =
  QCheck2.Test.make ~name:"timer wheel agrees with a model" ~count:300
    QCheck2.Gen.(list_size (int_range 1 200) (triple (int_range 0 2) (int_range 0 15) (int_range 0 40)))
    (fun ops ->
      let t = Timer_wheel.create ~ids:16 ~size:8 ~now:0 in
      let model = Hashtbl.create 16 in
      let now = ref 0 in
      List.for_all
        (fun (op, id, x) ->
          match op with
          | 0 ->
              let d = max (!now + 1) (!now + x) in
              Timer_wheel.set t id d;
              Hashtbl.replace model id d;
              true
          | 1 ->
              Timer_wheel.cancel t id;
              Hashtbl.remove model id;
              true
          | _ ->
              now := !now + (x mod 10);
              let popped = ref [] in
              let rec pop () =
                let id = Timer_wheel.pop_expired t ~now:!now in
                if id >= 0 then (popped := id :: !popped; pop ())
              in
              pop ();
              let expected =
                Hashtbl.fold (fun id d acc -> if d <= !now then id :: acc else acc) model []
              in
              List.iter (Hashtbl.remove model) expected;
              List.sort compare !popped = List.sort compare expected
              && Timer_wheel.count t = Hashtbl.length model)
        ops)

let wheel_zero_alloc =
  let t = Timer_wheel.create ~ids:4 ~size:16 ~now:0 in
  let now = ref 0 in
  Httpz_test_support.zero_alloc "timer wheel set/cancel/pop" (fun () ->
      incr now;
      Timer_wheel.set t 0 (!now + 3);
      Timer_wheel.set t 1 (!now + 1);
      Timer_wheel.cancel t 0;
      Timer_wheel.set t 2 !now;
      ignore (Timer_wheel.pop_expired t ~now:!now : int);
      ignore (Timer_wheel.pop_expired t ~now:!now : int))

let log_time () =
  let b = Bigstring.create 28 in
  List.iter
    (fun (t, expected) ->
      ignore (Httpz.Date.write_common_log b ~off:0 t : int);
      check_str (string_of_int t) expected (Bigstring.to_string b))
    [
      (0, "[01/Jan/1970:00:00:00 +0000]");
      (971211336, "[10/Oct/2000:20:55:36 +0000]");
      (951782400, "[29/Feb/2000:00:00:00 +0000]");
      (4102444799, "[31/Dec/2099:23:59:59 +0000]");
    ];
  (* Against Unix.gmtime on many instants. *)
  let months = [| "Jan"; "Feb"; "Mar"; "Apr"; "May"; "Jun"; "Jul"; "Aug"; "Sep"; "Oct"; "Nov"; "Dec" |] in
  for i = 0 to 2000 do
    let t = i * 1_234_567 + (i * i) in
    let g = Unix.gmtime (float_of_int t) in
    let expected =
      Printf.sprintf "[%02d/%s/%04d:%02d:%02d:%02d +0000]" g.Unix.tm_mday months.(g.Unix.tm_mon)
        (g.Unix.tm_year + 1900) g.Unix.tm_hour g.Unix.tm_min g.Unix.tm_sec
    in
    ignore (Httpz.Date.write_common_log b ~off:0 t : int);
    check_str "gmtime" expected (Bigstring.to_string b)
  done

let parse_listen () =
  let show = function
    | Ok (h, p) -> Printf.sprintf "%s %d" h p
    | Error e -> "error: " ^ e
  in
  List.iter
    (fun (arg, want) -> check_str arg want (show (Server.parse_listen arg)))
    [ ("127.0.0.1:8080", "127.0.0.1 8080"); ("[::1]:8080", "::1 8080"); ("[::]:0", ":: 0");
      (":443", "0.0.0.0 443"); ("localhost:80", "localhost 80");
      ("[fe80::1%lo]:80", "error: \"[fe80::1%lo]:80\": fe80::1%lo is not an IPv6 address") ];
  List.iter
    (fun (arg, part) ->
      match Server.parse_listen arg with
      | Ok _ -> Alcotest.failf "%S accepted" arg
      | Error e -> Alcotest.(check bool) (arg ^ ": " ^ e) true (find_sub e part >= 0))
    [ ("::1:80", "brackets"); ("[::1]80", "after the brackets"); ("[::1", "missing ']'");
      ("[127.0.0.1]:80", "not an IPv6"); ("h:65536", "out of range"); ("h:-1", "number");
      ("h:", "number"); ("8080", "give ADDR:PORT"); ("", "give ADDR:PORT"); ("a b:1", "not an address") ]

(* Lines of each format, read back from a file; [line] allocates nothing. *)
let log_formats () =
  let path = Filename.temp_file "httpz_test" ".log" in
  let fd = Unix.openfile path [ Unix.O_WRONLY; Unix.O_TRUNC ] 0o644 in
  let src = Bigstring.of_string "GET /a\"b\\c\xe9 HTTP/1.1|http://r/\"q\"|ua\x01\\" in
  let peer = Bigstring.of_string "::1" in
  let one format ~elapsed_us =
    let t = Access_log.create ~fd:(Syscall.fd_of_unix fd) ~format in
    Access_log.line t ~now:971211336 ~peer ~peer_len:3 ~src ~req_off:0 ~req_len:20 ~status:404 ~bytes:0
      ~ref_off:21 ~ref_len:12 ~ua_off:34 ~ua_len:4 ~elapsed_us;
    Access_log.line t ~now:971211336 ~peer ~peer_len:0 ~src ~req_off:0 ~req_len:(-1) ~status:400
      ~bytes:12 ~ref_off:0 ~ref_len:(-1) ~ua_off:0 ~ua_len:(-1) ~elapsed_us:(-5);
    Access_log.flush t;
    t
  in
  let expect =
    [ ( Access_log.Common,
        "::1 - - [10/Oct/2000:20:55:36 +0000] \"GET /a\\x22b\\x5Cc\\xE9 HTTP/1.1\" 404 - 1234\n\
         - - - [10/Oct/2000:20:55:36 +0000] \"-\" 400 12 0\n" );
      ( Access_log.Combined,
        "::1 - - [10/Oct/2000:20:55:36 +0000] \"GET /a\\x22b\\x5Cc\\xE9 HTTP/1.1\" 404 - \
         \"http://r/\\x22q\\x22\" \"ua\\x01\\x5C\" 1234\n\
         - - - [10/Oct/2000:20:55:36 +0000] \"-\" 400 12 \"-\" \"-\" 0\n" );
      ( Access_log.Json,
        "{\"time\":\"2000-10-10T20:55:36Z\",\"remote_addr\":\"::1\",\
         \"request\":\"GET /a\\\"b\\\\c\\u00E9 HTTP/1.1\",\"status\":404,\"body_bytes_sent\":0,\
         \"referer\":\"http://r/\\\"q\\\"\",\"user_agent\":\"ua\\u0001\\\\\",\"request_time_us\":1234}\n\
         {\"time\":\"2000-10-10T20:55:36Z\",\"remote_addr\":null,\"request\":null,\"status\":400,\
         \"body_bytes_sent\":12,\"referer\":null,\"user_agent\":null,\"request_time_us\":0}\n" ) ]
  in
  List.iter
    (fun (format, want) ->
      ignore (Unix.lseek fd 0 Unix.SEEK_SET : int);
      Unix.ftruncate fd 0;
      ignore (one format ~elapsed_us:1234 : Access_log.t);
      check_str "line" want (Httpz_test_support.read_file path);
      (* Zero allocation per line, over more lines than the buffer holds. *)
      let t = one format ~elapsed_us:1 in
      let before = Gc.minor_words () in
      for i = 1 to 5000 do
        Access_log.line t ~now:(971211336 + i) ~peer ~peer_len:3 ~src ~req_off:0 ~req_len:20 ~status:200
          ~bytes:i ~ref_off:21 ~ref_len:12 ~ua_off:34 ~ua_len:4 ~elapsed_us:i
      done;
      Alcotest.(check (float 0.)) "minor words for 5000 lines" 0. (Gc.minor_words () -. before))
    expect;
  Unix.close fd;
  Sys.remove path;
  (* The JSON time against Unix.gmtime on many instants. *)
  let p2 = Filename.temp_file "httpz_test" ".log" in
  let fd = Unix.openfile p2 [ Unix.O_WRONLY; Unix.O_TRUNC ] 0o644 in
  let t = Access_log.create ~fd:(Syscall.fd_of_unix fd) ~format:Access_log.Json in
  let instants = List.init 300 (fun i -> (i * 9_876_543) + (i * i * 7)) in
  List.iter
    (fun now ->
      Access_log.line t ~now ~peer ~peer_len:0 ~src ~req_off:0 ~req_len:(-1) ~status:200 ~bytes:0
        ~ref_off:0 ~ref_len:(-1) ~ua_off:0 ~ua_len:(-1) ~elapsed_us:0)
    instants;
  Access_log.flush t;
  Unix.close fd;
  let lines = String.split_on_char '\n' (String.trim (Httpz_test_support.read_file p2)) in
  Sys.remove p2;
  List.iter2
    (fun now l ->
      let g = Unix.gmtime (float_of_int now) in
      let want =
        Printf.sprintf "{\"time\":\"%04d-%02d-%02dT%02d:%02d:%02dZ\"" (g.Unix.tm_year + 1900)
          (g.Unix.tm_mon + 1) g.Unix.tm_mday g.Unix.tm_hour g.Unix.tm_min g.Unix.tm_sec
      in
      check_str "iso time" want (String.sub l 0 (String.length want)))
    instants lines

let connections =
  [
    Alcotest.test_case "keep-alive reuse" `Quick keep_alive;
    Alcotest.test_case "pipelining in order" `Quick pipelining;
    Alcotest.test_case "2000 pipelined requests" `Quick many_pipelined;
    Alcotest.test_case "HEAD: Content-Length, no body" `Quick head_request;
    Alcotest.test_case "100-continue" `Quick expect_continue;
    Alcotest.test_case "chunked request bodies" `Quick chunked_body;
    Alcotest.test_case "oversized body: 413" `Quick oversized_body;
    Alcotest.test_case "bad requests: 4xx and close" `Quick bad_request;
    Alcotest.test_case "timeouts" `Quick timeouts;
    Alcotest.test_case "max_connections: the idle longest makes room" `Quick max_connections;
    Alcotest.test_case "unwanted bodies: answered, not read" `Quick unwanted_body;
    Alcotest.test_case "body deadline and minimum rate" `Quick body_deadline;
    Alcotest.test_case "body memory given back" `Quick body_memory_returns;
    Alcotest.test_case "CONNECT: no content, then close" `Quick connect_requests;
    Alcotest.test_case "stats: the token only" `Quick stats_token_required;
    Alcotest.test_case "the client's address and port" `Quick client_address;
    Alcotest.test_case "several listening addresses" `Quick several_listeners;
    Alcotest.test_case "waiting handlers: fd, timeout, hang-up" `Quick waiting_handlers;
    Alcotest.test_case "handler errors: 500" `Quick handler_errors;
    Alcotest.test_case "chunked, large and close responses" `Quick responses;
    Alcotest.test_case "write backpressure" `Quick backpressure;
    Alcotest.test_case "files: sendfile, no fd leak" `Quick files;
    Alcotest.test_case "EMFILE: pause accepting" `Quick emfile;
    Alcotest.test_case "steady state allocates nothing" `Quick zero_alloc_steady_state;
  ]

let processes =
  [
    Alcotest.test_case "workers restart, shutdown" `Quick workers;
    Alcotest.test_case "workers die with the supervisor" `Quick orphaned_workers;
    Alcotest.test_case "graceful shutdown" `Quick graceful_shutdown;
    Alcotest.test_case "access log" `Quick access_log;
    Alcotest.test_case "start failures" `Quick start_failures;
  ]

(* Every server test runs on each backend. *)
let group name io tests =
  (name, List.map (fun (n, speed, f) -> (n, speed, fun () -> backend := io; f ())) tests)

let () =
  Syscall.ignore_sigpipe ();
  Alcotest.run "server"
    [
      group "connections-uring" Server.Uring connections;
      group "connections-epoll" Server.Epoll connections;
      group "processes-uring" Server.Uring processes;
      group "processes-epoll" Server.Epoll processes;
      ( "units",
        [
    Alcotest.test_case "timer wheel" `Quick wheel_basics;
          Httpz_test_support.qcheck wheel_model;
          wheel_zero_alloc;
    Alcotest.test_case "access log time" `Quick log_time;
    Alcotest.test_case "access log formats" `Quick log_formats;
    Alcotest.test_case "listen addresses" `Quick parse_listen;
        ] );
    ]
