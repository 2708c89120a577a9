(** The access-control directives of a configuration file, as nginx
    writes them: [allow ADDRESS|all], [deny ADDRESS|all], [auth_basic
    REALM|off], [auth_basic_user_file FILE], [limit_req RATE [BURST]|off]
    ([RATE]: [10r/s], [30r/m] or a number of requests per second, from
    1r/m to 1000000r/s; [BURST] 1 to 100000, by default one second's
    worth, at least 1). Read in the top level
    (every site's default), sites and locations; {!Site_guards} turns them
    into {!Httpz_server.Guard} values.

    {b Inheritance} (nginx's, per kind): a block that gives no directive
    of a kind (address rules; [auth_basic]; [auth_basic_user_file];
    [limit_req]) has its enclosing block's; one that gives any has only
    its own. So a location with [allow 10.0.0.0/8; deny all;] drops the
    site's address rules and keeps its password, and [auth_basic off]
    lifts the site's password there.

    Allocates; start-up, [httpz check] and reloads only. *)

type entry = { directive : string; args : string list; at : Conf_lexer.pos }
(** A directive as written (a relative user file already made absolute),
    at the position of its name. *)

val directives : string list
(** The names read here. *)

val repeatable : string -> bool
(** [allow] and [deny] may be given many times in a block; the others
    once. *)

val read : dir:string -> Conf_syntax.directive -> entry
(** [read ~dir d] checks [d]'s arguments (an address or prefix, a realm a
    header can carry, a rate and burst) and makes a relative user file
    relative to [dir].
    @raise Conf_args.Bad at the argument at fault. *)

val within : outer:entry list -> inner:entry list -> entry list
(** [within ~outer ~inner]: what a block with [inner] inside a block with
    [outer] has, kind by kind (see above). *)

val config : entry list -> (Httpz_server.Guard.config, Conf_lexer.pos * string) result
(** [config entries] is the guard they describe ({!Httpz_server.Guard.none}
    for none), or an error at [auth_basic] without a user file. A user
    file without [auth_basic] asks for no password (as nginx: a site may
    name the file that its locations' [auth_basic] use). Reads no file. *)

val user_file : entry list -> Conf_lexer.pos option
(** Where the [auth_basic_user_file] among [entries] is given. *)
