(** Route patterns and raw path segments: the two halves of {!Router}'s
    segment logic. Parsing patterns runs when routes are added (it
    allocates and raises); the segment helpers run per request (they do
    neither).

    {b Pattern syntax.} A pattern starts with ['/'] and is split on ['/']
    into segments ([/] alone has none):
    {ul
    {- [:name] is a parameter: exactly one non-empty segment;}
    {- [*name], last only, is a wildcard tail: zero or more segments;}
    {- anything else is a literal, stored {e decoded}: [%XX] escapes are
       decoded once when the pattern is read, and a request segment
       matches it when the request segment decodes to the same bytes
       ([/tod%6Fs] matches [/todos]; a literal [%2F] is one byte ['/'] and
       matches only an encoded slash). A literal that should start with
       [':'] or ['*'] is written [%3A] or [%2A].}
    {- A trailing ['/'] is a last, empty literal segment: [/a/] and [/a]
       are different patterns.}}
    Names are [A-Za-z0-9_], non-empty, unique within a pattern. Refused
    with [Invalid_argument]: no leading ['/'], an empty segment anywhere
    but last ([//]), a ["."] or [".."] literal (also spelt with [%2e]), a
    wildcard that is not last, a bad escape or [%00], a raw control byte,
    space, DEL, ['?'] or ['#']. *)

type segment =
  | Lit of string  (** decoded bytes; [""] only as the last segment *)
  | Param of string
  | Wild of string

val parse : string -> segment list
(** [parse pattern] is the segments of [pattern].
    @raise Invalid_argument naming the pattern and what is wrong. *)

val same_shape : segment list -> segment list -> bool
(** [same_shape a b]: [a] and [b] match exactly the same paths (they
    differ at most in parameter names). *)

val names : segment list -> string list
(** [names segs] is the parameter and wildcard names of [segs], in order. *)

val to_string : segment list -> string
(** [to_string segs] is a pattern for [segs] (literals re-escaped where
    needed), for error messages and tests. Allocates. *)

(** {1 Raw request segments}

    A request path is split on raw ['/'] only; escapes are looked at, never
    rewritten. All of these take [buf] and offsets inside it, and allocate
    nothing. *)

val segment_end : Bigstring.t -> int -> int -> int
(** [segment_end buf pos stop] is [e lsl 1 lor p]: [e] the index of the
    first ['/'] in [\[pos, stop)] (or [max pos stop] when there is none),
    [p = 1] iff a ['%'] occurs in [\[pos, e)]. *)

val equal_literal : Bigstring.t -> int -> int -> bool -> string -> bool
(** [equal_literal buf s e has_pct lit]: the segment [\[s, e)] decodes to
    [lit]. [has_pct] ([false] when it holds no ['%']) selects a plain
    compare. A bad escape never equals anything. *)

val is_dot_segment : Bigstring.t -> int -> int -> bool
(** [is_dot_segment buf s e]: [\[s, e)] decodes to ["."] or [".."]
    ([%2e] in either case counts as a dot). *)

val has_dot_segment : Bigstring.t -> int -> int -> bool
(** [has_dot_segment buf s stop]: one of the ['/']-separated segments of
    [\[s, stop)] is a dot segment. *)
