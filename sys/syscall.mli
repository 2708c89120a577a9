(** Linux syscalls for the httpz server, one thin stub per syscall.

    This is the server's only contact with the kernel. Each function wraps
    exactly one system call (noted in its description) and adds no policy:
    the event loop decides what to do with each outcome.

    {1 Conventions}

    {b Results are immediate ints.} A non-negative result is the syscall's
    success value (an fd, a byte count, [0]). A negative result is [-errno],
    so [read fd buf off len = -eagain] is how an empty non-blocking socket
    answers. Nothing on the fast path raises, so EAGAIN costs no exception
    and no allocation. Compare results against the constants below
    ({!eagain}, {!econnreset}, …), which are read from the C headers at
    start-up rather than written down here. {!error_message} turns a result
    into text for logs.

    {b EINTR is not restarted.} The stubs are thin: an interrupted call
    returns [-eintr] and the caller retries. Non-blocking sockets and files
    practically never see it; {!epoll_wait} with a timeout does.

    {b No allocation.} Every [external] marked [[@@noalloc]] is a plain C
    call: its [int] arguments are passed untagged, it does not allocate on
    the OCaml heap, raise, or release the runtime lock (so these calls must
    not block: use them on non-blocking fds, and regular files). The
    functions that allocate say so; they are meant for start-up or logging.
    {!epoll_wait} is the one blocking call: it releases the runtime lock
    while it sleeps and still allocates nothing.

    {b File descriptors} are plain [int]s ({!fd}), not [Unix.file_descr],
    so they pass untagged. Every fd created here has [O_CLOEXEC], and every
    socket [O_NONBLOCK].

    {b Buffers} are caller-owned {!Httpz.Bigstring.t}s, addressed by
    [off]/[len]. The stubs check that the span lies inside the buffer and
    return [-einval] otherwise; they never keep a reference to the buffer
    after returning.

    {b Signals.} [write] and [sendfile] on a socket whose peer has
    gone raise [SIGPIPE], which kills the process by default. Call
    {!ignore_sigpipe} once at start-up; those calls then return [-epipe].

    Linux only (epoll, accept4, sendfile, openat2, prctl). *)

(** {1 File descriptors} *)

type fd = int
(** A kernel file descriptor. *)

external fd_of_unix : Unix.file_descr -> fd = "%identity"
(** [fd_of_unix u] is the descriptor number of [u]. On Unix, OCaml's
    [Unix.file_descr] is implemented as [int] (it is abstract only to keep
    Windows handles out), so this is the identity and costs nothing; it does
    not transfer ownership. Not valid on Windows, which httpz does not
    support. *)

external unix_of_fd : fd -> Unix.file_descr = "%identity"
(** [unix_of_fd fd] is [fd] as a [Unix.file_descr], for handing an fd to
    the [Unix] library (e.g. [Unix.connect] in tests). The identity, as for
    {!fd_of_unix}. *)

(** {1 Error numbers}

    Positive errno values; a failed call returns their negation. *)

val eagain : int
(** Non-blocking call would block ([EWOULDBLOCK] is the same on Linux). *)

val eintr : int
(** Interrupted by a signal: retry. *)

val econnreset : int
(** Peer reset the connection. *)

val econnaborted : int
(** [accept4]: a queued connection was aborted; accept the next. *)

val epipe : int
(** Writing to a connection the peer has closed ([SIGPIPE] ignored). *)

val emfile : int
(** Per-process fd limit reached (see {!raise_nofile_limit}). *)

val enfile : int
(** System-wide fd limit reached. *)

val enobufs : int
(** Out of socket buffer memory. *)

val enomem : int
(** Out of kernel memory. *)

val enoent : int
(** No such file. *)

val eacces : int
(** Permission denied. *)

val eperm : int
(** Operation not permitted. *)

val eloop : int
(** A symlink where none is allowed, or too many. *)

val exdev : int
(** [openat2_beneath]: resolution would leave the root directory. *)

val enotdir : int
(** A path component is not a directory. *)

val eisdir : int
(** Is a directory. *)

val enxio : int
(** No such device (e.g. opening a socket file). *)

val einval : int
(** Invalid argument, including a span outside its buffer. *)

val ebadf : int
(** Not an open file descriptor. *)

