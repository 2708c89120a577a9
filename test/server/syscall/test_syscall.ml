(* Real syscalls on loopback sockets, socketpairs, pipes and temporary files.
   Every case checks that it leaves no fd open, and every hot-path stub has
   a zero-allocation case. *)

module S = Httpz_sys.Syscall
module B = Httpz.Bigstring
module T = Httpz_test_support

let check_int = Alcotest.(check int)
let check_bool = Alcotest.(check bool)
let check_string = Alcotest.(check string)

(* Fail with the errno name, so a failing syscall is readable. *)
let ok what r =
  if r < 0 then Alcotest.failf "%s: %s" what (S.error_message r);
  r

let check_errno what expected r =
  if r <> -expected then
    Alcotest.failf "%s: expected -%s, got %d%s" what (S.error_message expected) r
      (if r < 0 then " (" ^ S.error_message r ^ ")" else "")

let open_fds () = Array.length (Sys.readdir "/proc/self/fd")

(* Every case runs inside this: the fd count must not change. *)
let case name f =
  Alcotest.test_case name `Quick (fun () ->
      let before = open_fds () in
      f ();
      check_int (name ^ ": no fd leaked") before (open_fds ()))

let close_all fds = List.iter (fun fd -> ignore (S.close fd)) fds

let with_fds fds f = Fun.protect ~finally:(fun () -> close_all fds) f

(* Open-file flags as the kernel reports them in /proc/self/fdinfo (octal).
   The two bits below are the generic Linux values (x86, arm, riscv). *)
let o_nonblock = 0o4000
let o_cloexec = 0o2000000

let fd_flags fd =
  let ic = open_in (Printf.sprintf "/proc/self/fdinfo/%d" fd) in
  Fun.protect ~finally:(fun () -> close_in ic) (fun () ->
      let rec find () =
        let line = input_line ic in
        match String.index_opt line ':' with
        | Some i when String.sub line 0 i = "flags" ->
            int_of_string ("0o" ^ String.trim (String.sub line (i + 1) (String.length line - i - 1)))
        | _ -> find ()
      in
      find ())

let check_flags name fd ~nonblock =
  let f = fd_flags fd in
  check_bool (name ^ ": O_CLOEXEC") true (f land o_cloexec <> 0);
  check_bool (name ^ ": O_NONBLOCK") nonblock (f land o_nonblock <> 0)

(* A listening socket on 127.0.0.1, a client connected to it, and the
   accepted server side. *)
let with_conn f =
  let lfd = ok "socket_listen" (S.socket_listen ~host:"127.0.0.1" ~port:0 ~backlog:16 ~reuseport:false) in
  with_fds [ lfd ] (fun () ->
      let port = ok "local_port" (S.local_port lfd) in
      let client = Unix.socket Unix.PF_INET Unix.SOCK_STREAM 0 in
      let cfd = S.fd_of_unix client in
      with_fds [ cfd ] (fun () ->
          Unix.connect client (Unix.ADDR_INET (Unix.inet_addr_loopback, port));
          let sfd = ok "accept4" (S.accept4 lfd) in
          with_fds [ sfd ] (fun () -> f ~lfd ~sfd ~cfd)))

let with_socketpair f =
  let a, b = Unix.socketpair Unix.PF_UNIX Unix.SOCK_STREAM 0 in
  Unix.set_nonblock a;
  Unix.set_nonblock b;
  let a = S.fd_of_unix a and b = S.fd_of_unix b in
  with_fds [ a; b ] (fun () -> f a b)

let bs s = B.of_string s

let read_string fd n =
  let buf = B.create n in
  let r = ok "read" (S.read fd buf 0 n) in
  B.sub_string buf ~off:0 ~len:r

let rec rm_rf path =
  match (Unix.lstat path).Unix.st_kind with
  | Unix.S_DIR ->
      Array.iter (fun n -> rm_rf (Filename.concat path n)) (Sys.readdir path);
      Unix.rmdir path
  | _ -> Unix.unlink path
  | exception Unix.Unix_error (Unix.ENOENT, _, _) -> ()

let with_temp_dir f =
  let base = Filename.get_temp_dir_name () in
  let rec fresh i =
    let d = Filename.concat base (Printf.sprintf "httpz-syscall-%d-%d" (Unix.getpid ()) i) in
    match Unix.mkdir d 0o700 with () -> d | exception Unix.Unix_error (Unix.EEXIST, _, _) -> fresh (i + 1)
  in
  let d = fresh 0 in
  Fun.protect ~finally:(fun () -> rm_rf d) (fun () -> f d)

let write_file path s =
  let oc = open_out_bin path in
  output_string oc s;
  close_out oc

(* ------------------------------------------------------------------ *)

let test_constants () =
  let errnos =
    S.[ eagain; eintr; econnreset; econnaborted; epipe; emfile; enfile; enobufs; enomem; enoent; eacces;
        eperm; eloop; exdev; enotdir; eisdir; enxio; einval; ebadf; enametoolong; enosys; eaddrinuse;
        enotconn; enotsock; eexist; etimedout; eproto ]
  in
  List.iter (fun e -> check_bool "errno positive" true (e > 0)) errnos;
  check_int "errnos distinct" (List.length errnos) (List.length (List.sort_uniq compare errnos));
  let flags = S.[ epollin; epollout; epollerr; epollhup; epollrdhup; epollpri; epollet; epolloneshot; epollexclusive ] in
  List.iter (fun f -> check_bool "flag is one bit" true (f > 0 && f land (f - 1) = 0)) flags;
  check_int "flags distinct" (List.length flags) (List.length (List.sort_uniq compare flags));
  (* EPOLLET is bit 31: it must survive as a positive OCaml int. *)
  check_int "EPOLLET" (1 lsl 31) S.epollet;
  let starts_with p s = String.length s >= String.length p && String.sub s 0 (String.length p) = p in
  check_bool "message names EAGAIN" true (starts_with "EAGAIN: " (S.error_message (-S.eagain)));
  check_bool "message of positive errno" true (starts_with "ECONNRESET: " (S.error_message S.econnreset));
  check_bool "unnamed errno" true (starts_with "errno 4000: " (S.error_message (-4000)));
  (* Cross-check against the Unix library's own view of a few errnos. *)
  let unix_msg e = Unix.error_message e in
  let strerror n = let m = S.error_message n in String.sub m (String.index m ':' + 2) (String.length m - String.index m ':' - 2) in
  check_string "EPIPE text" (unix_msg Unix.EPIPE) (strerror S.epipe);
  check_string "ENOENT text" (unix_msg Unix.ENOENT) (strerror S.enoent);
  check_string "EXDEV text" (unix_msg Unix.EXDEV) (strerror S.exdev)

let test_fd_conversion () =
  let u = Unix.openfile "/dev/null" [ Unix.O_RDONLY; Unix.O_CLOEXEC ] 0 in
  let fd = S.fd_of_unix u in
  check_bool "fd is a small int" true (fd >= 0 && fd < 1_000_000);
  check_bool "round trip" true (S.unix_of_fd fd = u);
  check_int "close via Syscall" 0 (S.close fd);
  check_errno "second close" S.ebadf (S.close fd);
  match Unix.close u with
  | () -> Alcotest.fail "Unix.close after Syscall.close should fail"
  | exception Unix.Unix_error (Unix.EBADF, _, _) -> ()

let test_listen_accept () =
  with_conn (fun ~lfd ~sfd ~cfd ->
      check_bool "distinct fds" true (lfd <> sfd && sfd <> cfd);
      check_flags "listening socket" lfd ~nonblock:true;
      check_flags "accepted socket" sfd ~nonblock:true;
      check_errno "accept4 on empty queue" S.eagain (S.accept4 lfd);
      check_int "setsockopt Tcp_nodelay" 0 (S.setsockopt sfd S.Tcp_nodelay 1);
      (* accept4 gave a non-blocking fd: reading it now must not block. *)
      let buf = B.create 16 in
      check_errno "read on empty non-blocking socket" S.eagain (S.read sfd buf 0 16);
      check_int "peer port matches" (S.local_port sfd) (match Unix.getpeername (S.unix_of_fd cfd) with
        | Unix.ADDR_INET (_, p) -> p | _ -> -1);
      check_bool "TCP_NODELAY is set" true (Unix.getsockopt (S.unix_of_fd sfd) Unix.TCP_NODELAY);
      check_int "getsockopt Tcp_nodelay" 1 (S.getsockopt sfd S.Tcp_nodelay);
      check_bool "setsockopt on a pipe fails" true
        (let r, w = Unix.pipe ~cloexec:true () in
         with_fds [ S.fd_of_unix r; S.fd_of_unix w ] (fun () ->
             S.setsockopt (S.fd_of_unix r) S.Tcp_nodelay 1 = -S.enotsock
             && S.getsockopt (S.fd_of_unix r) S.Tcp_nodelay = -S.enotsock)))

(* The server sets TCP_NODELAY and TCP_NOTSENT_LOWAT once, on the listening
   socket between bind and listen (Server.open_listener), and relies on
   accepted sockets inheriting them. *)
let test_listener_options_inherited () =
  let lfd = ok "socket_bind" (S.socket_bind ~host:"127.0.0.1" ~port:0 ~reuseport:false) in
  with_fds [ lfd ] (fun () ->
      check_int "nodelay before listen" 0 (S.setsockopt lfd S.Tcp_nodelay 1);
      check_int "notsent_lowat before listen" 0 (S.setsockopt lfd S.Tcp_notsent_lowat 16384);
      check_int "defer_accept before listen" 0 (S.setsockopt lfd S.Tcp_defer_accept 1);
      check_errno "not listening yet: accept4 refused" S.einval (S.accept4 lfd);
      check_errno "listen: negative backlog" S.einval (S.listen lfd (-1));
      check_int "listen" 0 (S.listen lfd 16);
      check_bool "defer_accept survives listen" true (S.getsockopt lfd S.Tcp_defer_accept > 0);
      let port = ok "local_port" (S.local_port lfd) in
      let client = Unix.socket Unix.PF_INET Unix.SOCK_STREAM 0 in
      let cfd = S.fd_of_unix client in
      with_fds [ cfd ] (fun () ->
          Unix.connect client (Unix.ADDR_INET (Unix.inet_addr_loopback, port));
          (* Deferred: the handshake is done, but accept4 waits for data. *)
          check_errno "no connection before data" S.eagain (S.accept4 lfd);
          ignore (Unix.write_substring client "GET" 0 3 : int);
          let rec accept tries =
            let fd = S.accept4 lfd in
            if fd = - S.eagain && tries > 0 then (Unix.sleepf 0.01; accept (tries - 1)) else fd
          in
          let sfd = ok "accept4 after data" (accept 200) in
          with_fds [ sfd ] (fun () ->
              check_int "accepted socket inherits TCP_NODELAY" 1 (S.getsockopt sfd S.Tcp_nodelay);
              check_int "accepted socket inherits TCP_NOTSENT_LOWAT" 16384
                (S.getsockopt sfd S.Tcp_notsent_lowat);
              check_string "the data is there at once" "GET" (read_string sfd 3))))

let test_listen_errors () =
  check_errno "bad host" S.einval (S.socket_listen ~host:"localhost" ~port:0 ~backlog:1 ~reuseport:false);
  check_errno "NUL in host" S.einval (S.socket_listen ~host:"127.0.0.1\000x" ~port:0 ~backlog:1 ~reuseport:false);
  check_errno "port too big" S.einval (S.socket_listen ~host:"127.0.0.1" ~port:65536 ~backlog:1 ~reuseport:false);
  (match S.socket_listen_exn ~host:"nope" ~port:1 ~backlog:1 ~reuseport:false with
   | _ -> Alcotest.fail "socket_listen_exn should raise"
   | exception Failure msg -> check_bool "message names EINVAL" true (String.length msg > 0));
  let a = ok "listen a" (S.socket_listen ~host:"127.0.0.1" ~port:0 ~backlog:4 ~reuseport:false) in
  with_fds [ a ] (fun () ->
      let port = S.local_port a in
      check_errno "port in use" S.eaddrinuse (S.socket_listen ~host:"127.0.0.1" ~port ~backlog:4 ~reuseport:false));
  (* SO_REUSEPORT: two sockets of the same user share one port. *)
  let a = ok "reuseport a" (S.socket_listen ~host:"127.0.0.1" ~port:0 ~backlog:4 ~reuseport:true) in
  with_fds [ a ] (fun () ->
      let port = S.local_port a in
      let b = ok "reuseport b" (S.socket_listen ~host:"127.0.0.1" ~port ~backlog:4 ~reuseport:true) in
      with_fds [ b ] (fun () -> check_int "same port" port (S.local_port b)));
  (* IPv6 loopback, when the machine has it. *)
  let r = S.socket_listen ~host:"::1" ~port:0 ~backlog:4 ~reuseport:false in
  if r >= 0 then with_fds [ r ] (fun () -> check_bool "ipv6 port" true (S.local_port r > 0))
  else check_bool "ipv6 unavailable is an errno" true (r < 0 && r <> -S.einval);
  check_errno "local_port of a pipe" S.enotsock
    (let r, w = Unix.pipe ~cloexec:true () in
     with_fds [ S.fd_of_unix r; S.fd_of_unix w ] (fun () -> S.local_port (S.fd_of_unix r)))

let test_read_write () =
  with_conn (fun ~lfd:_ ~sfd ~cfd ->
      (* At an offset inside a buffer with garbage around it. *)
      let msg = "GET / HTTP/1.1\r\n\r\n" in
      let src = T.bigstring_at ~off:13 msg in
      check_int "write" (String.length msg) (S.write cfd src 13 (String.length msg));
      let dst = T.bigstring_at ~garbage:'#' ~off:7 (String.make 64 '.') in
      let n = S.read sfd dst 7 64 in
      check_int "read count" (String.length msg) n;
      check_string "bytes" msg (B.sub_string dst ~off:7 ~len:n);
      check_string "byte before untouched" "#" (B.sub_string dst ~off:6 ~len:1);
      check_string "bytes after untouched" (String.make (64 - n) '.') (B.sub_string dst ~off:(7 + n) ~len:(64 - n));
      (* Zero-length read and write. *)
      check_int "zero write" 0 (S.write cfd src 0 0);
      check_int "zero-length read" 0 (S.read sfd dst 0 0);
      check_errno "nothing more to read" S.eagain (S.read sfd dst 0 1);
      (* Spans outside the buffer are refused before any syscall. *)
      let b = B.create 8 in
      check_errno "negative off" S.einval (S.read sfd b (-1) 1);
      check_errno "negative len" S.einval (S.read sfd b 0 (-1));
      check_errno "len past end" S.einval (S.read sfd b 4 5);
      check_errno "off past end" S.einval (S.write cfd b 9 0);
      check_errno "huge len" S.einval (S.write cfd b 1 max_int);
      check_int "span ending at the end" 0 (S.write cfd b 8 0);
      check_errno "bad fd" S.ebadf (S.read (-1) b 0 1);
      (* shutdown_write: the peer sees end of stream, reading still works. *)
      check_int "shutdown_write" 0 (S.shutdown_write cfd);
      check_int "peer reads EOF" 0 (S.read sfd b 0 8);
      check_int "server still writes" 3 (S.write sfd (bs "abc") 0 3);
      check_string "client still reads" "abc" (read_string cfd 8);
      (* The peer closes: writes end in EPIPE or ECONNRESET, not SIGPIPE. *)
      (* with_conn closes cfd again afterwards: -EBADF, ignored; no fd is
         opened in between that could reuse the number. *)
      check_int "close client" 0 (S.close cfd);
      let big = B.create 65536 in
      let rec loop i =
        let r = S.write sfd big 0 65536 in
        if r >= 0 && i < 1000 then loop (i + 1) else r
      in
      let r = loop 0 in
      check_bool "write to closed peer fails with EPIPE/ECONNRESET" true (r = -S.epipe || r = -S.econnreset))

(* MSG_MORE sends on TCP: held bytes are released by the shutdown that
   follows and arrive whole, in order, before the EOF. *)
let test_send_more () =
  with_conn (fun ~lfd:_ ~sfd ~cfd ->
      let head = T.bigstring_at ~off:5 "HTTP/1.1 200 OK\r\n\r\n" in
      let body = T.bigstring_at ~off:3 "hello" in
      check_int "send, MSG_MORE" 19 (S.send sfd head 5 19 1);
      check_int "sendv2, MSG_MORE" 24 (S.sendv2 sfd head 5 19 body 3 5 1);
      check_int "sendv_string, MSG_MORE" 22 (S.sendv_string sfd head 5 19 "xyz!" 1 3 1);
      check_errno "send: bad span" S.einval (S.send sfd head 5 100 0);
      check_errno "sendv2: bad second span" S.einval (S.sendv2 sfd head 0 1 body 3 100 0);
      check_errno "sendv_string: bad string span" S.einval (S.sendv_string sfd head 0 1 "ab" 1 2 0);
      check_int "shutdown_write" 0 (S.shutdown_write sfd);
      let client = S.unix_of_fd cfd in
      let b = Buffer.create 128 and chunk = Bytes.create 128 in
      let rec drain () =
        let n = Unix.read client chunk 0 128 in
        if n > 0 then (Buffer.add_subbytes b chunk 0 n; drain ())
      in
      drain ();
      let r = "HTTP/1.1 200 OK\r\n\r\n" in
      check_string "all of it, in order, then EOF" (r ^ r ^ "hello" ^ r ^ "yz!") (Buffer.contents b));
  with_socketpair (fun a _ ->
      let r, w = Unix.pipe ~cloexec:true () in
      with_fds [ S.fd_of_unix r; S.fd_of_unix w ] (fun () ->
          check_errno "send on a pipe" S.enotsock (S.send (S.fd_of_unix w) (B.create 4) 0 4 0));
      ignore a)

let test_sendv2 () =
  with_socketpair (fun a b ->
      let head = T.bigstring_at ~off:5 "HTTP/1.1 200 OK\r\n\r\n" in
      let body = T.bigstring_at ~off:3 "hello" in
      check_int "sendv2 total" 24 (S.sendv2 a head 5 19 body 3 5 0);
      check_string "concatenated" "HTTP/1.1 200 OK\r\n\r\nhello" (read_string b 64);
      check_int "empty second" 2 (S.sendv2 a head 5 2 body 0 0 0);
      check_int "empty first" 5 (S.sendv2 a head 0 0 body 3 5 0);
      check_string "both" "HThello" (read_string b 64);
      check_errno "bad second span" S.einval (S.sendv2 a head 0 1 body 3 100 0);
      check_errno "bad first span" S.einval (S.sendv2 a head (-1) 1 body 0 1 0);
      (* Fill the socket: the short count, then EAGAIN. *)
      let big = B.create 65536 in
      let rec fill total =
        let r = S.sendv2 a big 0 65536 big 0 65536 0 in
        if r > 0 then fill (total + r) else (total, r)
      in
      let total, r = fill 0 in
      check_bool "wrote something" true (total > 0);
      check_errno "full socket" S.eagain r)

let test_epoll () =
  with_conn (fun ~lfd ~sfd ~cfd ->
      let ep = ok "epoll_create" (S.epoll_create ()) in
      with_fds [ ep ] (fun () ->
          check_flags "epoll fd" ep ~nonblock:false;
          let evs = S.events_create 8 in
          check_int "capacity" 8 (S.events_capacity evs);
          check_int "add" 0 (S.epoll_ctl_add ep sfd (S.epollin lor S.epollrdhup) 42);
          check_errno "add twice" S.eexist (S.epoll_ctl_add ep sfd S.epollin 42);
          check_int "nothing ready" 0 (S.epoll_wait ep evs 8 0);
          check_int "client writes" 2 (S.write cfd (bs "hi") 0 2);
          check_int "one ready" 1 (S.epoll_wait ep evs 8 0);
          check_int "token" 42 (S.event_token evs 0);
          check_bool "EPOLLIN" true (S.event_mask evs 0 land S.epollin <> 0);
          check_bool "no EPOLLOUT requested" true (S.event_mask evs 0 land S.epollout = 0);
          check_string "drain" "hi" (read_string sfd 8);
          check_int "level-triggered: drained, nothing" 0 (S.epoll_wait ep evs 8 0);
          (* A large token round-trips. *)
          check_int "mod" 0 (S.epoll_ctl_mod ep sfd (S.epollout lor S.epollet) max_int);
          check_int "writable" 1 (S.epoll_wait ep evs 8 0);
          check_int "big token" max_int (S.event_token evs 0);
          check_bool "EPOLLOUT" true (S.event_mask evs 0 land S.epollout <> 0);
          check_int "edge-triggered: reported once" 0 (S.epoll_wait ep evs 8 0);
          check_int "negative token" 0 (S.epoll_ctl_mod ep sfd S.epollout (-7));
          check_int "ready again" 1 (S.epoll_wait ep evs 8 0);
          check_int "negative token back" (-7) (S.event_token evs 0);
          check_int "del" 0 (S.epoll_ctl_del ep sfd);
          check_errno "del twice" S.enoent (S.epoll_ctl_del ep sfd);
          check_errno "mod unregistered" S.enoent (S.epoll_ctl_mod ep sfd S.epollin 1);
          check_int "nothing after del" 0 (S.epoll_wait ep evs 8 0);
          check_errno "max 0" S.einval (S.epoll_wait ep evs 0 0);
          check_errno "regular file" S.eperm
            (let u = Unix.openfile "/proc/self/exe" [ Unix.O_RDONLY; Unix.O_CLOEXEC ] 0 in
             with_fds [ S.fd_of_unix u ] (fun () -> S.epoll_ctl_add ep (S.fd_of_unix u) S.epollin 0));
          (* Listening socket: a pending connection makes it readable. *)
          check_int "add listener" 0 (S.epoll_ctl_add ep lfd S.epollin 7);
          let c2 = Unix.socket Unix.PF_INET Unix.SOCK_STREAM 0 in
          with_fds [ S.fd_of_unix c2 ] (fun () ->
              Unix.connect c2 (Unix.ADDR_INET (Unix.inet_addr_loopback, S.local_port lfd));
              check_int "listener ready" 1 (S.epoll_wait ep evs 8 0);
              check_int "listener token" 7 (S.event_token evs 0);
              let fd2 = ok "accept second" (S.accept4 lfd) in
              with_fds [ fd2 ] (fun () ->
                  (* Peer hang-up shows as RDHUP. *)
                  check_int "add fd2" 0 (S.epoll_ctl_add ep fd2 (S.epollin lor S.epollrdhup) 9);
                  check_int "del listener" 0 (S.epoll_ctl_del ep lfd);
                  Unix.shutdown c2 Unix.SHUTDOWN_SEND;
                  check_int "hang-up ready" 1 (S.epoll_wait ep evs 8 0);
                  check_int "fd2 token" 9 (S.event_token evs 0);
                  check_bool "EPOLLRDHUP" true (S.event_mask evs 0 land S.epollrdhup <> 0)));
          (* max is clamped to the buffer: 3 ready fds, room for 2. *)
          let small = S.events_create 2 in
          let p1 = Unix.pipe ~cloexec:true () and p2 = Unix.pipe ~cloexec:true () and p3 = Unix.pipe ~cloexec:true () in
          let fds = List.concat_map (fun (r, w) -> [ S.fd_of_unix r; S.fd_of_unix w ]) [ p1; p2; p3 ] in
          with_fds fds (fun () ->
              List.iteri (fun i (_, w) -> ignore (ok "add pipe" (S.epoll_ctl_add ep (S.fd_of_unix w) S.epollout (100 + i))))
                [ p1; p2; p3 ];
              check_int "clamped to capacity" 2 (S.epoll_wait ep small 100 0);
              check_int "clamped to max" 1 (S.epoll_wait ep evs 1 0));
          (* A timeout sleeps about that long and reports nothing. *)
          let ep2 = ok "epoll_create 2" (S.epoll_create ()) in
          with_fds [ ep2 ] (fun () ->
              let t0 = S.clock_monotonic_ns () in
              check_int "timeout" 0 (S.epoll_wait ep2 evs 8 30);
              let ms = (S.clock_monotonic_ns () - t0) / 1_000_000 in
              check_bool (Printf.sprintf "slept ~30 ms (%d)" ms) true (ms >= 25 && ms < 5000))));
  Alcotest.check_raises "events_create 0" (Invalid_argument "Syscall.events_create") (fun () ->
      ignore (S.events_create 0));
  Alcotest.check_raises "events_create too big" (Invalid_argument "Syscall.events_create") (fun () ->
      ignore (S.events_create (S.epoll_batch_max + 1)))

(* epoll_wait with a timeout releases the runtime lock: a signal handler
   still runs (the handler runs when the lock is taken back). *)
let test_epoll_signal () =
  let ep = ok "epoll_create" (S.epoll_create ()) in
  with_fds [ ep ] (fun () ->
      let evs = S.events_create 4 in
      let fired = ref false in
      let old = Sys.signal Sys.sigalrm (Sys.Signal_handle (fun _ -> fired := true)) in
      Fun.protect ~finally:(fun () -> Sys.set_signal Sys.sigalrm old) (fun () ->
          ignore (Unix.setitimer Unix.ITIMER_REAL { Unix.it_interval = 0.; it_value = 0.02 });
          let r = S.epoll_wait ep evs 4 2000 in
          check_errno "interrupted" S.eintr r;
          (* OCaml handlers run at the next allocation or poll point. *)
          ignore (Sys.opaque_identity (ref 0));
          check_bool "handler ran" true !fired))

let random_string n =
  let st = Random.State.make [| n |] in
  String.init n (fun _ -> Char.chr (Random.State.int st 256))

let test_sendfile () =
  with_temp_dir (fun dir ->
      let content = random_string 300_000 in
      let path = Filename.concat dir "f.bin" in
      write_file path content;
      let file = S.fd_of_unix (Unix.openfile path [ Unix.O_RDONLY; Unix.O_CLOEXEC ] 0) in
      with_fds [ file ] (fun () ->
          with_conn (fun ~lfd:_ ~sfd ~cfd ->
              (* Send [off, off+count) in pieces while the client drains. *)
              let transfer off count =
                let got = Buffer.create count in
                let buf = B.create 65536 in
                let pos = ref off and left = ref count in
                while !left > 0 || Buffer.length got < count do
                  if !left > 0 then begin
                    let r = S.sendfile sfd file !pos !left in
                    if r > 0 then (pos := !pos + r; left := !left - r)
                    else if r = 0 then Alcotest.fail "sendfile: unexpected end of file"
                    else if r <> -S.eagain then Alcotest.failf "sendfile: %s" (S.error_message r)
                  end;
                  let n = S.read cfd buf 0 65536 in
                  if n > 0 then Buffer.add_string got (B.sub_string buf ~off:0 ~len:n)
                  else if n = 0 then Alcotest.fail "early EOF"
                  else if n <> -S.eagain then Alcotest.failf "read: %s" (S.error_message n)
                done;
                Buffer.contents got
              in
              Unix.set_nonblock (S.unix_of_fd cfd);
              check_bool "whole file byte-equal" true (transfer 0 300_000 = content);
              check_bool "middle range byte-equal" true (transfer 1234 5678 = String.sub content 1234 5678);
              check_int "file position untouched" 0 (Unix.lseek (S.unix_of_fd file) 0 Unix.SEEK_CUR);
              check_int "at EOF" 0 (S.sendfile sfd file 300_000 10);
              check_int "past the end: short" 10 (S.sendfile sfd file (300_000 - 10) 100);
              ignore (read_string cfd 100);
              check_int "count 0" 0 (S.sendfile sfd file 0 0);
              check_errno "negative offset" S.einval (S.sendfile sfd file (-1) 10);
              check_errno "negative count" S.einval (S.sendfile sfd file 0 (-1));
              check_errno "bad in_fd" S.ebadf (S.sendfile sfd (-1) 0 10))))

(* ------------------------------------------------------------------ *)
(* openat2_beneath *)

type tree = { root : string; outside : string }

let with_tree f =
  with_temp_dir (fun dir ->
      let root = Filename.concat dir "root" and outside = Filename.concat dir "secret.txt" in
      Unix.mkdir root 0o755;
      write_file outside "secret";
      write_file (Filename.concat root "a.txt") "hello, world";
      Unix.mkdir (Filename.concat root "sub") 0o755;
      write_file (Filename.concat root "sub/b.txt") "bee";
      Unix.symlink "../secret.txt" (Filename.concat root "out");
      Unix.symlink outside (Filename.concat root "out_abs");
      Unix.symlink ".." (Filename.concat root "updir");
      Unix.symlink "a.txt" (Filename.concat root "in");
      Unix.symlink "sub" (Filename.concat root "subl");
      Unix.symlink "/proc/self/root" (Filename.concat root "magic");
      Unix.mkfifo (Filename.concat root "fifo") 0o644;
      f { root; outside })

let with_root tree f =
  let dfd = ok "open_dir" (S.open_dir tree.root) in
  with_fds [ dfd ] (fun () -> f dfd)

(* [Opens content]: opens and reads [content]; [Fails e]: fails with -e. *)
type expect = Opens of string | Fails of int | Kind of S.file_kind

let open_path ?(no_symlinks = false) dfd path =
  (* The path sits at an offset, with '/' garbage after it: a stub that
     read past [len] would see a different path. *)
  let b = T.bigstring_at ~garbage:'/' ~off:9 path in
  S.openat2_beneath dfd b 9 (String.length path) ~no_symlinks

let check_open ?no_symlinks dfd (path, expect) =
  let name = Printf.sprintf "open %S%s" path (if no_symlinks = Some true then " no_symlinks" else "") in
  let r = open_path ?no_symlinks dfd path in
  match expect with
  | Fails e -> check_errno name e r
  | Opens content ->
      let fd = ok name r in
      with_fds [ fd ] (fun () ->
          check_flags name fd ~nonblock:true;
          check_string name content (read_string fd 4096))
  | Kind k ->
      let fd = ok name r in
      with_fds [ fd ] (fun () ->
          let st = S.stat_create () in
          check_int "fstat" 0 (S.fstat fd st);
          check_bool (name ^ " kind") true (S.stat_kind st = k))

(* Cases where openat2 and the fallback agree. *)
let common_cases =
  [ ("a.txt", Opens "hello, world");
    ("./a.txt", Opens "hello, world");
    ("sub//b.txt", Opens "bee");
    ("sub/./b.txt", Opens "bee");
    ("../x", Fails S.exdev);
    ("..", Fails S.exdev);
    ("sub/../../x", Fails S.exdev);
    ("/etc/passwd", Fails S.exdev);
    ("/", Fails S.exdev);
    ("missing", Fails S.enoent);
    ("", Fails S.enoent);
    ("a.txt/x", Fails S.enotdir);
    ("sub", Kind S.Directory);
    ("sub/", Kind S.Directory);
    (".", Kind S.Directory);
    ("fifo", Kind S.Fifo) ]

let check_open_limits dfd =
  let b = bs "a.txt\000/../../etc/passwd" in
  check_errno "NUL inside the path" S.einval (S.openat2_beneath dfd b 0 (B.length b) ~no_symlinks:false);
  check_int "path before the NUL" 0
    (let fd = ok "a.txt" (S.openat2_beneath dfd b 0 5 ~no_symlinks:false) in
     S.close fd);
  check_errno "span past the end" S.einval (S.openat2_beneath dfd b 20 10 ~no_symlinks:false);
  check_errno "negative off" S.einval (S.openat2_beneath dfd b (-1) 1 ~no_symlinks:false);
  let long = bs (String.make 5000 'a') in
  check_errno "longer than PATH_MAX" S.enametoolong (S.openat2_beneath dfd long 0 5000 ~no_symlinks:false);
  check_errno "long component" S.enametoolong (S.openat2_beneath dfd long 0 300 ~no_symlinks:false);
  check_errno "bad dirfd" S.ebadf (S.openat2_beneath (-1) b 0 5 ~no_symlinks:false)

let test_openat2 () =
  check_bool "kernel has openat2 (Linux >= 5.6)" true (S.openat2_available ());
  with_tree (fun tree ->
      with_root tree (fun dfd ->
          List.iter (check_open dfd) common_cases;
          List.iter (check_open dfd)
            [ ("out", Fails S.exdev);
              ("out_abs", Fails S.exdev);
              ("updir/secret.txt", Fails S.exdev);
              ("in", Opens "hello, world");
              ("subl/b.txt", Opens "bee");
              ("sub/../a.txt", Opens "hello, world");
              ("magic/etc/passwd", Fails S.exdev) ];
          List.iter (check_open ~no_symlinks:true dfd)
            [ ("in", Fails S.eloop); ("subl/b.txt", Fails S.eloop); ("out", Fails S.eloop); ("a.txt", Opens "hello, world") ];
          check_open_limits dfd;
          (* The escaping symlinks are real: plain open follows them out. *)
          check_string "out via plain open" "secret"
            (T.read_file (Filename.concat tree.root "out"));
          check_string "outside file" "secret" (T.read_file tree.outside)))

let test_openat2_fallback () =
  S.set_openat2_fallback_for_testing true;
  Fun.protect ~finally:(fun () -> S.set_openat2_fallback_for_testing false) (fun () ->
      with_tree (fun tree ->
          with_root tree (fun dfd ->
              List.iter (check_open dfd) common_cases;
              (* Stricter than openat2: no symlink at all, no ".." at all. *)
              List.iter (check_open dfd)
                [ ("out", Fails S.eloop);
                  ("in", Fails S.eloop);
                  ("subl/b.txt", Fails S.eloop);
                  ("updir/secret.txt", Fails S.eloop);
                  ("magic/etc/passwd", Fails S.eloop);
                  ("sub/../a.txt", Fails S.exdev) ];
              check_open_limits dfd)))

let test_open_dir () =
  with_tree (fun tree ->
      check_errno "missing" S.enoent (S.open_dir (Filename.concat tree.root "nope"));
      check_errno "file" S.enotdir (S.open_dir (Filename.concat tree.root "a.txt"));
      check_errno "NUL" S.einval (S.open_dir (tree.root ^ "\000"));
      let dfd = ok "open_dir" (S.open_dir tree.root) in
      with_fds [ dfd ] (fun () -> check_flags "root dir" dfd ~nonblock:false))

(* ------------------------------------------------------------------ *)

let test_fstat () =
  with_temp_dir (fun dir ->
      let path = Filename.concat dir "f.txt" in
      write_file path (String.make 12345 'x');
      Unix.chmod path 0o640;
      Unix.utimes path 1_000_000_000.0 1_000_000_000.25;
      let fd = S.fd_of_unix (Unix.openfile path [ Unix.O_RDONLY; Unix.O_CLOEXEC ] 0) in
      with_fds [ fd ] (fun () ->
          let st = S.stat_create () in
          check_int "fstat" 0 (S.fstat fd st);
          let u = Unix.stat path in
          check_bool "regular" true (S.stat_kind st = S.Regular);
          check_bool "is_regular" true (S.stat_is_regular st);
          check_int "size" 12345 (S.stat_size st);
          check_int "mtime s" 1_000_000_000 (S.stat_mtime_s st);
          check_int "mtime ns" 250_000_000 (S.stat_mtime_ns st);
          check_int "ino" u.Unix.st_ino (S.stat_ino st);
          check_int "dev" u.Unix.st_dev (S.stat_dev st);
          check_int "perm" 0o640 (S.stat_perm st);
          (* Reuse of the same record; a failed call leaves it alone. *)
          check_errno "bad fd" S.ebadf (S.fstat (-1) st);
          check_int "unchanged" 12345 (S.stat_size st);
          let dfd = ok "open_dir" (S.open_dir dir) in
          with_fds [ dfd ] (fun () ->
              check_int "fstat dir" 0 (S.fstat dfd st);
              check_bool "directory" true (S.stat_kind st = S.Directory);
              check_bool "not regular" false (S.stat_is_regular st)));
      let null = S.fd_of_unix (Unix.openfile "/dev/null" [ Unix.O_RDONLY; Unix.O_CLOEXEC ] 0) in
      let st = S.stat_create () in
      with_fds [ null ] (fun () ->
          check_int "fstat null" 0 (S.fstat null st);
          check_bool "char device" true (S.stat_kind st = S.Char_device));
      with_socketpair (fun a _ ->
          check_int "fstat socket" 0 (S.fstat a st);
          check_bool "socket" true (S.stat_kind st = S.Socket)))

let test_clocks () =
  let prev = ref (S.clock_monotonic_ns ()) in
  for _ = 1 to 10_000 do
    let now = S.clock_monotonic_ns () in
    if now < !prev then Alcotest.failf "monotonic clock went back: %d < %d" now !prev;
    prev := now
  done;
  let t0 = S.clock_monotonic_ns () in
  Unix.sleepf 0.01;
  let dt = S.clock_monotonic_ns () - t0 in
  check_bool "10 ms sleep measured" true (dt >= 9_000_000 && dt < 5_000_000_000);
  let rs = S.clock_realtime_s () and unix = Unix.time () in
  check_bool "realtime_s matches Unix.time" true (abs (rs - int_of_float unix) <= 1);
  let rns = S.clock_realtime_ns () in
  check_bool "realtime_ns matches realtime_s" true (abs ((rns / 1_000_000_000) - S.clock_realtime_s ()) <= 1)

let test_process () =
  check_int "getpid" (Unix.getpid ()) (S.getpid ());
  let soft = S.getrlimit_nofile ~hard:false and hard = S.getrlimit_nofile ~hard:true in
  check_bool "0 < soft <= hard" true (soft > 0 && soft <= hard);
  let lower = min soft 256 in
  Fun.protect ~finally:(fun () -> ignore (S.setrlimit_nofile soft)) (fun () ->
      check_int "lower soft" 0 (S.setrlimit_nofile lower);
      check_int "soft lowered" lower (S.getrlimit_nofile ~hard:false);
      check_int "hard kept" hard (S.getrlimit_nofile ~hard:true);
      check_errno "negative" S.einval (S.setrlimit_nofile (-1));
      if hard < max_int then begin
        check_errno "above hard" S.einval (S.setrlimit_nofile (hard + 1));
        check_int "raise to hard" hard (S.raise_nofile_limit ())
      end);
  check_int "restored" soft (S.getrlimit_nofile ~hard:false);
  check_int "pdeathsig set" 0 (S.set_pdeathsig Sys.sigterm);
  check_int "pdeathsig cleared" 0 (S.set_pdeathsig 0)

(* A grandchild sets PDEATHSIG = SIGKILL (an OCaml signal number, which the
   stub must convert) and reports it; its parent then exits. The grandchild
   holds the write end of [r, w]: EOF on [r] means it was killed. *)
let test_pdeathsig () =
  let r, w = Unix.pipe ~cloexec:false () in
  let ready_r, ready_w = Unix.pipe ~cloexec:false () in
  (* The middle process waits on [go_r] until the parent has the
     grandchild's report, then exits; a forked body must never return into
     the test runner, whatever happens in it. *)
  let go_r, go_w = Unix.pipe ~cloexec:false () in
  let in_child f = (try f () with _ -> Unix._exit 2); Unix._exit 0 in
  match Unix.fork () with
  | 0 ->
    in_child (fun () ->
        Unix.close r;
        Unix.close ready_r;
        Unix.close go_w;
        match Unix.fork () with
        | 0 ->
          in_child (fun () ->
              Unix.close go_r;
              let rc = S.set_pdeathsig Sys.sigkill in
              ignore (Unix.write_substring ready_w (if rc = 0 then "y" else "n") 0 1);
              Unix.sleepf 10.)
        | _ ->
          Unix.close ready_w;
          let b = Bytes.create 1 in
          ignore (Unix.read go_r b 0 1 : int))
  | child ->
    Unix.close w;
    Unix.close ready_w;
    Unix.close go_r;
    let b = Bytes.create 1 in
    let n = Unix.read ready_r b 0 1 in
    Unix.close ready_r;
    check_string "grandchild set PDEATHSIG" "y" (Bytes.sub_string b 0 n);
    Unix.close go_w;  (* the middle process exits now *)
    ignore (Unix.waitpid [] child);
    let t0 = S.clock_monotonic_ns () in
    let readable, _, _ = Unix.select [ r ] [] [] 5.0 in
    let eof = readable <> [] && Unix.read r b 0 1 = 0 in
    Unix.close r;
    check_bool "grandchild killed when its parent died" true eof;
    check_bool "promptly" true (S.clock_monotonic_ns () - t0 < 5_000_000_000)

(* ------------------------------------------------------------------ *)
(* Zero allocation: each closure calls the stub(s) the way the event loop
   will, and records failures in a counter instead of raising (which would
   allocate) so the loop body stays allocation-free. *)

let failures = ref 0
let expect b = if not b then incr failures

let zero name f = case ("zero alloc: " ^ name) f

let alloc_case name ?(iters = 20_000) op =
  failures := 0;
  let w = T.minor_words_per_op ~iters op in
  Alcotest.(check (float 0.0)) (name ^ ": minor words per op") 0.0 w;
  check_int (name ^ ": every call succeeded") 0 !failures

(* Reads exactly [n] bytes of the blocking socket [fd] into [buf], without
   allocating; [false] on EOF or error. *)
let read_exact fd buf n =
  let got = ref 0 and ok = ref true in
  while !ok && !got < n do
    let r = S.read fd buf !got (n - !got) in
    if r > 0 then got := !got + r else ok := false
  done;
  !ok

let zero_alloc_tests =
  let buf = B.create 256 in
  let buf2 = B.create 256 in
  [ zero "read EAGAIN, accept4 EAGAIN" (fun () ->
        with_conn (fun ~lfd ~sfd ~cfd:_ ->
            alloc_case "read EAGAIN" (fun () -> expect (S.read sfd buf 0 256 = -S.eagain));
            alloc_case "accept4 EAGAIN" (fun () -> expect (S.accept4 lfd = -S.eagain))));
    zero "write + read" (fun () ->
        with_socketpair (fun a b ->
            alloc_case "write + read" (fun () ->
                expect (S.write a buf 10 64 = 64);
                expect (S.read b buf2 0 256 = 64))));
    zero "sendv2 + read" (fun () ->
        with_socketpair (fun a b ->
            alloc_case "sendv2 + read" (fun () ->
                expect (S.sendv2 a buf 0 40 buf2 3 24 0 = 64);
                expect (S.read b buf2 100 128 = 64))));
    zero "send, sendv2, sendv_string (MSG_MORE) + read" (fun () ->
        (* TCP, where MSG_MORE means something; each op is followed by a
           send without it, which releases what was held. *)
        let str = String.make 64 's' in
        with_conn (fun ~lfd:_ ~sfd ~cfd ->
            alloc_case "send + read" (fun () ->
                expect (S.send sfd buf 0 32 1 = 32);
                expect (S.send sfd buf 32 32 0 = 32);
                expect (read_exact cfd buf2 64));
            alloc_case "sendv2 + read" (fun () ->
                expect (S.sendv2 sfd buf 0 40 buf2 3 24 1 = 64);
                expect (S.send sfd buf 0 16 0 = 16);
                expect (read_exact cfd buf2 80));
            alloc_case "sendv_string + read" (fun () ->
                expect (S.sendv_string sfd buf 0 40 str 3 24 0 = 64);
                expect (read_exact cfd buf2 64))));
    zero "epoll_wait" (fun () ->
        with_socketpair (fun a b ->
            let ep = ok "epoll_create" (S.epoll_create ()) in
            with_fds [ ep ] (fun () ->
                let evs = S.events_create 16 in
                ignore (ok "add" (S.epoll_ctl_add ep a S.epollin 1));
                alloc_case "epoll_wait timeout 0, nothing" (fun () -> expect (S.epoll_wait ep evs 16 0 = 0));
                ignore (ok "write" (S.write b buf 0 1));
                alloc_case "epoll_wait timeout 0 + event readers" (fun () ->
                    expect (S.epoll_wait ep evs 16 0 = 1);
                    expect (S.event_token evs 0 = 1);
                    expect (S.event_mask evs 0 land S.epollin <> 0));
                (* The blocking path (lock released) with an fd already
                   ready, so it returns at once. *)
                alloc_case "epoll_wait timeout 1000, ready" (fun () -> expect (S.epoll_wait ep evs 16 1000 = 1));
                alloc_case "epoll_ctl_mod" (fun () -> expect (S.epoll_ctl_mod ep a (S.epollin lor S.epollout) 2 = 0)))));
    zero "sendfile + read" (fun () ->
        with_temp_dir (fun dir ->
            let path = Filename.concat dir "f" in
            write_file path (random_string 4096);
            let file = S.fd_of_unix (Unix.openfile path [ Unix.O_RDONLY; Unix.O_CLOEXEC ] 0) in
            with_fds [ file ] (fun () ->
                with_socketpair (fun a b ->
                    alloc_case "sendfile + read" (fun () ->
                        expect (S.sendfile a file 1000 64 = 64);
                        expect (S.read b buf 0 256 = 64))))));
    zero "openat2_beneath + fstat + accessors + close" (fun () ->
        with_tree (fun tree ->
            with_root tree (fun dfd ->
                let st = S.stat_create () in
                let path = T.bigstring_at ~off:3 "sub/b.txt" in
                let escape = T.bigstring_at ~off:3 "../x" in
                alloc_case "openat2 + fstat + close" (fun () ->
                    let fd = S.openat2_beneath dfd path 3 9 ~no_symlinks:true in
                    expect (fd >= 0);
                    expect (S.fstat fd st = 0);
                    expect (S.stat_kind st = S.Regular);
                    expect (S.stat_is_regular st);
                    expect (S.stat_size st = 3);
                    expect (S.stat_mtime_s st > 0);
                    expect (S.stat_mtime_ns st >= 0);
                    expect (S.stat_ino st <> 0 && S.stat_dev st >= 0 && S.stat_perm st > 0);
                    expect (S.close fd = 0));
                alloc_case "openat2 refused" (fun () ->
                    expect (S.openat2_beneath dfd escape 3 4 ~no_symlinks:false = -S.exdev)))));
    zero "clocks, getpid" (fun () ->
        alloc_case "clocks" ~iters:100_000 (fun () ->
            expect (S.clock_monotonic_ns () > 0);
            expect (S.clock_realtime_s () > 0);
            expect (S.clock_realtime_ns () > 0);
            expect (S.getpid () > 0)));
    Httpz_test_support.zero_alloc "clock_monotonic_ns (support helper)" (fun () ->
        ignore (Sys.opaque_identity (S.clock_monotonic_ns ()))) ]

let () =
  S.ignore_sigpipe ();
  Alcotest.run "syscall"
    [ ( "basics",
        [ case "constants and messages" test_constants; case "fd conversion" test_fd_conversion;
          case "process, rlimit" test_process;
          case "set_pdeathsig" test_pdeathsig; case "clocks" test_clocks ] );
      ( "sockets",
        [ case "listen, accept4, nodelay" test_listen_accept;
          case "listener options are inherited" test_listener_options_inherited;
          case "listen errors" test_listen_errors;
          case "read, write, shutdown, EPIPE" test_read_write; case "sendv2" test_sendv2; case "send, sendv2, sendv_string with MSG_MORE" test_send_more;
          case "sendfile" test_sendfile ] );
      ("epoll", [ case "epoll" test_epoll; case "epoll_wait EINTR" test_epoll_signal ]);
      ( "files",
        [ case "openat2_beneath" test_openat2; case "openat2 fallback walk" test_openat2_fallback;
          case "open_dir" test_open_dir; case "fstat" test_fstat ] );
      ("zero-alloc", zero_alloc_tests) ]
