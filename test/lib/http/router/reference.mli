(** A naive router written the slow, obvious way, for the properties:
    each route is matched against the split path on its own, the
    candidates are sorted by a specificity key (per depth: literal <
    parameter < wildcard < mount; where the path ends: route end <
    wildcard < mount) and the first group that accepts the method wins. *)

open Httpz

type kind = Route_of of Meth.t | Mount_of

type pseg = L of string | Pm | Wd  (** literal (decoded), parameter, wildcard *)

type rroute = { id : int; kind : kind; segs : pseg list }

val pct_decode : string -> string option
(** Strict percent-decoding: [None] on a bad escape. *)

val ref_find : rroute list -> Meth.t -> string -> string * int * string list * int * int
(** [ref_find routes meth path] is the result name, the route id (or
    [-1]), the raw parameter values, the Allow mask and the prefix length. *)

val ref_redirect : rroute list -> Meth.t -> string -> bool
(** What {!Router.slash_redirect} should say after [ref_find]. *)
