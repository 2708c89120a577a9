(* Thin bindings over httpz_stubs.c. Every fast-path external is [@@noalloc]
   with untagged ints, so a call is a plain C call: no boxing, no exception,
   no runtime-lock traffic. The errno and flag constants are read from C by
   name at module initialisation, so no number is written down twice. *)

type fd = int

external fd_of_unix : Unix.file_descr -> fd = "%identity"
external unix_of_fd : fd -> Unix.file_descr = "%identity"

external constant : string -> int = "httpz_constant"
external errno_name : int -> string = "httpz_errno_name"
external strerror : int -> string = "httpz_strerror"

let eagain = constant "EAGAIN"
let eintr = constant "EINTR"
let econnreset = constant "ECONNRESET"
let econnaborted = constant "ECONNABORTED"
let epipe = constant "EPIPE"
let emfile = constant "EMFILE"
let enfile = constant "ENFILE"
let enobufs = constant "ENOBUFS"
let enomem = constant "ENOMEM"
let enoent = constant "ENOENT"
let eacces = constant "EACCES"
let eperm = constant "EPERM"
let eloop = constant "ELOOP"
let exdev = constant "EXDEV"
let enotdir = constant "ENOTDIR"
let eisdir = constant "EISDIR"
let enxio = constant "ENXIO"
let einval = constant "EINVAL"
let ebadf = constant "EBADF"
let enametoolong = constant "ENAMETOOLONG"
let enosys = constant "ENOSYS"
let eaddrinuse = constant "EADDRINUSE"
let enotconn = constant "ENOTCONN"
let enotsock = constant "ENOTSOCK"
let eexist = constant "EEXIST"
let etimedout = constant "ETIMEDOUT"
let eproto = constant "EPROTO"
let ecanceled = constant "ECANCELED"

let error_message n =
  let e = abs n in
  match errno_name e with
  | "" -> Printf.sprintf "errno %d: %s" e (strerror e)
  | name -> name ^ ": " ^ strerror e

(* Sockets *)

external socket_bind : host:string -> port:int -> reuseport:bool -> int = "httpz_socket_bind"

external listen : (int[@untagged]) -> (int[@untagged]) -> (int[@untagged])
  = "httpz_listen_byte" "httpz_listen"
  [@@noalloc]

external local_port : (int[@untagged]) -> (int[@untagged])
  = "httpz_local_port_byte" "httpz_local_port"
  [@@noalloc]

external accept4 : (int[@untagged]) -> (int[@untagged])
  = "httpz_accept4_byte" "httpz_accept4"
  [@@noalloc]

type sockopt = Tcp_nodelay | Tcp_notsent_lowat | Tcp_defer_accept

external setsockopt : (int[@untagged]) -> sockopt -> (int[@untagged]) -> (int[@untagged])
  = "httpz_setsockopt_byte" "httpz_setsockopt"
  [@@noalloc]

external getsockopt : (int[@untagged]) -> sockopt -> (int[@untagged])
  = "httpz_getsockopt_byte" "httpz_getsockopt"
  [@@noalloc]

external shutdown_write : (int[@untagged]) -> (int[@untagged])
  = "httpz_shutdown_write_byte" "httpz_shutdown_write"
  [@@noalloc]

external close : (int[@untagged]) -> (int[@untagged])
  = "httpz_close_byte" "httpz_close"
  [@@noalloc]

let socket_listen ~host ~port ~backlog ~reuseport =
  let fd = socket_bind ~host ~port ~reuseport in
  if fd < 0 then fd
  else
    let r = listen fd backlog in
    if r < 0 then begin
      ignore (close fd : int);
      r
    end
    else fd

let socket_listen_exn ~host ~port ~backlog ~reuseport =
  let fd = socket_listen ~host ~port ~backlog ~reuseport in
  if fd < 0 then
    failwith (Printf.sprintf "listen on %s:%d: %s" host port (error_message fd));
  fd

(* Byte I/O *)

external read :
  (int[@untagged]) -> Httpz.Bigstring.t -> (int[@untagged]) -> (int[@untagged]) -> (int[@untagged])
  = "httpz_read_byte" "httpz_read"
  [@@noalloc]

external write :
  (int[@untagged]) -> Httpz.Bigstring.t -> (int[@untagged]) -> (int[@untagged]) -> (int[@untagged])
  = "httpz_write_byte" "httpz_write"
  [@@noalloc]

external send :
  (int[@untagged]) -> Httpz.Bigstring.t -> (int[@untagged]) -> (int[@untagged]) -> (int[@untagged]) ->
  (int[@untagged])
  = "httpz_send_byte" "httpz_send"
  [@@noalloc]

external sendv2 :
  (int[@untagged]) ->
  Httpz.Bigstring.t -> (int[@untagged]) -> (int[@untagged]) ->
  Httpz.Bigstring.t -> (int[@untagged]) -> (int[@untagged]) ->
  (int[@untagged]) -> (int[@untagged])
  = "httpz_sendv2_byte" "httpz_sendv2"
  [@@noalloc]

external sendv_gather :
  (int[@untagged]) ->
  Httpz.Bigstring.t -> (int[@untagged]) -> (int[@untagged]) ->
  Httpz.Bigstring.t array -> int array -> (int[@untagged]) -> (int[@untagged]) ->
  (int[@untagged]) -> (int[@untagged])
  = "httpz_sendv_gather_byte" "httpz_sendv_gather"
  [@@noalloc]

external sendv_string :
  (int[@untagged]) ->
  Httpz.Bigstring.t -> (int[@untagged]) -> (int[@untagged]) ->
  string -> (int[@untagged]) -> (int[@untagged]) ->
  (int[@untagged]) -> (int[@untagged])
  = "httpz_sendv_string_byte" "httpz_sendv_string"
  [@@noalloc]

