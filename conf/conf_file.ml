open Conf_syntax
open Conf_args

type pos = Conf_lexer.pos = { file : string; line : int; col : int }
type access = Conf_access.entry = { directive : string; args : string list; at : pos }
type action = Serve | Return of int * string | Rewrite of string | Internal

type kind =
  | Prefix  (** [location /prefix/] *)
  | Exact  (** [location = /path] *)
  | Prefix_stop  (** [location ^~ /prefix/]: when it is the longest prefix, no regex is tried *)
  | Regex of { pattern : string; caseless : bool; re : Pcre2.t }
      (** [location ~ REGEX] ([~*]: ASCII case ignored), tried in file order *)

type location = {
  exact : bool;
  kind : kind;
  path : string;
  lpos : pos;
  headers : (string * string) list;
  try_files : string;
  action : action;
  listing : bool option;
  compress : bool option;
  access : access list;
  log : Conf_logs.spec option;
}

type site = {
  names : string list;
  spos : pos;
  static : Static.config;
  root_pos : pos;
  page_pos : (int * pos) list;
  site_headers : (string * string) list;
  cert : (string * string * pos) option;
  locations : location list;
  access : access list;
  log : Conf_logs.spec option;
}

type unknown_host = Default_site | Refuse of int

type t = {
  file : string;
  server : Config.t;
  sites : site list;
  default_site : int;
  unknown_host : unknown_host;
  logs : (string * pos) list;
}


type scope = Main | Site | Location

(* The server's scalar settings, read by their value alone
   ([Config.settings]); the other server directives have a parser below. *)
let setting_directives =
  List.filter_map
    (fun (Config.Setting s as setting) ->
      if s.directive <> "" && s.set <> None then Some (s.directive, setting) else None)
    Config.settings

let server_directives =
  [ "listen"; "io"; "workers"; "user"; "access_log"; "log_format"; "stats_token"; "hsts";
    "tls_ticket_rotation"; "unknown_host"; "server_header"; "error_log"; "log_level"; "stats_listen"; "limit_conn_zone" ]
  @ List.map fst setting_directives @ Conf_access.zone_directives

let site_directives =
  [ "root"; "index"; "listing"; "list_max"; "max_age"; "dotfiles"; "symlinks"; "gzip_static";
    "cache_max_file"; "cache_size"; "default_type"; "error_page"; "compress"; "compress_level";
    "header"; "access_log" ]

let access_directives = Conf_access.directives
let cert_directives = [ "tls_certificate"; "tls_certificate_key" ]
let location_directives = [ "header"; "try_files"; "return"; "rewrite"; "internal"; "listing"; "compress"; "access_log" ]

let allowed = function
  | Main -> server_directives @ site_directives @ cert_directives @ access_directives @ [ "site"; "location" ]
  | Site -> site_directives @ cert_directives @ access_directives @ [ "location" ]
  | Location -> location_directives @ access_directives

let scope_name = function Main -> "at the top level" | Site -> "in a site block" | Location -> "in a location block"

let where_allowed name =
  List.filter (fun s -> List.mem name (allowed s)) [ Main; Site; Location ]
  |> List.map (function Main -> "the top level" | Site -> "site blocks" | Location -> "location blocks")

let unknown scope (d : directive) =
  let here = allowed scope in
  if List.mem d.name here then ()
  else
    match where_allowed d.name with
    | _ :: _ as places ->
        bad d.npos "'%s' is not allowed %s (only in %s)" d.name (scope_name scope)
          (String.concat " and " places)
    | [] ->
        let all = List.sort_uniq compare (allowed Main @ allowed Site @ allowed Location) in
        let hint =
          match suggest d.name here with
          | Some s -> Printf.sprintf "; did you mean '%s'?" s
          | None -> (match suggest d.name all with Some s -> Printf.sprintf "; did you mean '%s'?" s | None -> "")
        in
        bad d.npos "unknown directive '%s'%s" d.name hint

(* {1 Arguments} *)

(* Directives that may be given once per block. *)
let once seen (d : directive) =
  if d.name <> "header" && d.name <> "error_page" && d.name <> "listen" && d.name <> "location"
     && d.name <> "site" && d.name <> "stats_listen"
     && not (Conf_access.repeatable d.name) && not (Conf_logs.is_definition d)
  then
    match Hashtbl.find_opt seen d.name with
    | Some p -> bad d.npos "'%s' is already given at %s" d.name (Conf_lexer.line_of ~here:d.npos p)
    | None -> Hashtbl.replace seen d.name d.npos

