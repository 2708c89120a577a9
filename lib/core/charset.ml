let table f = String.init 256 (fun i -> if f (Char.chr i) then '\001' else '\000')

let tchar =
  table (fun c ->
      match c with
      | 'a' .. 'z' | 'A' .. 'Z' | '0' .. '9'
      | '!' | '#' | '$' | '%' | '&' | '\'' | '*' | '+' | '-' | '.' | '^' | '_' | '`' | '|' | '~'
        -> true
      | _ -> false)

let host_char =
  table (fun c ->
      match c with
      | 'a' .. 'z' | 'A' .. 'Z' | '0' .. '9' | '-' | '.' | '_' | '~'
      | '!' | '$' | '&' | '\'' | '(' | ')' | '*' | '+' | ',' | ';' | '='
      | '%' | ':' | '[' | ']' -> true
      | _ -> false)

let[@inline] is_tchar c = String.unsafe_get tchar (Char.code c) <> '\000'
let[@inline] is_host_char c = String.unsafe_get host_char (Char.code c) <> '\000'
let[@inline] is_field_vchar c = (c > ' ' && c < '\127') || c >= '\128'

let[@inline] is_ows c = c = ' ' || c = '\t'
