type pos = Conf_lexer.pos = { file : string; line : int; col : int }
type arg = { value : string; quoted : bool; apos : pos }
type directive = { name : string; npos : pos; args : arg list; block : directive list option }
type error = Conf_lexer.error = { pos : pos; message : string }

exception Syntax_error of error

let fail pos fmt = Printf.ksprintf (fun message -> raise (Syntax_error { pos; message })) fmt

(* Blocks nest two deep in a valid file (site, location); the bound keeps
   a hostile or broken file from overflowing the stack of the recursive
   reading (and of a reload in the supervisor). *)
let max_depth = 8

(* What [include] may do: files open [max_include_depth] deep at most
   (nginx has no bound, but a chain that deep is a mistake), never one
   already open in the chain (a cycle), and [max_included_files] reads in
   all, so globs that include each other cannot make a reload read a
   file an exponential number of times. *)
let max_include_depth = 8
let max_included_files = 1024

type includes = { base : string; chain : string list; reads : int ref }

let has_wildcard s = String.exists (fun ch -> ch = '*' || ch = '?' || ch = '[') s

let slurp path =
  let ic = open_in_bin path in
  Fun.protect ~finally:(fun () -> close_in_noerr ic) (fun () -> really_input_string ic (in_channel_length ic))

(* The files an [include] argument names, sorted as glob(3) sorts them:
   a wildcard ([*], [?], [[...]]) may stand in the file-name part only; a
   pattern that matches nothing names no file (nginx's rule), a plain
   path that does not exist is an error. *)
let include_paths inc (a : arg) =
  let path = if Filename.is_relative a.value then Filename.concat inc.base a.value else a.value in
  let dir = Filename.dirname path and name = Filename.basename path in
  if has_wildcard dir then fail a.apos "a wildcard may appear in the file name of an include only, not in %S" dir
  else if not (has_wildcard name) then [ path ]
  else
    let re =
      try Re.compile (Re.Glob.glob ~anchored:true ~period:true name)
      with Re.Glob.Parse_error -> fail a.apos "include %S: %S is not a file-name pattern (an unclosed '[')" a.value name
    in
    match Sys.readdir dir with
    | exception Sys_error e -> fail a.apos "include %S: %s" a.value e
    | names ->
        Array.sort compare names;
        Array.fold_right
          (fun n acc ->
            let p = Filename.concat dir n in
            (* A dangling link or an entry gone meanwhile is no file. *)
            let dir = try Sys.is_directory p with Sys_error _ -> true in
            if Re.execp re n && not dir then p :: acc else acc)
          names []

(* The directives from [i] until the [}] closing the block opened by
   [opener] (or the end of the file at the top level), [depth] blocks
   deep; the index after. *)
let rec directives inc toks i ~opener ~blocks ~depth =
  let acc = ref [] and i = ref i and fin = ref false in
  while not !fin do
    let tok, pos = toks.(!i) in
    match tok with
    | Conf_lexer.Eof -> (
        match opener with
        | None -> fin := true
        | Some (name, p) ->
            fail pos "unexpected end of file: the block of '%s' opened at line %d is not closed with '}'"
              name p.line)
    | Close -> (
        match opener with
        | None -> fail pos "unexpected '}': no block is open here"
        | Some _ ->
            incr i;
            fin := true)
    | Semi -> fail pos "unexpected ';': a directive name is missing (an empty statement)"
    | Open -> fail pos "unexpected '{': a block follows a directive name and its arguments"
    | Quoted q -> fail pos "a directive name must be a bare word, not the quoted string %S" q
    | Word "include" ->
        let d, next = directive inc toks (!i + 1) "include" pos ~blocks ~depth in
        let a = match d.args with [ a ] -> a | _ -> fail pos "'include' takes one file or pattern: include sites/*.conf;" in
        List.iter (fun path -> acc := List.rev_append (included inc a path ~blocks ~depth) !acc) (include_paths inc a);
        i := next
    | Word name ->
        let d, next = directive inc toks (!i + 1) name pos ~blocks ~depth in
        acc := d :: !acc;
        i := next
  done;
  (List.rev !acc, !i)

and directive inc toks i name npos ~blocks ~depth =
  let args = ref [] and i = ref i and result = ref None in
  while !result = None do
    let tok, pos = toks.(!i) in
    match tok with
    | Conf_lexer.Word value -> args := { value; quoted = false; apos = pos } :: !args; incr i
    | Quoted value -> args := { value; quoted = true; apos = pos } :: !args; incr i
    | Semi -> result := Some ({ name; npos; args = List.rev !args; block = None }, !i + 1)
    | Open when not (List.mem name blocks) ->
        fail npos "'%s' takes no block: a ';' is missing after it (only %s open a block)" name
          (String.concat " and " blocks)
    | Open when depth >= max_depth ->
        fail pos "blocks nested more than %d deep (a location goes in a site, nothing deeper)" max_depth
    | Open ->
        let block, next = directives inc toks (!i + 1) ~opener:(Some (name, npos)) ~blocks ~depth:(depth + 1) in
        result := Some ({ name; npos; args = List.rev !args; block = Some block }, next)
    | Close -> fail pos "missing ';' before '}': the directive '%s' (line %d) is not ended" name npos.line
    | Eof -> fail pos "unexpected end of file: the directive '%s' (line %d) is missing its ';'" name npos.line
  done;
  Option.get !result

(* The directives of one included file, read at the level of the
   [include] that names it; errors point into that file. *)
and included inc (a : arg) path ~blocks ~depth =
  let key = try Unix.realpath path with Unix.Unix_error _ -> path in
  if List.mem key inc.chain then fail a.apos "include %S: %s includes itself (a cycle)" a.value path;
  if List.length inc.chain >= max_include_depth then
    fail a.apos "include %S: files include each other more than %d deep" a.value max_include_depth;
  incr inc.reads;
  if !(inc.reads) > max_included_files then
    fail a.apos "include %S: more than %d files read through include" a.value max_included_files;
  let text = try slurp path with Sys_error e -> fail a.apos "include %S: %s" a.value e in
  match Conf_lexer.tokens ~file:path text with
  | Error e -> raise (Syntax_error e)
  | Ok toks -> fst (directives { inc with chain = key :: inc.chain } toks 0 ~opener:None ~blocks ~depth)

let parse ?(file = "") ?base ~blocks text =
  let base = match base with Some b -> b | None -> if file = "" then Filename.current_dir_name else Filename.dirname file in
  let chain = if file = "" then [] else [ (try Unix.realpath file with Unix.Unix_error _ -> file) ] in
  let inc = { base; chain; reads = ref 0 } in
  match Conf_lexer.tokens ~file text with
  | Error e -> Error e
  | Ok toks -> ( try Ok (fst (directives inc toks 0 ~opener:None ~blocks ~depth:0)) with Syntax_error e -> Error e)
