(** Tokens of a configuration file ({!Conf_syntax} reads them into
    directives). Allocates; runs at start-up, on [httpz check] and on a
    reload, never per request.

    The lexical rules: a token is a bare word (any bytes but white space
    and [{ } ; " ' #]), a quoted string (double or single quotes, on one
    line, with the escapes [\\"], [\\'], [\\\\], [\\n], [\\t]), or one of
    [{], [}], [;]. [#] at the start of a token comments out the rest of
    the line. Control bytes other than tab, CR (before LF) and LF are
    refused, so a file with NUL or escape sequences in it is reported, not
    half-read. *)

type pos = { file : string; line : int; col : int }
(** The file (as {!tokens} was given it; [""] when it was given none)
    and the 1-based line and column (in bytes) of a token's first byte.
    A file read through [include] names itself, so a message points into
    the included file. *)

val nowhere : pos
(** [{ file = ""; line = 0; col = 0 }]: a position no token has (a
    default that was never written). *)

val locate : file:string -> pos -> string
(** [locate ~file p] is ["FILE:LINE:COL"] for a message, [file] standing
    for the position's own file when it names none. *)

val line_of : here:pos -> pos -> string
(** [line_of ~here p] names [p] in a message about [here]: ["line N"] in
    the same file, ["FILE:N"] in another. *)

type token =
  | Word of string  (** a bare word *)
  | Quoted of string  (** a quoted string, escapes resolved *)
  | Open  (** [{] *)
  | Close  (** [}] *)
  | Semi  (** [;] *)
  | Eof

type error = { pos : pos; message : string }
(** Where the file stops making sense, and why (one line, no position). *)

val tokens : ?file:string -> string -> ((token * pos) array, error) result
(** [tokens ?file text] is every token of [text] with its position, ending with
    [Eof], or the first lexical error. *)

val describe : token -> string
(** [describe tok] is how a message names [tok]: ["'{'"], ["\"root\""],
    ["the end of the file"]. *)
