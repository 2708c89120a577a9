(** The exact-match half of {!Host_match} and {!Rules}: which of a set of
    strings equals a span of a buffer, by binary search over the strings
    sorted once ({!create}): [O(log n)] comparisons a lookup, so the cost
    per request does not grow with the number of sites or locations.
    {!find} does not allocate. *)

type t

val create : (string * int) list -> t
(** [create [(name, id); ...]]; of equal names the first is kept.
    Allocates. *)

val compare_span : Httpz.Bigstring.t -> off:int -> len:int -> caseless:bool -> string -> int
(** [compare_span buf ~off ~len ~caseless s] orders
    [buf.{off .. off+len-1}] (ASCII lower-cased when [caseless]) against
    [s] as [String.compare] orders strings: negative, [0] or positive.
    Does not allocate. *)

val find : t -> Httpz.Bigstring.t -> off:int -> len:int -> caseless:bool -> int
(** [find t buf ~off ~len ~caseless] is the id of the name equal to
    [buf.{off .. off+len-1}] (ignoring ASCII case when [caseless]: the
    names must then be lower case), or [-1]. *)
