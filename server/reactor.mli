(** What a worker's event loop offers code that waits: timers, readiness
    of descriptors it did not create (an upstream socket, a pipe), and a
    thread pool for blocking work. Handlers reach it through
    {!Ctx.sleep}, {!Ctx.when_readable}, {!Ctx.offload} and {!Ctx.suspend};
    the Lwt adapter builds an [Lwt_engine] on it.

    Everything here runs on the worker's loop, between connection events:
    a callback must not block. Callbacks and their registrations allocate
    (this is the asynchronous path; the synchronous one stays at zero).
    An exception escaping a callback is logged and the loop goes on.

    One reactor per worker, created by the loop before serving; {!current}
    is that worker's. Not thread-safe, except {!offload}'s completion,
    which crosses from the pool's threads through a pipe. *)

type t

val current : unit -> t
(** The reactor of the worker this process runs.
    @raise Failure outside a running server. *)

(** {1 Timers} *)

type timer

val after : t -> float -> (unit -> unit) -> timer
(** [after r seconds f] calls [f ()] once, [seconds] from now (at the
    loop's next turn after that time; the loop wakes for it). With
    [seconds <= 0.] that is the next turn, without waiting: a yield.
    The heap holds the live timers only; its array shrinks back after a
    burst. *)

val cancel : timer -> unit
(** [cancel tm] stops [tm] from firing; no effect if it fired. The timer
    leaves the heap at once and lets go of [f]: cancelled timers hold no
    memory, however far their deadline and whatever is due before it. *)

(** {1 Descriptors} *)

type watch

val watch : t -> Unix.file_descr -> write:bool -> (unit -> unit) -> watch
(** [watch r fd ~write f] calls [f ()] every time [fd] is readable (or
    writable, with [write]), level-triggered, until {!unwatch}. Several
    watches may share a descriptor. The descriptor stays the caller's: it
    must be unwatched before it is closed. *)

val unwatch : watch -> unit
(** Idempotent. *)

val at_each_turn : t -> (unit -> unit) -> unit
(** [at_each_turn r f] calls [f ()] at the end of every turn of the loop
    (after its events and timers), for the worker's life: an event library
    resumes its paused work there (the Lwt adapter calls
    [Lwt.wakeup_paused]). Keep it cheap. *)

(** {1 Blocking work} *)

type job

val offload : t -> (unit -> unit) -> (unit -> unit) -> job option
(** [offload r job k] queues [job ()] to run on a thread of the worker's
    pool (started on first use), then [k ()] on the loop. [job] must not
    touch the server's state: it runs concurrently with the loop (OCaml's
    runtime lock lets it run while the loop waits in epoll, and during
    [job]'s own blocking calls). [None] when the queue is full: as many
    jobs wait for a thread as the worker allows
    ([Server.config.offload_queue]); then neither [job] nor [k] runs. *)

val drop : job -> unit
(** [drop j]: if [j] has not started, it never does, and neither does its
    [k]; it stops counting against the queue at once. A started job runs
    to its end (its [k] too). Idempotent. *)

val queued : t -> int
(** Jobs accepted and not yet started. *)

(**/**)

(* For the loop. *)
val create : epfd:int -> base_token:int -> threads:int -> queue:int -> t
(** [create ~epfd ~base_token ~threads ~queue]: the offload pool has
    [threads] threads (at least 1), started on the first offload, and
    accepts [queue] waiting jobs ([<= 0]: [64 * threads]). *)

val install : t -> unit
val dispatch : t -> int -> int -> unit
(** [dispatch r token mask]: an epoll event for one of the reactor's
    tokens ([token >= base_token]). *)

val run_timers : t -> now_ns:int -> unit
val next_timer_ns : t -> int
(** Monotonic time of the earliest timer, or [max_int]. *)

val pending : t -> bool
val end_of_turn : t -> unit

val timers : t -> int
(** Timers in the heap: the live ones (for tests). *)

(* For the in-memory runtime ({!Testing}). *)
val set_clock : t -> (unit -> int) -> unit
(** [set_clock r now]: {!after} counts from [now ()] (monotonic ns)
    rather than the system's clock; {!run_timers}' [now_ns] must come from
    the same clock. *)

val busy : t -> bool
(** Work outside the loop is outstanding: an offloaded job whose
    continuation has not run (nor been dropped), or a descriptor watched
    for a caller. Timers do not count. Takes the pool's lock. *)

val epfd : t -> int
(** The epoll set its descriptors are registered in. *)