(* {1 Locations} *)

let redirect_codes = [ 301; 302; 303; 307; 308 ]

let modifiers = [ "="; "^~"; "~"; "~*" ]

let location ~dir (d : directive) =
  let modifier, path_a =
    match d.args with
    | [ { value = m; quoted = false; _ }; p ] when List.mem m modifiers -> (m, p)
    | [ p ] when not (List.mem p.value modifiers && not p.quoted) -> ("", p)
    | [] | [ _ ] ->
        bad d.npos "'location' takes a path: location /prefix/, = /exact, ^~ /prefix/, ~ REGEX or ~* REGEX { … }"
    | [ m; _ ] when not m.quoted && m.value <> "" && m.value.[0] <> '/' ->
        bad m.apos "%S is not a location modifier: give =, ^~, ~ or ~* (or only a path)" m.value
    | _ :: _ :: extra :: _ | [ _; extra ] ->
        bad extra.apos "'location' takes a path (after =, ^~, ~ or ~* if any): unexpected %S" extra.value
  in
  let exact = modifier = "=" in
  let kind, path =
    match modifier with
    | "~" | "~*" -> (
        let caseless = modifier = "~*" in
        match Pcre2.compile ~caseless path_a.value with
        | Ok re -> (Regex { pattern = path_a.value; caseless; re }, path_a.value)
        | Error e -> bad path_a.apos "%S is not a regular expression PCRE2 accepts: %s" path_a.value e)
    | "=" -> (Exact, path_arg path_a ~what:"the location path")
    | "^~" -> (Prefix_stop, path_arg path_a ~what:"the location path")
    | _ -> (Prefix, path_arg path_a ~what:"the location path")
  in
  let block = match d.block with Some b -> b | None -> bad d.npos "'location %s' needs a block { … }" path in
  let seen = Hashtbl.create 8 in
  let headers = ref [] and try_files = ref "" and action = ref (Serve, d.npos) and listing = ref None
  and compress = ref None and access = ref [] and log = ref None in
  let set_action (d : directive) a =
    match !action with
    | Serve, _ -> action := (a, d.npos)
    | _, p -> bad d.npos "'%s' conflicts with the answer given at %s (one of return, rewrite, internal)" d.name (Conf_lexer.line_of ~here:d.npos p)
  in
  List.iter
    (fun (d : directive) ->
      unknown Location d;
      no_block d;
      once seen d;
      match d.name with
      | "header" ->
          let n, v = header_field d in
          headers := (n, v) :: List.filter (fun (m, _) -> String.lowercase_ascii m <> String.lowercase_ascii n) !headers
      | "listing" -> listing := Some (flag (one d))
      | "compress" -> compress := Some (flag (one d))
      | "access_log" -> log := Some (Conf_logs.access_log ~dir d)
      | "internal" -> arity d 0; set_action d Internal
      | "rewrite" -> set_action d (Rewrite (path_arg (one d) ~what:"the rewrite"))
      | "return" -> (
          match d.args with
          | [] -> bad d.npos "'return' takes a status code, then a URL for a redirect or a text"
          | code :: rest ->
              let n = int_of_string_opt code.value in
              (match n with
               | Some n when n >= 200 && n <= 599 && String.length code.value = 3 ->
                   (* Only a status the server can write (299 would be a 500). *)
                   if Httpz.Status.of_code n = None then
                     bad code.apos "%d is not a status the server answers (give one HTTP defines, as 200, 403, 410, 503)" n
               | _ -> bad code.apos "%S is not a status code (200-599)" code.value);
              let n = Option.get n in
              let text =
                match rest with
                | [] -> if List.mem n redirect_codes then bad d.npos "'return %d' needs the URL to redirect to" n else ""
                | [ t ] ->
                    if not (Httpz.Response.is_field_value t.value) then bad t.apos "the text must not hold CR, LF or NUL"
                    else if List.mem n redirect_codes && (t.value = "" || String.contains t.value ' ') then
                      bad t.apos "%S is not a URL to redirect to" t.value
                    else t.value
                | _ :: extra :: _ -> bad extra.apos "'return' takes a code and one URL or text: unexpected %S" extra.value
              in
              set_action d (Return (n, text)))
      | "try_files" -> (
          let rec go = function
            | [] -> bad d.npos "'try_files' takes $uri, optionally $uri/, and a fallback: try_files $uri /index.html"
            | [ last ] ->
                if last.value = "=404" then ""
                else if last.value.[0] = '=' then bad last.apos "only =404 is supported as the last resort of try_files"
                else path_arg last ~what:"the try_files fallback"
            | a :: rest ->
                if a.value = "$uri" || a.value = "$uri/" then go rest
                else bad a.apos "%S: try_files tries $uri and $uri/, then one fallback path" a.value
          in
          try_files := go d.args)
      | _ -> access := Conf_access.read ~dir d :: !access)
    block;
  (match !action with
   | (Return _ | Rewrite _ | Internal), p when !try_files <> "" ->
       bad p "try_files does nothing beside return, rewrite or internal: give one"
   | _ -> ());
  { exact; kind; path; lpos = d.npos; headers = List.rev !headers; try_files = !try_files; action = fst !action;
    listing = !listing; compress = !compress; access = List.rev !access; log = !log }

