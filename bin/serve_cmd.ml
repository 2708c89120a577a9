(* `httpz serve`: the static file server. Its options are parsed by one
   term into one record, the server's (Serve_server_opts) and the static
   handler's (Serve_files_opts), turned into a [Server.config] and a
   [Static.config]; the server's own bounds are checked once, by
   [Config.check], whose messages name the options. *)

open Cmdliner
module Server = Httpz_server.Server
module Static = Httpz_static.Static

(* Problems with option values (a missing directory, a port out of range)
   exit 2 with one line on stderr, never a backtrace. Cmdliner itself
   answers malformed syntax (a non-number for --port) with its own usage
   message and status 124. *)
let usage_error fmt =
  Printf.ksprintf (fun msg -> Printf.eprintf "httpz serve: %s\nTry 'httpz serve --help'.\n%!" msg; 2) fmt

(* {1 One configuration} *)

type options = {
  server : Serve_server_opts.t;
  files : Serve_files_opts.t;
  guard : Serve_guard_opts.t;
  config : string option;
}

let config =
  Arg.(value & opt (some string) None
       & info [ "config" ] ~docv:"FILE"
           ~doc:"Serve what the configuration file $(i,FILE) describes (sites by Host name, \
                 certificates by SNI, per-path rules; examples/httpz.conf documents the \
                 format, $(b,httpz check --config) $(i,FILE) checks it). No other option may \
                 be given with it. SIGHUP reads the file again.")

let options_term =
  Term.(const (fun server files guard config -> { server; files; guard; config })
        $ Serve_server_opts.term $ Serve_files_opts.term $ Serve_guard_opts.term $ config)

(* {1 A configuration file} *)

module Conf_file = Httpz_conf.Conf_file
module Sites = Httpz_conf.Sites

(* The file read and its sites opened; on SIGHUP again, by the supervisor.
   Any exception on the way (a bug, memory) is an error like a bad file:
   a reload must never take the supervisor, and the server, down. *)
let load file =
  try Result.bind (Conf_file.read file) (fun conf ->
      Result.map (fun sites -> Httpz_conf.Site_labels.register conf; (conf, sites)) (Sites.create conf))
  with e -> Error (Printf.sprintf "%s: cannot be read: %s" file (Printexc.to_string e))

(* Decision: with --config the file says everything; any other option of
   `serve` is refused rather than merged, so what runs is what `httpz
   check` read and what a reload reads again. *)
let other_options () =
  let args = Array.to_list Sys.argv in
  let rec after_serve = function [] -> [] | "serve" :: rest -> rest | _ :: rest -> after_serve rest in
  let rec others = function
    | [] -> []
    | "--config" :: _ :: rest -> others rest
    | a :: rest when String.length a > 9 && String.sub a 0 9 = "--config=" -> others rest
    | a :: rest -> a :: others rest
  in
  others (after_serve args)

let serve_config file =
  match other_options () with
  | a :: _ ->
      usage_error "%s cannot be combined with --config: the configuration file says it all (give one or the other)" a
  | [] -> (
      match load file, Server.systemd_listen_fds () with
      | Error e, _ | _, Error e -> Printf.eprintf "httpz serve: %s\n%!" e; 2
      | Ok (conf, sites), Ok fds ->
          (* Under socket activation the passed sockets are served (their
             roles by port, as with the options). *)
          Server.run_reloading { conf.Conf_file.server with listen_fds = fds } (Sites.handler sites)
            ~release:(fun () -> Sites.close sites)
            ~reconfigure:(fun () ->
              Result.map
                (fun (conf, sites) ->
                  { Server.config = conf.Conf_file.server; handler = Sites.handler sites;
                    release = (fun () -> Sites.close sites) })
                (load file)))

