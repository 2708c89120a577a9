(** Helpers shared by the parser and latency benchmarks
    ([bench/parse/bench_parse.exe], [bench/latency/bench_latency.exe]).

    Nothing here is on a measured path except {!now_ns}, which allocates
    nothing; everything else runs before or after the timed loops. *)

(** {1 Clock} *)

external now_ns : unit -> (int[@untagged])
  = "httpz_bench_now_ns_byte" "httpz_bench_now_ns"
  [@@noalloc]
(** [now_ns ()] is [CLOCK_MONOTONIC] in nanoseconds, as an immediate int.
    Does not allocate: safe inside a loop whose allocation is measured. *)

(** {1 JSON output} *)

type json =
  | Null
  | Bool of bool
  | Int of int
  | Float of float  (** NaN and infinities are written as [null] *)
  | String of string
  | List of json list
  | Obj of (string * json) list

val to_string : json -> string
(** [to_string j] is [j] as JSON text: objects and lists whose members are
    all scalars stay on one line, others get one member per line. *)

val float_or_null : float option -> json

(** {1 The machine} *)

val loadavg : unit -> float option
(** [loadavg ()] is the 1-minute load average from [/proc/loadavg]. *)

val machine : loadavg_start:float option -> json
(** [machine ~loadavg_start] describes where the numbers come from:
    [uname], [nproc], [cpu], [commit] and [dirty] (git, when run inside the
    repository), [ocaml], [pinned_cpu] (the one CPU this process may run on,
    or [null] when it may run on several: see [taskset]), [cpus_allowed],
    [governor] (or [null]), [date], [loadavg_start] and [loadavg_end]
    (read now). *)

(** {1 Files} *)

val read_file : string -> string

val corpus_dir : unit -> string
(** [corpus_dir ()] is the [bench/requests] directory found by walking up
    from the current directory, then from the executable's directory.
    @raise Failure when there is none. *)

val requests : string list
(** [requests] is the corpus in report order:
    [["small"; "medium"; "large"; "headers50"]] ([<name>.http] files). *)

(** {1 Statistics} *)

val median : float array -> float
(** [median a] is the median of [a] (mean of the middle two for an even
    length). [a] is not modified. @raise Invalid_argument when empty. *)

val percentile : int array -> int -> float -> int
(** [percentile sorted n p] is the [p]-th percentile ([0. <= p <= 100.]) of
    the first [n] elements of the ascending array [sorted], by the
    nearest-rank method. *)
