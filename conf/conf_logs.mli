(** The log directives of a configuration file: [log_format NAME
    [escape=default|json|none] 'TEXT' …;] (nginx's: the strings put
    together, compiled by {!Httpz_server.Access_log.compile}) and
    [access_log DEST [FORMAT];] / [access_log off;] at the top level, in
    a site or in a location. [DEST] is a file (relative to the
    configuration's directory), [-] (standard output) or
    [syslog:server=…] ({!Httpz_server.Log_dest.open_dest}). [FORMAT] is
    a built-in one or a [log_format] name; without it, the top level's
    [log_format]. Named formats are read before anything else, so a site
    may name one given further down. Allocates; configuration time only. *)

type spec =
  | Off of Conf_lexer.pos
  | To of { dest : string; format : Httpz_server.Access_log.format option; at : Conf_lexer.pos }
      (** [format = None]: the server's *)

val reset : unit -> unit
(** Forgets the formats and files of a previous reading. *)

val is_definition : Conf_syntax.directive -> bool
(** [log_format NAME …] with a text, as opposed to the one-word
    [log_format combined;] that sets the server's format. *)

val define : Conf_syntax.directive -> unit
(** Compiles and names a definition; {!Conf_args.Bad} at the argument at
    fault (a built-in or repeated name, an unknown [escape=], an unknown
    variable). *)

val format : Conf_syntax.arg -> Httpz_server.Access_log.format
(** A built-in format or a defined name; else {!Conf_args.Bad}. *)

val access_log : dir:string -> Conf_syntax.directive -> spec
(** An [access_log] directive read; its file remembered in {!files}. *)

val files : (string * Conf_lexer.pos) list ref
(** The files and syslog destinations every [access_log] read so far
    names ([httpz check] opens them). *)
