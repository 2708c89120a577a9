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

type options = { server : Serve_server_opts.t; files : Serve_files_opts.t; guard : Serve_guard_opts.t }

let options_term =
  Term.(const (fun server files guard -> { server; files; guard })
        $ Serve_server_opts.term $ Serve_files_opts.term $ Serve_guard_opts.term)

(* The first problem found is the one reported, with exit 2. *)
let run o =
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
        $(b,--user) has no supervisor and reloads in place.";
    `S Manpage.s_examples;
    `Pre "httpz serve examples/site -p 8080 --max-age 60 --list";
    `Pre "httpz serve /var/www -p 443 --host 0.0.0.0 --tls-cert fullchain.pem --tls-key privkey.pem --redirect-http 80 --hsts 31536000 --user www-data";
    `Pre "httpz serve /var/www --listen 0.0.0.0:80 --listen '[::]:80' --compress --header 'X-Frame-Options: DENY' --error-page 404=/errors/404.html --access-log /var/log/httpz/access.log --log-format json --user www-data";
  ] in
  Cmd.v (Cmd.info "serve" ~doc ~man ~exits:[])
    Term.(const run $ options_term)

let cmds : int Cmd.t list = [ serve_cmd ]
