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

external fd_path :
  (int[@untagged]) -> Httpz.Bigstring.t -> (int[@untagged]) -> (int[@untagged]) -> (int[@untagged])
  = "httpz_extra_fd_path_byte" "httpz_extra_fd_path"
  [@@noalloc]
(** [fd_path fd buf off cap] writes the absolute path the kernel resolved
    when [fd] was opened (readlink of [/proc/self/fd/FD]: symlinks
    followed, so what was opened, not what was asked) at [off], at most
    [cap] bytes, and is its length, or [-errno] ([-enametoolong] when it
    does not fit, [-einval] for a bad range, [-enoent] without /proc). *)

external peer_ip : (int[@untagged]) -> Bytes.t -> (int[@untagged])
  = "httpz_extra_peer_ip_byte" "httpz_extra_peer_ip"
  [@@noalloc]
(** [peer_ip fd b] writes the peer address of socket [fd] into [b.(0..15)]
    as IPv6 bytes, network order (an IPv4 peer as [::ffff:a.b.c.d]), and is
    [4] (an IPv4 peer, mapped or not) or [6], or [-errno] ([-einval] when
    [b] is shorter than 16 bytes, [-eafnosupport] for a socket of another
    family). For address rules and per-client limits: no text, no
    allocation. *)

val peer_address_max : int
(** [46]: INET6_ADDRSTRLEN. *)


external gc_marking : unit -> bool = "httpz_extra_gc_marking" [@@noalloc]
(** [gc_marking ()]: the major GC is in its marking phase (not a syscall:
    it reads the runtime's phase). A program that stopped allocating stays
    in the phase it was in; in this one each [caml_modify] also darkens
    the value it overwrites. *)

external open_log : string -> create:bool -> mode:int -> int = "httpz_extra_open_log" [@@noalloc]
(** [open_log path ~create ~mode] opens [path] for appending with
    [O_NOFOLLOW | O_NOCTTY | O_CLOEXEC | O_NONBLOCK] (a symlink as the last
    component is never followed: [-eloop]; a FIFO without a reader is not
    waited for). [~create:true] adds [O_CREAT | O_EXCL]: only a file this
    call creates (with [mode], less the umask), [-eexist] when there is
    one. The descriptor or [-errno] ([-einval] for a path holding a NUL).
    Start-up, reloads and SIGUSR1 only (it may block on a slow disk). *)
