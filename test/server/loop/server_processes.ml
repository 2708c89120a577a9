(* The processes: workers and their supervisor, shutdown, the access log
   and its rotation, failures at start. *)

open Httpz_server
open Httpz_live
open Server_common

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
