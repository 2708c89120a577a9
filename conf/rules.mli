(** Which location of a site a decoded request path falls in: an exact
    location ([location = /x]) whose path equals it, else the prefix
    location with the longest path it starts with (as nginx chooses
    without regular expressions). Paths compare byte for byte, on the
    decoded, normalised path ({!Httpz_static.Static.decode}).
    {!create} allocates; {!find} does not. *)

type t

val create : (bool * string) list -> t
(** [create locations]: [(exact, path)] for each location, in the order
    their indexes name them. *)

val find : t -> Httpz.Bigstring.t -> int -> int
(** [find t path n] is the index of the location of [path.{0 .. n-1}], or
    [-1] when none matches. Does not allocate. *)
