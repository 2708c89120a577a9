(** Incremental UTF-8 validation (RFC 3629), as a deterministic automaton.

    The automaton is Björn Höhrmann's design: each byte maps to one of 12
    classes, and a (state, class) table gives the next state. Its state is
    one immediate [int] that the {e caller} keeps, so a text message can be
    validated piece by piece as its fragments and reads arrive, with no
    buffer of pending bytes.

    It accepts exactly the well-formed UTF-8 of RFC 3629 §4: overlong
    forms ([C0 80], [E0 80 80], [F0 80 80 80]), surrogates ([ED A0 80] to
    [ED BF BF], U+D800-U+DFFF), code points above U+10FFFF ([F4 90 ..],
    [F5]-[FF]) and stray continuation bytes are all refused.

    {b Fail fast.} The automaton enters {!reject} at the first byte that
    cannot continue {e any} valid sequence (in [F4 90], at [90]; in
    [ED A0], at [A0]), not at the end of the sequence or the message: RFC
    6455 §8.1 and Autobahn's section 6 expect a text message to be failed
    as soon as such a byte arrives. A sequence cut short by the end of the
    message is only detectable there: check {!is_complete} at the end.

    {b Allocation.} Nothing here allocates (the two tables are built once,
    when the module is initialised). *)

val accept : int
(** The start state, also the state after each complete character:
    [feed accept] starts a new text. *)

val reject : int
(** The sink state: the input so far is not a prefix of any valid UTF-8.
    [feed] and [step] stay in it. *)

val is_complete : int -> bool
(** [is_complete s] is [s = accept]: the bytes fed so far are valid UTF-8
    and end on a character boundary (the test at the end of a message). *)

val is_rejected : int -> bool
(** [is_rejected s] is [s = reject]. *)

val step : int -> char -> int
(** [step s c] is the state after byte [c] in state [s]. *)

val feed : int -> Bigstring.t -> off:int -> len:int -> int
(** [feed s buf ~off ~len] is the state after the bytes
    [buf.{off .. off+len-1}], starting in [s]. Whole words of ASCII are
    passed eight bytes at a time while the state is {!accept}; it returns
    as soon as it reaches {!reject}. Unchecked: the range must lie inside
    [buf]. *)

val first_invalid : int -> Bigstring.t -> off:int -> len:int -> int
(** [first_invalid s buf ~off ~len] is the index (in [buf]) of the byte at
    which [feed s buf ~off ~len] enters {!reject}, or [-1] when it does
    not (also when [s] is already {!reject}). For the error path: [feed] says {e whether}, this says {e where}.
    Unchecked like [feed]. *)

