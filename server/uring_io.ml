(* The completion backend ([--io uring]): plain connections driven by
   io_uring (Uring). Accepts are multishot; each connection has a multishot
   receive into the ring's provided buffers (an idle connection holds
   none); responses go out as sendmsg requests. Requests queue up while the
   loop turn runs and reach the kernel together at the start of the next
   turn, in the io_uring_enter that also waits: one system call per turn,
   not several per request.

   What stays on readiness: TLS connections (OpenSSL reads and writes its
   socket itself; they are driven by Epoll_io, whose epoll set the ring
   watches), file bodies and bodies the GC could move (written by
   Transport with sendfile/sendmsg at once, and, when the socket is full,
   resumed on a POLLOUT completion), and the reactor's descriptors.

   A connection's requests reference its buffers until they complete: a
   connection that closes first cancels them and keeps its slot (and
   buffers) until the last completion, then closes its descriptor. *)

open Slot
module W = Loop_state

(* Provided buffers: 256 of 4 KiB (1 MiB per worker, touched as the ring
   turns): a request head larger than one spans several. *)
let nbufs = 256
let buf_size = 4096

(* The most a connection may hold of bytes it received while it was not
   reading them (see {!deliver}): a client that sends more ahead of what
   the server reads is closed. *)
let max_stash = 1 lsl 20

let batch = 256

(* Clients the ring accepted and the worker has not admitted yet, at most:
   the default listen backlog, as many as the kernel would have held. *)
let max_held = 4096

(* User data: the kind in the low 3 bits, the slot (or listener) above. *)
let k_accept = 1
let k_recv = 2
let k_send = 3
let k_pollout = 4
let k_epoll = 5
let ud kind slot = (slot lsl 3) lor kind

