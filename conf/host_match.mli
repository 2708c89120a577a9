(** Which site a request's [Host] names: exact names first, then
    wildcards ([*.example.com] matches [a.example.com] and
    [a.b.example.com], not [example.com]), the longest suffix first, then
    the default site. Names compare ASCII case-insensitively; the port
    ([example.com:8443], [[::1]:8443]) and one trailing dot are ignored.
    {!create} allocates; {!find} does not. *)

type t

val create : names:string list array -> default:int -> t
(** [create ~names ~default]: [names.(i)] are the names of site [i] (lower
    case, wildcards as ["*.example.com"]); [default] is the site a host
    no name matches gets, or [-1] for none. *)

val find : t -> Httpz.Bigstring.t -> Httpz.Span.t -> int
(** [find t buf host] is the site of the [Host] value [host] (a span of
    [buf]), or the default. Does not allocate. *)

val find_string : t -> string -> int
(** [find_string t host] is {!find} on a copy of [host]. Allocates: for
    tests. *)
