(* Requests and responses on one connection: keep-alive, pipelining, HEAD,
   100-continue, bodies, malformed requests, CONNECT, several listeners,
   handler errors, response framing, backpressure. *)

open Httpz
open Httpz_server
open Httpz_live
open Server_common

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
