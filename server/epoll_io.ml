(* The readiness backend: connections driven by epoll, whose bytes move
   with one system call each through their transport (Transport: plain or
   TLS). It serves every connection under [--io epoll], and the TLS
   connections under [--io uring] (whose ring watches this epoll set).
   Every function takes the backend state [e] and the connection [c]
   explicitly: no closure is built per event, and nothing on the
   keep-alive path allocates (test/server/loop's zero-allocation test).
   Functions that may close [c] leave [c.fd = -1]; callers check it. *)

open Slot
module W = Loop_state

type t = {
  w : Loop_state.t;
  epfd : int;
  interest : int array;  (** per slot: the events registered in [epfd], [0] when none *)
}

let create w epfd = { w; epfd; interest = Array.make (Array.length w.W.conns) 0 }

let accept_batch = 64

(* {1 Listening} (under [--io epoll]; the ring accepts under uring) *)

let listen_token e i = Array.length e.w.conns + i

let stop_listening e =
  let w = e.w in
  if w.listening then begin
    Array.iter (fun fd -> if fd >= 0 then ignore (Syscall.epoll_ctl_del e.epfd fd : int)) w.lfds;
    w.listening <- false
  end

let resume_accept e =
  let w = e.w in
  if (not w.listening) && (not w.draining) && w.accept_resume_ns = 0 && W.may_accept w then begin
    (* Every worker waits on the same listening sockets: EPOLLEXCLUSIVE
       wakes one of them per connection, not all. *)
    let ok = ref true in
    Array.iteri
      (fun i fd ->
        if fd >= 0 then begin
          let r =
            Syscall.epoll_ctl_add e.epfd fd (Syscall.epollin lor Syscall.epollexclusive)
              (listen_token e i)
          in
          (* EEXIST: still registered from an attempt that failed for
             another listener. *)
          if r <> 0 && r <> - Syscall.eexist then ok := false
        end)
      w.lfds;
    w.listening <- !ok
  end

(* {1 Closing} *)

let close_conn e c =
  if c.fd >= 0 then begin
    Slot.release_file c;
    Transport.close_notify c;
    Transport.release c;
    (* Bytes held by MSG_MORE leave now, with the FIN, in one packet: a
       close(2) that finds unread input would send a reset and drop them. *)
    if c.held then ignore (Syscall.shutdown_write c.fd : int);
    (* close(2) also removes the fd from the epoll set. Its result is
       deliberately ignored: on Linux the fd is gone even on EINTR/EIO. *)
    ignore (Syscall.close c.fd : int);
    e.interest.(c.slot) <- 0;
    W.release_slot e.w c
  end

(* Sets the epoll interest of [c] to [ev]. A connection is registered on
   its first wait, not when accepted: one answered straight away and
   closed (Connection: close) never touches epoll. If registering fails
   (ENOMEM, ENOSPC: the per-user watch limit) the connection could never
   be woken, so it is closed. *)
let want e c ev =
  let s = c.slot in
  if e.interest.(s) <> ev then begin
    if e.interest.(s) = 0 then begin
      let r = Syscall.epoll_ctl_add e.epfd c.fd ev c.slot in
      if r < 0 then begin
        Log.warn "epoll_ctl: %s (closing the connection)" (Syscall.error_message r);
        close_conn e c
      end
      else e.interest.(s) <- ev
    end
    else begin
      ignore (Syscall.epoll_ctl_mod e.epfd c.fd ev c.slot : int);
      e.interest.(s) <- ev
    end
  end

(* {1 Carrying out what the connection needs} *)

(* A 101 was sent: the socket leaves the server for the handler's
   callback, with what the client sent after its head. *)
let detach e c =
  (* Ctx.upgrade refuses TLS connections: their bytes are not the
     socket's. *)
  assert (c.ssl = Openssl.none);
  let fd = c.fd in
  let rest = Connection.detach c in
  if e.interest.(c.slot) <> 0 then ignore (Syscall.epoll_ctl_del e.epfd fd : int);
  e.interest.(c.slot) <- 0;
  W.hand_over e.w c fd rest

let rec perform e c (a : Conn_action.t) =
  match a with
  | Read ->
      (* TLS reads records ahead: bytes of the next request may be inside
         OpenSSL already, and the socket would never announce them. *)
      if Transport.buffered c then on_readable e c
      else begin
        W.sync_timer e.w c;
        W.waiting e.w c;
        want e c Syscall.epollin
      end
  | Write -> (
      match Transport.write c with
      | Output.Flushed -> perform e c (Connection.written c)
      | Output.Blocked ->
          Connection.blocked c;
          W.sync_timer e.w c;
          want e c Syscall.epollout
      | Output.Dead -> close_conn e c)
  | Close -> close_conn e c
  | Linger ->
      Connection.shutting_down c;
      Transport.close_notify c;
      if Syscall.shutdown_write c.fd < 0 then close_conn e c
      else begin
        W.sync_timer e.w c;
        want e c Syscall.epollin
      end
  | Wait ->
      (* Only a hang-up (or error) wakes a waiting connection: pipelined
         bytes wait in the kernel until the handler answered. *)
      W.sync_timer e.w c;
      want e c Syscall.epollrdhup
  | Detach -> detach e c
  | Nothing -> ()
  | Read_buffered -> if Transport.buffered c then on_readable e c else perform e c Write
  | Push ->
      Transport.push c;
      perform e c Read

(* One read per readiness (level-triggered: the loop comes back for more),
   into wherever the connection wants its next bytes. *)
and on_readable e c =
  if c.tls = Tls_handshake then handshake e c
  else
    match Connection.prepare_read c with
    | Read ->
        let n = Transport.read c in
        if n > 0 then begin
          W.idle_remove e.w c;
          perform e c (Connection.received c n)
        end
        else if n = - Syscall.eagain || n = - Syscall.eintr then begin
          (* Nothing yet (a connection read on accept, or a TLS record
             not complete): wait for the socket. *)
          W.sync_timer e.w c;
          W.waiting e.w c;
          want e c Syscall.epollin
        end
        else close_conn e c (* EOF, ECONNRESET, … *)
    | a -> perform e c a

(* The TLS handshake, as far as the socket lets it go; the header timeout
   (armed when the connection opened) bounds it. *)
and handshake e c =
  match Tls.handshake c with
  | Tls.Done -> on_readable e c
  | Tls.Want_read ->
      W.sync_timer e.w c;
      want e c Syscall.epollin
  | Tls.Want_write ->
      W.sync_timer e.w c;
      want e c Syscall.epollout
  | Tls.Failed -> close_conn e c

(* A connection of this backend is ready (its slot's token). *)
let ready e c =
  if c.fd >= 0 then
    match c.state with
    | Writing -> perform e c Write
    | Reading_head | Reading_body | Lingering -> on_readable e c
    | Handling -> close_conn e c (* the client hung up on a waiting handler *)
    | Free -> ()

(* A connection just accepted (on either backend) that this one serves:
   with TCP_DEFER_ACCEPT its request (or ClientHello) is usually here
   already, so it is read at once; otherwise this read finds nothing
   (EAGAIN) and costs one call, and the connection enters epoll. *)
let start e c (a : Conn_action.t) =
  if W.tls_failed e.w c then close_conn e c
  else match a with Read -> on_readable e c | a -> perform e c a

let accept_ready e listener =
  let w = e.w in
  let budget = ref accept_batch in
  while !budget > 0 && w.listening do
    decr budget;
    if W.must_wait w then begin
      stop_listening e;
      W.pause_accepts w
    end
    else if not (W.may_accept w) then
      (* Every slot is taken, some by connections the ring is closing
         (evicted with a receive in flight): the client waits in the listen
         queue until one comes back ({!Loop_state.release_slot} resumes),
         not refused. *)
      stop_listening e
    else begin
      let fd = Syscall.accept4 w.lfds.(listener) in
      if fd >= 0 then begin
        if not (W.accepted w fd listener) then begin
          stop_listening e;
          budget := 0
        end
      end
      else if fd = - Syscall.eagain then budget := 0
      else if fd = - Syscall.eintr || fd = - Syscall.econnaborted || fd = - Syscall.eproto then ()
      else begin
        (* The pending connection stays queued and the socket stays
           readable: keep serving the open connections meanwhile. *)
        stop_listening e;
        W.accept_failed w fd;
        budget := 0
      end
    end
  done

let close_listeners e =
  stop_listening e;
  let w = e.w in
  Array.iteri
    (fun i fd ->
      if fd >= 0 then begin
        ignore (Syscall.close fd : int);
        w.lfds.(i) <- -1
      end)
    w.lfds
