open Httpz

type rule = {
  answer : Static.rule;
  action : Conf_file.action;
  prefix_len : int;  (** what [rewrite] replaces *)
  status : Status.t;  (** of [return] *)
  body : string;  (** of [return]: the redirect's page or the text *)
  page : bool;  (** [return] answers with the site's error page *)
  guard : Guard.t option;  (** the location's access control, inherited from the site *)
  challenge : string;  (** the [WWW-Authenticate] of the guard's 401 *)
  captures : bool;
      (** a regex location whose [rewrite] or [return] names groups ([$1]):
          its text is made per request (allocates) *)
  regex : bool;  (** a regex location: [rewrite] replaces the whole path *)
  route : int;  (** its access log: [Slot.t.log_route] ({!Access_log.use_routes}) *)
}

(* The location the static handler is answering under, for its relocate
   question ({!Static.set_relocate}): per worker, one request at a time. *)
type here = { mutable loc : int; mutable matched : int  (** the regex of [loc], or -1 *) }

(* A regex location: its index and where its last match's groups are. *)
type regex_loc = { idx : int; re : Pcre2.t; groups : Pcre2.groups }

(* Which location a path falls in (one per site). *)
type matcher = {
  st : Static.t;  (** whose {!Static.path} is matched *)
  rules : Rules.t;  (** the exact and prefix locations *)
  prefix_index : int array;  (** [Rules] index → location index *)
  stops : bool array;  (** per location: exact or [^~], no regex is tried after it *)
  regexes : regex_loc array;  (** in file order *)
  here : here;
}

type site = {
  static : Static.t;
  m : matcher;
  rule : rule array;
  default_rule : rule;  (** a path under no location: the site's settings and guard *)
  refusal_pages : bool;
      (** the site has an error page for 401, 403 or 429: the guards'
          refusals are answered with it ({!admitted}) *)
}

type t = {
  hosts : Host_match.t;
  sites : site array;
  default : int;
  refuse : Status.t;
  routes : Access_log.route array;
  log_fds : int list;  (** the sites' own logs, opened here *)
}

let close t =
  Array.iter (fun s -> Static.close s.static) t.sites;
  List.iter Log_dest.close_dest t.log_fds

let located file (p : Conf_file.pos) fmt =
  Printf.ksprintf (fun m -> Error (Printf.sprintf "%s: %s" (Conf_lexer.locate ~file p) m)) fmt

let merge site_headers headers =
  let named n = List.exists (fun (m, _) -> String.lowercase_ascii m = String.lowercase_ascii n) headers in
  List.filter (fun (n, _) -> not (named n)) site_headers @ headers

let redirect_page url =
  Printf.sprintf "<!DOCTYPE html>\n<title>Moved</title>\n<p>Moved to <a href=\"%s\">%s</a>.</p>\n"
    (Static.html_escape url) (Static.html_escape url)

(* As {!Httpz_server.Basic_auth.challenge} writes it. *)
let challenge entries =
  match Conf_access.config entries with
  | Ok { auth = Some a; _ } -> Printf.sprintf "Basic realm=\"%s\", charset=\"UTF-8\"" a.realm
  | _ -> ""

let make_rule ~route (s : Conf_file.site) (l : Conf_file.location) guard =
  let ( let* ) = Result.bind in
  let* answer =
    Answer_rule.make ~headers:(merge s.site_headers l.headers)
      ~listing:(Option.value l.listing ~default:s.static.list_directories)
      ~compress:(Option.value l.compress ~default:s.static.compress) ~fallback:l.try_files
  in
  let status, body, page =
    match l.action with
    | Return (code, text) ->
        let st = Option.value (Status.of_code code) ~default:Status.Internal_server_error in
        if Status.is_redirection st then (st, redirect_page text, false)
        else if text <> "" then (st, text ^ "\n", false)
        else (st, "", List.mem code Error_pages.statuses)
    | Serve | Rewrite _ | Internal -> (Status.Ok, "", false)
  in
  let regex = match l.kind with Regex _ -> true | _ -> false in
  let dollar t = String.contains t '$' in
  let captures = regex && (match l.action with Rewrite t | Return (_, t) -> dollar t | Serve | Internal -> false) in
  Ok { answer; action = l.action; prefix_len = String.length l.path; status; body; page; guard;
       challenge = challenge (Conf_access.within ~outer:s.access ~inner:l.access); captures; regex; route }

(* The location of the decoded path of length [n] in {!Static.path}, as
   nginx chooses: an exact location, else the longest prefix if it is a
   [^~] one, else the first regex location that matches (its groups kept
   for [rewrite] and [return]), else the longest prefix; [-1]: none;
   {!regex_failed} when PCRE2 gave up on a regex (its match limits): the
   request is answered 500, as nginx does, never served by a later
   location (a [deny] in the regex location must not fail open). The
   regex tries allocate nothing. *)
let regex_failed = -2

let find_location s n =
  let path = Static.path s.st in
  let p = Rules.find s.rules path n in
  let k = if p >= 0 then Array.unsafe_get s.prefix_index p else -1 in
  s.here.matched <- -1;
  if (k >= 0 && Array.unsafe_get s.stops k) || n < 0 then k
  else begin
    let found = ref k and i = ref 0 in
    while !i < Array.length s.regexes do
      let r = Array.unsafe_get s.regexes !i in
      match Pcre2.run r.re path ~off:0 ~len:n r.groups with
      | 1 ->
          found := r.idx;
          s.here.matched <- !i;
          i := Array.length s.regexes
      | 0 -> incr i
      | _ ->
          found := regex_failed;
          i := Array.length s.regexes
    done;
    !found
  end

(* [text] with [$0]..[$9] replaced by the groups of the regex that chose
   the location, read from the path of length [n]; a group that took no
   part (or does not exist) is empty, as in nginx. [escape]: bytes a URL
   may not hold raw are percent-encoded (a [return] URL); else the bytes
   go as they are (a [rewrite], which stays a decoded path). *)
let substitute m text ~escape =
  let b = Buffer.create (String.length text + 32) in
  let path = Static.path m.st in
  let g = if m.here.matched >= 0 then (Array.unsafe_get m.regexes m.here.matched).groups else [||] in
  let len = String.length text in
  let i = ref 0 in
  while !i < len do
    let ch = text.[!i] in
    if ch = '$' && !i + 1 < len && text.[!i + 1] >= '0' && text.[!i + 1] <= '9' then begin
      let k = Char.code text.[!i + 1] - Char.code '0' in
      if 2 * k + 1 < Array.length g && g.(2 * k) >= 0 then
        for j = g.(2 * k) to g.(2 * k + 1) - 1 do
          let ch = Bigstring.unsafe_get path j in
          let safe =
            match ch with
            | 'A' .. 'Z' | 'a' .. 'z' | '0' .. '9' | '-' | '.' | '_' | '~' | '/' | '!' | '$' | '&' | '\'' | '(' | ')'
            | '*' | '+' | ',' | ';' | '=' | ':' | '@' -> true
            | _ -> false
          in
          if safe || not escape then Buffer.add_char b ch else Printf.bprintf b "%%%02X" (Char.code ch)
        done;
      i := !i + 2
    end
    else begin
      Buffer.add_char b ch;
      incr i
    end
  done;
  Buffer.contents b

(* A rewritten path must be what the decoder makes of a request, and so
   stay under the root: captures put together may make a [..] or [.]
   segment, or an empty one ([//]), that the normalised path never had. *)
let escapes_root p =
  let n = String.length p in
  n = 0 || p.[0] <> '/' || String.contains p '\000'
  || (let rec seg i =
        if i >= n then false
        else
          let j = match String.index_from_opt p i '/' with Some j -> j | None -> n in
          (j = i && j < n) || (j - i = 1 && p.[i] = '.') || (j - i = 2 && p.[i] = '.' && p.[i + 1] = '.') || seg (j + 1)
      in
      seg 1)

(* A redirect made from groups must stay on this site when it is a path:
   [//host] or [/\host] would send the client elsewhere. *)
let same_site url =
  if String.length url >= 2 && url.[0] = '/' && (url.[1] = '/' || url.[1] = '\\') then
    "/%2F" ^ String.sub url 2 (String.length url - 2)
  else url

(* The routes of the sites' and locations' logs ({!Access_log.use_routes}):
   route [i + 1] of a [Slot.t.log_route]. A site without [access_log]
   writes to the server's log, a location without one to its site's. *)
type logs = { mutable list : Access_log.route list; mutable n : int; mutable fds : int list }

let add_route logs r =
  logs.list <- r :: logs.list;
  logs.n <- logs.n + 1;
  logs.n

let route_of (conf : Conf_file.t) logs ~server ~parent spec =
  match spec with
  | None -> Ok parent
  | Some (Conf_logs.Off _) ->
      Ok (add_route logs { Access_log.log = Access_log.create ~fd:(-1) ~format:Common; main = false; server })
  | Some (To { dest; format; at }) -> (
      let format = Option.value format ~default:conf.server.log_format in
      let fd = if dest = "-" then Ok 1 else Log_dest.open_dest dest in
      match fd with
      | Error e -> located conf.file at "access log: %s" e
      | Ok fd ->
          if fd > 2 then logs.fds <- fd :: logs.fds;
          Access_log.routes_open := true;
          Ok (add_route logs { Access_log.log = Access_log.create ~fd ~format; main = false; server }))

let create (conf : Conf_file.t) =
  match Site_guards.create conf with
  | Error e -> Error e
  | Ok guards ->
      let logs = { list = []; n = 0; fds = [] } in
      let opened = ref [] in
      let rec build acc = function
        | [], _ | _, [] -> Ok (List.rev acc)
        | (s : Conf_file.site) :: rest, (g : Site_guards.t) :: guards -> (
            match Static.create s.static with
            | Error e -> located conf.file (Conf_file.static_error_pos s e) "%s" e
            | Ok st -> (
                opened := st :: !opened;
                let server = match s.names with n :: _ -> n | [] -> "" in
                let site_route =
                  match route_of conf logs ~server ~parent:0 s.log with
                  | Ok 0 -> Ok (add_route logs { Access_log.log = Access_log.create ~fd:(-1) ~format:Common; main = true; server })
                  | r -> r
                in
                match site_route with
                | Error e -> Error e
                | Ok site_route ->
                let routes = List.map (fun (l : Conf_file.location) -> route_of conf logs ~server ~parent:site_route l.log) s.locations in
                match List.find_opt Result.is_error routes with
                | Some (Error e) -> Error e
                | _ ->
                let routes = Array.of_list (List.map Result.get_ok routes) in
                let rules = List.mapi (fun i l -> make_rule ~route:routes.(i) s l g.locations.(i)) s.locations in
                match List.find_opt Result.is_error rules, Answer_rule.make ~headers:s.site_headers
                        ~listing:s.static.list_directories ~compress:s.static.compress ~fallback:"" with
                | Some (Error e), _ | None, Error e -> located conf.file s.spos "%s" e
                | _, Ok plain ->
                    let rule = Array.of_list (List.map Result.get_ok rules) in
                    let indexed = List.mapi (fun i l -> (i, l)) s.locations in
                    let prefixes = List.filter (fun (_, (l : Conf_file.location)) -> match l.kind with Regex _ -> false | _ -> true) indexed in
                    let locs = Rules.create (List.map (fun (_, (l : Conf_file.location)) -> (l.exact, l.path)) prefixes) in
                    let prefix_index = Array.of_list (List.map fst prefixes) in
                    let stops = Array.of_list (List.map (fun (l : Conf_file.location) -> l.kind = Exact || l.kind = Prefix_stop) s.locations) in
                    let regexes =
                      Array.of_list
                        (List.filter_map
                           (fun (i, (l : Conf_file.location)) ->
                             match l.kind with Regex r -> Some { idx = i; re = r.re; groups = Pcre2.groups r.re } | _ -> None)
                           indexed)
                    in
                    let here = { loc = -1; matched = -1 } in
                    let m = { st; rules = locs; prefix_index; stops; regexes; here } in
                    (* Another path served under the same location goes on;
                       under another one, it is an internal redirect. *)
                    Static.set_relocate st (fun n -> find_location m n = here.loc);
                    let refusal_pages =
                      List.exists (Static.has_page st) [ Status.Unauthorized; Forbidden; Too_many_requests ]
                    in
                    build ({ static = st; m; rule; refusal_pages;
                             default_rule =
                               { answer = plain; action = Serve; prefix_len = 0; status = Status.Ok; body = "";
                                 page = false; guard = g.site; challenge = challenge s.access; captures = false;
                                 regex = false; route = site_route } } :: acc) (rest, guards)
                | Some (Ok _), _ -> assert false))
      in
      match build [] (conf.sites, guards) with
      | Error e ->
          List.iter Static.close !opened;
          List.iter Log_dest.close_dest logs.fds;
          Error e
      | Ok sites ->
          let default = match conf.unknown_host with Default_site -> conf.default_site | Refuse _ -> -1 in
          let names = Array.of_list (List.map (fun (s : Conf_file.site) -> s.names) conf.sites) in
          (* A file without site blocks has one site for every host. *)
          let default = if names = [| [] |] then 0 else default in
          Ok
            { hosts = Host_match.create ~names ~default; sites = Array.of_list sites;
              default = conf.default_site;
              refuse = (match conf.unknown_host with Refuse 404 -> Status.Not_found | _ -> Status.Misdirected_request);
              routes = Array.of_list (List.rev logs.list); log_fds = logs.fds }

let refuse t c =
  Ctx.start c t.refuse;
  Ctx.header c Content_type "text/plain; charset=utf-8";
  Ctx.body_string c
    (match t.refuse with Not_found -> "No site is served under this name.\n" | _ -> "This server does not serve this host name.\n")

let return s c r =
  if r.page then Static.error s.static c r.status
  else begin
    let text = match r.action with Return (_, t) -> t | _ -> "" in
    let redirect = Status.is_redirection r.status in
    (* A regex location's groups make the text per request. *)
    let text = if r.captures then substitute s.m text ~escape:redirect else text in
    let text = if r.captures && redirect then same_site text else text in
    Ctx.start c r.status;
    if redirect then begin
      Ctx.header c Location text;
      Ctx.header c Content_type "text/html; charset=utf-8"
    end
    else Ctx.header c Content_type "text/plain; charset=utf-8";
    Ctx.body_string c (if not r.captures then r.body else if redirect then redirect_page text else text ^ "\n")
  end

(* The guard's verdict ([true]: answer the request); a refusal is answered
   by the guard. [passed]: the guard the request has already passed (an
   internal redirect to a location under the same guard is not checked,
   nor counted against its rate, twice). *)
let rec admitted s r passed c =
  match r.guard, passed with
  | None, _ -> true
  | Some g, Some p when g == p -> true
  | Some g, _ -> if s.refusal_pages then judged s r g c else Guard.admit g c

(* The guard's verdict, its refusal answered with the site's error page
   (nginx's error_page applies to its access phase's 401, 403 and 429 too);
   the challenge and Retry-After kept. Allocates for a refusal only. *)
and judged s r g c =
  match Guard.check g c with
  | Admit -> true
  | Forbidden -> refused c 403; Static.error s.static c Forbidden; false
  | Unauthorized -> refused c 401; Static.error_with s.static c Unauthorized Www_authenticate r.challenge; false
  | Too_many ->
      refused c 429;
      Static.error_with s.static c Too_many_requests Retry_after (string_of_int (Guard.retry_after g));
      false
  | Unavailable ->
      (* The rate table has no room: the guard's own 503 (no page is
         configured for it). *)
      refused c 503;
      Guard.refuse g c Unavailable;
      false

(* As the guard logs its own refusals: at debug level only. *)
and refused c code =
  if Log.enabled Log.Debug then
    Log.debug "guard: %d for %s (%s)" code (fst (Ctx.client c))
      (Span.to_string (Ctx.buffer c) (Request.target (Ctx.request c)))

(* nginx's bound: 10 internal redirects, then 500. *)
let max_redirects = 10

(* Answers the decoded path of length [n] (or a code) under location [k]
   ([-1]: the site's own settings), after [redirects] internal redirects
   (a [rewrite], an index file or a fallback under another location). *)
let rec serve_at s c k n passed redirects =
  if k = regex_failed then begin
    if Log.enabled Log.Debug then
      Log.debug "a regex location gave up matching %S (PCRE2 limits): 500"
        (Span.to_string (Ctx.buffer c) (Request.target (Ctx.request c)));
    Static.error s.static c Internal_server_error
  end
  else
  let r = if k < 0 then s.default_rule else Array.unsafe_get s.rule k in
  (* The log of the location that answers (after internal redirects, the
     last one), as nginx. *)
  Slot.set_log_route (Ctx.to_conn c) r.route;
  if admitted s r passed c then begin
    s.m.here.loc <- k;
    match r.action with
    | Serve -> moved s c (Static.answer s.static r.answer c n) r.guard redirects
    | Internal ->
        (* Only internal redirects reach it, as nginx's [internal]. *)
        if redirects = 0 then Static.error s.static c Not_found
        else moved s c (Static.answer s.static r.answer c n) r.guard redirects
    | Rewrite replacement when not r.regex ->
        relocate s c (Static.rewrite s.static n ~prefix:r.prefix_len replacement) r.guard redirects
    | Rewrite replacement ->
        (* A regex location's rewrite replaces the whole path. *)
        let path = if r.captures then substitute s.m replacement ~escape:false else replacement in
        if escapes_root path then begin
          if Log.enabled Log.Debug then
            Log.debug "rewrite to %S is not a normalised path (from %S): 400" path
              (Span.to_string (Ctx.buffer c) (Request.target (Ctx.request c)));
          Static.error s.static c Bad_request
        end
        else relocate s c (Static.rewrite s.static n ~prefix:n path) r.guard redirects
    | Return _ -> return s c r
  end

and moved s c m passed redirects = if m >= 0 then relocate s c m passed redirects

and relocate s c m passed redirects =
  if redirects >= max_redirects then begin
    Log.error "rewrite or internal redirection cycle while serving %S"
      (Span.to_string (Ctx.buffer c) (Request.target (Ctx.request c)));
    Static.error s.static c Internal_server_error
  end
  else
    let k = if m >= 0 then find_location s.m m else -1 in
    serve_at s c k m passed (redirects + 1)

let handler t c =
  Access_log.use_routes t.routes;
  let req = Ctx.request c in
  let i = if Request.has_host req then Host_match.find t.hosts (Ctx.buffer c) (Request.host req) else t.default in
  if i < 0 then refuse t c
  else begin
    let s = Array.unsafe_get t.sites i in
    let n = Static.decode s.static c in
    let k = if n >= 0 then find_location s.m n else -1 in
    serve_at s c k n None 0
  end
