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

val reserve_port : host:string -> port:int -> int
(** [reserve_port ~host ~port] is a TCP socket bound to [host]:[port] with
    [SO_REUSEADDR] and [SO_REUSEPORT] but {e not} listening, or [-errno]
    ([-eaddrinuse], [-einval] for an unparsable host, …). It holds the port
    (and, with [port = 0], picks one: read it with {!Syscall.local_port})
    for a group of [SO_REUSEPORT] listeners without receiving connections
    itself. Start-up only. *)
