(* One worker's event loop: waits on epoll ([--io epoll]) or on an
   io_uring ([--io uring], falling back to epoll where the kernel refuses
   it), and hands each event to the backend that serves the connection:
   Epoll_io (readiness: every connection under epoll, TLS connections under
   uring) or Uring_io (completions: plain connections under uring). The
   shared state is Loop_state's. *)

open Slot
module W = Loop_state

type io = W.io
type params = W.params
type listener = W.listener

let events_cap = 512

type t = {
  w : W.t;
  e : Epoll_io.t;
  u : Uring_io.t option;
  evs : Syscall.events;
  signal_token : int;
  mutable on_timeout : Slot.t -> unit;  (** made once: no closure per turn *)
  mutable epoll_busy : bool;
      (** under io_uring: the last look at the epoll set found events, so
          there may be more (level-triggered: what a handler did not
          finish stays ready, and the ring's poll fires only on new
          wake-ups): look again next turn without waiting *)
}

let on_ring l c = match l.u with Some u -> Uring_io.on_ring u c | None -> false

let perform l c a =
  match l.u with
  | Some u when Uring_io.on_ring u c -> if not (Uring_io.is_closing u c) then Uring_io.perform u c a
  | _ -> Epoll_io.perform l.e c a

let close l c =
  match l.u with
  | Some u when Uring_io.on_ring u c -> Uring_io.close u c
  | _ -> Epoll_io.close_conn l.e c

(* An event of one connection raised (a bug, or memory exhausted): that
   connection is closed and the worker goes on serving the others. *)
let failed l c e =
  Log.error "a connection event raised %s (closing the connection)" (Printexc.to_string e);
  if c.fd >= 0 then try close l c with e -> Log.error "closing it raised %s" (Printexc.to_string e)

(* A suspended handler's continuation is ready: the state machine decides
   whether and when it runs (Connection.resume). *)
let resume_conn l c gen k =
  (* An HTTP/2 exchange's bytes are its connection's. *)
  let conn = Slot.carrier c in
  if c.fd >= 0 && conn.fd >= 0 then try perform l conn (Connection.resume c ~gen k) with e -> failed l conn e

let on_timeout l c = if c.fd >= 0 then try perform l c (Connection.timeout c) with e -> failed l c e

let begin_drain l =
  if W.start_drain l.w then begin
    (match l.u with Some u -> Uring_io.stop_accepting u | None -> ());
    Epoll_io.close_listeners l.e;
    (* HTTP/2 connections say GOAWAY first, and close once it left. *)
    Array.iter
      (fun c -> if c.fd >= 0 then match Connection.drain c with Nothing -> () | a -> (try perform l c a with e -> failed l c e))
      l.w.conns;
    W.close_idle l.w
  end

(* {1 Events} *)

let handle_event l tok mask =
  let w = l.w in
  let nslots = Array.length w.conns in
  if tok < nslots then begin
    let c = w.conns.(tok) in
    try Epoll_io.ready l.e c with e -> failed l c e
  end
  else if tok < l.signal_token then Epoll_io.accept_ready l.e (tok - nslots)
  else if tok = l.signal_token then (if W.read_signals w then begin_drain l)
  else Reactor.dispatch w.reactor tok mask

let epoll_events l ~timeout_ms =
  let n = Syscall.epoll_wait l.e.epfd l.evs events_cap timeout_ms in
  if timeout_ms <> 0 then W.update_clock l.w;
  l.epoll_busy <- n > 0;
  if n > 0 then
    for i = 0 to n - 1 do
      handle_event l (Syscall.event_token l.evs i) (Syscall.event_mask l.evs i)
    done
  else if n < 0 && n <> - Syscall.eintr then begin
    Log.error "epoll_wait: %s" (Syscall.error_message n);
    begin_drain l;
    l.w.stop <- true
  end

let turn l =
  let w = l.w in
  (match l.u with
   | None -> epoll_events l ~timeout_ms:(W.timeout_ms w)
   | Some u ->
       let busy = l.epoll_busy in
       Uring_io.turn u ~timeout_ms:(if busy then 0 else W.timeout_ms w);
       if busy then epoll_events l ~timeout_ms:0);
  W.end_of_turn w ~on_timeout:l.on_timeout

(* {1 Set-up} *)

let create p ~listeners ~signal_fd =
  let epfd = Syscall.epoll_create () in
  if epfd < 0 then failwith ("epoll_create: " ^ Syscall.error_message epfd);
  let nslots = p.W.config.max_connections + W.spare_slots in
  let signal_token = nslots + Array.length listeners in
  let reactor =
    Reactor.create ~epfd ~base_token:(signal_token + 1) ~threads:p.config.offload_threads ~queue:p.config.offload_queue
  in
  let w = W.create p ~listeners ~signal_fd ~reactor in
  let e = Epoll_io.create w epfd in
  let u =
    match p.config.io with
    | Epoll -> None
    | Uring -> (
        match Uring_io.create w e with
        | Ok u -> Some u
        | Error r ->
            Log.warn "io_uring: %s (serving with epoll)" (Syscall.error_message r);
            w.backend <- Epoll;
            None)
  in
  let l = { w; e; u; evs = Syscall.events_create events_cap; signal_token; on_timeout = ignore;
      epoll_busy = false } in
  l.on_timeout <- on_timeout l;
  w.sh.hooks.resume <- resume_conn l;
  w.close <- close l;
  (match u with
   | None ->
       w.resume_accept <- (fun () -> Epoll_io.resume_accept e);
       w.start_conn <- Epoll_io.start e
   | Some u ->
       (* Alone, the ring accepts (multishot: no system call per
          connection). With other workers on the same sockets, epoll does,
          through the ring: a ring's pending accept claims a connection
          even while its worker is busy, where an epoll set that nobody
          waits on lets another worker take it, so busy workers do not get
          every new client. *)
       w.resume_accept <-
         (if p.alone then fun () -> Uring_io.resume_accept u else fun () -> Epoll_io.resume_accept e);
       w.start_conn <-
         (fun c a -> if c.ssl <> Openssl.none || W.tls_failed w c then Epoll_io.start e c a else Uring_io.start u c a);
       Uring_io.set_on_epoll u (fun () -> epoll_events l ~timeout_ms:0);
       Uring_io.arm_epoll u);
  Reactor.install reactor;
  if Syscall.epoll_ctl_add epfd signal_fd Syscall.epollin signal_token < 0 then
    failwith "epoll_ctl_add (signalfd)";
  w.resume_accept ();
  if not w.listening && u = None then failwith "epoll_ctl_add (listening sockets)";
  w.start_words <- W.words ();
  l

let run p ~listeners ~signal_fd =
  let l = create p ~listeners ~signal_fd in
  let w = l.w in
  while not w.stop do
    turn l
  done;
  begin_drain l;
  (match l.u with Some u -> Uring_io.shutdown u | None -> ());
  Array.iter (fun c -> if c.fd >= 0 && not (on_ring l c) then Epoll_io.close_conn l.e c) w.conns;
  W.finish w;
  ignore (Syscall.close l.e.epfd : int);
  0