val enametoolong : int
(** Path or component too long. *)

val enosys : int
(** Syscall not implemented by this kernel. *)

val eaddrinuse : int
(** [socket_listen]: address already in use. *)

val enotconn : int
(** Socket not connected. *)

val enotsock : int
(** Not a socket. *)

val eexist : int
(** [epoll_ctl_add]: fd already registered. *)

val etimedout : int
(** Connection timed out. *)

val eproto : int
(** Protocol error (may be returned by [accept4]). *)

val ecanceled : int
(** An io_uring request was cancelled. *)

val error_message : int -> string
(** [error_message n] describes errno [abs n] as ["NAME: strerror text"]
    (e.g. ["ECONNRESET: Connection reset by peer"]), or ["errno N: text"]
    for errnos without a constant here. Accepts a [-errno] result as is.
    Allocates: for logs only. *)

(** {1 Sockets} *)

val socket_listen : host:string -> port:int -> backlog:int -> reuseport:bool -> int
(** [socket_listen ~host ~port ~backlog ~reuseport] is a listening TCP
    socket bound to [host]:[port], or [-errno]. [host] is a numeric IPv4
    ([127.0.0.1], [0.0.0.0]) or IPv6 ([::1], [::]) address; names are not
    resolved. [port = 0] picks a free port (read it with {!local_port}).
    Sets [SO_REUSEADDR], and [SO_REUSEPORT] when [reuseport] (so several
    worker processes can each listen on the port and the kernel spreads
    connections across them). An IPv6 socket is [IPV6_V6ONLY] (IPv4
    clients are not mapped onto it), so [::] and [0.0.0.0] can be bound
    on the same port at once. The socket is [O_NONBLOCK | O_CLOEXEC].
    Syscalls: socket, setsockopt, bind ({!socket_bind}), listen ({!listen});
    the socket is closed again if a later step fails.
    Errors: [-einval] (unparsable [host], [port] outside [0, 65535], NUL in
    [host]), [-eaddrinuse], [-eacces] (privileged port), [-emfile]. Start-up
    only; does not allocate. *)

external socket_bind : host:string -> port:int -> reuseport:bool -> int = "httpz_socket_bind"
(** [socket_bind ~host ~port ~reuseport] is {!socket_listen} without the
    [listen(2)]: a bound, non-blocking TCP socket that accepts no connection
    yet, so options that accepted sockets inherit ({!sockopt}) can be set
    before the first client can arrive; then {!listen}. Same errors. *)

external listen : (int[@untagged]) -> (int[@untagged]) -> (int[@untagged])
  = "httpz_listen_byte" "httpz_listen"
  [@@noalloc]
(** [listen fd backlog]: [0] or [-errno] ([-einval] for a negative
    [backlog]). *)

val socket_listen_exn : host:string -> port:int -> backlog:int -> reuseport:bool -> fd
(** As {!socket_listen}, raising [Failure] with the address and
    {!error_message} on error. Allocates only on error. *)

external local_port : (int[@untagged]) -> (int[@untagged])
  = "httpz_local_port_byte" "httpz_local_port"
  [@@noalloc]
(** [local_port fd] is the local TCP port of socket [fd] (getsockname), or
    [-errno]: [-ebadf], [-einval] for a socket that is not IPv4/IPv6. *)

external accept4 : (int[@untagged]) -> (int[@untagged])
  = "httpz_accept4_byte" "httpz_accept4"
  [@@noalloc]
(** [accept4 lfd] is a new connection's fd, already [O_NONBLOCK |
    O_CLOEXEC], or [-errno]. The peer address is not fetched.
    Errors the loop must expect: [-eagain] (queue empty: stop accepting until
    the next readiness), [-econnaborted] and [-eproto] (that connection died;
    accept the next), [-emfile]/[-enfile]/[-enobufs]/[-enomem] (out of
    resources: stop accepting for a while, or the listening socket stays
    ready and the loop spins), [-eintr]. *)

