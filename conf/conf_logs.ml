open Conf_syntax
open Conf_args

type spec = Off of Conf_lexer.pos | To of { dest : string; format : Access_log.format option; at : Conf_lexer.pos }

let named : (string * (Access_log.format * Conf_lexer.pos)) list ref = ref []
let files : (string * Conf_lexer.pos) list ref = ref []

let reset () =
  named := [];
  files := []

let is_definition (d : directive) = d.name = "log_format" && List.length d.args >= 2

let define (d : directive) =
  match d.args with
  | [] | [ _ ] -> ()
  | name :: rest ->
      if Access_log.format_of_string name.value <> None then
        bad name.apos "%S is a built-in format: give the format another name" name.value;
      if name.value = "" || not (String.for_all (fun c -> match c with 'a' .. 'z' | 'A' .. 'Z' | '0' .. '9' | '_' | '-' -> true | _ -> false) name.value)
      then bad name.apos "%S: a format's name is letters, digits, '_' and '-'" name.value;
      (match List.assoc_opt name.value !named with
       | Some (_, p) -> bad name.apos "log_format %s is already given at %s" name.value (Conf_lexer.line_of ~here:name.apos p)
       | None -> ());
      let escape, parts =
        match rest with
        | e :: parts when (not e.quoted) && String.length e.value > 7 && String.sub e.value 0 7 = "escape=" -> (
            match String.sub e.value 7 (String.length e.value - 7) with
            | "default" -> (Access_log.Escape_default, parts)
            | "json" -> (Escape_json, parts)
            | "none" -> (Escape_none, parts)
            | v -> bad e.apos "escape=%s: give escape=default, escape=json or escape=none" v)
        | parts -> (Access_log.Escape_default, parts)
      in
      if parts = [] then bad d.npos "'log_format %s' needs the line's text: log_format %s '$remote_addr \"$request\" $status';" name.value name.value;
      (* As nginx: the strings put together. *)
      let text = String.concat "" (List.map (fun (a : arg) -> a.value) parts) in
      match Access_log.compile ~name:name.value ~escape text with
      | Ok c -> named := (name.value, (Access_log.Custom c, name.apos)) :: !named
      | Error e -> bad (List.hd parts).apos "%s" e

let format (a : arg) =
  match Access_log.format_of_string a.value with
  | Some f -> f
  | None -> (
      match List.assoc_opt a.value !named with
      | Some (f, _) -> f
      | None ->
          bad a.apos "%S: give %s, or the name of a log_format given before" a.value Access_log.format_names)

let access_log ~dir (d : directive) =
  let a, f = match d.args with [ a; f ] -> (a, Some f) | _ -> (one d, None) in
  if a.value = "off" then begin
    (match f with Some f -> bad f.apos "'access_log off' takes no format" | None -> ());
    Off d.npos
  end
  else begin
    if a.value = "" then bad a.apos "give a file, syslog:server=ADDRESS or off";
    let dest =
      if Log_dest.is_syslog a.value || a.value = "-" then a.value
      else if Filename.is_relative a.value then Filename.concat dir a.value
      else a.value
    in
    (match Log_dest.check_dest dest with Ok () -> () | Error e -> bad a.apos "%s" e);
    if dest <> "-" then files := (dest, a.apos) :: !files;
    To { dest; format = Option.map format f; at = a.apos }
  end
