(* Resources of the process: files sent with sendfile (no descriptor
   leaked), running out of descriptors, no allocation in steady state. *)

open Httpz
open Httpz_sys
open Httpz_server
open Httpz_live
open Server_common

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
          (* The first client's socket may still be open on the server's
             side (its close not yet seen): the base is taken once the
             count stops falling. *)
          let base =
            let deadline = Unix.gettimeofday () +. 2. in
            let last = ref (open_fds s.pid) in
            let settled = ref false in
            while (not !settled) && Unix.gettimeofday () < deadline do
              Unix.sleepf 0.05;
              let n = open_fds s.pid in
              if n = !last then settled := true else last := n
            done;
            !last
          in
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
