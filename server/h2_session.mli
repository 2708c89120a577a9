(** An HTTP/2 connection ({{:https://www.rfc-editor.org/rfc/rfc9113} RFC
    9113}) over a connection slot, sans I/O: the protocol switch
    ({!Connection}) hands it the events of a slot whose [mode] is [H2_conn]
    (and {!resume} of an [H2_stream] exchange), and it answers the same
    {!Conn_action.t}s, so the backends drive every protocol alike.

    {2 Becoming HTTP/2}
    The switch decides: a TLS connection whose ALPN selected "h2"
    ({!takes_over}, asked before its first read), or a plain one whose
    first bytes the HTTP/1.1 state machine found to be the client preface
    ({!begin_h2c}: h2c with prior knowledge, on the HTTP/1.1 port).
    [sh.http2] off disables both.

    {2 State and buffers}
    The connection takes an {!Slot.h2} (its [H2_connection.t] and its
    exchanges) from the worker's pool [sh.h2_free] and gives it back in
    {!closed} (32 are kept). Its [H2_connection.t] shares the worker's
    {!Httpz.H2_workspace} (decoded head, response head, frame-queue pool)
    and owns little more than its HPACK tables and a few stream slots. It
    reads into [rbuf] and writes from [out], both from the worker's pools
    and given back whenever no frame is partly read and nothing waits to be
    written: an idle HTTP/2 connection holds no buffer, only the HPACK
    tables inside its [H2_connection.t].

    {2 Streams}
    Each request stream is an exchange ({!H2_exchange}); the handler runs
    while its HEADERS are read. Output is produced only once the previous
    output all left, so a stream's buffer is reused only after its bytes
    were copied out, and a file's bytes are sent before its exchange ends.
    Over plain TCP [next_output] fills [out] and a file body's bytes
    follow as [ext] (sendfile); stable payloads (a cached file's bytes)
    are not copied: they are placed between the frames of [out]
    ({!Gather}, up to 16 pieces and 256 KiB while more frames are ready),
    so one sendmsg carries several DATA frames. Over TLS frames are
    batched up to one TLS record (16 KiB), stable payloads copied behind
    their DATA frames' headers; a file's payload ends the batch as [ext],
    with room left for it behind its header, and the transport reads it in
    there ({!Output.file_absorbable}; kTLS sends it instead): a DATA frame
    and its bytes leave in one record, not two.
    Input is read only while no output is pending.

    {2 No I/O}
    Like {!H1}, the session calls no system call and no OpenSSL: what it
    needs goes down as an action or as {!Output}'s description. It reads
    the transport's reports from the slot ([tls]: TLS or not, ALPN's
    answer); when frames a write announced ([more_output]) do not come it
    answers {!Conn_action.Push}; after input over TLS it answers
    {!Conn_action.Read_buffered}, so that records OpenSSL read ahead are
    handled before answering. [scripts/protocol_io.sh] checks it.

    {2 Ending}
    A connection error or an idle timeout queues GOAWAY; once it left the
    connection lingers ({!Conn_action.Linger}) and closes. When the worker
    drains ([sh.draining]) the next output queues GOAWAY(NO_ERROR): open
    streams finish, then the connection lingers and closes.

    {2 Allocation}
    {!start} allocates a session when the pool has none; exchanges are
    pooled likewise. *)

val min_read_buffer : int
(** The smallest [read_buffer] HTTP/2 works with (one frame of the default
    maximum size and the preface); [Server] turns HTTP/2 off below it. *)

val takes_over : Slot.t -> bool
(** [takes_over c]: [c] is a TLS connection whose handshake selected "h2"
    (as its transport reported, [c.tls = Tls_h2]) and HTTP/2 is on: it has become an HTTP/2 connection (no byte of it has
    been read yet). Otherwise [false], changing nothing. *)

val begin_h2c : Slot.t -> Conn_action.t
(** [c]'s first bytes, [c.rbuf\[0, rlen)], start with the client preface:
    it becomes an HTTP/2 connection and processes them. *)

val prepare_read : Slot.t -> Conn_action.t
val received : Slot.t -> int -> Conn_action.t
val written : Slot.t -> Conn_action.t
val blocked : Slot.t -> unit
val timeout : Slot.t -> Conn_action.t
(** As {!Connection}'s, for an HTTP/2 connection. *)

val resume : Slot.t -> gen:int -> (Slot.t -> unit) -> Conn_action.t
(** [resume x ~gen k]: as {!Connection.resume} for the exchange [x]; the
    answer is for [x]'s connection ({!Slot.carrier}). *)

val closed : Slot.t -> unit
(** The connection closed: its exchanges are cancelled (their [cancels]
    run, their responses logged as cut) and its session goes back to the
    pool. Nothing for an HTTP/1.1 connection. *)

val drain : Slot.t -> Conn_action.t
(** The worker drains (SIGTERM, reload): an HTTP/2 connection queues
    GOAWAY(NO_ERROR) and, when it is not writing already, writes it; its
    open streams finish, then it closes. [Nothing] for others. *)

val idle : Slot.t -> bool
(** No stream open, no byte of a frame buffered. *)
