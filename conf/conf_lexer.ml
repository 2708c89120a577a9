type pos = { file : string; line : int; col : int }
type token = Word of string | Quoted of string | Open | Close | Semi | Eof
type error = { pos : pos; message : string }

exception Lex_error of error

let describe = function
  | Word w -> Printf.sprintf "%S" w
  | Quoted q -> Printf.sprintf "the quoted string %S" q
  | Open -> "'{'"
  | Close -> "'}'"
  | Semi -> "';'"
  | Eof -> "the end of the file"

let is_space ch = ch = ' ' || ch = '\t' || ch = '\r' || ch = '\n'
let is_special ch = ch = '{' || ch = '}' || ch = ';' || ch = '"' || ch = '\'' || ch = '#'
let is_control ch = (ch < ' ' && ch <> '\t' && ch <> '\n' && ch <> '\r') || ch = '\127'

let tokens ?(file = "") text =
  let n = String.length text in
  let out = ref [] in
  let line = ref 1 and line_start = ref 0 in
  let pos_at i = { file; line = !line; col = i - !line_start + 1 } in
  let fail i fmt = Printf.ksprintf (fun message -> raise (Lex_error { pos = pos_at i; message })) fmt in
  let control i = fail i "control character 0x%02x (only tab and line breaks may appear)" (Char.code text.[i]) in
  let i = ref 0 in
  try
    while !i < n do
      let ch = text.[!i] in
      if ch = '\n' then begin
        incr i;
        incr line;
        line_start := !i
      end
      else if ch = '\r' then begin
        if !i + 1 < n && text.[!i + 1] = '\n' then incr i else fail !i "a carriage return not followed by a line feed"
      end
      else if is_space ch then incr i
      else if ch = '#' then
        while !i < n && text.[!i] <> '\n' do
          if is_control text.[!i] then control !i;
          incr i
        done
      else if ch = '{' then (out := (Open, pos_at !i) :: !out; incr i)
      else if ch = '}' then (out := (Close, pos_at !i) :: !out; incr i)
      else if ch = ';' then (out := (Semi, pos_at !i) :: !out; incr i)
      else if ch = '"' || ch = '\'' then begin
        let start = !i in
        let b = Buffer.create 32 in
        incr i;
        let closed = ref false in
        while not !closed do
          if !i >= n || text.[!i] = '\n' || text.[!i] = '\r' then
            fail start "unterminated string: the %c opened here is not closed on its line" ch;
          let c = text.[!i] in
          if c = ch then (closed := true; incr i)
          else if c = '\\' then begin
            if !i + 1 >= n then fail !i "unterminated string: a backslash at the end of the file";
            (match text.[!i + 1] with
             | '"' -> Buffer.add_char b '"'
             | '\'' -> Buffer.add_char b '\''
             | '\\' -> Buffer.add_char b '\\'
             | 'n' -> Buffer.add_char b '\n'
             | 't' -> Buffer.add_char b '\t'
             | e when is_control e || e = '\n' || e = '\r' -> fail !i "a backslash before a line break or a control character"
             | e -> fail !i "unknown escape \\%c (give \\\", \\', \\\\, \\n or \\t)" e);
            i := !i + 2
          end
          else if is_control c then control !i
          else (Buffer.add_char b c; incr i)
        done;
        out := (Quoted (Buffer.contents b), pos_at start) :: !out
      end
      else if is_control ch then control !i
      else begin
        let start = !i in
        while !i < n && not (is_space text.[!i] || is_special text.[!i] || is_control text.[!i]) do incr i done;
        (* A quote glued to a word is a typo more often than intent. *)
        if !i < n && (text.[!i] = '"' || text.[!i] = '\'') then
          fail !i "a quote inside a word: put white space before the quoted string, or quote the whole word";
        out := (Word (String.sub text start (!i - start)), pos_at start) :: !out
      end
    done;
    out := (Eof, pos_at n) :: !out;
    Ok (Array.of_list (List.rev !out))
  with Lex_error e -> Error e

let nowhere = { file = ""; line = 0; col = 0 }

let locate ~file p = Printf.sprintf "%s:%d:%d" (if p.file = "" then file else p.file) p.line p.col

let line_of ~here p = if p.file = "" || p.file = here.file then Printf.sprintf "line %d" p.line else Printf.sprintf "%s:%d" p.file p.line
