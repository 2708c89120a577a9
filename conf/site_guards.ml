module Guard = Httpz_server.Guard

type t = { site : Guard.t option; locations : Guard.t option array }

exception Failed of string

module Limit_zone = Httpz_server.Limit_zone

(* The zones of the latest reading that succeeded: the next one (a
   reload, in the supervisor) keeps those that did not change. *)
let zones = ref (Limit_zone.registry ())

let create (conf : Conf_file.t) =
  let made = Hashtbl.create 8 in
  let next = Limit_zone.registry () in
  let previous = !zones in
  (* An unnamed zone is its guard's own: numbered in the order of the
     file, which a reload of the same file repeats. *)
  let unnamed = ref 0 in
  let find ~id ~entries =
    let id = if id <> "" && id.[0] = ' ' then (incr unnamed; Printf.sprintf "%s #%d" id !unnamed) else id in
    Limit_zone.reuse ~previous ~next ~id ~entries
  in
  let fail (p : Conf_lexer.pos) m = raise (Failed (Printf.sprintf "%s: %s" (Conf_lexer.locate ~file:conf.file p) m)) in
  (* Where user files are given, and which a password in effect uses: one
     that none uses protects nothing, which is a mistake. *)
  let files = ref [] and used = ref [] in
  let make (c : Guard.config) entries =
    (* A FIFO or device would block the reading for ever (or read a
       stream): only a regular file is a user file. *)
    (match c.auth with
     | Some { user_file; _ } -> (
         match Unix.stat user_file with
         | { Unix.st_kind = Unix.S_REG; _ } -> ()
         | _ ->
             fail (match Conf_access.user_file entries with Some p -> p | None -> (List.hd entries).at)
               (Printf.sprintf "%s: not a regular file" user_file)
         | exception Unix.Unix_error _ -> (* Guard.create says why *) ())
     | None -> ());
    match Guard.create ~zones:find c with
    | Ok g -> Hashtbl.replace made c g; g
    | Error e ->
        (* The rules and rate were checked when read: what fails now is
           the user file. *)
        fail (match Conf_access.user_file entries with Some p -> p | None -> (List.hd entries).at) e
  in
  let guard ~site entries =
    let file = Conf_access.user_file entries in
    Option.iter (fun p -> files := p :: !files) file;
    match Conf_access.config ~site entries with
    | Error (p, m) -> fail p m
    | Ok c ->
        if c.auth <> None then Option.iter (fun p -> used := p :: !used) file;
        if Guard.is_none c then None
        else Some (match Hashtbl.find_opt made c with Some g -> g | None -> make c entries)
  in
  try
    let guards =
      List.map
        (fun (s : Conf_file.site) ->
          let name = match s.names with n :: _ -> n | [] -> "" in
          let site = guard ~site:name s.access in
          let locations =
            List.map
              (fun (l : Conf_file.location) -> guard ~site:name (Conf_access.within ~outer:s.access ~inner:l.access))
              s.locations
          in
          { site; locations = Array.of_list locations })
        conf.sites
    in
    match List.find_opt (fun p -> not (List.mem p !used)) (List.rev !files) with
    | Some p -> fail p "this user file is used by no auth_basic: give auth_basic REALM beside it (or in a location)"
    | None ->
        zones := next;
        (* The connection counts' table, before the workers fork: sized by
           limit_conn_zone; a reload with the same size keeps it. *)
        (if conf.server.conn_limit > 0 then
           match conf.sites with
           | s :: _ -> (
               match List.find_opt (fun (e : Conf_access.entry) -> e.directive = "limit_conn_zone") s.access with
               | Some { args = [ _; size ]; _ } ->
                   Httpz_server.Conn_limit.share ~entries:(Limit_zone.entries_of_size (int_of_string size))
               | _ -> ())
           | [] -> ());
        Ok guards
  with Failed e ->
    (* No worker is forked with a configuration that failed: the tables
       this reading made are given back, else each failed reload would
       keep its new zones mapped for good. *)
    Limit_zone.discard ~previous ~next;
    Error e
