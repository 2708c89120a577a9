(* What one worker's event loop keeps whatever moves its bytes: the
   connection slots, the timer wheel, the listening sockets and their
   handlers, the statistics, the access log, the shutdown state. The
   backends (Epoll_io, Uring_io) and the loop (Loop) act on it; nothing
   here performs connection I/O. *)

open Slot

type io = Config.io = Epoll | Uring

type params = {
  config : Config.t;
  alone : bool;
  totals : Totals.t option;
  log_fd : int;
}

(* Milliseconds of a duration, at least 1 (a timeout of 0 would never
   wait). *)
let ms s = if s <= 0. then 1 else int_of_float (Float.ceil (s *. 1000.))

let grace_ns p = if p.config.grace_period <= 0. then 0 else ms p.config.grace_period * 1_000_000

let shared (c : Config.t) ~listener_headers ~keep =
  let sh =
    Slot.create_shared ~server_name:c.server_name ~read_buffer:c.read_buffer ~write_buffer:c.write_buffer
      ~max_body:c.max_body ~header_ms:(ms c.header_timeout) ~idle_ms:(ms c.idle_timeout)
      ~body_ms:(ms c.body_timeout) ~write_ms:(ms c.write_timeout) ~handler_ms:(ms c.handler_timeout)
      ~headers:(String.concat "" (List.map (fun (n, v) -> n ^ ": " ^ v ^ "\r\n") c.headers))
      ~listener_headers ~keep
  in
  sh.dev_errors <- c.dev_errors;
  (* HTTP/2 frames must fit the read buffer. *)
  sh.http2 <- c.http2 && c.read_buffer >= H2_session.min_read_buffer;
  sh.last_request <- (if c.keepalive_requests > 0 then c.keepalive_requests - 1 else max_int);
  sh

type front = With_stats | Bare | Status_only

type listener = {
  listen_fd : int;
  handler : Ctx.t -> unit;
  tls : Tls.server option;
  headers : string;
  front : front;
}