(* A slot's state, one bit each. *)
let ring = 1 (* its connection is driven by the ring *)
let eof = 2 (* the stream ended (or failed) after the stashed bytes *)
let recv_on = 4 (* a receive is armed *)
let sending = 8 (* a sendmsg is in flight *)
let pollout_on = 16 (* a POLLOUT is in flight *)
let closing = 32
let detaching = 64
let starved = 128 (* its receive ended for want of a buffer: in [starved_slots] *)
let cancelling = 256 (* closed, its requests cancelled: counted in [w.closing] *)

type t = {
  w : W.t;
  e : Epoll_io.t;
  flags : int array;  (** per slot: the bits above *)
  (* Bytes a connection received and has not taken yet, per slot, at
     [stash_off, stash_off + stash_len) of a buffer of its own: provided
     buffers are given back to the kernel in the completion that filled
     them, so no connection holds one across turns. *)
  stash : Httpz.Bigstring.t array;
  stash_off : int array;
  stash_len : int array;
  stashes : Buffer_pool.t;
  starved_slots : int array;  (** slots with the [starved] bit, [nstarved] of them *)
  mutable nstarved : int;
  accepting : bool array;  (** per listener *)
  accept_cancelled : bool array;  (** per listener: its accept's cancellation is on its way *)
  (* Accepted clients not admitted yet, oldest first: a ring of [nheld]
     from [held_head] (see {!on_accept}). *)
  held_fd : int array;
  held_listener : int array;
  mutable held_head : int;
  mutable nheld : int;
  mutable turns : int;
  mutable admitted_turn : int;  (** the last turn that admitted a held client *)
  cq_ud : int array;
  cq_res : int array;
  cq_flags : int array;
  mutable on_epoll : unit -> unit;
}

let has u s bit = u.flags.(s) land bit <> 0
let set u s bit = u.flags.(s) <- u.flags.(s) lor bit
let clear u s bit = u.flags.(s) <- u.flags.(s) land lnot bit
let busy u s = u.flags.(s) land (recv_on lor sending lor pollout_on) <> 0
let on_ring u c = has u c.slot ring
let is_closing u c = has u c.slot closing

(* {1 Received bytes}

   Bytes go from the provided buffer straight to where the connection reads
   next when it is reading; the rest of the completion, and every byte
   that arrives while it is not reading (its response is being written,
   its handler waits, its pipelined request waits its turn), go to its
   stash. A connection that has stashed bytes and does not read them has
   its receive cancelled: what it sends next waits in the kernel, as with
   epoll, until it reads again. One client thus holds no provided buffer
   and at most what its socket had received when it stopped reading. *)

let reading (c : Slot.t) =
  match c.state with Reading_head | Reading_body | Lingering -> true | Handling | Writing | Free -> false

let drop_stash u s =
  Buffer_pool.give u.stashes u.stash.(s);
  u.stash.(s) <- u.w.sh.empty;
  u.stash_off.(s) <- 0;
  u.stash_len.(s) <- 0

(* Appends bytes [off, off + len) of provided buffer [bid] to the stash;
   [false] when that would pass [max_stash]. *)
let stash_append u s bid off len =
  let have = u.stash_len.(s) in
  if have + len > max_stash then false
  else begin
    let b = u.stash.(s) in
    if u.stash_off.(s) + have + len > Httpz.Bigstring.length b then begin
      if have + len <= Httpz.Bigstring.length b then
        (* Room at the front: move the bytes there. *)
        ignore (Slot.shift_to_front b ~from:u.stash_off.(s) ~until:(u.stash_off.(s) + have) : int)
      else begin
        let nb = Buffer_pool.take_at_least u.stashes (max (have + len) (2 * Httpz.Bigstring.length b)) in
        Httpz.Bigstring.blit ~src:b ~src_off:u.stash_off.(s) ~dst:nb ~dst_off:0 ~len:have;
        Buffer_pool.give u.stashes b;
        u.stash.(s) <- nb
      end;
      u.stash_off.(s) <- 0
    end;
    ignore (Uring.copy_buf bid off u.stash.(s) (u.stash_off.(s) + have) len : int);
    u.stash_len.(s) <- have + len;
    true
  end

(* Moves stashed bytes to where the connection reads next: the count. *)
let take u c =
  let s = c.slot in
  let n = if u.stash_len.(s) < c.in_len then u.stash_len.(s) else c.in_len in
  Httpz.Bigstring.blit ~src:u.stash.(s) ~src_off:u.stash_off.(s) ~dst:c.in_buf ~dst_off:c.in_off ~len:n;
  u.stash_off.(s) <- u.stash_off.(s) + n;
  u.stash_len.(s) <- u.stash_len.(s) - n;
  if u.stash_len.(s) = 0 then drop_stash u s;
  n

let arm_recv u c =
  let s = c.slot in
  if u.flags.(s) land (recv_on lor eof lor closing lor starved) = 0 then
    if Uring.recv c.fd (ud k_recv s) = 0 then set u s recv_on else set u s eof

(* The ring ran dry: the receive is armed again at the end of the turn,
   once the completions of this one gave their buffers back. *)
let starve u s =
  if not (has u s starved) then begin
    set u s starved;
    u.starved_slots.(u.nstarved) <- s;
    u.nstarved <- u.nstarved + 1
  end

(* {1 Closing} *)

let finish_close u c =
  let s = c.slot in
  if has u s cancelling then begin
    clear u s cancelling;
    u.w.closing <- u.w.closing - 1
  end;
  drop_stash u s;
  clear u s eof;
  clear u s closing;
  clear u s ring;
  Slot.release_file c;
  if c.held then ignore (Syscall.shutdown_write c.fd : int);
  ignore (Syscall.close c.fd : int);
  W.release_slot u.w c

let close u c =
  let s = c.slot in
  if c.fd >= 0 && not (has u s closing) then begin
    set u s closing;
    W.idle_remove u.w c;
    Timer_wheel.cancel u.w.wheel s;
    if busy u s then begin
      set u s cancelling;
      u.w.closing <- u.w.closing + 1;
      ignore (Uring.cancel_fd c.fd : int)
    end
    else finish_close u c
  end

(* The socket goes to the handler's callback once the receive has stopped,
   with what the client sent after its head (in the read buffer, then in
   the queue). *)
let finish_detach u c =
  let s = c.slot in
  clear u s detaching;
  let fd = c.fd in
  let rest = Connection.detach c in
  let rest = rest ^ Httpz.Bigstring.sub_string u.stash.(s) ~off:u.stash_off.(s) ~len:u.stash_len.(s) in
  drop_stash u s;
  clear u s eof;
  clear u s ring;
  W.hand_over u.w c fd rest

(* {1 Carrying out what the connection needs} *)

let rec perform u c (a : Conn_action.t) =
  match a with
  | Read -> pump u c
  | Write -> send u c
  | Close -> close u c
  | Linger ->
      Connection.shutting_down c;
      if Syscall.shutdown_write c.fd < 0 then close u c
      else begin
        W.sync_timer u.w c;
        pump u c
      end
  | Wait ->
      (* A hang-up ends the wait; pipelined bytes are queued meanwhile. *)
      W.sync_timer u.w c;
      if has u c.slot eof then close u c
  | Nothing -> ()
  (* TLS is not this backend's (Epoll_io serves those connections): no
     bytes wait in a transport. *)
  | Read_buffered -> send u c
  | Push ->
      Transport.push c;
      pump u c
  | Detach ->
      set u c.slot detaching;
      if has u c.slot recv_on then ignore (Uring.cancel (ud k_recv c.slot) : int) else finish_detach u c

(* The connection wants bytes: stashed ones are handed over at once;
   without any, its receive is armed and it waits (holding no buffer: the
   read buffer is taken only when bytes are there). *)
and pump u c =
  let s = c.slot in
  if u.stash_len.(s) > 0 then
    match Connection.prepare_read c with
    | Read when c.in_len > 0 ->
        let n = take u c in
        W.idle_remove u.w c;
        perform u c (Connection.received c n)
    | Read -> () (* no room now: the bytes stay stashed, the receive paused *)
    | a -> perform u c a
  else if has u s eof then close u c
  else begin
    arm_recv u c;
    W.sync_timer u.w c;
    W.waiting u.w c
  end

(* Output: the head and a stable bigstring body go to the kernel as one
   sendmsg completed later; what the kernel must not read later (a string
   body, which the GC may move; a bigstring the handler may reuse) and file
   bodies are written at once, by the transport's walk, as by the
   readiness backend. *)
and send u c =
  let s = c.slot in
  match Output.segment c with
  | Nothing -> perform u c (Connection.written c)
  | Head_bigstring when not c.ext_stable -> send_now u c
  | Head_string | File -> send_now u c
  (* Several payloads between frames: one sendmsg at once, as epoll does
     (the ring's send holds two spans). *)
  | Gathered -> send_now u c
  | Unsent -> send_now u c (* TLS only: not on this backend's connections *)
  | Head when c.ext = Ext_file -> send_now u c
  (* HTTP/2 has more frames ready behind this write: written at once
     with MSG_MORE, and the next ones right after, in this turn, so the
     kernel packs them; a MSG_MORE write left waiting for its completion
     would hold the data a whole turn. *)
  | (Head | Head_bigstring) when c.more_output -> send_now u c
  | Head | Head_bigstring ->
      let last = Output.last c in
      Connection.hold c last;
      let body = c.ext_len > 0 in
      let r =
        Uring.send2 s c.fd c.out c.out_sent (c.out_len - c.out_sent) c.ext_bs
          (if body then c.ext_off else 0) (if body then c.ext_len else 0)
          (if last then 1 else 0) (ud k_send s)
      in
      if r = 0 then begin
        set u s sending;
        Connection.arm_write_timer c;
        W.sync_timer u.w c
      end
      else begin
        Log.warn "io_uring send: %s (closing the connection)" (Syscall.error_message r);
        close u c
      end

and send_now u c =
  match Transport.write c with
  | Output.Flushed -> perform u c (Connection.written c)
  | Output.Blocked ->
      Connection.blocked c;
      W.sync_timer u.w c;
      if Uring.poll c.fd Uring.pollout 0 (ud k_pollout c.slot) = 0 then set u c.slot pollout_on
      else close u c
  | Output.Dead -> close u c

(* {1 Completions} *)

(* Bytes [0, len) of provided buffer [bid] arrived for [c]: the buffer is
   given back before this returns. *)
let deliver u c bid len =
  let s = c.slot in
  if u.stash_len.(s) = 0 && reading c then begin
    match Connection.prepare_read c with
    | Read when c.in_len > 0 ->
        let n = if c.in_len < len then c.in_len else len in
        ignore (Uring.copy_buf bid 0 c.in_buf c.in_off n : int);
        let kept = n = len || stash_append u s bid n (len - n) in
        ignore (Uring.recycle bid : int);
        W.idle_remove u.w c;
        if kept then perform u c (Connection.received c n) else close u c
    | a ->
        let kept = stash_append u s bid 0 len in
        ignore (Uring.recycle bid : int);
        if kept then (match a with Read -> () | a -> perform u c a) else close u c
  end
  else begin
    let kept = stash_append u s bid 0 len in
    ignore (Uring.recycle bid : int);
    if not kept then close u c else if reading c then pump u c
  end;
  (* Bytes it does not take: it receives no more until it reads them. *)
  if c.fd >= 0 && u.stash_len.(s) > 0 && has u s recv_on && not (has u s closing) then begin
    ignore (Uring.cancel (ud k_recv s) : int);
    W.sync_timer u.w c
  end

let on_recv u c res flags =
  let s = c.slot in
  if flags land Uring.more = 0 then clear u s recv_on;
  if res > 0 then begin
    let bid = Uring.buffer_id flags in
    if has u s closing then ignore (Uring.recycle bid : int)
    else if has u s detaching then begin
      if not (stash_append u s bid 0 res) then begin
        clear u s detaching;
        close u c
      end;
      ignore (Uring.recycle bid : int)
    end
    else deliver u c bid res
  end
  else if res = - Syscall.enobufs then starve u s
  else if res <> - Syscall.ecanceled then set u s eof;
  if has u s closing then (if not (busy u s) then finish_close u c)
  else if has u s detaching then (if not (has u s recv_on) then finish_detach u c)
  else if res <= 0 && c.fd >= 0 then
    match c.state with
    | Reading_head | Reading_body | Lingering -> pump u c
    | Handling -> if has u s eof then close u c
    | Writing | Free -> ()

let on_send u c res =
  let s = c.slot in
  clear u s sending;
  if has u s closing then (if not (busy u s) then finish_close u c)
  else if res > 0 then begin
    Output.advance c res;
    send u c
  end
  else close u c

let on_pollout u c =
  let s = c.slot in
  clear u s pollout_on;
  if has u s closing then (if not (busy u s) then finish_close u c) else send u c

(* {1 Accepting} *)

(* Runs at every close: loops, not closures, so it allocates nothing. While
   accepted clients wait to be admitted, the ring accepts no more: they go
   first ({!admit_held}, at the turn's start and end, not here: a close
   must not open a connection in the slot it just gave back). *)
let resume_accept u =
  let w = u.w in
  if (not w.draining) && w.accept_resume_ns = 0 && W.may_accept w && u.nheld = 0 then
    for i = 0 to Array.length w.lfds - 1 do
      let fd = w.lfds.(i) in
      if fd >= 0 && (not u.accepting.(i)) && Uring.accept fd (ud k_accept i) = 0 then begin
        u.accepting.(i) <- true;
        u.accept_cancelled.(i) <- false
      end
    done;
  let any = ref false in
  for i = 0 to Array.length u.accepting - 1 do
    if u.accepting.(i) then any := true
  done;
  w.listening <- !any

(* By user data, not by descriptor: the listening socket may be closed
   before the cancellation reaches the kernel. *)
let stop_accepting u =
  for i = 0 to Array.length u.accepting - 1 do
    if u.accepting.(i) && not u.accept_cancelled.(i) then begin
      ignore (Uring.cancel (ud k_accept i) : int);
      u.accept_cancelled.(i) <- true
    end
  done

let start u c a =
  set u c.slot ring;
  perform u c a

(* Turns a connection admitted at the limit may take before it can be
   closed for the next client: its receive reaches the kernel in the next
   one, its request comes back in it, its response completes in the one
   after. *)
let settle_turns = 3

(* Admits the clients held, oldest first, as the readiness backend takes
   them from the listen queue ({!Epoll_io.accept_ready}): while there is a
   slot and no pause, each gets one (at the limit, by closing an idle
   connection, {!Loop_state.admit}); the first that cannot is refused and
   accepting pauses; the others wait. Two waits the readiness backend does
   not need, since it reads a request and writes its response at once:
   when the slots are all held by connections whose cancellation the
   kernel has not completed yet (evicting gave slots, just not yet), and,
   at the limit with no idle connection to close, while clients admitted
   in the last [settle_turns] turns are still on their first request (they
   become idle ones). Waiting, not refused. While any is held, the ring
   accepts no more. *)
let admit_held u =
  let w = u.w in
  let stop = ref false in
  while u.nheld > 0 && not !stop do
    let fd = u.held_fd.(u.held_head) and listener = u.held_listener.(u.held_head) in
    if w.draining then begin
      ignore (Syscall.close fd : int);
      u.held_head <- (u.held_head + 1) mod max_held;
      u.nheld <- u.nheld - 1
    end
    else if w.accept_resume_ns <> 0 || not (W.may_accept w) then stop := true
    else if W.must_wait w then begin
      (* Full: the next clients are left to other workers for a while. *)
      W.pause_accepts w;
      stop := true
    end
    else if W.at_limit w && u.turns - u.admitted_turn < settle_turns && not (W.can_evict w) then
      stop := true
    else begin
      u.held_head <- (u.held_head + 1) mod max_held;
      u.nheld <- u.nheld - 1;
      if W.accepted w fd listener then u.admitted_turn <- u.turns else stop := true
    end
  done;
  if u.nheld > 0 then stop_accepting u

(* A multishot accept claims every client in the listen queue at once, more
   than the worker may take at its limit: each is held and admitted in
   turn ({!admit_held}), not refused for arriving together. *)
let on_accept u listener res flags =
  let w = u.w in
  if flags land Uring.more = 0 then u.accepting.(listener) <- false;
  if res >= 0 then begin
    if u.nheld = max_held then begin
      (* As a full listen queue would: the client is turned away. *)
      ignore (Syscall.close res : int);
      w.refused <- w.refused + 1
    end
    else begin
      u.held_fd.((u.held_head + u.nheld) mod max_held) <- res;
      u.held_listener.((u.held_head + u.nheld) mod max_held) <- listener;
      u.nheld <- u.nheld + 1
    end;
    admit_held u
  end
  else if res <> - Syscall.ecanceled && res <> - Syscall.econnaborted then begin
    stop_accepting u;
    W.accept_failed w res
  end;
  if not u.accepting.(listener) then resume_accept u

(* {1 The turn} *)

let arm_epoll u = if Uring.poll u.e.epfd Uring.pollin 1 (ud k_epoll 0) <> 0 then failwith "io_uring: poll"

(* A completion of one connection raised (a bug, or memory exhausted):
   that connection is closed and the worker goes on serving the others. *)
let failed u c e =
  Log.error "a connection event raised %s (closing the connection)" (Printexc.to_string e);
  if c.fd >= 0 then try close u c with e -> Log.error "closing it raised %s" (Printexc.to_string e)

let dispatch u i =
  let v = u.cq_ud.(i) and res = u.cq_res.(i) and flags = u.cq_flags.(i) in
  let kind = v land 7 and s = v lsr 3 in
  if kind = k_recv then (let c = u.w.conns.(s) in try on_recv u c res flags with e -> failed u c e)
  else if kind = k_send then (let c = u.w.conns.(s) in try on_send u c res with e -> failed u c e)
  else if kind = k_accept then on_accept u s res flags
  else if kind = k_pollout then (let c = u.w.conns.(s) in try on_pollout u c with e -> failed u c e)
  else if kind = k_epoll then begin
    if flags land Uring.more = 0 then arm_epoll u;
    u.on_epoll ()
  end

(* Waits at most [timeout_ms] (negative: no limit) and handles what
   completed. *)
let turn u ~timeout_ms =
  u.turns <- u.turns + 1;
  (* Clients held across a pause, or until slots came back. *)
  if u.nheld > 0 then begin
    admit_held u;
    resume_accept u
  end;
  let n = Uring.submit_wait ~timeout_ns:(if timeout_ms < 0 then -1 else timeout_ms * 1_000_000) in
  W.update_clock u.w;
  if n < 0 && n <> - Syscall.eintr then begin
    Log.error "io_uring_enter: %s" (Syscall.error_message n);
    u.w.stop <- true
  end;
  let k = ref (Uring.reap u.cq_ud u.cq_res u.cq_flags) in
  while !k > 0 do
    for i = 0 to !k - 1 do
      dispatch u i
    done;
    k := Uring.reap u.cq_ud u.cq_res u.cq_flags
  done;
  (* Every buffer of this turn's completions is back: the receives that
     found none start again (a slot is listed once, so this is bounded). *)
  if u.nstarved > 0 then begin
    let n = u.nstarved in
    u.nstarved <- 0;
    for i = 0 to n - 1 do
      let s = u.starved_slots.(i) in
      clear u s starved;
      let c = u.w.conns.(s) in
      if c.fd >= 0 && has u s ring && u.stash_len.(s) = 0 then arm_recv u c
    done
  end;
  (* This turn's completions may have given slots back. *)
  if u.nheld > 0 then begin
    admit_held u;
    resume_accept u
  end

(* {1 Set-up} *)

let create (w : W.t) e =
  let n = Array.length w.conns in
  let r = Uring.setup ~entries:4096 ~slots:n ~nbufs ~buf_size in
  if r < 0 then Error r
  else
    Ok
      {
        w;
        e;
        flags = Array.make n 0;
        stash = Array.make n w.sh.empty;
        stash_off = Array.make n 0;
        stash_len = Array.make n 0;
        stashes = Buffer_pool.create ~size:buf_size ~keep:64;
        starved_slots = Array.make n 0;
        nstarved = 0;
        accepting = Array.make (Array.length w.lfds) false;
        accept_cancelled = Array.make (Array.length w.lfds) false;
        held_fd = Array.make max_held (-1);
        held_listener = Array.make max_held 0;
        held_head = 0;
        nheld = 0;
        turns = 0;
        admitted_turn = min_int / 2;
        cq_ud = Array.make batch 0;
        cq_res = Array.make batch 0;
        cq_flags = Array.make batch 0;
        on_epoll = ignore;
      }

(* At exit: the ring goes first (the kernel lets go of every buffer), then
   the descriptors. *)
let shutdown u =
  Uring.exit ();
  for i = 0 to u.nheld - 1 do
    ignore (Syscall.close u.held_fd.((u.held_head + i) mod max_held) : int)
  done;
  u.nheld <- 0;
  for s = 0 to Array.length u.flags - 1 do
    if has u s ring then begin
      (* The ring is gone: nothing is in flight, and its buffers are no
         longer the kernel's. *)
      u.flags.(s) <- ring;
      finish_close u u.w.conns.(s)
    end
  done
let set_on_epoll u f = u.on_epoll <- f
