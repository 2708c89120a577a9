type pos = Conf_lexer.pos = { line : int; col : int }
type arg = { value : string; quoted : bool; apos : pos }
type directive = { name : string; npos : pos; args : arg list; block : directive list option }
type error = Conf_lexer.error = { pos : pos; message : string }

exception Syntax_error of error

let fail pos fmt = Printf.ksprintf (fun message -> raise (Syntax_error { pos; message })) fmt

(* Blocks nest two deep in a valid file (site, location); the bound keeps
   a hostile or broken file from overflowing the stack of the recursive
   reading (and of a reload in the supervisor). *)
let max_depth = 8

(* The directives from [i] until the [}] closing the block opened by
   [opener] (or the end of the file at the top level), [depth] blocks
   deep; the index after. *)
let rec directives toks i ~opener ~blocks ~depth =
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
    | Word name ->
        let d, next = directive toks (!i + 1) name pos ~blocks ~depth in
        acc := d :: !acc;
        i := next
  done;
  (List.rev !acc, !i)

and directive toks i name npos ~blocks ~depth =
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
        let block, next = directives toks (!i + 1) ~opener:(Some (name, npos)) ~blocks ~depth:(depth + 1) in
        result := Some ({ name; npos; args = List.rev !args; block = Some block }, next)
    | Close -> fail pos "missing ';' before '}': the directive '%s' (line %d) is not ended" name npos.line
    | Eof -> fail pos "unexpected end of file: the directive '%s' (line %d) is missing its ';'" name npos.line
  done;
  Option.get !result

let parse ~blocks text =
  match Conf_lexer.tokens text with
  | Error e -> Error e
  | Ok toks -> ( try Ok (fst (directives toks 0 ~opener:None ~blocks ~depth:0)) with Syntax_error e -> Error e)
