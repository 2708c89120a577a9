(** One worker's event loop: waits for events, hands each to the backend
    that serves the connection, and runs the timers.

    {2 Backends}
    - {!Epoll_io} (readiness, level-triggered epoll): every connection
      under [io = Epoll]; under [io = Uring], the TLS connections (OpenSSL
      reads and writes its socket itself) and the reactor's descriptors,
      whose epoll set the ring watches.
    - {!Uring_io} (completions): plain connections under [io = Uring]:
      multishot accept and receive (into provided buffers, so an idle
      connection holds none), sendmsg requests batched into the one
      [io_uring_enter] per loop turn that also waits.
    Where the kernel refuses io_uring (too old, [kernel.io_uring_disabled],
    a seccomp filter) the loop logs one line and serves with epoll.

    {2 What it leaves to others}
    What a connection needs next — read, write, close, linger — comes from
    the connection's protocol, through the protocol switch
    ({!Connection}: {!H1}, {!H2_session} or {!Ws}), which also holds the
    timeouts' values and the buffers; its bytes move through its transport
    ({!Transport}); slots, timers, statistics, the idle list and the
    shutdown state are {!Loop_state}'s.

    {2 Closing}
    A response to a request that cannot be parsed, a timeout, an oversized
    body or a body the handler did not read carries [Connection: close]
    and is followed by a lingering close: shutdown of the write side, then
    reading and discarding for up to 2 s until the client closes, so
    unread input does not make the kernel answer with RST and destroy the
    response. The last response before any close is sent with [MSG_MORE]
    and released by [shutdown(SHUT_WR)], so it leaves in the packet that
    carries the FIN.

    {2 Timeouts}
    One timer per connection in a {!Timer_wheel} with 100 ms ticks,
    mirroring the connection's own ([Slot.t.timer], [deadline]):
    - first request on a new connection, and a request head once its first
      byte arrived: [header_timeout], counted from the start (slowloris);
    - between requests on a keep-alive connection: [idle_timeout];
    - a request body the handler asked for: [body_timeout] in all, moved
      later only by data arriving at 1 KiB/s or faster;
    - between two writes of a response the client does not read:
      [write_timeout].
    A timed-out head or body is answered [408] (when bytes of it arrived),
    an idle connection or a stalled write is just closed.

    {2 Connections at the limit}
    At [max_connections] a worker first leaves new clients to other workers
    for 100 ms, then closes the keep-alive connection idle longest (or one
    that has sent nothing for a second) for each new client, as nginx does;
    when none qualifies, the new client is closed at once and counted
    ([refused] in the stats), so it meets an answer or a close, never a
    wait as long as the header timeout ({!Loop_state.admit}).

    {2 Memory}
    A slot costs its record; read, write and body buffers and the parse
    state come from the worker's pools only while the connection has a
    request in progress (see {!Slot}). Each pool keeps up to 256 spare
    buffers; [/__httpz/stats] reports the bytes taken ([buffer_bytes]) and
    kept ([spare_buffer_bytes]).

    {2 Allocation}
    The steady state — read, parse, handler, write, next request —
    allocates nothing, on either backend (tested). Allocation happens on a
    slot's first use (its record, once per slot for the worker's life),
    when a pool has no spare buffer, when a chunked response outgrows the
    write buffer, when a non-stable bigstring body must be copied because
    the client reads slowly, and on error paths that log. *)

type io = Loop_state.io
type params = Loop_state.params
(** {!Loop_state.params}: the loop's settings. *)

type listener = Loop_state.listener
(** {!Loop_state.listener}: a listening socket and how its connections are
    served. *)

val run : params -> listeners:listener array -> signal_fd:int -> int
(** [run p ~listeners ~signal_fd] serves connections accepted on every
    listener (each with its own handler) until a [SIGTERM] or [SIGINT]
    arrives on the signalfd [signal_fd] ([SIGHUP] reopens the access log),
    then shuts down gracefully (see {!Server}), prints the worker's exit
    line on stderr and is the exit code ([0]). Closes the listening
    sockets; leaves [signal_fd] open.
    @raise Invalid_argument when [listeners] is empty. *)