(* The first problem found is the one reported, with exit 2. *)
let run o =
  match o.config with
  | Some file -> serve_config file
  | None ->
  let ( let* ) r f = match r with Error msg -> usage_error "%s" msg | Ok v -> f v in
  let* static = Serve_files_opts.static_config o.files in
  let* server =
    Serve_server_opts.server_config o.server ~root:static.Static.root
      ~max_age:(static.Static.max_age >= 0)
  in
  let* server = Serve_guard_opts.server_config o.guard server in
  let* guards = Serve_guard_opts.guards o.guard in
  let* static = Static.create static in
  let* handler = Serve_guard_opts.wrap guards (Static.handler static) in
  Server.run server handler

let serve_cmd =
  let doc = "serve a directory over HTTP/1.1" in
  let man = [
    `S Manpage.s_description;
    `P "Serves the files under $(i,DIR) with GET and HEAD: ETag and Last-Modified validators, \
        conditional requests (304/412), byte ranges (206, multipart/byteranges, 416), \
        precompressed $(i,FILE).gz sidecars for clients that accept gzip, index.html for \
        directories, and optionally directory listings. Paths are opened with openat2 \
        RESOLVE_BENEATH, so the kernel refuses anything outside $(i,DIR).";
    `P "For operators: several listening addresses ($(b,--listen), IPv4 and IPv6), systemd \
        socket activation, extra response headers ($(b,--header)), custom error pages \
        ($(b,--error-page)), a default type ($(b,--default-type)), common, combined or JSON \
        access logs ($(b,--log-format)) and gzip on the fly ($(b,--compress)).";
    `S Manpage.s_environment;
    `P "$(b,LISTEN_FDS), $(b,LISTEN_PID): systemd socket activation (sd_listen_fds(3)). When \
        LISTEN_PID is this process, the LISTEN_FDS listening TCP sockets from fd 3 on are \
        served instead of binding any address; $(b,--listen), $(b,--port) and $(b,--host) are \
        then refused. The variables are cleared for child processes.";
    `S Manpage.s_exit_status;
    `P "0 after a graceful shutdown (SIGTERM or SIGINT). 1 when the server could not start \
        (address in use, ...). 2 for an invalid option value (missing directory, port out of \
        range). 124 for a command line cmdliner cannot parse.";
    `S "SIGNALS";
    `P "SIGTERM, SIGINT: stop accepting, let responses in progress finish (at most \
        $(b,--grace) seconds), exit 0. SIGHUP: the supervisor reopens the access log at its \
        path (after logrotate moved it) and reads the TLS certificate and key again, then \
        starts new workers on the same sockets and lets the previous ones finish their \
        requests (a download in progress is not cut; SIGTERM then gives them $(b,--grace) \
        seconds): no client is refused. On an error (a \
        broken certificate) it logs one line and nothing changes. A single worker without \
        $(b,--user) has no supervisor and reloads in place. With $(b,--config) the supervisor \
        always runs, and SIGHUP reads the file again: sites, rules, certificates, timeouts, \
        logs and access control (user files are read again) change for the new workers; an invalid file is logged with its line and column \
        and nothing changes; changed listening addresses, $(b,backlog), $(b,send_lowat), \
        $(b,defer_accept), $(b,workers) or $(b,user) take a restart (the reload is refused).";
    `S Manpage.s_examples;
    `Pre "httpz serve examples/site -p 8080 --max-age 60 --list";
    `Pre "httpz check --config /etc/httpz/httpz.conf && httpz serve --config /etc/httpz/httpz.conf";
    `Pre "httpz serve /var/www -p 443 --host 0.0.0.0 --tls-cert fullchain.pem --tls-key privkey.pem --redirect-http 80 --hsts 31536000 --user www-data";
    `Pre "httpz serve /var/www --listen 0.0.0.0:80 --listen '[::]:80' --compress --header 'X-Frame-Options: DENY' --error-page 404=/errors/404.html --access-log /var/log/httpz/access.log --log-format json --user www-data";
  ] in
  Cmd.v (Cmd.info "serve" ~doc ~man ~exits:[])
    Term.(const run $ options_term)

let cmds : int Cmd.t list = [ serve_cmd ]