(* {1 Sites} *)

type site_acc = {
  mutable st : Static.config;
  mutable rpos : pos;
  mutable pages : (int * pos) list;
  mutable hdrs : (string * string) list;
  mutable cert_file : (string * pos) option;
  mutable key_file : (string * pos) option;
  mutable locs : location list;  (** the last first *)
  mutable loc_lines : (string, pos) Hashtbl.t;  (** each location's line, to refuse it twice *)
  mutable acc : access list;
  mutable is_default : pos option;
  mutable alog : Conf_logs.spec option;
}

let copy a = { a with st = a.st }

(* A site directive (also valid at the top level, as every site's default). *)
(* A relative path names a file beside the configuration file. *)
let beside ~dir p = if Filename.is_relative p then Filename.concat dir p else p

let site_directive ~dir a (d : directive) =
  let st = a.st in
  match d.name with
  | "root" ->
      let r = one d in
      if r.value = "" then bad r.apos "the root must not be empty";
      a.st <- { st with root = beside ~dir r.value };
      a.rpos <- r.apos
  | "index" ->
      let v = one d in
      if v.value = "" || String.contains v.value '/' then bad v.apos "index must be a plain file name (no '/')";
      a.st <- { st with index = v.value }
  | "listing" -> a.st <- { st with list_directories = flag (one d) }
  | "list_max" -> a.st <- { st with list_max = int_arg ~min:1 (one d) }
  | "max_age" -> a.st <- { st with max_age = int_of_float (duration (one d)) }
  | "dotfiles" -> a.st <- { st with dotfiles = flag (one d) }
  | "symlinks" -> a.st <- { st with follow_symlinks = flag (one d) }
  | "gzip_static" -> a.st <- { st with gzip_static = flag (one d) }
  | "cache_max_file" -> a.st <- { st with cache_max_file = size (one d) }
  | "cache_size" -> a.st <- { st with cache_bytes = size (one d) }
  | "compress" -> a.st <- { st with compress = flag (one d) }
  | "compress_level" -> a.st <- { st with compress_level = int_arg ~min:1 ~max:9 (one d) }
  | "default_type" ->
      let v = one d in
      if not (Mime.is_type v.value) then bad v.apos "%S is not a media type (type/subtype[; parameters])" v.value;
      a.st <- { st with default_type = v.value }
  | "error_page" -> (
      (* As nginx: error_page 500 502 503 504 /50x.html; *)
      match List.rev d.args with
      | [] | [ _ ] -> bad d.npos "'error_page' takes status codes, then a path: error_page 500 502 503 /50x.html"
      | path :: rev_codes ->
          let p = path_arg path ~what:"the error page" in
          List.iter
            (fun code ->
              let n = int_arg code in
              if not (List.mem n Error_pages.statuses) then
                bad code.apos "%d has no error page (give one of %s)" n
                  (String.concat ", " (List.map string_of_int Error_pages.statuses));
              if List.mem_assoc n a.st.error_pages then bad code.apos "the error page of %d is already given" n;
              a.st <- { a.st with error_pages = a.st.error_pages @ [ (n, p) ] };
              a.pages <- (n, d.npos) :: a.pages)
            (List.rev rev_codes))
  | "header" ->
      let n, v = header_field d in
      a.hdrs <- List.filter (fun (m, _) -> String.lowercase_ascii m <> String.lowercase_ascii n) a.hdrs @ [ (n, v) ]
  | "access_log" -> a.alog <- Some (Conf_logs.access_log ~dir d)
  | "tls_certificate" -> a.cert_file <- Some (beside ~dir (one d).value, d.npos)
  | "tls_certificate_key" -> a.key_file <- Some (beside ~dir (one d).value, d.npos)
  | "location" ->
      let l = location ~dir d in
      (* A table and a reversed list: a file of 50,000 locations reads in
         linear time. *)
      (* [/a/] and [^~ /a/] are one prefix, as nginx has it; a regex is
         told apart by its modifier. *)
      let key = match l.kind with Exact -> "= " ^ l.path | Prefix | Prefix_stop -> l.path | Regex r -> (if r.caseless then "~* " else "~ ") ^ r.pattern in
      (match Hashtbl.find_opt a.loc_lines key with
       | Some p -> bad d.npos "location %s is already given at %s" key (Conf_lexer.line_of ~here:d.npos p)
       | None -> Hashtbl.replace a.loc_lines key l.lpos);
      a.locs <- l :: a.locs
  | n when List.mem n access_directives -> a.acc <- a.acc @ [ Conf_access.read ~dir d ]
  | _ -> assert false

let finish_site a ~names ~spos =
  if a.rpos.line = 0 then
    (if names = [] then bad spos "no directory to serve: give root DIR (at the top level or in each site)"
     else bad spos "the site %s has no root: give root DIR in it (or at the top level)" (List.hd names));
  let cert =
    match a.cert_file, a.key_file with
    | Some (c, p), Some (k, _) -> Some (c, k, p)
    | None, None -> None
    | Some (_, p), None -> bad p "tls_certificate needs tls_certificate_key beside it"
    | None, Some (_, p) -> bad p "tls_certificate_key needs tls_certificate beside it"
  in
  { names; spos; static = a.st; root_pos = a.rpos; page_pos = a.pages; site_headers = a.hdrs; cert; locations = List.rev a.locs; access = a.acc; log = a.alog }

(* {1 The server} *)

(* A scalar setting's directive: its value as its kind is written. *)
let read_setting (type a) (s : a Config.spec) a =
  let v : a =
    match s.kind with
    | Config.Count -> int_arg a
    | Config.Bytes -> size a
    (* A timeout of more than a day serves nobody: a mistake. *)
    | Config.Seconds -> duration ~max:86400. ~max_text:"1 day (1d)" a
    | Config.Switch -> flag a
  in
  match s.set with Some set -> fun c -> set c v | None -> Fun.id

let read_tree ~file tree =
  let dir = Filename.dirname file in
  let base =
    { st = Static.default_config; rpos = Conf_lexer.nowhere; pages = []; hdrs = []; cert_file = None; key_file = None;
      locs = []; loc_lines = Hashtbl.create 16; acc = []; is_default = None; alog = None }
  in
  let c = ref Config.default_config in
  let set f = c := f !c in
  let global_headers = ref [] and listens = ref [] and unknown_host = ref Default_site in
  let hsts = ref None and ticket = ref 3600 and logs = ref [] in
  let conn_zone = ref None and conn_zone_used = ref None in
  let positions = Hashtbl.create 16 in
  let seen = Hashtbl.create 32 in
  let site_blocks = ref [] in
  Conf_logs.reset ();
  List.iter (fun (d : directive) -> if Conf_logs.is_definition d then Conf_logs.define d) tree;
  List.iter
    (fun (d : directive) ->
      unknown Main d;
      if d.name <> "site" && d.name <> "location" then no_block d;
      once seen d;
      Hashtbl.replace positions d.name d.npos;
      match d.name with
      | "listen" -> listens := listen_arg d :: !listens
      | "io" -> (
          let a = one d in
          match a.value with
          | "uring" -> set (fun c -> { c with io = Uring })
          | "epoll" -> set (fun c -> { c with io = Epoll })
          | v -> bad a.apos "%S: give uring or epoll" v)
      | "workers" ->
          let a = one d in
          let n = if a.value = "auto" then 0 else int_arg ~min:1 ~max:1024 a in
          set (fun c -> { c with workers = n })
      | "user" ->
          let a = one d in
          (match Unix.getpwnam a.value with
           | _ -> ()
           | exception Not_found -> bad a.apos "no such user: %s" a.value);
          set (fun c -> { c with user = Some a.value })
      | "access_log" -> (
          match Conf_logs.access_log ~dir d with
          | Off _ -> set (fun c -> { c with access_log = None })
          | To { dest; format; _ } ->
              set (fun c -> { c with access_log = Some dest });
              Option.iter (fun f -> set (fun c -> { c with log_format = f })) format)
      | "log_format" -> if not (Conf_logs.is_definition d) then (let f = Conf_logs.format (one d) in set (fun c -> { c with log_format = f }))
      | "stats_token" -> let a = one d in set (fun c -> { c with stats = Some a.value })
      | "stats_listen" ->
          let hp = address_arg ~host:"127.0.0.1" (one d) in
          set (fun c -> { c with stats_listen = c.stats_listen @ [ hp ] })
      | "limit_conn" -> (
          (* nginx's limit_conn NAME N, or N alone. *)
          match d.args with
          | [ z; n ] -> conn_zone_used := Some z; let n = int_arg ~min:1 n in set (fun c -> { c with conn_limit = n })
          | _ -> let n = int_arg ~min:1 (one d) in set (fun c -> { c with conn_limit = n }))
      | "limit_conn_zone" -> (
          match d.args with
          | [ k; z ] ->
              if Conf_access.key_arg k <> Httpz_server.Guard.Address then
                bad k.apos "limit_conn counts connections when they are accepted, before any header is read: its key is $binary_remote_addr";
              let name, size = Conf_access.zone_arg z in
              conn_zone := Some (name, size);
              (* Passed down with the access directives: Site_guards sizes
                 the shared table by it. *)
              base.acc <- base.acc @ [ { directive = "limit_conn_zone"; args = [ name; string_of_int size ]; at = d.npos } ]
          | _ -> bad d.npos "'limit_conn_zone' takes a key and a zone: limit_conn_zone $binary_remote_addr zone=addr:10m;")
      | "limit_req_zone" ->
          let e = Conf_access.read ~dir d in
          let name = List.hd e.args in
          (match List.find_opt (fun (x : access) -> x.directive = "limit_req_zone" && List.hd x.args = name) base.acc with
           | Some x -> bad d.npos "the zone %s is already given at %s" name (Conf_lexer.line_of ~here:d.npos x.at)
           | None -> ());
          base.acc <- base.acc @ [ e ]
      | name when List.mem_assoc name setting_directives -> (
          match List.assoc name setting_directives with Config.Setting s -> set (read_setting s (one d)))
      | "error_log" ->
          let a = one d in
          if a.value = "" then bad a.apos "the error log must not be empty";
          if a.value <> "stderr" then logs := (beside ~dir a.value, a.apos) :: !logs;
          set (fun c -> { c with error_log = (if a.value = "stderr" then None else Some (beside ~dir a.value)) })
      | "log_level" -> (
          let a = one d in
          match Log.level_of_string a.value with
          | Ok l -> set (fun c -> { c with log_level = l })
          | Error _ -> bad a.apos "%S: give error, warn, info or debug" a.value)
      | "server_header" ->
          let a = one d in
          (* "off": no Server field at all. *)
          if a.value = "" then bad a.apos "give the product name to send (httpz), or off for no Server field";
          set (fun c -> { c with server_name = (if a.value = "off" then "" else a.value) })
      | "hsts" -> hsts := Some (int_of_float (duration (one d)))
      | "tls_ticket_rotation" -> ticket := int_of_float (duration (one d))
      | "unknown_host" -> (
          let a = one d in
          match a.value with
          | "default" -> unknown_host := Default_site
          | "421" -> unknown_host := Refuse 421
          | "404" -> unknown_host := Refuse 404
          | v -> bad a.apos "%S: give default (the default site answers), 421 or 404" v)
      | "header" when true -> global_headers := !global_headers @ [ header_field d ]
      | "site" -> site_blocks := d :: !site_blocks
      | _ -> site_directive ~dir base d)
    tree;
  (* Sites start from the top level's site settings. *)
  let sites =
    List.rev_map
      (fun (d : directive) ->
        if d.args = [] then bad d.npos "'site' takes the host names it serves: site example.com *.example.com { … }";
        (* The word default among the names marks the site unknown hosts get. *)
        let is_default = List.find_opt (fun (a : arg) -> a.value = "default" && not a.quoted) d.args in
        let named = List.filter (fun (a : arg) -> not (a.value = "default" && not a.quoted)) d.args in
        if named = [] then bad d.npos "'site default' also needs the host names it serves: site example.com default { … }";
        let names =
          List.map
            (fun a ->
              let n = String.lowercase_ascii a.value in
              if not (valid_host_name n) then
                bad a.apos "%S is not a host name (letters, digits, '-', '.'; or *.example.com)" a.value;
              (n, a.apos))
            named
        in
        let block = match d.block with Some b -> b | None -> bad d.npos "'site' needs a block { … }" in
        let a = copy base in
        a.locs <- [];
        a.loc_lines <- Hashtbl.create 16;
        (* The top level's access directives are inherited kind by kind. *)
        a.acc <- [];
        (* The top level's certificate is the default one, not the site's. *)
        a.cert_file <- None;
        a.key_file <- None;
        a.is_default <- Option.map (fun (x : arg) -> x.apos) is_default;
        let seen = Hashtbl.create 16 in
        List.iter
          (fun (d : directive) ->
            unknown Site d;
            if d.name <> "location" then no_block d;
            once seen d;
            site_directive ~dir a d)
          block;
        a.acc <- Conf_access.within ~outer:base.acc ~inner:a.acc;
        (d, names, a))
      !site_blocks
  in
  (* One name, one site. *)
  let _ =
    List.fold_left
      (fun acc (d, names, _) ->
        List.fold_left
          (fun acc (n, p) ->
            match List.assoc_opt n acc with
            | Some line -> bad p "%s is already a name of the site at line %d" n line
            | None -> (n, d.npos.line) :: acc)
          acc names)
      [] sites
  in
  let sites, default_site =
    match sites with
    | [] -> ([ finish_site base ~names:[] ~spos:{ file = ""; line = 1; col = 1 } ], 0)
    | _ ->
        if base.locs <> [] then
          bad (List.hd (List.rev base.locs)).lpos "a location at the top level is for a file without site blocks: move it into a site";
        let defaults = List.filter (fun (_, _, a) -> a.is_default <> None) sites in
        (match defaults with
         | _ :: (_, _, a) :: _ -> bad (Option.get a.is_default) "a second default site: one site takes the unknown hosts"
         | _ -> ());
        let idx = ref 0 in
        List.iteri (fun i (_, _, a) -> if a.is_default <> None then idx := i) sites;
        (List.map (fun (d, names, a) -> finish_site a ~names:(List.map fst names) ~spos:d.npos) sites, !idx)
  in
  (match !conn_zone_used, !conn_zone with
   | Some (z : arg), Some (name, _) when z.value = name -> ()
   | Some z, _ -> bad z.apos "no zone %S: give limit_conn_zone $binary_remote_addr zone=%s:SIZE; at the top level" z.value z.value
   | None, _ -> ());
  (* Listening sockets and TLS. *)
  let listens = List.rev !listens in
  let of_role r = List.filter_map (fun (hp, role, _) -> if role = r then Some hp else None) listens in
  let site_certs = List.filter_map (fun s -> Option.map (fun c -> (s, c)) s.cert) sites in
  let main_cert =
    match base.cert_file, base.key_file with
    | Some (c, _), Some (k, _) -> Some (c, k)
    | Some (_, p), None -> bad p "tls_certificate needs tls_certificate_key beside it"
    | None, Some (_, p) -> bad p "tls_certificate_key needs tls_certificate beside it"
    | None, None -> (
        (* The default site's certificate, else the first site's. *)
        let d = List.nth sites default_site in
        match d.cert with
        | Some (c, k, _) -> Some (c, k)
        | None -> ( match site_certs with (_, (c, k, _)) :: _ -> Some (c, k) | [] -> None))
  in
  (* hsts writes the field on every https answer; a header of the same
     name would send it twice (and the server's cannot be left out per
     site): one or the other. *)
  (match !hsts, Hashtbl.find_opt positions "hsts" with
   | Some _, Some p ->
       let sts (n, _) = String.lowercase_ascii n = "strict-transport-security" in
       let where =
         if List.exists sts !global_headers then Some "at the top level"
         else
           List.find_map
             (fun s ->
               let name = match s.names with n :: _ -> n | [] -> "the site" in
               if List.exists sts s.site_headers then Some ("in " ^ name)
               else
                 List.find_map
                   (fun (l : location) -> if List.exists sts l.headers then Some ("in " ^ name ^ ", location " ^ l.path) else None)
                   s.locations)
             sites
       in
       Option.iter
         (fun w ->
           bad p "hsts and 'header Strict-Transport-Security' (%s) would both send the field: give one of them" w)
         where
   | _ -> ());
  let tls_listens = of_role Tls_listen in
  let first_pos r = List.find_map (fun (_, role, p) -> if role = r then Some p else None) listens in
  let tls =
    match tls_listens, main_cert with
    | [], _ -> (
        (match first_pos Redirect with Some p -> bad p "'redirect' sends plain HTTP to https: it needs a 'listen … tls'" | None -> ());
        match site_certs with
        | (_, (_, _, p)) :: _ -> bad p "a certificate without a 'listen … tls' address serves nothing"
        | [] -> (
            match !hsts, Hashtbl.find_opt positions "hsts" with
            | Some _, Some p -> bad p "hsts is sent on https responses: it needs a 'listen … tls' address"
            | _ -> None))
    | _, None -> bad (Option.get (first_pos Tls_listen)) "'listen … tls' needs tls_certificate and tls_certificate_key"
    | _, Some (cert_file, key_file) ->
        Some
          { (Config.tls ~cert_file ~key_file) with
            hsts = !hsts; ticket_period = !ticket; listen_plain = of_role Plain; redirect_http = of_role Redirect;
            sni = List.map (fun (s, (c, k, _)) -> (s.names, c, k)) site_certs }
  in
  let serve_addrs = match tls with Some _ -> tls_listens | None -> of_role Plain in
  let serve_addrs = if serve_addrs = [] then [ ("127.0.0.1", 8080) ] else serve_addrs in
  let server =
    { !c with
      listen = serve_addrs; host = fst (List.hd serve_addrs); port = snd (List.hd serve_addrs); tls;
      headers = List.filter (fun (n, _) -> not (List.exists (fun (m, _) -> String.lowercase_ascii m = String.lowercase_ascii n) !global_headers)) Config.default_config.headers @ !global_headers;
      root = Some (List.nth sites default_site).static.root }
  in
  (* The server's own bounds, named as the file names them. *)
  let named = ref None in
  (* A setting no directive sets (the buffers) is out of range only
     through what does, the header lines: named as them. *)
  let directive_of (Config.Setting s) = if s.directive = "" then "header" else s.directive in
  let name f = let n = directive_of f in named := Some n; n in
  let role_name r = (if !named <> Some "stats_listen" then named := Some "listen"); match r with Config.Serve -> "listen" | Serve_plain -> "listen … plain" | Redirect -> "listen … redirect" | Status -> named := Some "stats_listen"; "stats_listen" in
  (match Config.check ~name ~role_name server with
   | Ok () -> ()
   | Error e ->
       let p =
         match Option.bind !named (Hashtbl.find_opt positions) with
         | Some p -> p
         | None -> (match Hashtbl.find_opt positions "header" with Some p -> p | None -> { file = ""; line = 1; col = 1 })
       in
       bad p "%s" e);
  { file; server; sites; default_site; unknown_host = !unknown_host;
    logs = List.rev !logs @ List.rev !Conf_logs.files }

let read_string ~file text =
  match Conf_syntax.parse ~file ~blocks:[ "site"; "location" ] text with
  | Error e -> Error (Printf.sprintf "%s: %s" (Conf_lexer.locate ~file e.pos) e.message)
  | Ok tree -> (
      try Ok (read_tree ~file tree) with Bad (p, m) -> Error (Printf.sprintf "%s: %s" (Conf_lexer.locate ~file p) m))

let read path =
  match Conf_syntax.slurp path with
  | exception Sys_error e -> Error e
  | text -> read_string ~file:path text


let static_error_pos s message =
  let names code = Printf.sprintf "error page for %d:" code in
  match
    List.find_opt
      (fun (code, _) ->
        let n = names code in
        String.length message >= String.length n && String.sub message 0 (String.length n) = n)
      s.page_pos
  with
  | Some (_, p) -> p
  | None -> if s.root_pos.line = 0 then s.spos else s.root_pos
