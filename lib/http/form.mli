(** [application/x-www-form-urlencoded] and query strings: [name=value]
    pairs separated by ['&'], with [%XX] escapes and ['+'] for a space in
    names and values alike.

    Decoding follows the WHATWG URL standard's urlencoded parser: empty
    pairs ([a=1&&b=2]) are skipped; a pair without ['='] has an empty value;
    a ['%'] not followed by two hex digits is kept as it is (["100%"] stays
    ["100%"]); decoded bytes are not checked for UTF-8 (they are handed
    over as they are). Nothing is refused: every byte string decodes.

    The cursor and the decoders work on a span of a caller-owned bigstring
    (a request target's query, a body) and allocate nothing; the
    [string]-returning helpers at the end allocate, for convenience. *)

type t
(** A reusable cursor over the pairs of one span. Create it once (per
    connection, per handler) and {!start} it for each span. *)

val create : unit -> t
(** Allocates. *)

val start : t -> Bigstring.t -> Span.t -> unit
(** [start t buf s] positions [t] before the first pair of [buf] at [s]. *)

val next : t -> bool
(** [next t] moves to the next non-empty pair: [false] at the end. *)

val name : t -> Span.t
val value : t -> Span.t
(** The current pair's name and value, still encoded (spans of the
    buffer given to {!start}; the value is empty when there is no ['=']). *)

val decoded_length : Bigstring.t -> Span.t -> int
(** Bytes the decoding of a span takes. *)

val decode : Bigstring.t -> Span.t -> dst:Bigstring.t -> dst_off:int -> int
(** [decode buf s ~dst ~dst_off] writes the decoding of [buf] at [s] into
    [dst] from [dst_off] and is its length, or [-1] (nothing written)
    when it does not fit. [dst] may be [buf] itself at [dst_off =
    Span.off s] (decoding only shrinks). *)

val equal_decoded : Bigstring.t -> Span.t -> string -> bool
(** [equal_decoded buf s name]: the decoding of [buf] at [s] is [name]. *)

val find : t -> Bigstring.t -> Span.t -> string -> bool
(** [find t buf s name] moves [t] to the first pair of [buf] at [s] whose
    decoded name is [name] ([true]), its value then being {!value}; or
    [false] when there is none. *)

(** {1 Allocating helpers} *)

val decode_string : string -> string
(** The decoding of one component. *)

val to_list : Bigstring.t -> Span.t -> (string * string) list
(** Every pair, decoded, in order. *)

val pairs : string -> (string * string) list
(** [pairs "a=1&b=x+y"] is [[("a", "1"); ("b", "x y")]]. *)

val get : Bigstring.t -> Span.t -> string -> string option
(** The decoded value of the first pair named [name]. *)

val encode : string -> string
(** The inverse, for building queries and forms: every byte but
    [A-Za-z0-9*-._] is escaped as [%XX] (upper-case), a space as ['+']
    (the WHATWG urlencoded serializer's set). *)
