(** A connection slot: everything one client connection needs, allocated
    once and reused for every connection the slot serves.

    Internal to the server: {!Loop} drives the state machine, {!Ctx} is
    the handler's view of the same record ([Ctx.t = Conn.t]). The fields are
    exposed so both can read and write them without accessor calls.

    {2 Buffers}
    - [rbuf] (the read buffer, [read_buffer] bytes) holds the current
      request head at [\[rpos, rpos + head_length)], possibly its body, and
      any pipelined bytes after it, up to [rlen]. Request spans point into
      it, so it is only compacted (bytes moved to offset 0) between requests
      or, within a request, followed by a re-parse of the head.
    - [out] holds the response head and small bodies; [\[out_sent, out_len)]
      is still to be written. Its last {!reserve} bytes are kept for the
      framing headers the server adds after the handler's own.
    - [body_store] is taken from the worker's {!Buffer_pool} for a body that
      does not fit in [rbuf] behind its head (and for every chunked body),
      once the handler asked for it, and given back by {!release_body} when
      the request ends: no connection holds body memory between requests,
      and an idle worker holds at most the pool's few kept 64 KiB
      buffers. *)

type shared = {
  date : Httpz.Date.Cache.t;
  server_line : string;  (** ["Server: <name>\r\n"] *)
  mutable now : int;  (** wall-clock seconds of this loop turn *)
  mutable draining : bool;  (** graceful shutdown: every response closes *)
  empty : Httpz.Bigstring.t;  (** a zero-length buffer, for unset fields *)
  write_buffer : int;
  max_body : int;
  pool : Buffer_pool.t;  (** request bodies *)
}
(** Per-worker state that every connection sees. *)

type state = Free | Reading_head | Reading_body | Writing | Lingering

type response = Idle | Head | Chunked_body | Done
(** Where the handler is in its answer: nothing yet; status line written;
    chunked head written, chunks may follow; complete. *)

type ext = No_ext | Ext_string | Ext_bigstring | Ext_file
(** What follows [out] on the wire. *)

type after = Then_next | Then_body | Then_close
(** What to do once [out] (and [ext]) are written: serve the next request,
    read the body announced by a [100 Continue], or close. *)

type body =
  | No_body  (** the request has none, or it is behind us *)
  | Body_ready  (** complete in memory: [body_src] at [body_off], [body_len] *)
  | Body_unread
      (** not (all) received, and the handler has not asked for it: the
          response closes the connection, which lingers to drain it *)
  | Body_wanted  (** the handler asked for it: the loop reads it, then calls
                     the handler again *)
(** The request body, as far as the handler is concerned. *)

type timer = No_timer | Idle_timer | Header_timer | Body_timer | Write_timer | Linger_timer

type t = {
  slot : int;
  sh : shared;
  mutable fd : int;  (** the socket, [-1] when the slot is free *)
  mutable state : state;
  mutable timer : timer;
  mutable events : int;  (** the epoll interest currently registered *)
  (* request *)
  rbuf : Httpz.Bigstring.t;
  mutable rpos : int;
  mutable rlen : int;
  mutable body_start : int;
  mutable next_pos : int;  (** where the next request starts *)
  mutable cpos : int;  (** chunked: first byte not yet decoded *)
  req : Httpz.Request.t;
  chunked : Httpz.Chunked.t;
  mutable body_store : Httpz.Bigstring.t;
  mutable body_src : Httpz.Bigstring.t;  (** [rbuf] or [body_store] *)
  mutable body_off : int;
  mutable body_len : int;
  mutable body_need : int;  (** Content-Length bytes still to read *)
  mutable body : body;
  mutable body_started : bool;  (** body bytes had arrived with the head *)
  mutable body_deadline : int;
      (** timer tick by which the body must be complete; moved later only
          by data arriving at the minimum rate *)
  mutable body_credit : int;  (** bytes received not yet turned into time *)
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
  mutable flushed : bool;  (** part of this response already left *)
  mutable broken : bool;  (** a write failed: drop output, close after *)
  mutable held : bool;
      (** the last bytes went out with [MSG_MORE] and may be waiting in the
          kernel for the shutdown that must follow before the close *)
  mutable after : after;
  peer : Httpz.Bigstring.t;
  mutable peer_len : int;
}

val reserve : int
(** [256]: bytes at the end of [out] kept for [Content-Length] /
    [Transfer-Encoding], [Connection] and the final CRLF. *)

val create_shared : server_name:string -> write_buffer:int -> max_body:int -> shared
(** Allocates.
    @raise Invalid_argument if [server_name] is not a valid field value. *)

val create : shared -> slot:int -> read_buffer:int -> peer:bool -> t
(** [create sh ~slot ~read_buffer ~peer] is a free slot with its buffers
    ([peer]: room for the peer address, for the access log). Allocates. *)

val reset_response : t -> unit
(** [reset_response c] forgets the response (after it is written, or to
    replace a failed one), closing an owned file. Shrinks [out] back to
    [write_buffer] when a chunked body grew it past 1 MiB. *)

val release_file : t -> unit
(** [release_file c] closes [file_fd] if the response owns it, and forgets
    it: called however the response ends, so no fd leaks. *)

val ensure_body_store : t -> int -> unit
(** [ensure_body_store c n] makes [body_store] at least [n] bytes long
    (taking it from the pool; a chunked body's store doubles, up to
    [max_body]), keeping its first [body_len] bytes. *)

val release_body : t -> unit
(** [release_body c] gives [body_store] back to the pool and points
    [body_src] at [rbuf] again. Called when the request ends, however it
    ends; the body span is invalid afterwards. *)

val grow_out : t -> int -> unit
(** [grow_out c n] makes [out] at least [n] bytes (plus {!reserve}),
    keeping [\[out_sent, out_len)] (moved to offset 0). Allocates. *)

val compact_out : t -> unit
(** [compact_out c] moves the unsent bytes of [out] to offset 0. *)
