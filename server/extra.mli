(** Syscalls the event loop needs beyond {!Syscall}, with its conventions:
    results are immediate ints, negative = [-errno]; the [[@@noalloc]]
    externals neither allocate nor raise. Linux only. *)

val cpu_count : unit -> int
(** [cpu_count ()] is the number of CPUs this process may run on
    (sched_getaffinity, as [nproc] counts: [taskset] is honoured), at least
    [1]. *)

val signalfd : int list -> int
(** [signalfd sigs] is a non-blocking, close-on-exec signalfd receiving the
    OCaml signals [sigs] (e.g. [Sys.sigterm]), or [-errno]. Block the same
    signals first ([Unix.sigprocmask]) or they are delivered as usual.
    Start-up only. *)

external signalfd_read : (int[@untagged]) -> (int[@untagged])
  = "httpz_extra_signalfd_read_byte" "httpz_extra_signalfd_read"
  [@@noalloc]
(** [signalfd_read fd] takes one pending signal from signalfd [fd]. A
    positive result [r] is the signal [-r] in OCaml's numbering ([Sys]
    signals are negative: [r = - Sys.sigterm] for SIGTERM); a negative result
    is [-errno] ([-eagain] when none is pending). *)

external peer_address :
  (int[@untagged]) -> Httpz.Bigstring.t -> (int[@untagged]) -> (int[@untagged])
  = "httpz_extra_peer_address_byte" "httpz_extra_peer_address"
  [@@noalloc]
(** [peer_address fd buf off] writes the peer's numeric address of socket
    [fd] (getpeername, inet_ntop; an IPv4-mapped IPv6 address as IPv4) at
    [off] and is its length (at most {!peer_address_max}), or [-errno]
    ([-einval] when [buf] has less than {!peer_address_max} bytes from
    [off]). *)

val peer_address_max : int
(** [46]: INET6_ADDRSTRLEN. *)

(** {1 Sending on a socket}

    [send], [sendv2] and [sendv_bs_string] write one or two spans with one
    send(2)/sendmsg(2), as {!Syscall.write}/{!Syscall.writev2} do (same
    results: bytes written or [-errno]; [-einval] for a span outside its
    buffer), with [MSG_NOSIGNAL] and, when their last argument is non-zero,
    [MSG_MORE]: the kernel may hold the bytes, as under [TCP_CORK], for the
    data that follows at once despite [TCP_NODELAY]. The event loop uses it
    for a response head followed by a sendfile body (one packet instead of
    two), and for the last bytes before it shuts the connection down (they
    leave together with the FIN). So a [MSG_MORE] send must be followed at
    once by more data or by {!Syscall.shutdown_write}, never by waiting. *)

external send :
  (int[@untagged]) -> Httpz.Bigstring.t -> (int[@untagged]) -> (int[@untagged]) -> (int[@untagged]) ->
  (int[@untagged])
  = "httpz_extra_send_byte" "httpz_extra_send"
  [@@noalloc]
(** [send fd buf off len more] *)

external sendv2 :
  (int[@untagged]) ->
  Httpz.Bigstring.t -> (int[@untagged]) -> (int[@untagged]) ->
  Httpz.Bigstring.t -> (int[@untagged]) -> (int[@untagged]) ->
  (int[@untagged]) -> (int[@untagged])
  = "httpz_extra_sendv2_byte" "httpz_extra_sendv2"
  [@@noalloc]
(** [sendv2 fd b1 off1 len1 b2 off2 len2 more]: a response head and a
    bigstring body in one call. *)

external sendv_bs_string :
  (int[@untagged]) ->
  Httpz.Bigstring.t -> (int[@untagged]) -> (int[@untagged]) ->
  string -> (int[@untagged]) -> (int[@untagged]) ->
  (int[@untagged]) -> (int[@untagged])
  = "httpz_extra_sendv_bs_string_byte" "httpz_extra_sendv_bs_string"
  [@@noalloc]
(** [sendv_bs_string fd b boff blen s soff slen more]: a response head and a
    string body, the string not copied. *)

val reserve_port : host:string -> port:int -> int
(** [reserve_port ~host ~port] is a TCP socket bound to [host]:[port] with
    [SO_REUSEADDR] and [SO_REUSEPORT] but {e not} listening, or [-errno]
    ([-eaddrinuse], [-einval] for an unparsable host, …). It holds the port
    (and, with [port = 0], picks one: read it with {!Syscall.local_port})
    for a group of [SO_REUSEPORT] listeners without receiving connections
    itself. Start-up only. *)
