(* Where logs go: files (reopened at their paths after a rotation) and
   syslog sockets; every one this process opened, remembered. *)

type syslog = { prefix : string; (* "<PRI>1 " *) host_tag : string (* " HOST TAG " *) }

type kind =
  | File of { path : string; mutable dev : int; mutable ino : int }
  | Syslog of { sl : syslog; unix : string option; mutable sdev : int; mutable sino : int }

type dest = { dfd : int; kind : kind }

(* Every log this process opened by {!open_dest}, for {!reopen_files}. *)
let dests : dest list ref = ref []

let stat_ids fd = match Unix.fstat (Syscall.unix_of_fd fd) with s -> (s.Unix.st_dev, s.Unix.st_ino) | exception Unix.Unix_error _ -> (-1, -1)

(* Created 0640, not 0644 as nginx (which counts on a umask): client
   addresses and paths are nobody else's business. *)
let mode = 0o640

(* Never through a symlink, never a FIFO, device or a hard link to some
   other file: the supervisor runs as root and the log's directory may be
   writable by the workers' user (CVE-2016-1247). A file is handed to
   [owner] only when this call created it or root already owns it: never
   a file of someone else's that was put at the path. *)
let open_path ?owner path =
  let err m = Error (path ^ ": " ^ m) in
  let r = Extra.open_log path ~create:true ~mode in
  let created, r = if r = - Syscall.eexist then (false, Extra.open_log path ~create:false ~mode) else (true, r) in
  if r = - Syscall.eloop then err "a symbolic link: refused"
  else if r < 0 then err (Syscall.error_message r)
  else
    let u = Syscall.unix_of_fd r in
    let refuse m = Unix.close u; err m in
    match Unix.fstat u with
    | exception Unix.Unix_error (e, _, _) -> refuse (Unix.error_message e)
    | { Unix.st_kind = Unix.S_REG; st_nlink = 1; st_uid; _ } ->
        (match owner with
         | Some (uid, _) when st_uid <> uid && (created || st_uid = 0) -> (
             (* the group kept, as nginx *)
             try Unix.fchown u uid (-1) with Unix.Unix_error _ -> ())
         | _ -> ());
        (try Unix.clear_nonblock u with Unix.Unix_error _ -> ());
        Ok u
    | { Unix.st_kind = Unix.S_REG; st_nlink; _ } -> refuse (Printf.sprintf "%d hard links: refused" st_nlink)
    | _ -> refuse "not a regular file: refused"

(* {2 Syslog destinations} *)

let facilities =
  [ ("kern", 0); ("user", 1); ("mail", 2); ("daemon", 3); ("auth", 4); ("syslog", 5); ("lpr", 6); ("news", 7);
    ("uucp", 8); ("cron", 9); ("authpriv", 10); ("ftp", 11); ("local0", 16); ("local1", 17); ("local2", 18);
    ("local3", 19); ("local4", 20); ("local5", 21); ("local6", 22); ("local7", 23) ]

let severities =
  [ ("emerg", 0); ("alert", 1); ("crit", 2); ("error", 3); ("warn", 4); ("notice", 5); ("info", 6); ("debug", 7) ]

let is_syslog dest = String.length dest >= 7 && String.sub dest 0 7 = "syslog:"

type syslog_spec = { server : [ `Inet of string * int | `Unix of string ]; facility : int; severity : int; tag : string }

let parse_syslog dest =
  let ( let* ) = Result.bind in
  let params = String.split_on_char ',' (String.sub dest 7 (String.length dest - 7)) in
  let rec go acc = function
    | [] -> Ok acc
    | p :: rest -> (
        let k, v = match String.index_opt p '=' with Some i -> (String.sub p 0 i, String.sub p (i + 1) (String.length p - i - 1)) | None -> (p, "") in
        match k with
        | "server" ->
            if String.length v > 5 && String.sub v 0 5 = "unix:" then
              go { acc with server = `Unix (String.sub v 5 (String.length v - 5)) } rest
            else
              let host, port =
                if v <> "" && v.[0] = '[' then
                  match String.index_opt v ']' with
                  | Some i ->
                      let h = String.sub v 1 (i - 1) and r = String.sub v (i + 1) (String.length v - i - 1) in
                      (h, if r = "" then Some 514 else if r.[0] = ':' then int_of_string_opt (String.sub r 1 (String.length r - 1)) else None)
                  | None -> (v, None)
                else
                  match String.rindex_opt v ':' with
                  | Some i -> (String.sub v 0 i, int_of_string_opt (String.sub v (i + 1) (String.length v - i - 1)))
                  | None -> (v, Some 514)
              in
              (match port with
               | Some p when p > 0 && p < 65536 && host <> "" -> go { acc with server = `Inet (host, p) } rest
               | _ -> Error (Printf.sprintf "%S: give server=ADDRESS[:PORT] or server=unix:PATH" v))
        | "facility" -> (
            match List.assoc_opt v facilities with
            | Some f -> go { acc with facility = f } rest
            | None -> Error (Printf.sprintf "facility %S: give one of %s" v (String.concat ", " (List.map fst facilities))))
        | "severity" -> (
            match List.assoc_opt v severities with
            | Some s -> go { acc with severity = s } rest
            | None -> Error (Printf.sprintf "severity %S: give one of %s" v (String.concat ", " (List.map fst severities))))
        | "tag" ->
            if v = "" || String.length v > 48 || not (String.for_all (fun c -> c > ' ' && c < '\127') v) then
              Error (Printf.sprintf "tag %S: 1 to 48 printable characters, no space" v)
            else go { acc with tag = v } rest
        | "nohostname" -> go acc rest
        | _ -> Error (Printf.sprintf "%S: give server=…, facility=…, severity=… or tag=…" k))
  in
  let* s = go { server = `Unix ""; facility = 23; severity = 6; tag = "httpz" } params in
  if s.server = `Unix "" then Error "syslog: give server=ADDRESS[:PORT] or server=unix:PATH" else Ok s

let check_dest dest = if is_syslog dest then Result.map ignore (parse_syslog dest) else Ok ()

let hostname () =
  let h = try Unix.gethostname () with Unix.Unix_error _ -> "-" in
  let h = String.map (fun c -> if c > ' ' && c < '\127' then c else '-') h in
  if h = "" then "-" else h

let connect_unix path =
  let fd = Unix.socket ~cloexec:true Unix.PF_UNIX Unix.SOCK_DGRAM 0 in
  (try Unix.connect fd (Unix.ADDR_UNIX path); Unix.set_nonblock fd with e -> Unix.close fd; raise e);
  fd

let open_syslog dest =
  match parse_syslog dest with
  | Error e -> Error e
  | Ok s -> (
      let connect () =
        match s.server with
        | `Unix path -> connect_unix path
        | `Inet (host, port) ->
            let addr =
              match Unix.getaddrinfo host (string_of_int port) [ Unix.AI_SOCKTYPE Unix.SOCK_DGRAM ] with
              | a :: _ -> a
              | [] -> raise (Unix.Unix_error (Unix.EADDRNOTAVAIL, "getaddrinfo", host))
            in
            let fd = Unix.socket ~cloexec:true addr.Unix.ai_family Unix.SOCK_DGRAM 0 in
            (try Unix.connect fd addr.Unix.ai_addr; Unix.set_nonblock fd with e -> Unix.close fd; raise e);
            fd
      in
      match connect () with
      | exception Unix.Unix_error (e, f, _) -> Error (Printf.sprintf "%s: %s: %s" dest f (Unix.error_message e))
      | fd ->
          let sl =
            { prefix = Printf.sprintf "<%d>1 " ((s.facility * 8) + s.severity);
              host_tag = Printf.sprintf " %s %s " (hostname ()) s.tag }
          in
          let fd = Syscall.fd_of_unix fd in
          let sdev, sino = stat_ids fd in
          let unix = match s.server with `Unix p -> Some p | `Inet _ -> None in
          dests := { dfd = fd; kind = Syslog { sl; unix; sdev; sino } } :: List.filter (fun d -> d.dfd <> fd) !dests;
          Ok fd)

let open_dest dest =
  if is_syslog dest then open_syslog dest
  else
    match open_path dest with
    | Error _ as e -> e
    | Ok u ->
        let fd = Syscall.fd_of_unix u in
        let dev, ino = stat_ids fd in
        (* A number reused: what it was is closed. *)
        dests := { dfd = fd; kind = File { path = dest; dev; ino } } :: List.filter (fun d -> d.dfd <> fd) !dests;
        Ok fd

let close_dest fd =
  if fd > 2 then begin
    dests := List.filter (fun d -> d.dfd <> fd) !dests;
    ignore (Syscall.close fd : int)
  end

(* A file whose descriptor was closed since (and maybe reused for
   something else) is no longer ours: it is dropped, never written over. *)
let reopen_files ~owner =
  let errors = ref [] in
  dests :=
    List.filter
      (fun d ->
        match d.kind with
        | Syslog y ->
            let dev, ino = stat_ids d.dfd in
            if dev <> y.sdev || ino <> y.sino then false
            else begin
              (* A unix socket connected again: its receiver (syslogd,
                 journald) may have restarted since. *)
              (match y.unix with
               | None -> ()
               | Some path -> (
                   match connect_unix path with
                   | exception Unix.Unix_error (e, _, _) ->
                       errors := Printf.sprintf "syslog %s: %s" path (Unix.error_message e) :: !errors
                   | u ->
                       Unix.dup2 ~cloexec:true u (Syscall.unix_of_fd d.dfd);
                       Unix.close u;
                       let dev, ino = stat_ids d.dfd in
                       y.sdev <- dev;
                       y.sino <- ino));
              true
            end
        | File f ->
            let dev, ino = stat_ids d.dfd in
            if dev <> f.dev || ino <> f.ino then false
            else begin
              (match open_path ?owner f.path with
               | Error e -> errors := e :: !errors
               | Ok u ->
                   Unix.dup2 ~cloexec:true u (Syscall.unix_of_fd d.dfd);
                   Unix.close u;
                   let dev, ino = stat_ids d.dfd in
                   f.dev <- dev;
                   f.ino <- ino);
              true
            end)
      !dests;
  List.rev !errors

let syslog_of fd =
  if fd < 0 then None
  else List.find_map (fun d -> match d.kind with Syslog y when d.dfd = fd -> Some y.sl | _ -> None) !dests
