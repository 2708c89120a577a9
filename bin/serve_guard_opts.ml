(* Access control and the error log, as options of `httpz serve`. The
   rules become [Guard.config] values, the same a configuration file's
   site or location carries. *)

open Cmdliner
module Guard = Httpz_server.Guard

type t = {
  access : string list;
  limit_rate : float option;
  limit_burst : int option;
  auth_file : string option;
  auth_realm : string;
  auth_prefix : string;
  error_log : string option;
  log_level : string;
  stats_listen : string list;
}

let access =
  Arg.(value & opt_all string []
       & info [ "access" ] ~docv:"allow|deny:ADDRESS"
           ~doc:"Allow or deny clients by address: $(b,allow:10.0.0.0/8), $(b,deny:192.0.2.7), \
                 $(b,allow:2001:db8::/32), $(b,deny:all). Repeat it; the first rule that \
                 contains the client decides (as nginx's allow and deny); a client no rule \
                 contains is allowed, so end a list of allows with $(b,deny:all). A denied \
                 client gets 403. IPv4 rules also match IPv4 clients of an IPv6 socket.")

let limit_rate =
  Arg.(value & opt (some float) None
       & info [ "limit-rate" ] ~docv:"PER_SECOND"
           ~doc:"Requests per second one client address (an IPv6 client: its /64) may send, after \
                 a burst of $(b,--limit-burst); more get 429 with Retry-After. Counted in memory \
                 shared by all the workers: one count per client for the whole server. 0.5 is \
                 one request every two seconds.")

let limit_burst =
  Arg.(value & opt (some int) None
       & info [ "limit-burst" ] ~docv:"N"
           ~doc:"Requests a client may send at once before $(b,--limit-rate) applies. Default: 1 \
                 second's worth of the rate (at least 1).")

let auth_file =
  Arg.(value & opt (some string) None
       & info [ "auth-file" ] ~docv:"FILE"
           ~doc:"Ask for HTTP Basic authentication (401) under $(b,--auth-prefix), against \
                 $(i,FILE): $(b,user:hash) lines with bcrypt ($(b,htpasswd -B)) or SHA-crypt \
                 ($(b,openssl passwd -6)) hashes. A verified password is remembered per worker, \
                 so a keep-alive client pays the hash once. Read once, at start.")

let auth_realm =
  Arg.(value & opt string "httpz"
       & info [ "auth-realm" ] ~docv:"REALM" ~doc:"The realm the 401 names (shown by browsers).")

let auth_prefix =
  Arg.(value & opt string "/"
       & info [ "auth-prefix" ] ~docv:"PATH"
           ~doc:"Ask for the password only for this path and below it ($(b,/admin): /admin and \
                 /admin/..., not /administrator), compared after percent-decoding and dot \
                 segments as files are resolved. Default: every path.")

let error_log =
  Arg.(value & opt (some string) None
       & info [ "error-log" ] ~docv:"FILE"
           ~doc:"Write the server's messages (start, reloads, worker restarts, files that could \
                 not be opened, handler failures) to $(i,FILE) instead of standard error, one \
                 timestamped line each; reopened on SIGHUP.")

let log_level =
  Arg.(value & opt string "info"
       & info [ "log-level" ] ~docv:"LEVEL"
           ~doc:"The least severe messages written: $(b,error), $(b,warn), $(b,info) (the \
                 default) or $(b,debug) (adds failed TLS handshakes and missing files).")

let stats_listen =
  Arg.(value & opt_all string []
       & info [ "stats-listen" ] ~docv:"ADDR:PORT"
           ~doc:"Serve the status on a listener of its own, in plain HTTP and without a token: \
                 $(b,GET /__httpz/stats) (JSON: the answering worker's counters and the totals \
                 of every worker: responses by status class, bytes sent, connections accepted \
                 and by state) and $(b,/__httpz/stats.txt) (the totals as name-value lines). \
                 Whoever reaches the address may read it: give a loopback or internal one \
                 ($(b,127.0.0.1:9100)). With $(b,--stats-token) the same is also answered on \
                 the site's addresses to requests that carry the token.")

let term =
  Term.(const (fun access limit_rate limit_burst auth_file auth_realm auth_prefix error_log
                   log_level stats_listen ->
            { access; limit_rate; limit_burst; auth_file; auth_realm; auth_prefix;
              error_log; log_level; stats_listen })
        $ access $ limit_rate $ limit_burst $ auth_file $ auth_realm $ auth_prefix
        $ error_log $ log_level $ stats_listen)

type guards = { site : Guard.config; auth : (string * Guard.config) option }

let guards t =
  let ( let* ) = Result.bind in
  let* access =
    List.fold_left
      (fun acc r ->
        let* acc = acc in
        match Httpz_server.Address_rules.parse_rule r with
        | Ok rule -> (
            (* Each address is checked now, to name the option. *)
            match Httpz_server.Address_rules.compile [ rule ] with
            | Ok _ -> Ok (rule :: acc)
            | Error e -> Error ("--access " ^ e))
        | Error e -> Error ("--access " ^ e))
      (Ok []) t.access
  in
  let* rate =
    match (t.limit_rate, t.limit_burst) with
    | None, None -> Ok None
    | None, Some _ -> Error "--limit-burst needs --limit-rate"
    | Some r, _ when not (r > 0. && Float.is_finite r) -> Error "--limit-rate must be a positive number"
    | Some _, Some b when b < 1 -> Error "--limit-burst must be at least 1"
    | Some r, b ->
        let burst = match b with Some b -> b | None -> max 1 (int_of_float (Float.ceil r)) in
        Ok (Some { Guard.per_second = r; burst })
  in
  let* auth =
    match t.auth_file with
    | None when t.auth_prefix <> "/" -> Error "--auth-prefix needs --auth-file"
    | None -> Ok None
    | Some file ->
        if t.auth_prefix = "" || t.auth_prefix.[0] <> '/' then Error "--auth-prefix must start with /"
        else Ok (Some (t.auth_prefix, { Guard.none with auth = Some { Guard.realm = t.auth_realm; user_file = file } }))
  in
  Ok { site = { Guard.none with access = List.rev access; rate }; auth }

let wrap g app =
  let ( let* ) = Result.bind in
  let* app =
    match g.auth with
    | None -> Ok app
    | Some (prefix, config) -> (
        match Guard.create config with
        | Ok guard -> Ok (Guard.under ~prefix guard ~app)
        | Error e -> Error ("--auth-file " ^ e))
  in
  if Guard.is_none g.site then Ok app
  else
    match Guard.create g.site with
    | Ok guard -> Ok (Guard.handler guard ~app)
    | Error e -> Error e

let server_config t c =
  let ( let* ) = Result.bind in
  let* log_level = Result.map_error (fun e -> "--log-level " ^ e) (Httpz_server.Log.level_of_string t.log_level) in
  let* stats_listen =
    List.fold_left
      (fun acc a ->
        let* acc = acc in
        match Httpz_server.Server.parse_listen a with
        | Ok hp -> Ok (hp :: acc)
        | Error e -> Error ("--stats-listen " ^ e))
      (Ok []) t.stats_listen
  in
  let c =
    { c with Httpz_server.Config.error_log = t.error_log; log_level;
             stats_listen = List.rev stats_listen }
  in
  Result.map (fun () -> c)
    (Httpz_server.Config.check ~name:Serve_server_opts.option_name ~role_name:Serve_server_opts.role_option c)
