(** The access-control directives of a configuration file, as nginx
    writes them: [allow ADDRESS|all], [deny ADDRESS|all], [auth_basic
    REALM|off], [auth_basic_user_file FILE], [limit_req RATE [BURST]|off]
    ([RATE]: [10r/s], [30r/m] or a number of requests per second, from
    1r/m to 1000000r/s; [BURST] 1 to 100000 requests at once, by default
    one second's worth, at least 1: a zone of its own, by address), nginx's
    [limit_req zone=NAME [burst=N] [nodelay]] ([N] requests beyond the
    first, so [N + 1] at once; never delayed, with or without
    [nodelay]) and [limit_req_status CODE] (400-599; default [429], where
    nginx's is [503]). One [limit_req] a block (nginx allows several: a
    second here is refused as given twice). Read in the top level
    (every site's default), sites and locations; {!Site_guards} turns them
    into {!Httpz_server.Guard} values.

    {b Zones} ([limit_req_zone KEY zone=NAME:SIZE rate=RATE], top level
    only, {!zone_directives}): [KEY] is [$binary_remote_addr] (or
    [$remote_addr], the same), [$http_NAME] (a request header, nginx's
    spelling: [$http_x_api_key] is [X-Api-Key]), [$cookie_NAME] or
    [$server_name] (the site's first name: one count per site); [SIZE]
    512 bytes to 64m, 32 bytes a client ([10m]: 327680 rounded down to 262144);
    a request without the header or cookie, or with it empty, is not
    limited (nginx: an empty key is not accounted). The zone's entries
    pass down to every site and location like the top level's other
    directives, so {!config} finds the zone a [limit_req] names among
    them.

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

val zone_directives : string list
(** [limit_req_zone]: read here, allowed at the top level only. *)

val repeatable : string -> bool
(** [allow], [deny] and [limit_req_zone] may be given many times in a
    block; the others once. *)

val key_arg : Conf_syntax.arg -> Httpz_server.Guard.key
(** A zone's key ([$binary_remote_addr], …; [$server_name] as
    [Site ""]). @raise Conf_args.Bad for another. *)

val zone_arg : Conf_syntax.arg -> string * int
(** [zone=NAME:SIZE]: the name and the size in bytes.
    @raise Conf_args.Bad when malformed or out of range. *)

val read : dir:string -> Conf_syntax.directive -> entry
(** [read ~dir d] checks [d]'s arguments (an address or prefix, a realm a
    header can carry, a rate and burst) and makes a relative user file
    relative to [dir].
    @raise Conf_args.Bad at the argument at fault. *)

val within : outer:entry list -> inner:entry list -> entry list
(** [within ~outer ~inner]: what a block with [inner] inside a block with
    [outer] has, kind by kind (see above). *)

val config : ?site:string -> entry list -> (Httpz_server.Guard.config, Conf_lexer.pos * string) result
(** [config ~site entries] is the guard they describe ({!Httpz_server.Guard.none}
    for none), or an error at [auth_basic] without a user file or at a
    [limit_req] naming no zone. [site] (the site's first name) is the key
    of a [$server_name] zone. A user
    file without [auth_basic] asks for no password (as nginx: a site may
    name the file that its locations' [auth_basic] use). Reads no file. *)

val user_file : entry list -> Conf_lexer.pos option
(** Where the [auth_basic_user_file] among [entries] is given. *)
