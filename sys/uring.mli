(** io_uring through Debian's liburing ([uring_stubs.c]): the submission
    and completion rings of the completion backend.

    One ring per process ({!setup} once in each worker, after fork; {!exit}
    at the end). Preparing a request (every function but {!submit_wait},
    {!reap}, {!copy_buf} and {!recycle}) makes no system call: requests
    queue up and go to the kernel together at the next {!submit_wait}, one
    [io_uring_enter] per loop turn. (When the submission queue is full, the
    queued requests are submitted first: the only other system call.)

    Requests carry a user-data integer chosen by the caller, reported back
    with their completion. Results are integers: [>= 0], or [-errno].

    {2 Received bytes}
    {!recv} asks for every byte that arrives on a socket, into the ring's
    provided buffers ([nbufs] buffers of [buf_size] bytes): the kernel picks
    one only when data arrives, so an idle connection with a receive armed
    holds no buffer. A completion names the buffer ({!buffer_id} of its
    flags); the caller copies the bytes out with {!copy_buf} and gives the
    buffer back with {!recycle}. When none is free the receive ends with
    [-ENOBUFS].

    {2 Ownership}
    Bytes given to {!send2} are read by the kernel until the completion:
    the caller keeps the bigstrings alive and unchanged until then (never
    OCaml strings, which the GC may move). Each connection slot has one
    message header here, so a slot has at most one send in flight. *)

val setup : entries:int -> slots:int -> nbufs:int -> buf_size:int -> int
(** [0], or [-errno]: [-enosys] (no io_uring), [-eperm] (forbidden: a
    seccomp filter, [kernel.io_uring_disabled]), [-enomem], [-ebusy] (a
    ring is already set up), [-einval] ([nbufs] not a power of two up to
    32768). *)

val exit : unit -> unit

external accept : (int[@untagged]) -> (int[@untagged]) -> (int[@untagged])
  = "httpz_uring_accept_byte" "httpz_uring_accept"
  [@@noalloc]
(** [accept listen_fd ud]: multishot accept; every connection is one
    completion whose result is the new descriptor (non-blocking,
    close-on-exec). Ends (no {!more} flag) on an error. *)

external recv : (int[@untagged]) -> (int[@untagged]) -> (int[@untagged])
  = "httpz_uring_recv_byte" "httpz_uring_recv"
  [@@noalloc]
(** [recv fd ud]: multishot receive into provided buffers: each completion
    is a byte count ([0]: end of stream) in buffer {!buffer_id}. *)

external send2 :
  (int[@untagged]) -> (int[@untagged]) ->
  Httpz.Bigstring.t -> (int[@untagged]) -> (int[@untagged]) ->
  Httpz.Bigstring.t -> (int[@untagged]) -> (int[@untagged]) ->
  (int[@untagged]) -> (int[@untagged]) -> (int[@untagged])
  = "httpz_uring_send2_byte" "httpz_uring_send2"
  [@@noalloc]
(** [send2 slot fd b1 off1 len1 b2 off2 len2 more ud]: sendmsg of two
    spans ([MSG_NOSIGNAL], and [MSG_MORE] when [more <> 0]); the completion
    is the count sent. *)

external poll : (int[@untagged]) -> (int[@untagged]) -> (int[@untagged]) -> (int[@untagged]) -> (int[@untagged])
  = "httpz_uring_poll_byte" "httpz_uring_poll"
  [@@noalloc]
(** [poll fd mask multishot ud]: readiness of [fd] ([POLLIN], [POLLOUT]
    masks); multishot when [multishot <> 0]. *)

external cancel : (int[@untagged]) -> (int[@untagged]) = "httpz_uring_cancel_byte" "httpz_uring_cancel"
  [@@noalloc]

(** [cancel ud] cancels every request with user data [ud]; reports nothing
    itself on success. *)

external cancel_fd : (int[@untagged]) -> (int[@untagged])
  = "httpz_uring_cancel_fd_byte" "httpz_uring_cancel_fd"
  [@@noalloc]
(** Cancels every request on [fd] (each then completes with
    [-ECANCELED]); reports nothing itself on success. *)

val submit_wait : timeout_ns:int -> int
(** Submits what is queued and waits for at least one completion, at most
    [timeout_ns] (negative: no limit; [0]: no wait): the number of
    completions ready, or [-errno]. Other threads run while it waits. *)

external reap : int array -> int array -> int array -> (int[@untagged])
  = "httpz_uring_reap_byte" "httpz_uring_reap"
  [@@noalloc]
(** [reap ud res flags] moves up to [min 256 (length ud)] completions into
    the three arrays and is their count. *)

external copy_buf :
  (int[@untagged]) -> (int[@untagged]) -> Httpz.Bigstring.t -> (int[@untagged]) -> (int[@untagged]) ->
  (int[@untagged])
  = "httpz_uring_copy_buf_byte" "httpz_uring_copy_buf"
  [@@noalloc]
(** [copy_buf bid off dst dst_off len] copies bytes of provided buffer
    [bid] out: [len], or [-einval] for a span outside either buffer. *)

external recycle : (int[@untagged]) -> (int[@untagged]) = "httpz_uring_recycle_byte" "httpz_uring_recycle"
  [@@noalloc]
(** Gives provided buffer [bid] back to the kernel. *)

val more : int
(** Completion flag: the multishot request goes on. *)

val has_buffer : int
(** Completion flag: a provided buffer holds the data. *)

val buffer_id : int -> int
(** The provided buffer of a completion's flags. *)

val pollin : int
val pollout : int
