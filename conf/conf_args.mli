(** Reading one directive's arguments for {!Conf_file}: each reader
    returns the value or raises {!Bad} with the position of the argument
    (or directive) at fault and a one-line message. Allocates; start-up
    and reloads only. *)

exception Bad of Conf_syntax.pos * string

val bad : Conf_syntax.pos -> ('a, unit, string, 'b) format4 -> 'a
(** [bad pos fmt ...] raises {!Bad}. *)

val suggest : string -> string list -> string option
(** The closest of the known words within a small edit distance
    (transpositions count as one edit), for "did you mean" hints. *)

val arity : Conf_syntax.directive -> int -> unit
(** Exactly this many arguments, or an error at the first extra one. *)

val one : Conf_syntax.directive -> Conf_syntax.arg
(** The single argument. *)

val no_block : Conf_syntax.directive -> unit
(** The directive ends with [;], not a block. *)

val int_arg : ?min:int -> ?max:int -> Conf_syntax.arg -> int
(** Decimal digits within [min] (default 0) and [max]. *)

val duration : ?max:float -> ?max_text:string -> Conf_syntax.arg -> float
(** Seconds: [10], [10s], [500ms], [2m], [1h], [1d]; at most [max]
    (default ten years), which [max_text] names in the message. *)

val size : Conf_syntax.arg -> int
(** Bytes: [4096], [64k], [1m], [1g] (powers of 1024); at most 1 PiB. *)

val flag : Conf_syntax.arg -> bool
(** [on] or [off]. *)

val header_field : Conf_syntax.directive -> string * string
(** [header NAME VALUE]: a token name the server does not write itself
    ({!Httpz_server.Config.managed_headers}) and a field value. *)

val path_arg : Conf_syntax.arg -> what:string -> string
(** A decoded URL path: starts with ['/'], no [?], [#], control bytes, [.]
    or [..] segments. [what] names it in the message. *)

val valid_host_name : string -> bool
(** A lower-case host name a site may serve: letters, digits, ['-'],
    ['_'], ['.'] (not first or last), or [*.] before one. *)

val address_arg : host:string -> Conf_syntax.arg -> string * int
(** An address: [HOST:PORT], [[IPv6]:PORT], or a bare port on [host];
    the port is 1-65535. *)

type listen_role = Plain | Tls_listen | Redirect

val listen_arg : Conf_syntax.directive -> (string * int) * listen_role * Conf_syntax.pos
(** [listen ADDRESS [tls|plain|redirect]]: a bare port is on every
    address (0.0.0.0). *)

val log_format : Conf_syntax.arg -> Httpz_server.Access_log.format
(** An access-log format's name. *)
