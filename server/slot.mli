(** A connection slot: the state of one client connection, kept in a
    preallocated record reused for every connection the slot serves.

    Internal to the server. {!H1} runs the HTTP/1.1 state machine over it,
    {!Ctx} is the handler's view of the same record ([Ctx.t = Slot.t]),
    answering through the slot's {!protocol} ({!H1_response} for HTTP/1.1),
    {!Output} describes its pending output, a transport ({!Plain}, {!Tls})
    moves its bytes and a backend ({!Epoll_io}, {!Uring_io}) owns its
    descriptor and mirrors its timer. The fields are exposed so that
    everyone can read them without accessor calls; only this module,
    {!H1}, {!H1_response}, {!Output}, {!Exchange}, {!Ctx} and, for HTTP/2
    connections and their exchanges, {!H2_session}, {!H2_exchange} and
    {!H2_response}, and in mode [Websocket] {!Ws} and {!Ws_session}, write
    them ([test/project/structure/field_writers_test.sh] counts them from the typed
    trees), backends and transports through their functions.

    {2 Buffers}
    Buffers come from the worker's pools ({!Buffer_pool}) while the
    connection has work in progress and go back when it has none: an idle
    keep-alive connection holds no buffer ([rbuf] and [out] are
    [sh.empty]).
    - [rbuf] (a read buffer, [read_buffer] bytes) holds the current
      request head at [\[rpos, rpos + head_length)], possibly its body, and
      any pipelined bytes after it, up to [rlen]. Request spans point into
      it, so it is only compacted (bytes moved to offset 0) between requests
      or, within a request, followed by a re-parse of the head. Given back
      when no byte of a request is in it, together with the parse state
      [req] (its header tables are most of a slot's size).
    - [out] holds the response head and small bodies; [\[out_sent, out_len)]
      is still to be written. Its last {!reserve} bytes are kept for the
      framing headers the server adds after the handler's own. Taken when a
      response starts, given back when it has been written.
    - [body_store] holds a body that does not fit in [rbuf] behind its head
      (and every chunked body) once the handler asked for it, and is given
      back when the request ends. *)

type session = ..
(** A protocol's own per-connection state, kept in [session] while the
    connection is in its [mode] (WebSocket: {!Ws}, from its accept on,
    the 101 still leaving over HTTP/1.1). *)

type session += No_session

(** What an HTTP/2 exchange keeps of its stream: one small record per
    exchange slot, so connection slots (HTTP/1.1, an HTTP/2 connection)
    do not carry these fields. *)
type stream_state = {
  mutable stream : int;  (** the stream id *)
  mutable peer_done : bool;  (** the client ended the stream (no more body) *)
  mutable fin_queued : bool;  (** the response's END_STREAM is queued *)
  mutable window_wait : int;
      (** the response bytes the client's windows held back when last
          looked at ([-1]: not looked at yet) *)
  mutable whole_credited : int;
      (** bytes of its body counted in its session's [whole_bodies] *)
  mutable conn_debt : int;
      (** bytes of its body credited to its stream's window only (over the
          budget), owed to the connection's *)
}

exception Answered_twice
(** Raised by a {!Ctx} answer call when the response is complete already
    (the handler answers twice); {!H1} logs it and keeps the first
    response. *)

type hooks = {
  mutable handler : t -> unit;
      (** the application, wrapped by the backend (statistics): called once
          per request, when its head is parsed *)
  mutable app : t -> unit;
      (** the application itself: called again once a body it asked for
          ([Ctx.await_body]) is complete *)
  mutable log : t -> bool -> bool -> unit;
      (** [log c parsed complete]: the response is over, log it
          ([parsed]: the request line can be trusted; [complete]: its last
          byte was handed to the socket, else it was cut: the connection
          closed or failed first). Called once per response, by
          {!H1}, when its last byte left or its connection closed *)
  mutable resume : t -> int -> (t -> unit) -> unit;
      (** [resume c gen k]: a suspended handler's continuation is ready; run
          it if [c] still serves the request of generation [gen] *)
}
(** What the backend provides to the state machine; set once per worker. *)

and shared = {
  date : Httpz.Date.Cache.t;
  server_lines : string array;
      (** per listener: ["Server: <name>\r\n"], [headers] and the
          listener's own (Strict-Transport-Security on a TLS one), written
          together *)
  headers : string;  (** added to every response: ["Name: value\r\n"]s *)
  mutable now : int;  (** wall-clock seconds of this loop turn *)
  mutable tick : int;  (** timer ticks (100 ms) of this loop turn *)
  mutable now_ms : int;
      (** monotonic milliseconds of this loop turn; [0] until a loop runs *)
  mutable draining : bool;  (** graceful shutdown: every response closes *)
  mutable dev_errors : bool;
      (** development mode: a 500 caused by a handler's exception shows
          the exception and backtrace to a client on the loopback *)
  empty : Httpz.Bigstring.t;  (** a zero-length buffer, for unset fields *)
  read_buffer : int;
  write_buffer : int;
  max_body : int;
  header_ticks : int;
  idle_ticks : int;
  body_ticks : int;
  write_ticks : int;
  handler_ticks : int;
  reads : Buffer_pool.t;  (** [read_buffer] bytes *)
  heads : Buffer_pool.t;  (** {!head_buffer} bytes: HTTP/2 exchanges' request heads *)
  writes : Buffer_pool.t;  (** [write_buffer + reserve] bytes *)
  bodies : Buffer_pool.t;  (** request bodies; 64 KiB class *)
  scratch : Httpz.Bigstring.t;  (** where a lingering close drains input *)
  limits : Httpz.Request.limits;  (** of every parse state *)
  parse : Parse_states.t;
      (** parse states (head parsers, chunk decoders) by index: taken with
          a read buffer, given back with it *)
  hooks : hooks;
  mutable http2 : bool;
      (** HTTP/2 is on: ALPN "h2" and the h2c preface turn a connection
          into one ({!H2_session}) *)
  mutable last_request : int;
      (** the [served] count of a connection's last request:
          [keepalive_requests - 1] ({!Config.t.keepalive_requests}),
          [max_int] without a limit, [-1] once [draining] (every response
          closes, every HTTP/2 connection says GOAWAY). One comparison
          decides both per response. Set by {!Loop_state.shared} and when
          the worker drains. *)
  h2_free : h2 Stack.t;
      (** HTTP/2 sessions not in use, for the next h2 connections (a few
          are kept, see {!H2_session}) *)
  mutable exchanges_free : t array;
      (** exchange slots not in use (HTTP/2 streams), [nexchanges_free] of
          them: an array, so that a stream's exchange comes and goes
          without allocating *)
  mutable nexchanges_free : int;
}
(** Per-worker state that every connection sees. *)

and protocol = {
  begin_head : t -> Httpz.Status.t -> unit;
      (** starts a response head in [out] (HTTP/1.1: the status line, Date
          and the server's own fields) and sets [out_len] *)
  field : t -> Httpz.Header_name.t -> string -> unit;
  field_s : t -> string -> string -> unit;
  field_int : t -> Httpz.Header_name.t -> int -> unit;
  field_date : t -> Httpz.Header_name.t -> int -> unit;
  field_date_cached : t -> Httpz.Header_name.t -> Httpz.Date.Cache.t -> int -> unit;
  field_span : t -> Httpz.Header_name.t -> Httpz.Bigstring.t -> Httpz.Span.t -> unit;
      (** the handler's fields ({!Ctx.header} and the like): each checks
          its field as {!Httpz.Response}'s writers do and writes it whole
          into [out] in the protocol's own form, or raises
          ([Httpz.Response.Invalid_field], [Httpz.Response.No_space])
          having written nothing *)
  fields : t -> Httpz.Prepared_fields.t -> unit;  (** a prepared set ({!Ctx.fields}) *)
  end_head : t -> content_length:int -> chunked:bool -> unit;
      (** adds the framing fields and ends the head; decides whether the
          connection stays open after this response ([close]) and whether
          a streamed body is chunk-framed ([raw]: not) *)
  chunk : t -> int -> unit;
      (** makes room for a body piece of [n] bytes at [out_len] (growing
          [out]: nothing is written while the handler runs) and writes its
          framing *)
  last_chunk : t -> unit;  (** ends a streamed body *)
  switch : t -> unit;
      (** ends a 101 head and hands the connection over once it is sent;
          @raise Invalid_argument where the protocol cannot *)
}
(** How a response goes on the wire: the part of answering that depends on
    the protocol carrying the exchange, the whole head included (HTTP/1.1
    writes it as text, HTTP/2 as HPACK: no head is written in one form and
    read back in the other). {!Ctx} calls these and knows no protocol;
    HTTP/1.1's are {!H1_response.protocol}, HTTP/2's
    {!H2_response.protocol}. *)

and mode =
  | H1_mode  (** an HTTP/1.1 connection (every connection starts so) *)
  | H2_conn  (** an HTTP/2 connection: {!H2_session} drives it *)
  | H2_stream
      (** not a connection: the exchange of one HTTP/2 stream, whose
          connection is [h2]'s [conn] *)
  | Websocket
      (** after an accepted upgrade, once its 101 left: {!Ws} drives it,
          whose state is [session] *)
(** Which protocol's state machine drives the slot: the protocol switch
    ({!Connection}) hands the slot's events to it, and sets it when the
    connection changes protocol (the protocol's own start function writes
    it). *)

and h2 = {
  h2c : Httpz.H2_connection.t;
  mutable conn : t;  (** the connection slot it serves *)
  mutable streams : t array;  (** its exchanges, [nstreams] of them, in no order *)
  mutable nstreams : int;
  mutable ended : bool;  (** input ended or failed: close once output is flushed *)
  mutable whole_bodies : int;
      (** bytes of bodies read whole (Ctx.await_body) that its exchanges hold
          and that were credited to the connection's window: at most
          H2_exchange's budget, so one connection cannot make the worker hold
          a body per stream *)
  mutable whole_pass : int;
      (** the stream whose whole body is credited past that budget ([0]:
          none), so bodies that together exceed it still complete *)
}
(** Per-connection HTTP/2 state, taken from [h2_free] when a connection
    turns HTTP/2 and given back when it closes; it holds no I/O buffer. *)

and state =
  | Free
  | Reading_head
  | Reading_body
  | Handling  (** the handler runs, or is suspended waiting for an event *)
  | Writing
  | Lingering

and response = Idle | Head | Chunked_body | Done
(** Where the handler is in its answer: nothing yet; status line written;
    chunked head written, chunks may follow; complete. *)

and unlogged = Logged | Unlogged_request | Unlogged_unparsed
(** Whether a response waits for its access-log line: none does (or it
    was written); one does, to a parsed request; one does, to a request
    whose head could not be parsed (its line is not trusted). *)

and ext = No_ext | Ext_string | Ext_bigstring | Ext_file
(** What follows [out] on the wire. *)

and after = Then_next | Then_body | Then_close | Then_resume | Then_detach
(** What to do once [out] (and [ext]) are written: serve the next request,
    read the body announced by a [100 Continue], close, run the handler's
    [cont] (it flushed part of a streamed response), or hand the socket
    over ([upgrade]). *)

and body =
  | No_body  (** the request has none, or it is behind us *)
  | Body_ready  (** complete in memory: [body_src] at [body_off], [body_len] *)
  | Body_unread
      (** not (all) received, and the handler has not asked for it: the
          response closes the connection, which lingers to drain it *)
  | Body_wanted
      (** the handler asked for it: it is read, then the handler is called
          again *)
  | Body_streaming
      (** the handler reads it piece by piece ([Ctx.read_body]); [body_need]
          counts the Content-Length bytes not yet delivered *)
  | Body_streamed  (** streamed to its end *)
(** The request body, as far as the handler is concerned. *)

and wait =
  | Running  (** the handler runs, or ran and asked for nothing *)
  | Suspended  (** it asked to answer later ({!Ctx.suspend}) and has not returned yet *)
  | Resumed  (** its continuation came before it returned: [cont] runs when it does *)
  | Flush_wanted  (** {!Ctx.flush}: write what [out] holds, then run [cont] *)
  | Piece_wanted  (** {!Ctx.read_body}: deliver the next body piece to [cont] *)
(** What the handler waits for: at most one thing at a time. *)

and timer =
  | No_timer
  | Idle_timer
  | Header_timer
  | Body_timer
  | Write_timer
  | Linger_timer
  | Handler_timer

and tls =
  | No_tls  (** plain TCP (or the TLS session was released) *)
  | Tls_handshake  (** TLS, the handshake is not complete *)
  | Tls_http1  (** TLS, established; ALPN agreed on http/1.1, or nothing *)
  | Tls_h2  (** TLS, established; ALPN agreed on "h2": HTTP/2 from the first byte *)
(** The connection's transport as the protocols see it. *)

and t = {
  slot : int;
  sh : shared;
  mutable fd : int;  (** the backend's handle (a socket), [-1] when free *)
  mutable listener : int;
      (** which of the worker's listening sockets accepted it: it selects
          the handler, the headers and the transport *)
  mutable ssl : Openssl.ssl;
      (** the TLS transport's connection, {!Openssl.none} for plain TCP:
          the transport's alone (the protocols read [tls]) *)
  mutable tls : tls;
      (** what the transport reported of TLS ({!set_tls},
          {!tls_established}): protocols read it, never [ssl] *)
  mutable state : state;
  mutable timer : timer;
  mutable deadline : int;  (** tick at which [timer] fires *)
  (* request *)
  mutable rbuf : Httpz.Bigstring.t;
  mutable rpos : int;
  mutable rlen : int;
  mutable body_start : int;
  mutable next_pos : int;  (** where the next request starts *)
  mutable cpos : int;  (** chunked: first byte not yet decoded *)
  mutable pidx : int;
      (** the index of the parse state ({!req}, {!chunked}) of the request
          in [rbuf]: taken with [rbuf], given back with it
          ({!Parse_states.none} while there is none) *)
  mutable body_store : Httpz.Bigstring.t;
  mutable body_src : Httpz.Bigstring.t;  (** [rbuf] or [body_store] *)
  mutable body_off : int;
  mutable body_len : int;
  mutable body_need : int;  (** Content-Length bytes still to read *)
  mutable body : body;
  mutable body_started : bool;  (** body bytes had arrived with the head *)
  mutable body_credit : int;  (** bytes received not yet turned into time *)
  mutable body_deadline : int;
      (** tick by which the body must be complete; moved later only by data
          arriving at the minimum rate *)
  mutable piece_off : int;
  mutable piece_len : int;
      (** the piece of a streamed body delivered to the handler, in
          [body_src] *)
  mutable body_limit : int;  (** largest streamed body the handler accepts *)
  mutable in_buf : Httpz.Bigstring.t;
  mutable in_off : int;
  mutable in_len : int;
      (** where the transport puts the next bytes it reads
          ([H1.prepare_read] sets them) *)
  mutable head_req : bool;  (** the request is HEAD *)
  mutable served : int;  (** requests answered on this connection *)
  (* response *)
  mutable out : Httpz.Bigstring.t;
  mutable out_limit : int;  (** [length out - reserve]: handler headers end here *)
  mutable out_len : int;
  mutable out_sent : int;
  mutable resp : response;
  mutable status : Httpz.Status.t;
  mutable no_content : bool;  (** 1xx/204: no framing headers, no body *)
  mutable suppress : bool;  (** send no body bytes (HEAD, 1xx, 204, 304) *)
  mutable close : bool;  (** close after this response *)
  mutable raw : bool;  (** chunked answer to HTTP/1.0: close-delimited *)
  mutable chunks : int;  (** chunks written so far *)
  mutable ext : ext;
  mutable ext_str : string;
  mutable ext_bs : Httpz.Bigstring.t;
  mutable ext_stable : bool;  (** [ext_bs] need not be copied on a short write *)
  mutable ext_off : int;
  mutable ext_len : int;
  mutable file_fd : int;
  mutable file_close : bool;
  mutable resp_bytes : int;  (** body bytes of the response, for the log *)
  mutable sent : int;
      (** bytes of this response (head, framing, body) handed to the
          transport so far ({!Output.advance}) *)
  mutable head_len : int;
      (** the head's length among them: [sent - head_len] is what left of
          the body (and its chunk framing) *)
  mutable unlogged : unlogged;
      (** the response waits for its log line: set when it starts, cleared
          when {!H1} logs it, exactly once *)
  mutable flushed : bool;  (** part of this response already left *)
  mutable broken : bool;  (** a write failed: drop output, close after *)
  mutable held : bool;
      (** transport: the last bytes went out with [MSG_MORE] and may wait
          in the kernel for the shutdown that must follow before the
          close *)
  mutable more_output : bool;
      (** HTTP/2: more frames are ready behind what this write holds: over
          TCP it goes with [MSG_MORE], so that the kernel packs it with
          them rather than pushing each DATA frame alone; over TLS its
          records wait in user space ([unsent]) and leave with the next
          write, in one [sendmsg]. The write that follows clears it; when
          there turns out to be none, H2_session has the backend push
          what the kernel holds ({!Conn_action.Push}), and [unsent]
          becomes pending output. *)
  mutable gather : Gather.t;
      (** HTTP/2 over plain TCP: stable DATA payloads placed between the
          frames of [out] (written before [ext]); {!Gather.none} until the
          connection's first gathered write. *)
  mutable unsent : int;
      (** TLS: bytes of records the transport made but has not given to
          the kernel yet ({!Openssl.held}), as {!Output}'s walk last saw
          them: kept while [more_output] says more follow, or left by a
          write the socket did not take whole. Pending output, unless
          [more_output] is set. *)
  mutable after : after;
  mutable gen : int;
      (** changes whenever the request in progress ends (answered, or the
          connection closed): a continuation of an earlier request is
          dropped *)
  mutable wait : wait;
  mutable proto : protocol;  (** the protocol carrying the exchange *)
  mutable cont : t -> unit;  (** what runs next for the handler *)
  mutable cancels : (unit -> unit) list;
      (** run (and emptied) when the request ends early: the pending wait's
          undo (cancel its timer, remove its watch, drop its offloaded
          job), which [Ctx] takes out again as soon as the wait resumes, so
          that there is at most one of those, and the handler's own
          [Ctx.on_cancel] hooks *)
  mutable upgrade : Unix.file_descr -> string -> unit;
      (** who takes the socket after a 101 ([Then_detach]) *)
  mutable session : session;  (** [Websocket]: its state; [No_session] otherwise *)
  peer : Httpz.Bigstring.t;
  mutable peer_len : int;
  peer_ip : Bytes.t;
      (** the peer's address as 16 bytes of IPv6 (IPv4 as
          [::ffff:a.b.c.d]), valid when [peer_family] is not [0]; read by
          the address rules and per-client limits ({!Guard}) *)
  mutable peer_family : int;
      (** [4] or [6] once [peer_ip] was read for this connection ({!Ctx.peer_ip}
          reads it at first use), [0] before, [-1] when getpeername
          failed (then [peer_ip] is all zeros) *)
  mutable started_ns : int;
      (** [CLOCK_MONOTONIC] ns when the current request started (its head's
          first bytes arrived), for the access log and the status totals'
          durations; kept only when the slot has room for the peer address
          ({!timed}) or {!Totals.timed}, else [0]. *)
  mutable log_route : int;
      (** the request's access log ({!Access_log.route}, set by a handler
          that picks a site's log), [0]: the server's; cleared once logged *)
  mutable tls_version : int;
      (** the connection's TLS version as the protocol numbers it
          ([0x0304]: TLS 1.3), [-1] during the handshake, [0] for plain
          TCP; kept after the TLS session is released, until the
          connection's buffers are ({!release_all}), so that the log line
          of a cut response still has it *)
  mutable mode : mode;  (** which protocol drives the slot *)
  mutable h2 : h2 option;  (** [H2_conn]: its session; [H2_stream]: its connection's *)
  h2s : stream_state;
      (** [H2_stream]: the stream's own state (an exchange slot has one of
          its own; a connection slot shares one that is never written) *)
  mutable sets : Httpz.Prepared_fields.t array;
      (** [H2_stream]: the prepared sets ({!Ctx.fields}) among the head's
          fields, which [out] holds HPACK-encoded ({!H2_response}), in
          order: set [i]'s literals were copied to [\[set_marks.(3i),
          set_marks.(3i+1))] of [out] when its version was
          [set_marks.(3i+2)]; while the set is unchanged, [end_head]
          sends it through the connection's {!Httpz.Hpack_mirror}
          instead. [\[||\]] until the exchange's first set. *)
  mutable set_marks : int array;
  mutable nsets : int;
  mutable hooked : bool;
      (** a hook (or a request id) was registered for the current
          request: {!next_gen} has hook state to clear (the one test the
          request path pays without middleware) *)
  mutable mw : middleware;
      (** the middleware state; a shared empty one (never written) until
          the slot's first hook, then the slot's own for its life: an idle
          slot of a server without middleware costs one word for it *)
}

and middleware = {
  mutable head_hooks : (t -> unit) array;
  mutable nhead_hooks : int;
      (** middleware hooks ({!Ctx.on_head}) of the current request, the
          first [nhead_hooks] of [head_hooks]: run once, when the head is
          ended; the array is the slot's for its life (made at the first
          registration), the count is zeroed when the request ends *)
  mutable done_hooks : (t -> unit) array;
  mutable ndone_hooks : int;
      (** completion hooks ({!Ctx.on_complete}): run once, when the
          response's log line would be written ({!log_response}) or, for a
          request that ended without one, when it ends ({!next_gen}) *)
  mutable hooks_ns : int;
      (** [CLOCK_MONOTONIC] ns of the first completion hook's
          registration, [0] when none *)
  mutable done_complete : bool;
      (** while completion hooks run: the response was handed whole to the
          socket *)
  mutable request_id : string;
      (** the request's id ({!Ctx.set_request_id}), [""] when none;
          cleared with the hooks *)
  mutable route_pattern : string;
      (** the pattern of the route {!Route} ran for the request
          ({!Ctx.set_route_pattern}), written only while [hooked], [""]
          otherwise; cleared with the hooks *)
}

val reserve : int
(** [256]: bytes at the end of [out] kept for [Content-Length] /
    [Transfer-Encoding], [Connection] and the final CRLF. *)

val body_class : int
(** [65536]: the class size of the body pool. *)

val create_shared :
  server_name:string ->
  read_buffer:int ->
  write_buffer:int ->
  max_body:int ->
  header_ms:int ->
  idle_ms:int ->
  body_ms:int ->
  write_ms:int ->
  handler_ms:int ->
  headers:string ->
  listener_headers:string array ->
  keep:int ->
  shared
(** Allocates. [keep]: spare buffers each pool keeps.
    @raise Invalid_argument if [server_name] is not a valid field value. *)

val no_set : Httpz.Prepared_fields.t
(** An empty set, the filler of [sets]. *)

val timed : t -> bool
(** [timed c]: the slot was created for an access log ([~peer:true]), so
    {!H1} records when each request starts. *)

val stamp : t -> unit
(** [stamp c]: a request starts. Clears [log_route] (the route a site
    chose for the last request, which may have ended without a log line)
    and sets [started_ns] to now when {!timed} or when requests are timed
    for the status totals ({!Totals.timed}). Does not allocate. *)

val set_log_route : t -> int -> unit
(** [set_log_route c r] sets [c.log_route] (the one writer outside {!Slot}'s
    own: {!Access_log} and a site-picking handler call it). *)

val create : shared -> slot:int -> peer:bool -> t
(** [create sh ~slot ~peer] is a free slot holding no buffer ([peer]: room
    for the peer address, for the access log). Allocates. *)

val ticks : int -> int
(** [ticks ms]: timer ticks (100 ms), rounded up. *)

val tick_ms : int


val add_head_hook : t -> (t -> unit) -> unit
val add_done_hook : t -> (t -> unit) -> unit
(** For {!Ctx.on_head} and {!Ctx.on_complete}. Allocate only when the
    slot's array is full (once per slot, for up to 8 hooks). *)

val mw : t -> middleware
(** [mw c] is [c]'s own middleware state, made at the first call (the
    one allocation a slot pays for middleware in its life). Write only
    through it. *)

val has_head_hooks : t -> bool
(** Head hooks wait for the current head. Does not allocate. *)

val run_head_hooks : t -> unit
(** [run_head_hooks c] runs and forgets the head hooks (registration
    order; one that raises is logged): {!Ctx} calls it as the head ends,
    when [nhead_hooks > 0]. *)

val log_response : t -> bool -> unit
(** [log_response c complete]: the response is over; its completion
    hooks run (innermost first, [done_complete = complete]) and its access-log line
    goes out ([hooks.log]) if it waits for one, exactly once. *)

val read_scratch : t -> unit
(** The next bytes go to the scratch buffer (a lingering close drains). *)

val with_room : 'a array -> int -> 'a -> 'a array
(** [with_room a n x]: [a] if it has room beyond its first [n] elements,
    else a copy of them twice as large (filled with [x]). *)

val carrier : t -> t
(** [carrier c]: the connection slot carrying [c]'s bytes: [c] itself, or
    an HTTP/2 exchange's connection. *)

val req : t -> Httpz.Request.t
(** The parser of the request in [rbuf] (a placeholder when [rbuf] is
    empty). *)

val chunked : t -> Httpz.Chunked.t
(** Its chunk decoder. *)

val take_rbuf : t -> unit
(** [take_rbuf c] gives [c] a read buffer if it has none. *)

val head_buffer : int
(** [4096]: the size of the buffers an HTTP/2 exchange's request head takes
    when it fits (the [heads] pool), rather than a read buffer. *)

val stream_keep : int
(** [4096]: HTTP/2 exchanges (slots, head buffers, parse states) a worker
    keeps for reuse beyond its connections'. *)

val take_head_rbuf : t -> int -> unit
(** [take_head_rbuf c need]: as {!take_rbuf}, from the [heads] pool when
    [need] bytes fit there; each buffer goes back to its own pool. *)

val small_out : t -> bool
(** [out] is a {!head_buffer}-sized buffer (an HTTP/2 exchange's first);
    {!grow_out} replaces it with a full one. *)

val give_out : t -> unit
(** [give_out c] gives [out] back to its pool, empty: for a caller that
    knows no queued output refers to it any more. *)

val take_out : t -> unit
(** [take_out c] gives [c] a write buffer if it has none. *)

val release_idle : t -> unit
(** [release_idle c] gives back [rbuf] when no byte of a request is in it
    and [out] when nothing is left to write. *)

val release_all : t -> unit
(** [release_all c] gives back every buffer (the connection is closed). *)

val reset_response : t -> unit
(** [reset_response c] forgets the response (after it is written, or to
    replace a failed one), closing an owned file. *)

val set_tls : t -> Openssl.ssl -> unit
(** [set_tls c ssl]: the connection's TLS session ({!Openssl.none}: plain
    TCP, or released); a new one has its handshake to do. *)

val max_unflushed : int
(** [16 MiB]: the streamed body bytes a handler may leave waiting in
    [out] without {!Ctx.flush}, over either protocol: beyond, [Ctx.chunk]
    fails with [Invalid_argument unflushed] (one handler call cannot make
    its connection, or its stream, hold more). *)

val unflushed : string
(** The message of that failure. *)

val forget_tls : t -> unit
(** [forget_tls c] is [set_tls c Openssl.none]: for the protocols, which
    name no transport module. *)

val tls_established : t -> h2:bool -> unit
(** The TLS handshake is complete; [h2]: it agreed on "h2" by ALPN (the
    transport reports it, so the protocols never ask OpenSSL). *)

val release_file : t -> unit
(** [release_file c] closes [file_fd] if the response owns it, and forgets
    it: called however the response ends, so no fd leaks. *)

val ensure_body_store : t -> int -> unit
(** [ensure_body_store c n] makes [body_store] at least [n] bytes long
    (from the body pool; a chunked body's store doubles, up to
    [max_body]), keeping its first [body_len] bytes. *)

val release_body : t -> unit
(** [release_body c] gives [body_store] back and points [body_src] at
    [rbuf] again. Called when the request ends, however it ends; the body
    span is invalid afterwards. *)

val grow_out : t -> int -> unit
(** [grow_out c n] makes [out] at least [n] bytes (plus {!reserve}),
    keeping [\[out_sent, out_len)] (moved to offset 0). *)

val shift_to_front : Httpz.Bigstring.t -> from:int -> until:int -> int
(** [shift_to_front b ~from ~until] moves [b.{from .. until-1}] to offset 0
    and is its length: how both buffers are compacted. *)

val compact_out : t -> unit
(** [compact_out c] moves the unsent bytes of [out] to offset 0. *)

val set_timer : t -> timer -> int -> unit
(** [set_timer c kind ticks] arms [kind] to fire [ticks] ticks from now
    (plus one: the current tick is partly over). *)

val set_deadline : t -> timer -> int -> unit
(** [set_deadline c kind tick] arms [kind] to fire at [tick]. *)

val min_body_rate : int
(** [1024] bytes per second: the slowest average rate at which a request
    body may arrive, over HTTP/1.1 and HTTP/2 alike. *)

val start_body_clock : t -> unit
(** [start_body_clock c]: the body's deadline is [body_timeout] from now,
    and the Body_timer is armed at it. Once per body. *)

val body_progress : t -> int -> unit
(** [body_progress c n]: [n] more body bytes arrived; they move
    [body_deadline] on at {!min_body_rate}, never past [body_timeout] from
    now. The timer is not touched: the caller arms it at [body_deadline]
    while it waits for the body. *)

val clear_timer : t -> unit

val run_cancels : t -> unit
(** [run_cancels c] runs the request's [cancels] now and empties them (one
    that raises is logged): for a handler that failed, whose error answer
    (a 500 the server writes, [resp = Done]) is not the handler's. *)

val next_gen : t -> unit
(** [next_gen c]: the request in progress ended (answered, upgraded, or
    the connection closed): [gen] changes, so its continuations are
    dropped, and its [cancels] are emptied: run (one that raises is
    logged) unless the handler's response was complete ([resp = Done]):
    call it before {!reset_response}. Allocates only when there are
    cancels. Then, if hooks were registered ([hooked]), completion hooks
    that have not run run ([done_complete]: [resp = Done] and not
    [broken]), and the hook state is cleared: nothing registered for one
    request survives into the next on the slot. *)

val compact_rbuf : t -> unit
(** [compact_rbuf c] moves the unconsumed bytes [\[rpos, rlen)] of [rbuf] to
    offset 0 (no span into [rbuf] may be live). *)

val read_to_rbuf : t -> unit
(** [read_to_rbuf c]: the next bytes go at the end of [rbuf] (taken if
    absent, compacted first): sets [in_buf], [in_off], [in_len]. How a
    protocol that reads a byte stream (HTTP/2, WebSocket) asks for more. *)
