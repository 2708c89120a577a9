(** The options of [httpz serve] that configure the server
    ({!Httpz_server.Server.config}), in groups, each parsed by one term:
    where to listen (with systemd socket activation), HTTPS, extra response
    headers, the access log, and the processes (workers, limits, timeouts,
    user). Everything here runs once at start and allocates. *)

type tls_options = {
  cert : string option;
  key : string option;
  redirect_http : int option;
  listen_plain : string list;  (** [--listen-plain], as given *)
  hsts : int option;
  ticket_rotation : int;
}
(** [--tls-cert], [--tls-key], [--redirect-http], [--listen-plain], [--hsts],
    [--tls-ticket-rotation]. *)

type listen_options = { listen : string list; port : int option; host : string option }
(** [--listen] (repeatable), [-p]/[--port], [--host]. *)

type log_options = { access_log : string option; log_format : string option }
(** [--access-log], [--log-format]. *)

type process_options = {
  io : Httpz_server.Server.io;
  workers : int option;
  user : string option;
  stats : string option;  (** [--stats-token] or [HTTPZ_STATS_TOKEN] *)
  settings : Httpz_server.Config.t -> Httpz_server.Config.t;
      (** the options of {!Httpz_server.Config.settings} that were given
          ([--max-connections], the timeouts, [--limit-conn],
          [--keepalive-requests], [--no-http2], …), each as its own
          option with the setting's help and default *)
}
(** [--io], [--workers], [--user], [--stats-token], and one option per
    setting. *)

type t = {
  process : process_options;
  listen : listen_options;
  tls : tls_options;
  headers : string list;  (** [--header], as given *)
  log : log_options;
}

val term : t Cmdliner.Term.t
(** Every option above. *)

val option_name : Httpz_server.Config.setting -> string
(** [option_name s] is the option that sets [s]
    (["--max-connections"], ["--grace"], ["--tls-ticket-rotation"], …), or
    {!Httpz_server.Config.field_name} for a field no option sets: how
    {!server_config}'s messages name it. *)

val role_option : Httpz_server.Config.role -> string
(** [role_option role] is the option that lists [role]'s addresses
    (["--listen"], ["--listen-plain"], ["--redirect-http"],
    ["--stats-listen"]): how {!server_config}'s messages name them. *)

val server_config :
  t -> root:string -> max_age:bool -> (Httpz_server.Server.config, string) result
(** [server_config t ~root ~max_age] is the server's configuration
    (defaults where no option is given; [root] for the start line), or the
    first problem as the one line an operator sees: what only the command
    line knows (a [--listen] that does not parse, [--tls-cert] without
    [--tls-key], a [--header] the server writes itself or that [--max-age]
    (when [max_age]) or [--hsts] also set, [--workers 0], an unknown
    [--user], options given with sockets systemd passed), then
    {!Httpz_server.Config.check} named by {!option_name}. Reads the
    systemd variables (and clears them: {!Httpz_server.Listeners.systemd_listen_fds})
    and the user database. *)
