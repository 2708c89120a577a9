(* What [httpz check] does beyond reading: the files a configuration names
   opened as [serve] would, and the one-line summary. *)

open Conf_file

let check_files t =
  let at p fmt = Printf.ksprintf (fun m -> Error (Printf.sprintf "%s: %s" (Conf_lexer.locate ~file:t.file p) m)) fmt in
  let rec sites = function
    | [] -> Ok ()
    | s :: rest -> (
        match Static.create s.static with
        | Error e -> at (Conf_file.static_error_pos s e) "%s" e
        | Ok st -> (
            Static.close st;
            match s.cert with
            | None -> sites rest
            | Some (cert_file, key_file, p) -> (
                match Tls.load ~cert_file ~key_file () with
                | Error e -> at p "%s" e
                | Ok srv -> Tls.free srv; sites rest)))
  in
  (* A log [serve] could not open would stop it (exit 1): its directory
     must exist, and it or its directory be writable. Nothing is created. *)
  let rec logs = function
    | [] -> Ok ()
    | (path, p) :: rest when Log_dest.is_syslog path -> (
        (* A syslog socket is connected as serve would (a unix socket's
           receiver must be there). *)
        match Log_dest.open_dest path with
        | Ok fd -> Log_dest.close_dest fd; logs rest
        | Error e -> at p "%s" e)
    | (path, p) :: rest -> (
        let dir = Filename.dirname path in
        (* lstat: serve opens a log with O_NOFOLLOW and refuses a symlink
           (a dangling one too: nothing is ever created through one). *)
        match Unix.lstat path with
        | { Unix.st_kind = Unix.S_LNK; _ } -> at p "%s: a symbolic link: refused (serve would refuse it)" path
        | { Unix.st_kind = Unix.S_DIR; _ } -> at p "%s: is a directory, not a log file" path
        | _ -> (
            match Unix.access path [ Unix.W_OK ] with
            | () -> logs rest
            | exception Unix.Unix_error (e, _, _) -> at p "%s: cannot be written: %s" path (Unix.error_message e))
        | exception Unix.Unix_error (Unix.ENOENT, _, _) -> (
            match Unix.stat dir with
            | { Unix.st_kind = Unix.S_DIR; _ } -> (
                match Unix.access dir [ Unix.W_OK; Unix.X_OK ] with
                | () -> logs rest
                | exception Unix.Unix_error (e, _, _) ->
                    at p "%s: its directory %s cannot be written: %s" path dir (Unix.error_message e))
            | _ -> at p "%s: %s is not a directory" path dir
            | exception Unix.Unix_error ((Unix.ENOENT | Unix.ENOTDIR), _, _) -> at p "%s: no such directory %s" path dir
            | exception Unix.Unix_error (e, _, _) -> at p "%s: its directory %s: %s" path dir (Unix.error_message e))
        | exception Unix.Unix_error (e, _, _) -> at p "%s: %s" path (Unix.error_message e))
  in
  match Result.bind (logs t.logs) (fun () -> Result.bind (Site_guards.create t) (fun _ -> sites t.sites)) with
  | Error e -> Error e
  | Ok () -> (
      match t.server.tls with
      | None -> Ok ()
      | Some tl -> (
          match Tls.load ~cert_file:tl.cert_file ~key_file:tl.key_file () with
          | Error e -> Error (Printf.sprintf "%s: %s" t.file e)
          | Ok srv -> Tls.free srv; Ok ()))

let summary t =
  let n_sites = List.length t.sites in
  let n_locs = List.fold_left (fun acc s -> acc + List.length s.locations) 0 t.sites in
  let names s = match s.names with [] -> "every host" | n :: _ -> n in
  let n_access =
    List.fold_left
      (fun acc (s : site) ->
        acc + List.length s.access
        + List.fold_left (fun acc (l : location) -> acc + List.length l.access) 0 s.locations)
      0 t.sites
  in
  Printf.sprintf "%s: ok: %d site%s (%s), %d location%s, listening on %s%s" t.file n_sites
    (if n_sites = 1 then "" else "s")
    (String.concat ", " (List.map names t.sites))
    n_locs (if n_locs = 1 then "" else "s")
    (String.concat ", "
       (List.map
          (fun (h, p, role) ->
            match role, t.server.tls with
            | Config.Serve, Some _ -> Config.url ~scheme:"https" h p
            | Config.Redirect, _ -> Config.url h p ^ " (redirect)"
            | _ -> Config.url h p)
          (Config.endpoints t.server)))
    (if n_access = 0 then ""
     else Printf.sprintf "; %d access-control directive%s" n_access (if n_access = 1 then "" else "s"))