external pread :
  (int[@untagged]) -> Httpz.Bigstring.t -> (int[@untagged]) -> (int[@untagged]) ->
  (int[@untagged]) -> (int[@untagged])
  = "httpz_pread_byte" "httpz_pread"
  [@@noalloc]

external sendfile :
  (int[@untagged]) -> (int[@untagged]) -> (int[@untagged]) -> (int[@untagged]) -> (int[@untagged])
  = "httpz_sendfile_byte" "httpz_sendfile"
  [@@noalloc]

(* epoll *)

let epollin = constant "EPOLLIN"
let epollout = constant "EPOLLOUT"
let epollerr = constant "EPOLLERR"
let epollhup = constant "EPOLLHUP"
let epollrdhup = constant "EPOLLRDHUP"
let epollpri = constant "EPOLLPRI"
let epollet = constant "EPOLLET"
let epolloneshot = constant "EPOLLONESHOT"
let epollexclusive = constant "EPOLLEXCLUSIVE"

external epoll_create : unit -> (int[@untagged])
  = "httpz_epoll_create_byte" "httpz_epoll_create"
  [@@noalloc]

external epoll_ctl_add :
  (int[@untagged]) -> (int[@untagged]) -> (int[@untagged]) -> (int[@untagged]) -> (int[@untagged])
  = "httpz_epoll_ctl_add_byte" "httpz_epoll_ctl_add"
  [@@noalloc]

external epoll_ctl_mod :
  (int[@untagged]) -> (int[@untagged]) -> (int[@untagged]) -> (int[@untagged]) -> (int[@untagged])
  = "httpz_epoll_ctl_mod_byte" "httpz_epoll_ctl_mod"
  [@@noalloc]

external epoll_ctl_del : (int[@untagged]) -> (int[@untagged]) -> (int[@untagged])
  = "httpz_epoll_ctl_del_byte" "httpz_epoll_ctl_del"
  [@@noalloc]

(* Two slots per event, (token, mask), so reading one is two array loads. *)
type events = int array

let epoll_batch_max = 512

let events_create n =
  if n < 1 || n > epoll_batch_max then invalid_arg "Syscall.events_create";
  Array.make (2 * n) 0

let events_capacity (evs : events) = Array.length evs / 2
let event_token (evs : events) i = evs.(2 * i)
let event_mask (evs : events) i = evs.((2 * i) + 1)

external epoll_wait :
  (int[@untagged]) -> events -> (int[@untagged]) -> (int[@untagged]) -> (int[@untagged])
  = "httpz_epoll_wait_byte" "httpz_epoll_wait"

(* Files *)

external openat2_beneath :
  (int[@untagged]) ->
  Httpz.Bigstring.t ->
  (int[@untagged]) ->
  (int[@untagged]) ->
  no_symlinks:bool ->
  (int[@untagged])
  = "httpz_openat2_beneath_byte" "httpz_openat2_beneath"
  [@@noalloc]

external openat2_available : unit -> bool = "httpz_openat2_available"

external open_dir : string -> int = "httpz_open_dir"

type file_kind = Regular | Directory | Char_device | Block_device | Fifo | Socket | Symlink | Other

type stat = int array

external stat_fields : unit -> int = "httpz_stat_fields"

let stat_create () = Array.make (stat_fields ()) 0

external fstat : (int[@untagged]) -> stat -> (int[@untagged])
  = "httpz_fstat_byte" "httpz_fstat"
  [@@noalloc]

(* Field order: hz_fstat in httpz_stubs.c. *)
let stat_kind (st : stat) =
  match st.(0) with
  | 0 -> Regular
  | 1 -> Directory
  | 2 -> Char_device
  | 3 -> Block_device
  | 4 -> Fifo
  | 5 -> Socket
  | 6 -> Symlink
  | _ -> Other

let stat_is_regular (st : stat) = st.(0) = 0
let stat_size (st : stat) = st.(1)
let stat_mtime_s (st : stat) = st.(2)
let stat_mtime_ns (st : stat) = st.(3)
let stat_ino (st : stat) = st.(4)
let stat_dev (st : stat) = st.(5)
let stat_perm (st : stat) = st.(6)

(* Clocks, limits, process *)

external clock_monotonic_ns : unit -> (int[@untagged])
  = "httpz_clock_monotonic_ns_byte" "httpz_clock_monotonic_ns"
  [@@noalloc]

external clock_realtime_s : unit -> (int[@untagged])
  = "httpz_clock_realtime_s_byte" "httpz_clock_realtime_s"
  [@@noalloc]

external clock_realtime_ns : unit -> (int[@untagged])
  = "httpz_clock_realtime_ns_byte" "httpz_clock_realtime_ns"
  [@@noalloc]

external getrlimit_nofile : hard:bool -> (int[@untagged])
  = "httpz_getrlimit_nofile_byte" "httpz_getrlimit_nofile"
  [@@noalloc]

external setrlimit_nofile : (int[@untagged]) -> (int[@untagged])
  = "httpz_setrlimit_nofile_byte" "httpz_setrlimit_nofile"
  [@@noalloc]

let raise_nofile_limit () =
  let hard = getrlimit_nofile ~hard:true in
  if hard < 0 then hard
  else
    let r = setrlimit_nofile hard in
    if r < 0 then r else getrlimit_nofile ~hard:false

external set_pdeathsig : int -> int = "httpz_set_pdeathsig"

external getpid : unit -> (int[@untagged])
  = "httpz_getpid_byte" "httpz_getpid"
  [@@noalloc]

let ignore_sigpipe () = Sys.set_signal Sys.sigpipe Sys.Signal_ignore

external set_openat2_fallback_for_testing : bool -> unit = "httpz_set_openat2_fallback"
