(** Seeded generator of request heads: valid ones (RFC 9110/9112 grammar,
    with the odd-but-valid corners: tabs, empty values, obs-text, every
    target form, 0-30 fields) and mutations of them.

    Input [i] of a run with seed [s] comes from [Random.State.make [|s; i|]]
    alone, so any input can be regenerated from its (seed, index) pair,
    whatever ran before it. *)

type case = {
  input : string;          (** the bytes the parsers see *)
  mutations : string list; (** what was done to a valid head, for reports *)
  split : int;             (** a split point in [0 .. String.length input] for
                               the incremental-parse check *)
}

val case : seed:int -> index:int -> case
(** [case ~seed ~index] is input [index] of the run with [seed]. *)

val valid : Random.State.t -> string
(** [valid rs] is a valid request head (with, sometimes, body bytes or a
    second request after it). *)
