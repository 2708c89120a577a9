(** Random bytes from the kernel, for secrets (session ids, CSRF tokens,
    signing keys): getrandom(2), the same pool as [/dev/urandom] without a
    file descriptor. Not [Random]: that name would hide the stdlib's
    module in every library that opens [Httpz_sys].

    getrandom with no flags blocks only while the kernel's pool is not yet
    initialised (early boot), never afterwards. Interrupted calls ([EINTR])
    and short reads are retried here. *)

type error =
  | Not_supported  (** [ENOSYS]: a kernel older than 3.17, or a seccomp filter *)
  | Bad_buffer  (** [EFAULT]: cannot happen for an OCaml buffer *)
  | Errno of int  (** any other errno (positive) *)

val error_to_string : error -> string
(** A short explanation naming the errno, for logs. *)

exception Unavailable of error
(** Raised by {!fill} and {!bytes} when the kernel gives no random bytes:
    a server that cannot make secrets must not go on with weak ones. *)

external getrandom : Bytes.t -> (int[@untagged]) -> (int[@untagged]) -> (int[@untagged])
  = "httpz_random_getrandom_byte" "httpz_random_getrandom"
  [@@noalloc]
(** [getrandom b off len] is one getrandom(2) call into [b] at [off]: the
    number of bytes written, or [-errno]. The range is not checked: use
    {!fill}. *)

val fill : Bytes.t -> off:int -> len:int -> unit
(** [fill b ~off ~len] fills that range with random bytes. Does not
    allocate on success.
    @raise Invalid_argument when the range is outside [b].
    @raise Unavailable when getrandom fails with anything but [EINTR]. *)

val bytes : int -> string
(** [bytes n] is [n] random bytes. Allocates.
    @raise Invalid_argument when [n < 0].
    @raise Unavailable as {!fill}. *)
