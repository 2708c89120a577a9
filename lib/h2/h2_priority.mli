(** The [Priority] field value of RFC 9218 (Extensible Prioritization),
    carried by the [priority] request header and the PRIORITY_UPDATE frame
    ({!H2_frame.Priority_update}).

    The value is a Structured Field Dictionary (RFC 8941 §3.2), e.g.
    ["u=5, i"]. Two parameters are defined (RFC 9218 §4):
    - [u], urgency: an Integer in [0..7], lower is more urgent; default 3;
    - [i], incremental: a Boolean ([i] alone means [?1]); default false.

    The whole dictionary is parsed by RFC 8941's rules (keys, Integers,
    Decimals, Strings, Tokens, Byte Sequences, Booleans, inner lists and
    parameters), so a value that is not a Dictionary is recognised as such
    and ignored whole: the result is then {!default}, as RFC 9218 §4 asks
    for a field that fails to parse. Unknown keys, parameters on members,
    and [u] or [i] with an out-of-range value or a value of another type
    are ignored ("MUST be ignored", §4), leaving that parameter at its
    default. A key given twice counts by its last occurrence (RFC 8941
    §4.2). Each call reads one field value: a request with several
    [priority] lines should combine them with [", "] first.

    The result is an immediate int: nothing here allocates. *)

type t = private int
(** An urgency and an incremental flag, packed. *)

val default : t
(** [u=3], not incremental. *)

val make : urgency:int -> incremental:bool -> t
(** @raise Invalid_argument when [urgency] is outside [0..7]. *)

val urgency : t -> int
val incremental : t -> bool

val parse : Bigstring.t -> off:int -> len:int -> t
(** [parse buf ~off ~len] reads the field value [buf.{off .. off+len-1}].
    Never raises for any content.
    @raise Invalid_argument when the slice is not inside [buf]. *)
