(** Running {!Httpz.Router} in tests: routers whose payloads name their
    route, and what a match found, read back as strings. *)

open Httpz

val fail : ('a, unit, string, 'b) format4 -> 'a
(** [fail fmt] raises [Failure] with a formatted message. *)

val build :
  ?subs:(string * string Router.t) list -> (Meth.t * string) list -> string list -> string Router.compiled
(** [build routes mounts] compiles a router whose payloads are
    ["GET /pattern"] and ["mount /prefix"], with [subs] mounted after them. *)

type outcome = {
  result : string;  (** {!Router.result_to_string} *)
  payload : string;  (** [""] unless found *)
  params : (string * string) list;  (** name, raw value *)
  allow : string;
  remainder : string;
  prefix : int;
}

val outcome_t : outcome Alcotest.testable

val route_with :
  ('a -> string) -> ?off:int -> 'a Router.compiled -> Meth.t -> string ->
  outcome * Bigstring.t * Router.Match.t
(** [route_with show c meth path] runs {!Router.find} on [path] placed at
    [off] (default 7) in a buffer filled with ['/'] around it. *)

val route : string Router.compiled -> Meth.t -> string -> outcome * Bigstring.t * Router.Match.t

val expect :
  ?params:(string * string) list -> ?allow:string -> ?remainder:string -> ?prefix:int -> string ->
  string -> outcome

val found : ?params:(string * string) list -> ?remainder:string -> ?prefix:int -> string -> outcome
val not_found : outcome

val check : string Router.compiled -> Meth.t -> string -> outcome -> unit
(** [check c meth path want] asserts what routing [path] gives. *)

val decoded : Bigstring.t -> Span.t -> string
(** [decoded buf s] is {!Router.param_string}, or ["error <name>"]. *)
