(* The server core over real sockets: each test forks a server on
   127.0.0.1 with an ephemeral port (its stderr goes to a temporary file),
   talks to it with blocking sockets that time out after 5 s, then stops it
   with SIGTERM and checks that it exits 0 (Httpz_live). Plus unit tests
   of the timer wheel and the access log. The cases live in server_*.ml by
   theme (requests, limits, resources, processes, units); this file lists
   them, and runs every server case on each backend. *)

open Httpz_server
open Server_requests
open Server_limits
open Server_resources
open Server_processes
open Server_units
open Server_listeners

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
    Alcotest.test_case "https and plain listeners, one handler" `Quick tls_and_plain;
    Alcotest.test_case "handed-over sockets: role by port" `Quick inherited_roles;
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
  (name, List.map (fun (n, speed, f) -> (n, speed, fun () -> Server_common.backend := io; f ())) tests)

let () =
  Httpz_sys.Syscall.ignore_sigpipe ();
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
    Alcotest.test_case "GC marking phase settled" `Quick gc_settle;
    Alcotest.test_case "access log formats" `Quick log_formats;
    Alcotest.test_case "refusal lines: the client's address" `Quick refusal_addresses;
    Alcotest.test_case "listen addresses" `Quick parse_listen;
    Alcotest.test_case "listeners: ambiguous roles refused" `Quick Server_listeners.refused;
        ] );
    ]
