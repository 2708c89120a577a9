(* The epoll backend: one worker's event loop. It owns the descriptors,
   the timer wheel and the slots; what each connection needs next comes
   from the state machine (Connection) and its bytes move through the
   plain transport (Plain). Every function takes the loop state [w] and the
   connection [c] explicitly: no closure is built per event, and nothing on
   the keep-alive path allocates (see test/server's zero-allocation test).
   Functions that may close [c] leave [c.fd = -1]; callers check it. *)

open Httpz
open Conn

type params = {
  max_connections : int;
  read_buffer : int;
  write_buffer : int;
  max_body : int;
  header_timeout_ms : int;
  idle_timeout_ms : int;
  body_timeout_ms : int;
  write_timeout_ms : int;
  handler_timeout_ms : int;
  grace_ms : int;
  stats : bool;
  log_fd : int;
  log_path : string option;
  log_format : Access_log.format;
  headers : string;
  server_name : string;
}

let tick_ms = Conn.tick_ms
let tick_ns = tick_ms * 1_000_000
let accept_pause_ns = 100 * 1_000_000
let accept_batch = 64
let events_cap = 512

(* Spare buffers each pool keeps for reuse: enough for the connections
   that are in the middle of a request at once on a busy worker; beyond
   that a buffer is mapped for the request and unmapped after it. *)
let pool_keep = 256

(* Requests before the steady-state allocation figure starts counting. *)
let warmup = 1000

type listener = {
  listen_fd : int;
  handler : Ctx.t -> unit;
  tls : Tls.server option;
  headers : string;
}

type t = {
  p : params;
  epfd : int;
  lfds : int array;  (** listening sockets, [-1] once closed *)
  handlers : (Ctx.t -> unit) array;  (** the application of each listener *)
  tls_servers : Tls.server option array;  (** each listener's TLS, if any *)
  sfd : int;
  listen_token : int;  (** listener [i] is token [listen_token + i] *)
  signal_token : int;
  reactor : Reactor.t;  (** its tokens start at [signal_token + 1] *)
  evs : Syscall.events;
  dummy : Conn.t;
  conns : Conn.t array;
  free : int array;
  mutable nfree : int;
  mutable active : int;
  wheel : Timer_wheel.t;
  sh : Conn.shared;
  log : Access_log.t;
  mutable now_ns : int;
  mutable tick : int;
  mutable listening : bool;
  mutable accept_resume_ns : int; (* 0: not paused *)
  mutable accept_error_logged : bool;
  mutable draining : bool;
  mutable drain_deadline_ns : int;
  mutable stop : bool;
  mutable log_flushed_s : int;
  (* statistics *)
  mutable requests : int;
  mutable start_words : int;
  mutable excluded_words : int;
      (* allocated by the stats endpoint and by slot set-up, which are not
         per-request work *)
  mutable setup_words : int; (* allocated setting up connection slots *)
  mutable slots_created : int;
  mutable base_words : int; (* at the warm-up request, net of excluded *)
  mutable base_requests : int;
  mutable final_words : int; (* at the start of the shutdown *)
  mutable final_requests : int;
}

let words () = int_of_float (Gc.minor_words ())
let net_words w = words () - w.excluded_words

let log_msg fmt = Printf.eprintf ("httpz: " ^^ fmt ^^ "\n%!")

(* {1 Clock and timers} *)

let update_clock w =
  w.now_ns <- Syscall.clock_monotonic_ns ();
  w.tick <- w.now_ns / tick_ns;
  w.sh.tick <- w.tick;
  w.sh.now <- Syscall.clock_realtime_s ()

(* The wheel mirrors the connection's own timer (Connection sets it). *)
let sync_timer w c =
  if c.timer = No_timer then Timer_wheel.cancel w.wheel c.slot
  else if Timer_wheel.deadline w.wheel c.slot <> c.deadline then
    Timer_wheel.set w.wheel c.slot c.deadline

(* {1 Accepting} *)

let stop_listening w =
  if w.listening then begin
    Array.iter (fun fd -> if fd >= 0 then ignore (Syscall.epoll_ctl_del w.epfd fd : int)) w.lfds;
    w.listening <- false
  end

let maybe_resume_accept w =
  if (not w.listening) && (not w.draining) && w.accept_resume_ns = 0
     && w.active < w.p.max_connections
  then begin
    (* Every worker waits on the same listening sockets: EPOLLEXCLUSIVE
       wakes one of them per connection, not all. *)
    let ok = ref true in
    Array.iteri
      (fun i fd ->
        if fd >= 0 then begin
          let r =
            Syscall.epoll_ctl_add w.epfd fd (Syscall.epollin lor Syscall.epollexclusive)
              (w.listen_token + i)
          in
          (* EEXIST: still registered from an attempt that failed for
             another listener. *)
          if r <> 0 && r <> - Syscall.eexist then ok := false
        end)
      w.lfds;
    w.listening <- !ok
  end

let close_listeners w =
  stop_listening w;
  Array.iteri
    (fun i fd ->
      if fd >= 0 then begin
        ignore (Syscall.close fd : int);
        w.lfds.(i) <- -1
      end)
    w.lfds

(* {1 Closing} *)

let close_conn w c =
  if c.fd >= 0 then begin
    Conn.release_file c;
    Transport.close_notify c;
    Transport.release c;
    (* Bytes held by MSG_MORE leave now, with the FIN, in one packet: a
       close(2) that finds unread input would send a reset and drop them. *)
    if c.held then ignore (Syscall.shutdown_write c.fd : int);
    (* close(2) also removes the fd from the epoll set. Its result is
       deliberately ignored: on Linux the fd is gone even on EINTR/EIO. *)
    ignore (Syscall.close c.fd : int);
    c.fd <- -1;
    c.events <- 0;
    Timer_wheel.cancel w.wheel c.slot;
    Connection.closed c;
    w.free.(w.nfree) <- c.slot;
    w.nfree <- w.nfree + 1;
    w.active <- w.active - 1;
    maybe_resume_accept w
  end

(* Sets the epoll interest of [c] to [ev]. A connection is registered on
   its first wait, not when accepted: one answered straight away and
   closed (Connection: close) never touches epoll. If registering fails
   (ENOMEM, ENOSPC: the per-user watch limit) the connection could never
   be woken, so it is closed. *)
let want w c ev =
  if c.events <> ev then begin
    if c.events = 0 then begin
      let r = Syscall.epoll_ctl_add w.epfd c.fd ev c.slot in
      if r < 0 then begin
        log_msg "epoll_ctl: %s (closing the connection)" (Syscall.error_message r);
        close_conn w c
      end
      else c.events <- ev
    end
    else begin
      ignore (Syscall.epoll_ctl_mod w.epfd c.fd ev c.slot : int);
      c.events <- ev
    end
  end

(* {1 Carrying out what the connection needs} *)

(* A 101 was sent: the socket leaves the server for the handler's
   callback, with what the client sent after its head. *)
let detach w c =
  (* Ctx.upgrade refuses TLS connections: their bytes are not the
     socket's. *)
  assert (c.ssl = Openssl.none);
  let fd = c.fd and k = c.upgrade in
  let rest = Connection.detach c in
  if c.events <> 0 then ignore (Syscall.epoll_ctl_del w.epfd fd : int);
  c.fd <- -1;
  c.held <- false;
  c.events <- 0;
  Timer_wheel.cancel w.wheel c.slot;
  Connection.closed c;
  w.free.(w.nfree) <- c.slot;
  w.nfree <- w.nfree + 1;
  w.active <- w.active - 1;
  maybe_resume_accept w;
  try k (Syscall.unix_of_fd fd) rest
  with e -> log_msg "an upgrade handler raised %s" (Printexc.to_string e)

let rec perform w c (a : Connection.action) =
  match a with
  | Read ->
      (* TLS reads records ahead: bytes of the next request may be inside
         OpenSSL already, and the socket would never announce them. *)
      if Transport.buffered c then on_readable w c
      else begin
        sync_timer w c;
        want w c Syscall.epollin
      end
  | Write -> (
      match Transport.write c with
      | Plain.Flushed -> perform w c (Connection.written c)
      | Plain.Blocked ->
          Connection.blocked c;
          sync_timer w c;
          want w c Syscall.epollout
      | Plain.Dead -> close_conn w c)
  | Close -> close_conn w c
  | Linger ->
      Conn.release_file c;
      c.held <- false;
      Transport.close_notify c;
      if Syscall.shutdown_write c.fd < 0 then close_conn w c
      else begin
        sync_timer w c;
        want w c Syscall.epollin
      end
  | Wait ->
      (* Only a hang-up (or error) wakes a waiting connection: pipelined
         bytes wait in the kernel until the handler answered. *)
      sync_timer w c;
      want w c Syscall.epollrdhup
  | Detach -> detach w c

(* One read per readiness (level-triggered: the loop comes back for more),
   into wherever the connection wants its next bytes. *)
and on_readable w c =
  if c.handshaking then handshake w c
  else
    match Connection.prepare_read c with
    | Read ->
        let n = Transport.read c in
        if n > 0 then perform w c (Connection.received c n)
        else if n = - Syscall.eagain || n = - Syscall.eintr then begin
          (* Nothing yet (a connection read on accept, or a TLS record
             not complete): wait for the socket. *)
          sync_timer w c;
          want w c Syscall.epollin
        end
        else close_conn w c (* EOF, ECONNRESET, … *)
    | a -> perform w c a

(* The TLS handshake, as far as the socket lets it go; the header timeout
   (armed when the connection opened) bounds it. *)
and handshake w c =
  match Tls.handshake c with
  | Tls.Done -> on_readable w c
  | Tls.Want_read ->
      sync_timer w c;
      want w c Syscall.epollin
  | Tls.Want_write ->
      sync_timer w c;
      want w c Syscall.epollout
  | Tls.Failed -> close_conn w c

(* {1 Statistics} *)

let stats_path = "/__httpz/stats"

(* The counters reveal the worker's pid and load: only a client on this
   machine may read them; anyone else gets what the handler answers for
   that path. *)
let is_loopback = function
  | Unix.ADDR_INET (a, _) ->
      let s = Unix.string_of_inet_addr a in
      let prefix p = String.length s >= String.length p && String.sub s 0 (String.length p) = p in
      prefix "127." || s = "::1" || prefix "::ffff:127."
  | Unix.ADDR_UNIX _ -> true

let peer_is_loopback c =
  match Unix.getpeername (Syscall.unix_of_fd c.fd) with
  | a -> is_loopback a
  | exception Unix.Unix_error _ -> false

let is_stats_request w c =
  (match Request.meth c.req with Meth.Get | Meth.Head -> true | _ -> false)
  && Span.equal c.rbuf (Request.target c.req) stats_path
  &&
  let before = words () in
  let local = peer_is_loopback c in
  w.excluded_words <- w.excluded_words + (words () - before);
  local

let serve_stats w c =
  let before = words () in
  let g = Gc.quick_stat () in
  let sh = w.sh in
  let json =
    Printf.sprintf
      "{\"requests\": %d, \"minor_words\": %d, \"minor_collections\": %d, \
       \"major_collections\": %d, \"heap_words\": %d, \"connections\": %d, \
       \"slots_created\": %d, \"setup_words\": %d, \"buffer_bytes\": %d, \
       \"spare_buffer_bytes\": %d, \"pid\": %d}\n"
      w.requests
      (before - w.excluded_words - w.start_words)
      g.Gc.minor_collections g.Gc.major_collections g.Gc.heap_words w.active
      w.slots_created w.setup_words
      (Buffer_pool.in_use sh.reads + Buffer_pool.in_use sh.writes + Buffer_pool.in_use sh.bodies)
      (Buffer_pool.kept sh.reads + Buffer_pool.kept sh.writes + Buffer_pool.kept sh.bodies)
      (Syscall.getpid ())
  in
  let ctx = Ctx.of_conn c in
  Ctx.start ctx Status.Ok;
  Ctx.header ctx Header_name.Content_type "application/json";
  Ctx.header ctx Header_name.Cache_control "no-store";
  Ctx.body_string ctx json;
  w.excluded_words <- w.excluded_words + (words () - before)

(* What the connection calls for each new request: the statistics endpoint
   or the application, counted. *)
let app w c = w.handlers.(c.listener) (Ctx.of_conn c)

let front w c =
  if w.p.stats && is_stats_request w c then serve_stats w c
  else begin
    w.requests <- w.requests + 1;
    if w.requests = warmup then begin
      w.base_words <- net_words w;
      w.base_requests <- w.requests
    end;
    app w c
  end

let log_access w c parsed = Access_log.request w.log c ~parsed

(* {1 Connections} *)

(* A suspended handler's continuation is ready. It runs only for the same
   request ([gen]); if the handler has not even returned yet, it runs as
   soon as it does. *)
let resume_conn w c gen k =
  if c.fd >= 0 && c.gen = gen then begin
    if c.suspended then begin
      c.early <- true;
      c.cont <- k
    end
    else if c.state = Handling then perform w c (Connection.resume c k)
  end

let on_timeout w c = if c.fd >= 0 then perform w c (Connection.timeout c)

let conn w slot =
  let c = w.conns.(slot) in
  if c != w.dummy then c
  else begin
    (* A slot is created on its first use and kept (a few hundred bytes
       and its parser state: buffers come from the pools). That is
       per-connection growth, not per-request work, so it is counted apart
       (stats: setup_words). *)
    let before = words () in
    let c = Conn.create w.sh ~slot ~peer:(Access_log.enabled w.log) in
    w.conns.(slot) <- c;
    let spent = words () - before in
    w.setup_words <- w.setup_words + spent;
    w.excluded_words <- w.excluded_words + spent;
    w.slots_created <- w.slots_created + 1;
    c
  end

let new_conn w fd listener =
  w.nfree <- w.nfree - 1;
  let slot = w.free.(w.nfree) in
  let c = conn w slot in
  (* TCP_NODELAY and TCP_NOTSENT_LOWAT come from the listening socket
     (Server.open_listener). *)
  c.fd <- fd;
  c.listener <- listener;
  let tls_failed =
    match w.tls_servers.(listener) with
    | None -> false
    | Some s -> not (Tls.accept s c)
  in
  c.events <- 0;
  if Access_log.enabled w.log then begin
    let n = Extra.peer_address fd c.peer 0 in
    c.peer_len <- (if n > 0 then n else 0)
  end;
  w.active <- w.active + 1;
  ignore (Connection.opened c : Connection.action);
  if tls_failed then begin
    log_msg "TLS: %s (closing the connection)" (Openssl.error ());
    close_conn w c
  end
  else
    (* With TCP_DEFER_ACCEPT the request (or the ClientHello) is usually
       here already: answer it now. Otherwise this read finds nothing
       (EAGAIN) and costs one call, and the connection enters epoll. *)
    on_readable w c

let accept_ready w listener =
  let budget = ref accept_batch in
  while !budget > 0 && w.listening do
    decr budget;
    if w.active >= w.p.max_connections then stop_listening w
    else begin
      let fd = Syscall.accept4 w.lfds.(listener) in
      if fd >= 0 then begin
        (* Log a shortage once per episode, not at every 100 ms retry. *)
        w.accept_error_logged <- false;
        new_conn w fd listener
      end
      else if fd = - Syscall.eagain then budget := 0
      else if fd = - Syscall.eintr || fd = - Syscall.econnaborted || fd = - Syscall.eproto then ()
      else begin
        (* EMFILE, ENFILE, ENOBUFS, ENOMEM or worse: the pending connection
           stays queued and the socket stays readable, so keep serving the
           open connections and retry in 100 ms instead of spinning. *)
        if not w.accept_error_logged then begin
          log_msg "accept: %s (pausing accepts for 100 ms)" (Syscall.error_message fd);
          w.accept_error_logged <- true
        end;
        stop_listening w;
        w.accept_resume_ns <- w.now_ns + accept_pause_ns;
        budget := 0
      end
    end
  done

(* {1 Shutdown} *)

let begin_drain w =
  if not w.draining then begin
    w.final_words <- net_words w;
    w.final_requests <- w.requests;
    w.draining <- true;
    w.sh.draining <- true;
    w.drain_deadline_ns <- w.now_ns + (w.p.grace_ms * 1_000_000);
    close_listeners w;
    for i = 0 to w.p.max_connections - 1 do
      let c = w.conns.(i) in
      if c.fd >= 0 && Connection.idle c then close_conn w c
    done
  end

(* SIGHUP: reopen the access log at its path (logrotate renamed the old
   file), read the TLS certificate and key again for new connections, and
   keep serving. *)
let reload w =
  (match w.p.log_path with
   | None -> ()
   | Some path -> (
       Access_log.flush w.log;
       match Access_log.reopen w.log path with
       | Ok () -> ()
       | Error msg -> log_msg "SIGHUP: reopening the access log: %s (keeping the old one)" msg));
  let seen = ref [] in
  Array.iter
    (function
      | Some s when not (List.memq s !seen) -> (
          seen := s :: !seen;
          match Tls.reload s with
          | Ok () -> ()
          | Error msg -> log_msg "SIGHUP: reloading the certificate: %s (keeping the old one)" msg)
      | _ -> ())
    w.tls_servers

let read_signals w =
  let continue = ref true in
  while !continue do
    let r = Extra.signalfd_read w.sfd in
    if r > 0 then begin
      let s = -r in
      if s = Sys.sighup then reload w
      else if s = Sys.sigterm || s = Sys.sigint then begin_drain w
    end
    else if r <> - Syscall.eintr then continue := false
  done

(* {1 The loop} *)

let handle_event w tok mask =
  if tok < w.p.max_connections then begin
    let c = w.conns.(tok) in
    if c.fd >= 0 then
      match c.state with
      | Writing -> perform w c Write
      | Reading_head | Reading_body | Lingering -> on_readable w c
      | Handling -> close_conn w c (* the client hung up on a waiting handler *)
      | Free -> ()
  end
  else if tok < w.signal_token then accept_ready w (tok - w.listen_token)
  else if tok = w.signal_token then read_signals w
  else if tok > w.signal_token then Reactor.dispatch w.reactor tok mask

let timeout_ms w =
  let tick =
    if Timer_wheel.count w.wheel > 0 || w.accept_resume_ns > 0 || w.draining
       || Access_log.pending w.log
    then tick_ms - (w.now_ns / 1_000_000 mod tick_ms)
    else -1
  in
  let next = Reactor.next_timer_ns w.reactor in
  if next = max_int then tick
  else begin
    (* Round up: waking a little late is fine, early means a spin. *)
    let ms = (next - w.now_ns + 999_999) / 1_000_000 in
    let ms = if ms < 0 then 0 else ms in
    if tick < 0 || ms < tick then ms else tick
  end

let turn w =
  let n = Syscall.epoll_wait w.epfd w.evs events_cap (timeout_ms w) in
  update_clock w;
  if n > 0 then
    for i = 0 to n - 1 do
      handle_event w (Syscall.event_token w.evs i) (Syscall.event_mask w.evs i)
    done
  else if n < 0 && n <> - Syscall.eintr then begin
    log_msg "epoll_wait: %s" (Syscall.error_message n);
    begin_drain w;
    w.stop <- true
  end;
  Reactor.run_timers w.reactor ~now_ns:w.now_ns;
  let id = ref (Timer_wheel.pop_expired w.wheel ~now:w.tick) in
  while !id >= 0 do
    on_timeout w w.conns.(!id);
    id := Timer_wheel.pop_expired w.wheel ~now:w.tick
  done;
  Reactor.end_of_turn w.reactor;
  if w.accept_resume_ns > 0 && w.now_ns >= w.accept_resume_ns then begin
    w.accept_resume_ns <- 0;
    maybe_resume_accept w
  end;
  if Access_log.pending w.log && w.sh.now <> w.log_flushed_s then begin
    Access_log.flush w.log;
    w.log_flushed_s <- w.sh.now
  end;
  if w.draining && (w.active = 0 || w.now_ns >= w.drain_deadline_ns) then w.stop <- true

let create p ~listeners ~signal_fd =
  let epfd = Syscall.epoll_create () in
  if epfd < 0 then failwith ("epoll_create: " ^ Syscall.error_message epfd);
  let sh =
    Conn.create_shared ~server_name:p.server_name ~read_buffer:p.read_buffer
      ~write_buffer:p.write_buffer ~max_body:p.max_body ~header_ms:p.header_timeout_ms
      ~idle_ms:p.idle_timeout_ms ~body_ms:p.body_timeout_ms ~write_ms:p.write_timeout_ms
      ~handler_ms:p.handler_timeout_ms ~headers:p.headers
      ~listener_headers:(Array.map (fun l -> l.headers) listeners)
      ~keep:(min pool_keep p.max_connections)
  in
  let dummy = Conn.create sh ~slot:(-1) ~peer:false in
  let now_ns = Syscall.clock_monotonic_ns () in
  let n = p.max_connections in
  let nl = Array.length listeners in
  if nl = 0 then invalid_arg "Loop.run: no listening socket";
  let wheel_size =
    (* Enough buckets that no timeout wraps around the wheel. *)
    let longest =
      List.fold_left max (Connection.linger_ticks * tick_ms)
        [ p.header_timeout_ms; p.idle_timeout_ms; p.body_timeout_ms; p.write_timeout_ms;
          p.handler_timeout_ms ]
    in
    (longest / tick_ms) + 2
  in
  let w =
    {
      p;
      epfd;
      lfds = Array.map (fun l -> l.listen_fd) listeners;
      handlers = Array.map (fun l -> l.handler) listeners;
      tls_servers = Array.map (fun l -> l.tls) listeners;
      sfd = signal_fd;
      listen_token = n;
      signal_token = n + nl;
      reactor = Reactor.create ~epfd ~base_token:(n + nl + 1) ~threads:4;
      evs = Syscall.events_create events_cap;
      dummy;
      conns = Array.make n dummy;
      free = Array.init n (fun i -> n - 1 - i);
      nfree = n;
      active = 0;
      wheel = Timer_wheel.create ~ids:n ~size:(min wheel_size 65536) ~now:(now_ns / tick_ns);
      sh;
      log = Access_log.create ~fd:p.log_fd ~format:p.log_format;
      now_ns;
      tick = now_ns / tick_ns;
      listening = false;
      accept_resume_ns = 0;
      accept_error_logged = false;
      draining = false;
      drain_deadline_ns = 0;
      stop = false;
      log_flushed_s = 0;
      requests = 0;
      start_words = 0;
      excluded_words = 0;
      setup_words = 0;
      slots_created = 0;
      base_words = 0;
      base_requests = 0;
      final_words = 0;
      final_requests = 0;
    }
  in
  update_clock w;
  (* [Ctx.t] is [Conn.t] (Ctx.of_conn is the identity): one closure each
     for the worker's life, no allocation per call. *)
  sh.hooks.handler <- front w;
  sh.hooks.app <- app w;
  sh.hooks.log <- log_access w;
  sh.hooks.flush <- Transport.write_now;
  sh.hooks.resume <- resume_conn w;
  Reactor.install w.reactor;
  if Syscall.epoll_ctl_add epfd signal_fd Syscall.epollin w.signal_token < 0 then
    failwith "epoll_ctl_add (signalfd)";
  maybe_resume_accept w;
  if not w.listening then failwith "epoll_ctl_add (listening sockets)";
  w.start_words <- words ();
  w

let words_per_request w =
  let words, requests =
    if w.base_requests > 0 && w.final_requests > w.base_requests then
      (w.final_words - w.base_words, w.final_requests - w.base_requests)
    else (w.final_words - w.start_words, w.final_requests)
  in
  if requests = 0 then 0. else float_of_int words /. float_of_int requests

let run p ~listeners ~signal_fd =
  let w = create p ~listeners ~signal_fd in
  while not w.stop do
    turn w
  done;
  begin_drain w;
  for i = 0 to p.max_connections - 1 do
    close_conn w w.conns.(i)
  done;
  Buffer_pool.trim w.sh.reads;
  Buffer_pool.trim w.sh.writes;
  Buffer_pool.trim w.sh.bodies;
  Access_log.flush w.log;
  ignore (Syscall.close w.epfd : int);
  log_msg "worker %d served %d requests, minor words/request %.2f" (Syscall.getpid ())
    w.final_requests (words_per_request w);
  0
