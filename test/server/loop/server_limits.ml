(* Timeouts and bounds: header, idle, body and handler timeouts, bodies the
   handler does not want, body memory, max_connections. *)

open Httpz_server
open Httpz_live
open Server_common

let timeout_config =
  {
    Server.default_config with
    workers = 1;
    header_timeout = 0.3;
    idle_timeout = 0.5;
    body_timeout = 0.3;
  }

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
