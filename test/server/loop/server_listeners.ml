(* Listeners of different kinds in one server: https and plain http
   serving the same handler, over real sockets on the group's backend. *)

open Httpz_server
open Httpz_live
open Server_common

(* A self-signed certificate and its key, made once per test run. *)
let cert_and_key =
  lazy
    (let dir = Filename.get_temp_dir_name () in
     let base = Filename.concat dir (Printf.sprintf "httpz-listeners-%d" (Unix.getpid ())) in
     let cert = base ^ ".crt" and key = base ^ ".key" in
     let cmd =
       Printf.sprintf
         "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 \
          -subj /CN=localhost -keyout %s -out %s >/dev/null 2>&1"
         (Filename.quote key) (Filename.quote cert)
     in
     if Sys.command cmd <> 0 then Alcotest.fail "openssl could not make a test certificate";
     at_exit (fun () -> List.iter (fun f -> try Sys.remove f with Sys_error _ -> ()) [ cert; key ]);
     (cert, key))

let tls_config ~listen_plain =
  let cert_file, key_file = Lazy.force cert_and_key in
  Some { (Server.tls ~cert_file ~key_file) with hsts = Some 600; listen_plain }

(* A listening socket on 127.0.0.1 at a port the kernel picks, and that
   port. *)
let listening () =
  let fd = Unix.socket Unix.PF_INET Unix.SOCK_STREAM 0 in
  Unix.setsockopt fd Unix.SO_REUSEADDR true;
  Unix.bind fd (Unix.ADDR_INET (Unix.inet_addr_loopback, 0));
  Unix.listen fd 16;
  (fd, match Unix.getsockname fd with Unix.ADDR_INET (_, p) -> p | _ -> 0)

let free_port () =
  let fd, port = listening () in
  Unix.close fd;
  port

(* curl's output (head and body, [-i]) for GET [url], the certificate not
   checked ([-k]: it is self-signed). *)
let curl url =
  let ic = Unix.open_process_args_in "curl" [| "curl"; "-sSik"; "--noproxy"; "*"; "--max-time"; "5"; url |] in
  let buf = Buffer.create 1024 in
  (try
     while true do
       Buffer.add_channel buf ic 1
     done
   with End_of_file -> ());
  let out = Buffer.contents buf in
  ignore (Unix.close_process_in ic : Unix.process_status);
  out

let has sub s = find_sub s sub >= 0

let check_https port =
  let out = curl (Printf.sprintf "https://127.0.0.1:%d/" port) in
  (* curl offers h2 first, and the server selects it (ALPN). *)
  Alcotest.(check bool) ("https: 200 over HTTP/2 with the handler's body: " ^ out) true
    (has "HTTP/2 200" out && has hello out);
  Alcotest.(check bool) "https: Strict-Transport-Security" true
    (has "strict-transport-security: max-age=600\r\n" out)

let get_and_close = "GET / HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n"

let check_plain port =
  let r = exchange port get_and_close in
  check_status "plain: 200" 200 r.status;
  check_str "plain: the handler's body" hello r.body;
  check_hdr r "strict-transport-security" None;
  check_hdr r "x-content-type-options" (Some "nosniff")

(* Plain HTTP sent to the TLS port: the nginx-like 400 page. *)
let check_tls_port_refuses_plain port =
  let r = exchange port get_and_close in
  check_status "plain HTTP on the TLS port: 400" 400 r.status;
  Alcotest.(check bool) "the page says why" true
    (has "The plain HTTP request was sent to an HTTPS port" r.body)

let tls_and_plain () =
  let plain = free_port () in
  let config =
    { Server.default_config with workers = 1; tls = tls_config ~listen_plain:[ ("127.0.0.1", plain) ] }
  in
  with_server ~config handler (fun s ->
      check_https s.port;
      check_plain plain;
      check_tls_port_refuses_plain s.port;
      Alcotest.(check bool) "the start line names both" true
        (has (Printf.sprintf "https://127.0.0.1:%d" s.port) (stderr_of s)
        && has (Printf.sprintf "http://127.0.0.1:%d" plain) (stderr_of s)))

let inherited_roles () =
  let tls_fd, tls_port = listening () and plain_fd, plain_port = listening () in
  Fun.protect
    ~finally:(fun () -> Unix.close tls_fd; Unix.close plain_fd)
    (fun () ->
      let fds = List.map Httpz_sys.Syscall.fd_of_unix [ tls_fd; plain_fd ] in
      let config =
        { Server.default_config with
          workers = 2; listen_fds = fds;
          (* The host differs from the socket's: the port alone decides. *)
          tls = tls_config ~listen_plain:[ ("0.0.0.0", plain_port) ] }
      in
      with_server ~config handler (fun s ->
          Alcotest.(check int) "on_listen: the https socket's port" tls_port s.port;
          check_https tls_port;
          check_plain plain_port;
          check_tls_port_refuses_plain tls_port))

let expect_error what want = function
  | Ok _ -> Alcotest.failf "%s: accepted" what
  | Error e -> Alcotest.(check bool) (Printf.sprintf "%s: %S names %S" what e want) true (has want e)

let refused () =
  let tls listen_plain redirect_http =
    Option.map (fun t -> { t with Config.redirect_http }) (tls_config ~listen_plain)
  in
  let c = { Server.default_config with host = "127.0.0.1"; port = 8443 } in
  expect_error "an address in listen and listen_plain"
    "http://127.0.0.1:8443 is in both listen and tls.listen_plain"
    (Config.check { c with tls = tls [ ("127.0.0.1", 8443) ] [] });
  expect_error "an address in listen_plain and redirect_http"
    "http://127.0.0.1:80 is in both tls.listen_plain and tls.redirect_http"
    (Config.check { c with tls = tls [ ("127.0.0.1", 80) ] [ ("127.0.0.1", 80) ] });
  expect_error "listen_plain twice" "tls.listen_plain lists http://[::]:80 twice"
    (Config.check { c with tls = tls [ ("::", 80); ("::", 80) ] [] });
  Alcotest.(check bool) "port 0 twice is two free ports" true
    (Config.check { c with tls = tls [ ("127.0.0.1", 0); ("127.0.0.1", 0) ] [] } = Ok ());
  let fd, port = listening () in
  Fun.protect
    ~finally:(fun () -> Unix.close fd)
    (fun () ->
      let c = { c with listen_fds = [ Httpz_sys.Syscall.fd_of_unix fd ] } in
      expect_error "a handed-over port in listen_plain and redirect_http"
        (Printf.sprintf "port %d is in both tls.listen_plain and tls.redirect_http" port)
        (Listeners.adopt { c with tls = tls [ ("0.0.0.0", port) ] [ ("::", port) ] });
      expect_error "every handed-over socket plain" "none is left to serve https"
        (Listeners.adopt { c with tls = tls [ ("0.0.0.0", port) ] [] });
      match Listeners.adopt { c with tls = tls [ ("0.0.0.0", 80) ] [] } with
      | Ok a ->
          Alcotest.(check (list (pair string int))) "another port: the socket serves https"
            [ ("127.0.0.1", port) ] a.listen
      | Error e -> Alcotest.fail e)
