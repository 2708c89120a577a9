(** The fuzzing loop shared by test_fuzz (short, fixed) and fuzz.exe
    (long): generate, run the three parsers, compare, count. *)

type config = {
  seed : int;
  count : int;          (** inputs to fuzz ([max_int]: until [seconds]) *)
  seconds : float;      (** wall-clock budget ([infinity]: until [count]) *)
  first_index : int;    (** index of the first input *)
  max_print : int;      (** findings printed in full; all are counted *)
  progress : bool;      (** a line every 10 s *)
}

type stats = {
  mutable inputs : int;
  mutable bytes : int;
  mutable elapsed : float;
  mutable h11_batch_time : float;
  verdicts : (string, int) Hashtbl.t;  (** ["httpz:accept"] -> count, … *)
  hits : (string, int) Hashtbl.t;      (** ["h11:bare_lf"] -> count, … *)
  kinds : (string, int) Hashtbl.t;     (** finding kind -> count *)
  mutable findings : int;
  mutable printed : int;
}

val run : config -> H11.t -> stats
(** [run cfg h11] fuzzes inputs [first_index ..] of [seed] (batches of
    256, h11 answering each batch in one pipelined exchange), printing
    findings as they come with their seed and index. *)

val print_summary : stats -> unit
(** Inputs and speed, verdict counts, documented disagreements by
    category, undocumented findings by kind. *)

val run_one : H11.t -> string -> Diff.finding list
(** [run_one h11 input] prints the three verdicts on [input], the
    categories that explain their differences and any finding. *)
