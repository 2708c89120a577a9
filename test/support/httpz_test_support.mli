(** Helpers shared by the test suites. *)

val minor_words_per_op : ?iters:int -> (unit -> unit) -> float
(** [minor_words_per_op f] runs [f] once to warm up, then [iters] times
    (default 100_000), and is the minor-heap words allocated per run. The
    measurement itself allocates nothing ([Gc.minor_words] is read unboxed),
    so a truly allocation-free [f] gives exactly [0.0]. *)

val zero_alloc : string -> (unit -> unit) -> unit Alcotest.test_case
(** [zero_alloc name f] is a test case asserting that [f] allocates
    [0.0] minor words per run over many runs. *)

val qcheck : QCheck2.Test.t -> unit Alcotest.test_case
(** [qcheck t] runs a QCheck property (QCheck or QCheck2 tests alike: both
    build a [QCheck2.Test.t]) as one Alcotest case, failing with the
    shrunk counter-example. Deterministic: the seed is fixed unless
    [QCHECK_SEED] is set in the environment. *)

val bigstring_at : ?garbage:char -> off:int -> string -> Httpz.Bigstring.t
(** [bigstring_at ~off s] is a buffer holding [s] at [off], with [off]
    garbage bytes before it and 64 after, so a reader that looks outside
    [off .. off + String.length s] sees bytes that would change its answer. *)

val read_file : string -> string
(** [read_file path] is the whole content of a file. *)

val write_file : string -> string -> unit
(** [write_file path contents] creates or replaces the file. *)

val temp_dir : string -> string
(** [temp_dir prefix] is a fresh directory (mode 0755) under the
    temporary directory, removed with its contents at exit. *)

val corpus_dir : unit -> string
(** [corpus_dir ()] is [bench/requests] of the source tree, found from the
    test's working directory (dune runs tests inside [_build]). *)

val vectors_dir : unit -> string
(** [vectors_dir ()] is the conformance corpus [test/lib/http/vectors] (its
    [request/] and [chunked/] folders), found from the working directory
    or the executable's place in [_build]. *)

val find_sub : string -> string -> int
(** [find_sub s sub] is the index of the first occurrence of [sub] in [s],
    or [-1]. *)
