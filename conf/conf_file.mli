(** The configuration file of [httpz serve --config] read into typed
    values: the server's settings ({!Httpz_server.Config.t}) and the sites
    with their rules. Allocates; runs at start-up, on [httpz check] and on
    [SIGHUP], never per request. examples/httpz.conf documents the format
    with every directive.

    {2 Errors}
    Every error is one line, [FILE:LINE:COL: message], pointing at the
    directive or argument at fault; an unknown directive gets a "did you
    mean" hint when a known one is close, and a directive known elsewhere
    (a [location] at the top level) says where it belongs. The first error
    stops the reading.

    {2 Scopes}
    The top level holds the server's settings (listen, TLS, processes,
    timeouts, logs; every setting of {!Httpz_server.Config.settings} with
    a directive is one, read by its kind) and may hold site settings ([root], [listing], …),
    which then are the defaults of every site. A [site NAMES { … }] block
    is one virtual host; without any, the top level is the one site.
    [location PATH { … }] (prefix), [location = PATH { … }] (exact),
    [location ^~ PATH { … }] (a prefix that, as the longest, stops the
    regex search) and [location ~ REGEX { … }] / [~* REGEX] (PCRE2,
    compiled here: a pattern it refuses is an error at the pattern) live
    in a site (or at the top level when there is no site block).
    [include] is expanded by {!Conf_syntax.parse}, before any of this.

    {2 Paths}
    A relative path ([root], certificates, [access_log], [error_log],
    [auth_basic_user_file]) is relative to
    the directory of the configuration file, so a file and its site can
    move together.

    {2 Access control}
    [auth_basic], [auth_basic_user_file], [allow], [deny] and [limit_req]
    are read in the top level, sites and locations ({!Conf_access}: their
    arguments checked, inheritance kind by kind) and enforced by
    {!Sites} through {!Httpz_server.Guard}, with [limit_req_status];
    [limit_req_zone] (top level only) defines the zones [limit_req
    zone=NAME] counts in, shared by the workers ({!Conf_access}). [limit_conn
    N] and [limit_conn NAME N] (with [limit_conn_zone $binary_remote_addr
    zone=NAME:SIZE], sizing the table the workers share,
    {!Httpz_server.Conn_limit}) are the server's (connections per client
    address), at the top level only. *)

type pos = Conf_lexer.pos = { file : string; line : int; col : int }

type access = Conf_access.entry = { directive : string; args : string list; at : pos }
(** An access-control directive as written ({!Conf_access}): a site's
    hold the top level's it inherits; a location's are its own. *)

type action =
  | Serve  (** files, with the location's settings *)
  | Return of int * string
      (** [return CODE [URL|TEXT]]: a 3xx with [Location: URL], or the
          status with [TEXT] (text/plain) or its error page *)
  | Rewrite of string
      (** the matched part of the path (the whole path for an exact or a
          regex location) replaced by this decoded path, served in place:
          the client's URL does not change. In a regex location, [$0]..[$9]
          stand for its groups (in [Return]'s text too). *)
  | Internal  (** answered 404 when requested; its files serve as error pages *)

type kind =
  | Prefix  (** [location /prefix/] *)
  | Exact  (** [location = /path] *)
  | Prefix_stop  (** [location ^~ /prefix/]: when it is the longest prefix, no regex is tried *)
  | Regex of { pattern : string; caseless : bool; re : Pcre2.t }
      (** [location ~ REGEX] ([~*]: ASCII case ignored), tried in file order *)

type location = {
  exact : bool;  (** [location = PATH] *)
  kind : kind;
  path : string;  (** decoded, starts with ['/'] (a [Regex]: its pattern) *)
  lpos : pos;
  headers : (string * string) list;
      (** added to the file answers and redirects of this location,
          replacing a site header of the same name ([Cache-Control]
          replaces the one of [max_age]) *)
  try_files : string;  (** decoded path served when the file is not found; [""]: none *)
  action : action;
  listing : bool option;  (** [None]: the site's *)
  compress : bool option;  (** [None]: the site's *)
  access : access list;
  log : Conf_logs.spec option;  (** [access_log] here; [None]: the site's *)
}

type site = {
  names : string list;
      (** lower case: exact names and [*.suffix] wildcards; [[]] for the
          implicit site of a file without site blocks *)
  spos : pos;
  static : Static.config;
  root_pos : pos;
  page_pos : (int * pos) list;  (** where each [error_page] is given *)
  site_headers : (string * string) list;
  cert : (string * string * pos) option;  (** certificate, key, where *)
  locations : location list;
  access : access list;
  log : Conf_logs.spec option;  (** [access_log] in the site; [None]: the server's *)
}

type unknown_host = Default_site | Refuse of int  (** 421 or 404 *)

type t = {
  file : string;
  server : Config.t;  (** checked with {!Config.check} *)
  sites : site list;  (** at least one *)
  default_site : int;  (** index in [sites] of the one unknown hosts get *)
  unknown_host : unknown_host;
  logs : (string * pos) list;
      (** the access and error log files named (not [-] nor [stderr]) and
          syslog destinations,
          where: [httpz check] checks that they can be opened *)
}

val static_error_pos : site -> string -> pos
(** [static_error_pos site message]: where to report [message], an error
    of {!Httpz_static.Static.create} for [site]: at the [error_page] it
    names, else at [root]. *)

val read_string : file:string -> string -> (t, string) result
(** [read_string ~file text] reads [text] as the file [file] (which only
    names it in messages and resolves nothing). [Error] is
    ["FILE:LINE:COL: message"]. Opens nothing. *)

val read : string -> (t, string) result
(** [read path] reads the file at [path]; a file that cannot be read is
    ["PATH: reason"]. *)