let tick_ms = Slot.tick_ms
let tick_ns = tick_ms * 1_000_000
let accept_pause_ns = 100 * 1_000_000
(* Spare buffers each pool keeps (at most the peak in use so far). 1024,
   not 256: HTTP/2 exchanges hold a read and a write buffer until their
   stream ends, and with io_uring a turn's streams end in the next one, so
   64 connections × 10 streams kept ~640 of each in use and the pools
   mapped and unmapped one buffer per request beyond 256 (h2load -c64 -m10,
   h2c, 612 B: 0.6 mmap+munmap per request, 75k req/s; with 1024, none
   after the first peak: 130k req/s). The cost: a worker keeps up to its
   peak's buffers as spares. *)
let pool_keep = 1024
let warmup = 1000

(* Slots beyond [max_connections]: a connection closed by the completion
   backend keeps its slot until the kernel has let go of its buffers, so
   the slots of evicted connections must not be the ones new clients
   need. *)
let spare_slots = 64

type t = {
  p : params;
  lfds : int array;
  handlers : (Ctx.t -> unit) array;
  fronts : front array;
  mutable entries : (Ctx.t -> unit) array;
  tls_servers : Tls.server option array;
  sfd : int;
  reactor : Reactor.t;
  dummy : Slot.t;
  conns : Slot.t array;
  free : int array;
  mutable nfree : int;
  mutable active : int;
  wheel : Timer_wheel.t;
  sh : Slot.shared;
  log : Access_log.t;
  per_client : Conn_limit.t option;
  mutable limited : int;  (** clients closed at once: over [conn_limit] *)
  totals : Totals.t;  (** [p.totals], or a table of one row of our own *)
  mutable row : int;  (** this worker's row of [totals] *)
  mutable gauges_s : int;  (** when the connection gauges were last written *)
  gc : Gc_settle.t;  (** ticked once a second *)
  (* Idle connections, oldest first: a doubly linked list over slots. *)
  idle_prev : int array;
  idle_next : int array;
  idle_since : int array;  (** when each joined the list, ns *)
  mutable idle_head : int;
  mutable idle_tail : int;
  mutable evicted : int;
  mutable refused : int;  (** clients closed at once: at the limit, nothing to evict *)
  mutable refusing : bool;  (** refused one since the limit was last left (logged once) *)
  mutable closing : int;  (** closed, and waiting for the kernel to let go of their slot *)
  mutable full_since_ns : int;  (** when the limit was reached; [0] below it *)
  mutable backend : io;  (** the one serving: [p.io], or epoll as a fallback *)
  mutable close : Slot.t -> unit;
  mutable start_conn : Slot.t -> Conn_action.t -> unit;
      (** a connection just accepted, and what it needs first *)
  mutable resume_accept : unit -> unit;
  mutable now_ns : int;
  mutable tick : int;
  mutable listening : bool;
  mutable accept_resume_ns : int;
  mutable accept_error_logged : bool;
  mutable draining : bool;
  mutable drain_deadline_ns : int;
  mutable retired : bool;  (** SIGQUIT: drain with no deadline (a reload) *)
  mutable hurried : bool;  (** SIGTERM or SIGINT: drain within the grace period *)
  mutable stop : bool;
  mutable log_flushed_s : int;
  mutable requests : int;
  mutable start_words : int;
  mutable excluded_words : int;
  mutable setup_words : int;
  mutable slots_created : int;
  mutable base_words : int;
  mutable base_requests : int;
  mutable final_words : int;
  mutable final_requests : int;
}

let words () = int_of_float (Gc.minor_words ())
let net_words w = words () - w.excluded_words


(* {1 Clock and timers} *)

let update_clock w =
  w.now_ns <- Syscall.clock_monotonic_ns ();
  w.tick <- w.now_ns / tick_ns;
  w.sh.tick <- w.tick;
  w.sh.now_ms <- w.now_ns / 1_000_000;
  w.sh.now <- Syscall.clock_realtime_s ()

(* The wheel may hold a slot at a deadline earlier than its own (a
   request's write timer, then the later idle one): moving it at every
   change is two list updates per request; [end_of_turn] moves it when it
   comes due instead. An earlier deadline moves it at once. *)
let sync_timer w c =
  if c.timer = No_timer then Timer_wheel.cancel w.wheel c.slot
  else begin
    let d = Timer_wheel.deadline w.wheel c.slot in
    if d < 0 || d > c.deadline then Timer_wheel.set w.wheel c.slot c.deadline
  end

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

(* {1 Idle connections} Oldest first, so that a worker at its connection
   limit closes the one idle longest to make room for a new client, as
   nginx does with its keep-alive connections. *)

let idle_remove w c =
  let s = c.slot in
  if w.idle_prev.(s) <> -2 then begin
    let p = w.idle_prev.(s) and n = w.idle_next.(s) in
    if p >= 0 then w.idle_next.(p) <- n else w.idle_head <- n;
    if n >= 0 then w.idle_prev.(n) <- p else w.idle_tail <- p;
    w.idle_prev.(s) <- -2;
    w.idle_next.(s) <- -2
  end

let idle_add w c =
  let s = c.slot in
  if w.idle_prev.(s) = -2 then begin
    w.idle_prev.(s) <- w.idle_tail;
    w.idle_next.(s) <- -1;
    w.idle_since.(s) <- w.now_ns;
    if w.idle_tail >= 0 then w.idle_next.(w.idle_tail) <- s else w.idle_head <- s;
    w.idle_tail <- s
  end

(* A connection about to wait for bytes: listed while it holds no part of
   a request. *)
let waiting w c = if Connection.idle c then idle_add w c else idle_remove w c

(* A connection that has not sent a byte since it connected may be a
   client whose first bytes are on their way (the completion backend lists
   a connection as soon as it accepts it): it can be closed to make room
   only once it has been silent this long. *)
let fresh_grace_ns = 1_000_000_000

(* The slot of the keep-alive connection idle longest (or of a silent
   fresh one, see [fresh_grace_ns]), [-1] when none may be closed. The list
   is oldest first, so the walk stops at the first that qualifies, after at
   most 64 fresh ones. *)
let eviction_candidate w =
  let s = ref w.idle_head and budget = ref 64 in
  while
    !s >= 0 && !budget > 0
    && w.conns.(!s).served = 0
    && w.now_ns - w.idle_since.(!s) < fresh_grace_ns
  do
    s := w.idle_next.(!s);
    decr budget
  done;
  if !budget = 0 then -1 else !s

let can_evict w = eviction_candidate w >= 0

(* Closes that connection; [false] when there is none. *)
let evict w =
  let s = eviction_candidate w in
  if s < 0 then false
  else begin
    let c = w.conns.(s) in
    idle_remove w c;
    w.evicted <- w.evicted + 1;
    w.close c;
    true
  end

(* {1 Statistics} *)

(* The counters, as JSON: what building them allocates is not the
   requests' work, so it is counted apart. *)
let report w (format : Stats.format) =
  let before = words () in
  let g = Gc.quick_stat () in
  let sh = w.sh in
  let json =
    Printf.sprintf
      "{\"requests\": %d, \"minor_words\": %d, \"minor_collections\": %d, \
       \"major_collections\": %d, \"heap_words\": %d, \"connections\": %d, \
       \"slots_created\": %d, \"setup_words\": %d, \"buffer_bytes\": %d, \
       \"spare_buffer_bytes\": %d, \"evicted\": %d, \"refused\": %d, \"limited\": %d, \"io\": \"%s\", \"pid\": %d}\n"
      w.requests
      (before - w.excluded_words - w.start_words)
      g.Gc.minor_collections g.Gc.major_collections g.Gc.heap_words w.active
      w.slots_created w.setup_words
      (Buffer_pool.in_use sh.reads + Buffer_pool.in_use sh.heads + Buffer_pool.in_use sh.writes
       + Buffer_pool.in_use sh.bodies)
      (Buffer_pool.kept sh.reads + Buffer_pool.kept sh.heads + Buffer_pool.kept sh.writes
       + Buffer_pool.kept sh.bodies)
      w.evicted w.refused w.limited
      (match w.backend with Epoll -> "epoll" | Uring -> "uring")
      (Syscall.getpid ())
  in
  let totals = Totals.summary w.totals in
  let out =
    match format with
    | Text -> Totals.text totals
    | Prometheus -> Totals.prometheus totals
    | Json ->
      (* This worker's object, with the totals of all as one more member. *)
      String.sub json 0 (String.rindex json '}') ^ ", \"totals\": " ^ Totals.json totals ^ "}\n"
  in
  w.excluded_words <- w.excluded_words + (words () - before);
  out

(* A request reaches the application: counted (the stats requests, answered
   in front of it, are not). *)
let counted w app c =
  w.requests <- w.requests + 1;
  if w.requests = warmup then begin
    w.base_words <- net_words w;
    w.base_requests <- w.requests
  end;
  app c

(* What a new request runs, per listener: the application, counted, with
   the stats handler in front when configured. Built once. *)
let entry w front app =
  match (front, w.p.config.stats) with
  | Status_only, _ -> Stats.status_handler ~report:(report w)
  | Bare, _ | With_stats, None -> counted w app
  | With_stats, Some token -> Stats.handler ~credentials:("Bearer " ^ token) ~report:(report w) ~app:(counted w app)

let front w c = w.entries.(c.listener) (Ctx.of_conn c)

(* A body the handler asked for arrived: the application again, not
   counted twice. *)
let app w c = w.handlers.(c.listener) (Ctx.of_conn c)

let log_access w c parsed complete =
  (* Without a reader of the per-site figures, only the server's totals. *)
  if Totals.timed () then
    Request_metrics.response w.totals w.row c ~parsed ~complete ~status_listener:(w.fronts.(c.listener) = Status_only)
  else Totals.response w.totals w.row ~status:(Httpz.Status.code c.status) ~bytes:c.sent;
  Access_log.request w.log c ~parsed ~complete

(* Once a second: this worker's connections by state, for the totals. A
   walk over the slots created (the peak of connections so far). *)
let write_gauges w =
  let reading = ref 0 and writing = ref 0 and idle = ref 0 and handling = ref 0 in
  for i = 0 to Array.length w.conns - 1 do
    let c = w.conns.(i) in
    if c != w.dummy && c.fd >= 0 then
      match c.state with
      | Free -> ()
      | Reading_head -> if Connection.idle c then incr idle else incr reading
      | Reading_body -> incr reading
      | Handling -> incr handling
      | Writing | Lingering -> incr writing
  done;
  Totals.connections w.totals w.row ~reading:!reading ~writing:!writing ~idle:!idle ~handling:!handling

(* {1 Slots} *)

let conn w slot =
  let c = w.conns.(slot) in
  if c != w.dummy then c
  else begin
    (* A slot is created on its first use and kept (a few hundred bytes:
       buffers and parse state come from the pools). That is
       per-connection growth, not per-request work, so it is counted apart
       (stats: setup_words). *)
    let before = words () in
    let c = Slot.create w.sh ~slot ~peer:(Access_log.enabled w.log) in
    w.conns.(slot) <- c;
    let spent = words () - before in
    w.setup_words <- w.setup_words + spent;
    w.excluded_words <- w.excluded_words + spent;
    w.slots_created <- w.slots_created + 1;
    c
  end

(* Worth listening for new connections: a client accepted at the limit
   gets a slot or is refused at once, never left waiting. *)
let may_accept w = w.nfree > 0

(* At the limit, other workers may still have room: new clients are first
   left to them, for [accept_pause_ns] (the caller stops accepting for that
   long); only then does one cost an idle connection. [true] while new
   clients should wait. *)
let must_wait w =
  if w.active - w.closing < w.p.config.max_connections then begin
    w.full_since_ns <- 0;
    w.refusing <- false;
    false
  end
  else begin
    if w.full_since_ns = 0 then w.full_since_ns <- w.now_ns;
    w.now_ns - w.full_since_ns < accept_pause_ns
  end

(* Accepting stops for a while (at once resumed when a connection
   closes). *)
let pause_accepts w =
  if w.full_since_ns = 0 then w.full_since_ns <- w.now_ns;
  if w.accept_resume_ns = 0 then w.accept_resume_ns <- w.now_ns + accept_pause_ns

(* A client was just accepted: [true] when it gets a slot. At the limit an
   idle connection is closed for it ({!evict}); when none can be, it is
   refused, and the caller closes it at once, as nginx does: a client
   meets an answer or a close, not a wait as long as the header timeout.
   Accepting then pauses, so that other workers take the next clients.
   (An evicted connection of the completion backend keeps its slot until
   the kernel lets go of it: [spare_slots] are for new clients then, and
   with none free, closing one more idle connection gives no slot now, so
   none is closed; the callers wait for a slot before accepting,
   {!may_accept}.) *)
let at_limit w = w.active - w.closing >= w.p.config.max_connections

let admit w =
  if w.active - w.closing < w.p.config.max_connections && w.nfree > 0 then true
  else if w.nfree > 0 && evict w then true
  else begin
    w.refused <- w.refused + 1;
    if not w.refusing then begin
      w.refusing <- true;
      Log.warn "connection limit (%d) reached with no idle connection to close: refusing new clients"
        w.p.config.max_connections
    end;
    false
  end

(* A slot for a connection just accepted on [listener]; with TLS, [c.ssl]
   is [Openssl.none] if OpenSSL could not make one (the caller closes). *)
let open_conn w fd listener =
  w.nfree <- w.nfree - 1;
  let c = conn w w.free.(w.nfree) in
  let peer_len = if Access_log.enabled w.log then max 0 (Extra.peer_address fd c.peer 0) else 0 in
  let first = Connection.opened c ~fd ~listener ~peer_len in
  Totals.accepted w.totals w.row;
  (match w.tls_servers.(listener) with
   | None -> ()
   | Some s -> if not (Tls.accept s c) then Log.warn "TLS: %s (closing the connection)" (Openssl.error ()));
  w.active <- w.active + 1;
  w.start_conn c first

let tls_failed w c = w.tls_servers.(c.listener) <> None && c.ssl = Openssl.none

(* With [conn_limit]: the client of [fd], about to take the next free
   slot, holds as many connections as it may (the caller closes it);
   else it is counted in that slot, and its address kept there. *)
let over_client_limit w fd =
  match w.per_client with
  | None -> false
  | Some t ->
      let c = conn w w.free.(w.nfree - 1) in
      let family = Extra.peer_ip fd c.peer_ip in
      (* Connection.opened forgets the address: read again at first use. *)
      family > 0 && not (Conn_limit.acquire t ~slot:c.slot c.peer_ip)

(* The descriptor is closed (or handed over): the slot is free again. *)
let release_slot w c =
  (match w.per_client with Some t -> Conn_limit.release t ~slot:c.slot | None -> ());
  idle_remove w c;
  Timer_wheel.cancel w.wheel c.slot;
  Connection.closed c;
  w.free.(w.nfree) <- c.slot;
  w.nfree <- w.nfree + 1;
  w.active <- w.active - 1;
  w.resume_accept ()

(* {1 Shutdown, signals} *)

(* Starts the graceful shutdown: the backend then closes its listeners and
   the idle connections. [false] if it had started already. *)
let start_drain w =
  if w.draining then false
  else begin
    w.final_words <- net_words w;
    w.final_requests <- w.requests;
    w.draining <- true;
    w.sh.draining <- true;
    w.sh.last_request <- -1;
    w.drain_deadline_ns <-
      (if w.retired && not w.hurried then max_int else w.now_ns + grace_ns w.p);
    true
  end

(* Idle keep-alive connections close at once, WebSockets start their close
   handshake (1001 going away). A connection that has not
   brought its first request yet (a TLS handshake in progress, or a request
   on its way) is a client in flight: it keeps its header timeout and gets
   its answer with [Connection: close]. Closing it would lose a request at
   every reload, where SIGHUP drains the previous generation of workers
   while clients keep coming. *)
let close_idle w =
  for i = 0 to Array.length w.conns - 1 do
    let c = w.conns.(i) in
    if c.fd >= 0 && c.served > 0 && Connection.idle c then w.close c
    else if c.fd >= 0 then Connection.going_away c (* WebSocket: Close 1001 *)
  done

(* {1 What both backends do} *)

(* A client was accepted: [false] when it was refused at the limit (closed
   at once; the caller stops accepting, see {!pause_accepts}). *)
let accepted w fd listener =
  w.accept_error_logged <- false;
  if admit w then begin
    if over_client_limit w fd then begin
      (* Not a reason to stop accepting: other clients are welcome. *)
      ignore (Syscall.close fd : int);
      w.limited <- w.limited + 1
    end
    else open_conn w fd listener;
    true
  end
  else begin
    ignore (Syscall.close fd : int);
    pause_accepts w;
    false
  end

(* An accept failed for want of a descriptor or memory (EMFILE, ENFILE,
   ENOBUFS, ENOMEM): the caller stops accepting, and this retries in
   100 ms instead of spinning, logged once per episode. *)
let accept_failed w err =
  if not w.accept_error_logged then begin
    Log.warn "accept: %s (pausing accepts for 100 ms)" (Syscall.error_message err);
    w.accept_error_logged <- true
  end;
  w.accept_resume_ns <- w.now_ns + accept_pause_ns

(* A 101 was sent: the socket leaves the server for the handler's
   callback [k], with what the client sent after its head. The slot is
   free again before the callback runs. *)
let hand_over w c fd rest =
  let k = c.upgrade in
  release_slot w c;
  try k (Syscall.unix_of_fd fd) rest with ex -> Log.error "an upgrade handler raised %s" (Printexc.to_string ex)

(* SIGHUP: reopen the access log at its path (logrotate renamed the old
   file), read the TLS certificate and key again for new connections, and
   keep serving. *)
let reload w =
  (match Log.reopen () with
   | Ok () -> ()
   | Error msg -> Log.warn "SIGHUP: reopening the error log: %s (keeping the old one)" msg);
  (match w.p.config.access_log with
   | None | Some "-" -> ()
   | Some path -> (
       Access_log.flush w.log;
       match Access_log.reopen w.log path with
       | Ok () -> ()
       | Error msg -> Log.warn "SIGHUP: reopening the access log: %s (keeping the old one)" msg));
  let seen = ref [] in
  Array.iter
    (function
      | Some s when not (List.memq s !seen) -> (
          seen := s :: !seen;
          match Tls.reload s with
          | Ok () -> ()
          | Error msg -> Log.warn "SIGHUP: reloading the certificate: %s (keeping the old one)" msg)
      | _ -> ())
    w.tls_servers

(* Reads the signals that arrived; [true] when one asks to stop. *)
let read_signals w =
  let stop = ref false in
  let continue = ref true in
  while !continue do
    let r = Extra.signalfd_read w.sfd in
    if r > 0 then begin
      let s = -r in
      if s = Sys.sighup then reload w
      else if s = Sys.sigusr1 then Access_log.reopen_all w.log
      else if s = Sys.sigterm || s = Sys.sigint then begin
        stop := true;
        w.hurried <- true;
        (* Retired before: the grace period starts now. *)
        if w.draining then
          w.drain_deadline_ns <- min w.drain_deadline_ns (w.now_ns + grace_ns w.p)
      end
      else if s = Sys.sigquit then begin
        stop := true;
        w.retired <- true
      end
    end
    else if r <> - Syscall.eintr then continue := false
  done;
  !stop

(* Work every turn ends with, whatever the backend. *)
let end_of_turn w ~on_timeout =
  Reactor.run_timers w.reactor ~now_ns:w.now_ns;
  let id = ref (Timer_wheel.pop_expired w.wheel ~now:w.tick) in
  while !id >= 0 do
    let c = w.conns.(!id) in
    (* Held at an earlier deadline (see [sync_timer]): not due yet. *)
    if c.timer <> No_timer && c.deadline > w.tick then Timer_wheel.set w.wheel !id c.deadline
    else on_timeout c;
    id := Timer_wheel.pop_expired w.wheel ~now:w.tick
  done;
  Reactor.end_of_turn w.reactor;
  if w.accept_resume_ns > 0 && w.now_ns >= w.accept_resume_ns then begin
    w.accept_resume_ns <- 0;
    w.resume_accept ()
  end;
  if w.sh.now <> w.gauges_s then begin
    w.gauges_s <- w.sh.now;
    write_gauges w;
    Gc_settle.tick w.gc
  end;
  if Access_log.pending w.log && w.sh.now <> w.log_flushed_s then begin
    Access_log.flush w.log;
    w.log_flushed_s <- w.sh.now
  end;
  if w.draining && (w.active = 0 || w.now_ns >= w.drain_deadline_ns) then w.stop <- true

(* {1 Creation and exit} *)

let create p ~listeners ~signal_fd ~reactor =
  let c = p.config in
  let n = c.max_connections + spare_slots in
  if Array.length listeners = 0 then invalid_arg "Loop.run: no listening socket";
  let sh =
    shared c ~listener_headers:(Array.map (fun (l : listener) -> l.headers) listeners)
      ~keep:(min pool_keep c.max_connections)
  in
  let dummy = Slot.create sh ~slot:(-1) ~peer:false in
  let now_ns = Syscall.clock_monotonic_ns () in
  let wheel_size =
    (* Enough buckets that no timeout wraps around the wheel. *)
    let longest =
      List.fold_left max (Connection.linger_ticks * tick_ms)
        (List.map ms [ c.header_timeout; c.idle_timeout; c.body_timeout; c.write_timeout; c.handler_timeout ])
    in
    (longest / tick_ms) + 2
  in
  let w =
    {
      p;
      lfds = Array.map (fun l -> l.listen_fd) listeners;
      handlers = Array.map (fun (l : listener) -> l.handler) listeners;
      fronts = Array.map (fun (l : listener) -> l.front) listeners;
      entries = [||];
      tls_servers = Array.map (fun (l : listener) -> l.tls) listeners;
      sfd = signal_fd;
      reactor;
      dummy;
      conns = Array.make n dummy;
      free = Array.init n (fun i -> n - 1 - i);
      nfree = n;
      active = 0;
      wheel = Timer_wheel.create ~ids:n ~size:(min wheel_size 65536) ~now:(now_ns / tick_ns);
      sh;
      log = Access_log.create ~fd:p.log_fd ~format:c.log_format;
      per_client = (if c.conn_limit > 0 then Some (Conn_limit.create ~per_client:c.conn_limit ~slots:n) else None);
      limited = 0;
      totals = (match p.totals with Some t -> t | None -> Totals.create ~rows:1);
      row = -1;
      gauges_s = 0;
      gc = Gc_settle.create ();
      idle_prev = Array.make n (-2);
      idle_next = Array.make n (-2);
      idle_since = Array.make n 0;
      idle_head = -1;
      idle_tail = -1;
      evicted = 0;
      refused = 0;
      refusing = false;
      closing = 0;
      full_since_ns = 0;
      backend = c.io;
      close = ignore;
      start_conn = (fun _ _ -> ());
      resume_accept = ignore;
      now_ns;
      tick = now_ns / tick_ns;
      listening = false;
      accept_resume_ns = 0;
      accept_error_logged = false;
      draining = false;
      drain_deadline_ns = 0;
      retired = false;
      hurried = false;
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
  (* [Ctx.t] is [Slot.t] (Ctx.of_conn is the identity): one closure each
     for the worker's life, no allocation per call. *)
  w.entries <- Array.map2 (entry w) w.fronts w.handlers;
  w.row <- Totals.claim w.totals;
  if w.row < 0 then Log.warn "status totals: no free row for worker %d (not counted)" (Syscall.getpid ());
  sh.hooks.handler <- front w;
  sh.hooks.app <- app w;
  sh.hooks.log <- log_access w;
  (* One loop per worker process: the renderer is the process's. *)
  Errors.set c.errors;
  (* Development mode shows backtraces: record them (costly only when an
     exception is raised). *)
  if c.dev_errors then Printexc.record_backtrace true;
  w

let words_per_request w =
  let words, requests =
    if w.base_requests > 0 && w.final_requests > w.base_requests then
      (w.final_words - w.base_words, w.final_requests - w.base_requests)
    else (w.final_words - w.start_words, w.final_requests)
  in
  if requests = 0 then 0. else float_of_int words /. float_of_int requests

let finish w =
  Totals.release w.totals w.row;
  Buffer_pool.trim w.sh.reads;
  Buffer_pool.trim w.sh.heads;
  Buffer_pool.trim w.sh.writes;
  Buffer_pool.trim w.sh.bodies;
  Access_log.flush w.log;
  Log.msg "worker %d served %d requests, minor words/request %.2f" (Syscall.getpid ())
    w.final_requests (words_per_request w)