type sockopt =
  | Tcp_nodelay
      (** [TCP_NODELAY], [0]/[1]: a response written in one call leaves at
          once instead of waiting for the peer's ACK (Nagle). *)
  | Tcp_notsent_lowat
      (** [TCP_NOTSENT_LOWAT], bytes: the socket counts as writable (epoll,
          and for how much one write or sendfile takes) only while less than
          this much written data is still unsent. *)
  | Tcp_defer_accept
      (** [TCP_DEFER_ACCEPT], seconds, on a listening socket: {!accept4}
          returns a connection only once its first data has arrived (or the
          time has passed). *)
(** The socket options httpz sets. On Linux a connection returned by
    {!accept4} inherits [Tcp_nodelay] and [Tcp_notsent_lowat] from its
    listening socket, so setting them there once covers every connection. *)

external setsockopt : (int[@untagged]) -> sockopt -> (int[@untagged]) -> (int[@untagged])
  = "httpz_setsockopt_byte" "httpz_setsockopt"
  [@@noalloc]
(** [setsockopt fd opt v] sets the integer option [opt] to [v]: [0] or
    [-errno] ([-ebadf], [-enotsock], [-einval] for a value outside C's
    [int], [ENOPROTOOPT] for a TCP option on a socket that is not TCP). *)

external getsockopt : (int[@untagged]) -> sockopt -> (int[@untagged])
  = "httpz_getsockopt_byte" "httpz_getsockopt"
  [@@noalloc]
(** [getsockopt fd opt] is the option's current value (never negative), or
    [-errno] as for {!setsockopt}. *)

external shutdown_write : (int[@untagged]) -> (int[@untagged])
  = "httpz_shutdown_write_byte" "httpz_shutdown_write"
  [@@noalloc]
(** [shutdown_write fd] sends FIN (shutdown [SHUT_WR]) while leaving the
    read side open, for a lingering close: the server stops writing, then
    drains what the client still sends so the kernel does not answer it with
    RST and destroy the response in flight. [0], or [-enotconn], [-ebadf]. *)

external close : (int[@untagged]) -> (int[@untagged])
  = "httpz_close_byte" "httpz_close"
  [@@noalloc]
(** [close fd] releases [fd] (close). [0], or [-ebadf], [-eintr], [-eio].
    On Linux the fd is released even when [close] reports an error, so never
    retry it: the number may already belong to a new file. Closing an fd
    also removes it from every epoll set that holds no other duplicate. *)

(** {1 Reading and writing} *)

external read :
  (int[@untagged]) -> Httpz.Bigstring.t -> (int[@untagged]) -> (int[@untagged]) -> (int[@untagged])
  = "httpz_read_byte" "httpz_read"
  [@@noalloc]
(** [read fd buf off len] reads at most [len] bytes into [buf] at [off]
    (read(2)). The result is the count read ([0] = end of stream, the peer
    closed its write side) or [-errno]: [-eagain] (nothing to read now),
    [-econnreset], [-eintr], [-ebadf], [-einval] (span outside [buf]).
    Does not release the runtime lock: use it on non-blocking fds or regular
    files. *)

external write :
  (int[@untagged]) -> Httpz.Bigstring.t -> (int[@untagged]) -> (int[@untagged]) -> (int[@untagged])
  = "httpz_write_byte" "httpz_write"
  [@@noalloc]
(** [write fd buf off len] writes at most [len] bytes of [buf] from [off]
    (write(2)). The result is the count written, possibly short (the caller
    keeps the rest and retries when the fd is writable again), or [-errno]:
    [-eagain] (socket buffer full), [-epipe] and [-econnreset] (peer gone),
    [-eintr], [-einval]. *)

(** {2 Sending on a socket}

    [send], [sendv2] and [sendv_string] write one or two spans with one
    send(2)/sendmsg(2), with the results of {!write} (bytes written,
    possibly fewer than asked and ending inside either span, or [-errno];
    [-einval] for a span outside its buffer, before any syscall; either
    length may be [0]). They pass [MSG_NOSIGNAL] and, when their last argument is
    non-zero, [MSG_MORE]: the kernel may hold the bytes, as under
    [TCP_CORK], for what follows at once despite [TCP_NODELAY]. The event
    loop passes it for a response head followed by a sendfile body (one
    packet instead of two) and for the last bytes before it shuts the
    connection down (they leave in the packet that carries the FIN). A
    [MSG_MORE] send must be followed at once by more data or by
    {!shutdown_write}, never by waiting. *)

external send :
  (int[@untagged]) -> Httpz.Bigstring.t -> (int[@untagged]) -> (int[@untagged]) -> (int[@untagged]) ->
  (int[@untagged])
  = "httpz_send_byte" "httpz_send"
  [@@noalloc]
(** [send fd buf off len more] *)

external sendv2 :
  (int[@untagged]) ->
  Httpz.Bigstring.t -> (int[@untagged]) -> (int[@untagged]) ->
  Httpz.Bigstring.t -> (int[@untagged]) -> (int[@untagged]) ->
  (int[@untagged]) -> (int[@untagged])
  = "httpz_sendv2_byte" "httpz_sendv2"
  [@@noalloc]
(** [sendv2 fd b1 off1 len1 b2 off2 len2 more]: a response head and a
    bigstring body in one call. *)

external sendv_gather :
  (int[@untagged]) ->
  Httpz.Bigstring.t -> (int[@untagged]) -> (int[@untagged]) ->
  Httpz.Bigstring.t array -> int array -> (int[@untagged]) -> (int[@untagged]) ->
  (int[@untagged]) -> (int[@untagged])
  = "httpz_sendv_gather_byte" "httpz_sendv_gather"
  [@@noalloc]
(** [sendv_gather fd out sent out_len bufs meta first count more]: one
    sendmsg of [out\[sent, out_len)] with pieces [first .. count-1] of
    [bufs] inserted in it: piece [i] is [len] bytes of [bufs.(i)] from
    [off], placed before [out]'s byte [pos], where [meta.(3i)], [meta.(3i+1)]
    and [meta.(3i+2)] are [pos], [off] and [len]. Positions must not
    decrease and start at or after [sent]; at most 16 pieces. *)

external sendv_string :
  (int[@untagged]) ->
  Httpz.Bigstring.t -> (int[@untagged]) -> (int[@untagged]) ->
  string -> (int[@untagged]) -> (int[@untagged]) ->
  (int[@untagged]) -> (int[@untagged])
  = "httpz_sendv_string_byte" "httpz_sendv_string"
  [@@noalloc]
(** [sendv_string fd b boff blen s soff slen more]: a response head and a
    string body, the string not copied. *)

external pread :
  (int[@untagged]) -> Httpz.Bigstring.t -> (int[@untagged]) -> (int[@untagged]) ->
  (int[@untagged]) -> (int[@untagged])
  = "httpz_pread_byte" "httpz_pread"
  [@@noalloc]

(** [pread fd buf off len file_off] reads at most [len] bytes of file [fd]
    at byte [file_off] into [buf] at [off], without moving [fd]'s position
    (pread(2)): the count, [0] at end of file, or [-errno] ([-einval] for a
    span outside [buf] or a negative [file_off], [-eintr], [-eio]). How a
    file body is fed to a transport that encrypts in user space. *)

external sendfile :
  (int[@untagged]) -> (int[@untagged]) -> (int[@untagged]) -> (int[@untagged]) -> (int[@untagged])
  = "httpz_sendfile_byte" "httpz_sendfile"
  [@@noalloc]
(** [sendfile out_fd in_fd offset count] copies at most [count] bytes of
    file [in_fd], starting at byte [offset], to socket [out_fd] inside the
    kernel (sendfile(2)): no copy through user space. [in_fd]'s own file
    position is not used or changed: the caller keeps the offset and
    advances it by the result. The result is the count sent ([0] at end of
    file, or when [count = 0]) or [-errno]: [-eagain] (socket buffer full),
    [-epipe], [-econnreset], [-einval] (negative [offset] or [count], or an
    [in_fd] that cannot be mmapped), [-eintr]. The kernel sends at most
    [0x7ffff000] bytes per call. *)

(** {1 epoll}

    A readiness queue. Each registered fd carries a caller-chosen integer
    [token] (typically the fd itself or a connection slot index) that
    {!epoll_wait} hands back with the ready event mask. *)

val epollin : int
(** Readable (or a pending connection on a listening socket). *)

val epollout : int
(** Writable. *)

val epollerr : int
(** Error condition; always reported, need not be requested. *)

val epollhup : int
(** Hang-up; always reported. *)

val epollrdhup : int
(** Peer closed its write side (half-close). *)

val epollpri : int
(** Urgent/priority data. *)

val epollet : int
(** Edge-triggered: report a change of state once, not the state. *)

val epolloneshot : int
(** Disarm the fd after one event, until {!epoll_ctl_mod}. *)

val epollexclusive : int
(** Wake one of several epoll sets waiting on the same fd ([epoll_ctl_add] only). *)


external epoll_create : unit -> (int[@untagged])
  = "httpz_epoll_create_byte" "httpz_epoll_create"
  [@@noalloc]
(** [epoll_create ()] is a new epoll fd ([EPOLL_CLOEXEC]) or [-errno]:
    [-emfile], [-enfile], [-enomem]. *)

external epoll_ctl_add :
  (int[@untagged]) -> (int[@untagged]) -> (int[@untagged]) -> (int[@untagged]) -> (int[@untagged])
  = "httpz_epoll_ctl_add_byte" "httpz_epoll_ctl_add"
  [@@noalloc]
(** [epoll_ctl_add epfd fd events token] registers [fd] in [epfd] for the
    union [events] of [epoll*] flags, tagged with [token] (epoll_ctl
    [EPOLL_CTL_ADD]). [0] or [-errno]: [-eexist] if already
    registered, [-ebadf], [-eperm] (fd does not support epoll, e.g. a
    regular file), [-enomem], [ENOSPC] (per-user watch limit). *)

external epoll_ctl_mod :
  (int[@untagged]) -> (int[@untagged]) -> (int[@untagged]) -> (int[@untagged]) -> (int[@untagged])
  = "httpz_epoll_ctl_mod_byte" "httpz_epoll_ctl_mod"
  [@@noalloc]
(** [epoll_ctl_mod epfd fd events token] replaces the interest set and
    token of a registered [fd] (epoll_ctl [EPOLL_CTL_MOD]). [0] or [-errno]:
    [-enoent] if [fd] is not registered, [-ebadf], [-einval]. *)

external epoll_ctl_del : (int[@untagged]) -> (int[@untagged]) -> (int[@untagged])
  = "httpz_epoll_ctl_del_byte" "httpz_epoll_ctl_del"
  [@@noalloc]
(** [epoll_ctl_del epfd fd] unregisters [fd] (epoll_ctl [EPOLL_CTL_DEL]).
    [0] or [-errno]: [-enoent] if not registered, [-ebadf]. Unnecessary
    before {!close} unless the fd was duplicated. *)

type events
(** A caller-owned, reusable array of [(token, mask)] results for
    {!epoll_wait}. Create one per event loop; reading it does not
    allocate. (Representation: an [int array] of [2 * capacity] slots,
    [token] at [2i], [mask] at [2i+1].) *)

val epoll_batch_max : int
(** [epoll_batch_max] ([512]) is the largest capacity of an {!events}
    buffer: the stub first receives events in a C stack array of this many
    entries. *)

val events_create : int -> events
(** [events_create n] is an event buffer with room for [n] events.
    Allocates.
    @raise Invalid_argument unless [1 <= n <= epoll_batch_max]. *)

val events_capacity : events -> int
(** [events_capacity evs] is the [n] given to {!events_create}. *)

val event_token : events -> int -> int
(** [event_token evs i] is the token of the [i]-th event of the last
    {!epoll_wait} into [evs], for [0 <= i < n] where [n] is its result. Does
    not allocate. @raise Invalid_argument if [i >= events_capacity evs]. *)

val event_mask : events -> int -> int
(** [event_mask evs i] is the ready mask of the [i]-th event: test it with
    [land epollin <> 0] etc. Does not allocate. *)

external epoll_wait :
  (int[@untagged]) -> events -> (int[@untagged]) -> (int[@untagged]) -> (int[@untagged])
  = "httpz_epoll_wait_byte" "httpz_epoll_wait"
(** [epoll_wait epfd evs max timeout_ms] waits until at least one
    registered fd is ready or [timeout_ms] milliseconds pass ([-1]: no
    limit, [0]: just poll) (epoll_wait). It stores up to
    [min max (events_capacity evs)] events in [evs] and returns their count
    ([0] on timeout) or [-errno]: [-eintr] (a signal arrived: loop),
    [-ebadf], [-einval] ([max <= 0]).
    With [timeout_ms <> 0] it releases the OCaml runtime lock while it
    sleeps, so it is not [[@@noalloc]]; it still allocates nothing (events
    are staged on the C stack and copied into [evs] once the lock is held
    again). Signal handlers installed with [Sys.set_signal] may run when it
    returns. *)

(** {1 Files} *)

external openat2_beneath :
  (int[@untagged]) ->
  Httpz.Bigstring.t ->
  (int[@untagged]) ->
  (int[@untagged]) ->
  no_symlinks:bool ->
  (int[@untagged])
  = "httpz_openat2_beneath_byte" "httpz_openat2_beneath"
  [@@noalloc]
(** [openat2_beneath dirfd buf off len ~no_symlinks] opens, read-only, the
    relative path held in [buf] at [off] (length [len], without a NUL)
    strictly beneath directory [dirfd], and is the new fd or [-errno].

    It calls openat2(2) with [RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS] (plus
    [RESOLVE_NO_SYMLINKS] when [no_symlinks]), so the {e kernel} refuses any
    resolution that would leave [dirfd], including through [..], absolute
    paths and symlinks pointing outside, and races with concurrent renames.
    Open flags: [O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY]; [O_NONBLOCK]
    makes opening a FIFO return at once instead of waiting for a writer (the
    caller then sees [Fifo] in {!fstat} and refuses it), [O_NOCTTY] keeps a
    terminal device from becoming the controlling tty. Check the kind with
    {!fstat} before serving.

    The path is copied into a [PATH_MAX] C stack buffer and NUL-terminated,
    so the call does not allocate.
    Errors: [-exdev] (escape: [../x], [/etc/passwd], a symlink leading out),
    [-eloop] (any symlink when [no_symlinks]; a magic [/proc] link; too many
    links), [-enoent], [-enotdir], [-eacces], [-enxio] (a socket file),
    [-enametoolong] ([len >= PATH_MAX] or a long component), [-einval] (span
    outside [buf], or a NUL byte inside the path: the kernel would silently
    cut the path there), [-emfile], [-enfile]. [-eagain] from a concurrent
    rename is retried up to 4 times inside the stub before it is returned.

    {b Fallback.} If openat2 answers [ENOSYS] (Linux < 5.6, or a seccomp
    filter that hides it), this and every later call walk the path instead:
    absolute paths and every [..] component give [-exdev], and each
    component is opened with [O_NOFOLLOW], so {e no} symlink is followed
    ([-eloop]) whatever [no_symlinks] says: stricter than openat2, never
    looser. {!openat2_available} tells which mode is in use. *)

val openat2_available : unit -> bool
(** [openat2_available ()] is [true] when this kernel provides openat2
    (probing it once if no call has yet), [false] when
    {!openat2_beneath} uses the fallback. For a start-up log line. *)

external open_dir : string -> int = "httpz_open_dir"
(** [open_dir path] opens directory [path] ([O_RDONLY | O_DIRECTORY |
    O_CLOEXEC]), for use as the [dirfd] (document root) of
    {!openat2_beneath}; the fd or [-errno]: [-enoent], [-enotdir],
    [-eacces], [-einval] (NUL in [path]). Start-up only. *)

type file_kind =
  | Regular
  | Directory
  | Char_device
  | Block_device
  | Fifo
  | Socket
  | Symlink  (** Only seen for fds opened with [O_PATH | O_NOFOLLOW]. *)
  | Other

type stat
(** A caller-owned, reusable record that {!fstat} fills. *)

val stat_create : unit -> stat
(** [stat_create ()] is a zeroed record. Allocates: create one per worker
    (or per connection) and reuse it. *)

external fstat : (int[@untagged]) -> stat -> (int[@untagged])
  = "httpz_fstat_byte" "httpz_fstat"
  [@@noalloc]
(** [fstat fd st] stores the status of [fd] into [st] (fstat(2)) and is
    [0], or [-errno] ([-ebadf]; [st] is then unchanged). *)

val stat_kind : stat -> file_kind
(** [stat_kind st] is the file type. Does not allocate (constant
    constructors). *)

val stat_is_regular : stat -> bool
(** [stat_is_regular st] is [stat_kind st = Regular]. *)

val stat_size : stat -> int
(** [stat_size st] is the size in bytes. *)

val stat_mtime_s : stat -> int
(** [stat_mtime_s st] is the last-modification time, seconds since the
    Unix epoch (for [Last-Modified]). *)

val stat_mtime_ns : stat -> int
(** [stat_mtime_ns st] is the nanosecond part of the modification time,
    in [\[0, 10{^9})] (for a finer ETag). *)

val stat_ino : stat -> int
(** [stat_ino st] is the inode number, reduced to its low 62 bits so it
    fits an [int]; with {!stat_dev}, it identifies the file (ETag). *)

val stat_dev : stat -> int
(** [stat_dev st] is the device number, low 62 bits. *)

val stat_perm : stat -> int
(** [stat_perm st] is the permission bits ([st_mode land 0o7777]). *)

(** {1 Clocks} *)

external clock_monotonic_ns : unit -> (int[@untagged])
  = "httpz_clock_monotonic_ns_byte" "httpz_clock_monotonic_ns"
  [@@noalloc]
(** [clock_monotonic_ns ()] is [CLOCK_MONOTONIC] in nanoseconds
    (clock_gettime, served by the vDSO without entering the kernel): never
    goes back, unaffected by clock changes; for timeouts and timers. Unlike
    [Unix.gettimeofday] it returns an unboxed [int], not a boxed float. *)

external clock_realtime_s : unit -> (int[@untagged])
  = "httpz_clock_realtime_s_byte" "httpz_clock_realtime_s"
  [@@noalloc]
(** [clock_realtime_s ()] is the wall clock ([CLOCK_REALTIME]) in whole
    seconds since the Unix epoch: for the [Date] header. *)

external clock_realtime_ns : unit -> (int[@untagged])
  = "httpz_clock_realtime_ns_byte" "httpz_clock_realtime_ns"
  [@@noalloc]
(** [clock_realtime_ns ()] is the wall clock in nanoseconds since the
    epoch (fits an [int] until the year 2116). For logs. *)

(** {1 Process} *)

external getrlimit_nofile : hard:bool -> (int[@untagged])
  = "httpz_getrlimit_nofile_byte" "httpz_getrlimit_nofile"
  [@@noalloc]
(** [getrlimit_nofile ~hard] is the soft ([hard = false]) or hard limit on
    open fds (getrlimit [RLIMIT_NOFILE]); [max_int] for unlimited. *)

external setrlimit_nofile : (int[@untagged]) -> (int[@untagged])
  = "httpz_setrlimit_nofile_byte" "httpz_setrlimit_nofile"
  [@@noalloc]
(** [setrlimit_nofile n] sets the soft fd limit to [n], keeping the hard
    limit (setrlimit [RLIMIT_NOFILE]); [0] or [-errno]: [-einval] ([n]
    negative or above the hard limit), [-eperm]. *)

val raise_nofile_limit : unit -> int
(** [raise_nofile_limit ()] raises the soft fd limit to the hard limit, as
    the server does at start-up so each worker can hold many connections,
    and is the new soft limit or [-errno]. *)

external set_pdeathsig : int -> int = "httpz_set_pdeathsig"
(** [set_pdeathsig s] asks the kernel to send signal [s] (an OCaml signal
    number such as [Sys.sigterm], or [0] to cancel) to this process when
    its parent thread dies (prctl [PR_SET_PDEATHSIG]): a forked worker then
    does not outlive a killed master. Cleared by [fork], so call it in the
    child. [0] or [-einval]. *)

external getpid : unit -> (int[@untagged])
  = "httpz_getpid_byte" "httpz_getpid"
  [@@noalloc]
(** [getpid ()] is this process's id. *)

val ignore_sigpipe : unit -> unit
(** [ignore_sigpipe ()] is [Sys.set_signal Sys.sigpipe Sys.Signal_ignore]:
    writes to a closed connection then fail with [-epipe] instead of
    killing the process. Call once at start-up. *)

(**/**)

external set_openat2_fallback_for_testing : bool -> unit = "httpz_set_openat2_fallback"
(* [set_openat2_fallback_for_testing true] makes {!openat2_beneath} take the
   ENOSYS fallback path even though openat2 exists, so tests cover it. *)
