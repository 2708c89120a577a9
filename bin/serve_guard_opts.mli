(** The options of [httpz serve] for access control and the error log:
    [--access], [--limit-rate], [--limit-burst],
    [--auth-file], [--auth-realm], [--auth-prefix], [--error-log],
    [--log-level], and the status listener [--stats-listen]. Everything here runs once at start and allocates. *)

type t = {
  access : string list;  (** [--access], as given, in order *)
  limit_rate : float option;
  limit_burst : int option;
  auth_file : string option;
  auth_realm : string;
  auth_prefix : string;
  error_log : string option;
  log_level : string;
  stats_listen : string list;  (** [--stats-listen], as given *)
}

val term : t Cmdliner.Term.t

type guards = {
  site : Httpz_server.Guard.config;  (** address rules and the rate: every request *)
  auth : (string * Httpz_server.Guard.config) option;  (** a prefix and its password *)
}
(** What the options ask for, as the plain values a configuration file
    would give ({!Httpz_server.Guard.config}). *)

val guards : t -> (guards, string) result
(** [guards t], or the first problem as the line an operator sees
    ([--access deny:10.0.0.0/33: ...], [--limit-burst needs --limit-rate],
    …). Reads no file: {!wrap} does. *)

val wrap : guards -> (Httpz_server.Ctx.t -> unit) -> (Httpz_server.Ctx.t -> unit, string) result
(** [wrap g app] is [app] behind the guards (the password's prefix
    checked by {!Httpz_server.Guard.under}), or [Error] naming the user
    file's problem. *)

val server_config : t -> Httpz_server.Server.config -> (Httpz_server.Server.config, string) result
(** [server_config t c] is [c] with [--error-log],
    [--log-level] and [--stats-listen], checked again by
    {!Httpz_server.Config.check} (an address listed twice, …). *)
