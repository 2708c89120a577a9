(* Reading a directive's arguments: numbers, durations, sizes, flags,
   header fields, paths; each error raised as [Bad] at the argument's
   position, for Conf_file to report as FILE:LINE:COL. *)

open Conf_syntax

exception Bad of pos * string

let bad pos fmt = Printf.ksprintf (fun m -> raise (Bad (pos, m))) fmt

(* {1 Hints} *)

let distance a b =
  let la = String.length a and lb = String.length b in
  let d = Array.make_matrix (la + 1) (lb + 1) 0 in
  for i = 0 to la do d.(i).(0) <- i done;
  for j = 0 to lb do d.(0).(j) <- j done;
  for i = 1 to la do
    for j = 1 to lb do
      let cost = if a.[i - 1] = b.[j - 1] then 0 else 1 in
      d.(i).(j) <- min (min (d.(i - 1).(j) + 1) (d.(i).(j - 1) + 1)) (d.(i - 1).(j - 1) + cost);
      (* a transposition counts as one edit *)
      if i > 1 && j > 1 && a.[i - 1] = b.[j - 2] && a.[i - 2] = b.[j - 1] then
        d.(i).(j) <- min d.(i).(j) (d.(i - 2).(j - 2) + 1)
    done
  done;
  d.(la).(lb)

let suggest word known =
  let limit = max 1 (min 3 (String.length word / 3)) in
  let best =
    List.fold_left
      (fun acc k ->
        let dk = distance word k in
        match acc with Some (_, d) when d <= dk -> acc | _ -> if dk <= limit then Some (k, dk) else acc)
      None known
  in
  Option.map fst best

(* {1 Directives and where they may appear} *)
let arity (d : directive) n =
  let k = List.length d.args in
  if k <> n then
    if k < n then bad d.npos "'%s' takes %d argument%s, %d given" d.name n (if n = 1 then "" else "s") k
    else bad (List.nth d.args n).apos "'%s' takes %d argument%s: unexpected %S" d.name n
        (if n = 1 then "" else "s") (List.nth d.args n).value

let one (d : directive) = arity d 1; List.hd d.args

let no_block (d : directive) =
  match d.block with Some _ -> bad d.npos "'%s' takes no block: end it with ';'" d.name | None -> ()

let int_arg ?(min = 0) ?(max = max_int) a =
  match int_of_string_opt a.value with
  | Some n when String.for_all (fun c -> c >= '0' && c <= '9') a.value ->
      if n < min then bad a.apos "%s is below the least value, %d" a.value min
      else if n > max then bad a.apos "%s is above the greatest value, %d" a.value max
      else n
  | _ -> bad a.apos "%S is not a whole number" a.value

let unit_arg ?(max = infinity) ?(max_text = "") a ~units ~what =
  let v = a.value in
  let n = String.length v in
  let i = ref 0 in
  while !i < n && ((v.[!i] >= '0' && v.[!i] <= '9') || v.[!i] = '.') do incr i done;
  let num = String.sub v 0 !i and suffix = String.sub v !i (n - !i) in
  match float_of_string_opt num, List.assoc_opt suffix units with
  | Some f, Some m when num <> "" && Float.is_finite f ->
      (* Bounded before any conversion: a value past the bound used to
         wrap when made milliseconds or an int. *)
      if f *. m > max then bad a.apos "%S is above the greatest value, %s" v max_text else f *. m
  | _, None when num <> "" ->
      bad a.apos "%S: unknown unit %S (give %s)" v suffix
        (String.concat ", " (List.filter_map (fun (u, _) -> if u = "" then None else Some u) units))
  | _ -> bad a.apos "%S is not %s" v what

(* Ten years: every duration of the file fits (a year of HSTS or
   max_age is common); timeouts get a tighter bound from their caller. *)
let max_duration = 10. *. 365. *. 86400.

