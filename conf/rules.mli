(** Which location of a site a decoded request path falls in: an exact
    location ([location = /x]) whose path equals it, else the prefix
    location with the longest path it starts with (as nginx chooses
    without regular expressions). Paths compare byte for byte, on the
    decoded, normalised path ({!Httpz_static.Static.decode}).
    {!create} allocates (sorts the paths once: [O(n log n)]); {!find}
    does not, and costs [O(log n)] comparisons (plus the nesting depth
    of the prefixes that contain the path), not one per location. *)

type t

val create : (bool * string) list -> t
(** [create locations]: [(exact, path)] for each location, in the order
    their indexes name them. *)

val find : t -> Httpz.Bigstring.t -> int -> int
(** [find t path n] is the index of the location of [path.{0 .. n-1}], or
    [-1] when none matches. Does not allocate. *)