let duration ?(max = max_duration) ?(max_text = "10 years (3650d)") a =
  unit_arg ~max ~max_text a ~units:[ ("", 1.); ("s", 1.); ("ms", 0.001); ("m", 60.); ("h", 3600.); ("d", 86400.) ]
    ~what:"a duration (10, 10s, 500ms, 2m)"

let size a =
  let f =
    unit_arg ~max:(2. ** 50.) ~max_text:"1 PiB" a ~units:[ ("", 1.); ("k", 1024.); ("K", 1024.); ("m", 1048576.); ("M", 1048576.); ("g", 1073741824.); ("G", 1073741824.) ]
      ~what:"a size in bytes (4096, 64k, 1m)"
  in
  if Float.of_int (int_of_float f) <> f then bad a.apos "%S is not a whole number of bytes" a.value
  else int_of_float f

let flag a =
  match a.value with
  | "on" -> true
  | "off" -> false
  | v -> bad a.apos "%S: give on or off" v

let header_field d =
  arity d 2;
  match d.args with
  | [ n; v ] ->
      if n.value = "" || not (String.for_all Httpz.Charset.is_tchar n.value) then
        bad n.apos "header name %S is not a token (letters, digits, !#$%%&'*+-.^_`|~)" n.value
      else if List.mem (String.lowercase_ascii n.value) Config.managed_headers then
        bad n.apos "%s is written by the server itself" n.value
      else if not (Httpz.Response.is_field_value v.value) then
        bad v.apos "the value of %s must not hold CR, LF or NUL" n.value
      else (n.value, v.value)
  | _ -> assert false

let path_arg a ~what =
  if a.value = "" || a.value.[0] <> '/' then bad a.apos "%s %S must start with '/'" what a.value
  else if String.exists (fun c -> c = '?' || c = '#' || c = '\000' || c < ' ') a.value then
    bad a.apos "%s %S must be a plain path (no '?', '#' or control bytes)" what a.value
  else if List.exists (fun s -> s = "." || s = "..") (String.split_on_char '/' a.value) then
    bad a.apos "%s %S must not hold '.' or '..' segments" what a.value
  else a.value

(* {1 Names, addresses, formats} *)

let valid_host_name n =
  let body = if String.length n > 2 && String.sub n 0 2 = "*." then String.sub n 2 (String.length n - 2) else n in
  body <> "" && String.length n < 256
  && String.for_all (fun c -> (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c = '-' || c = '.' || c = '_') body
  && body.[0] <> '.' && body.[String.length body - 1] <> '.'
  && not (String.contains body '*')

let address_arg ~host (a : arg) =
  let text = if a.value <> "" && String.for_all (fun c -> c >= '0' && c <= '9') a.value then host ^ ":" ^ a.value else a.value in
  match Config.parse_listen text with
  (* Port 0 is a new random port on every start (and every address). *)
  | Ok (_, 0) -> bad a.apos "%S: port 0 is a random port; give one of 1-65535" a.value
  | Ok hp -> hp
  | Error e -> bad a.apos "%s" e

type listen_role = Plain | Tls_listen | Redirect

let listen_arg (d : directive) =
  let addr, role =
    match d.args with
    | [ a ] -> (a, Plain)
    | [ a; r ] -> (
        ( a,
          match r.value with
          | "tls" | "ssl" -> Tls_listen
          | "plain" -> Plain
          | "redirect" -> Redirect
          | v -> bad r.apos "%S: a listen address is followed by tls, plain or redirect (or nothing)" v ))
    | [] -> bad d.npos "'listen' takes an address: listen 8080; listen 0.0.0.0:443 tls;"
    | _ :: _ :: x :: _ -> bad x.apos "'listen' takes an address and a role: unexpected %S" x.value
  in
  (address_arg ~host:"0.0.0.0" addr, role, d.npos)

let log_format (a : arg) =
  match Access_log.format_of_string a.value with
  | Some f -> f
  | None -> bad a.apos "%S: give %s" a.value Access_log.format_names

