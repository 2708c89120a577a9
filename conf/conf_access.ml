open Conf_syntax
open Conf_args
module Guard = Httpz_server.Guard
module Address_rules = Httpz_server.Address_rules

type entry = { directive : string; args : string list; at : Conf_lexer.pos }

let directives = [ "auth_basic"; "auth_basic_user_file"; "allow"; "deny"; "limit_req" ]
let repeatable d = d = "allow" || d = "deny"

let min_rate = 1. /. 60.
let max_rate = 1e6
let max_burst = 100_000

(* "10r/s", "30r/m", "2.5": requests per second. *)
let rate_arg (a : arg) =
  let v = a.value in
  let num, per =
    let n = String.length v in
    if n > 3 && String.sub v (n - 3) 3 = "r/s" then (String.sub v 0 (n - 3), 1.)
    else if n > 3 && String.sub v (n - 3) 3 = "r/m" then (String.sub v 0 (n - 3), 60.)
    else (v, 1.)
  in
  match float_of_string_opt num with
  | Some r when num <> "" && String.for_all (fun c -> (c >= '0' && c <= '9') || c = '.') num && r > 0. ->
      (* Bounded so that the burst's time (burst / rate) stays far from
         the nanosecond counter's range: a rate of 1r/m with a burst of
         153722867 wrapped and refused everything. *)
      let rate = r /. per in
      if rate < min_rate then bad a.apos "%S is below the least rate, 1r/m" v
      else if rate > max_rate then bad a.apos "%S is above the greatest rate, 1000000r/s" v
      else rate
  | _ -> bad a.apos "%S is not a rate: give requests per second or minute (10r/s, 30r/m)" v

let default_burst rate = min max_burst (max 1 (int_of_float (Float.ceil rate)))

let read ~dir (d : directive) =
  no_block d;
  let args =
    match d.name with
    | "allow" | "deny" ->
        let a = one d in
        (match Address_rules.compile [ (Address_rules.Allow, a.value) ] with
         | Ok _ -> ()
         | Error _ -> bad a.apos "%S is not an address, a prefix (10.0.0.0/8, 2001:db8::/32) or all" a.value);
        [ a.value ]
    | "auth_basic" ->
        let a = one d in
        if a.value = "" || String.exists (fun c -> c = '"' || c = '\\' || c < ' ' || c = '\127') a.value then
          bad a.apos "the realm must not be empty nor hold a double quote, backslash or control byte";
        [ a.value ]
    | "auth_basic_user_file" ->
        let a = one d in
        if a.value = "" then bad a.apos "the user file must not be empty";
        [ (if Filename.is_relative a.value then Filename.concat dir a.value else a.value) ]
    | "limit_req" -> (
        match d.args with
        | [ { value = "off"; quoted = false; _ } ] -> [ "off" ]
        | [ r ] -> let rate = rate_arg r in [ r.value; string_of_int (default_burst rate) ]
        | [ r; b ] -> ignore (rate_arg r); [ r.value; string_of_int (int_arg ~min:1 ~max:max_burst b) ]
        | [] -> bad d.npos "'limit_req' takes a rate and a burst: limit_req 10r/s 20; (or off)"
        | _ :: _ :: x :: _ -> bad x.apos "'limit_req' takes a rate and a burst: unexpected %S" x.value)
    | n -> invalid_arg ("Conf_access.read: " ^ n)
  in
  { directive = d.name; args; at = d.npos }

let kind e = match e.directive with "allow" | "deny" -> "allow" | d -> d

let within ~outer ~inner =
  List.filter (fun o -> not (List.exists (fun i -> kind i = kind o) inner)) outer @ inner

let config entries =
  let find name = List.find_opt (fun e -> e.directive = name) entries in
  let access =
    List.filter_map
      (fun e ->
        match e.directive, e.args with
        | "allow", [ a ] -> Some (Address_rules.Allow, a)
        | "deny", [ a ] -> Some (Address_rules.Deny, a)
        | _ -> None)
      entries
  in
  let rate =
    match find "limit_req" with
    | Some { args = [ r; b ]; _ } ->
        Some { Guard.per_second = rate_arg { value = r; quoted = false; apos = Conf_lexer.nowhere }; burst = int_of_string b }
    | _ -> None
  in
  match find "auth_basic", find "auth_basic_user_file" with
  | Some { args = [ "off" ]; _ }, _ | None, _ -> Ok { Guard.access; rate; auth = None }
  | Some { args = [ realm ]; _ }, Some { args = [ user_file ]; _ } -> Ok { Guard.access; rate; auth = Some { realm; user_file } }
  | Some a, None -> Error (a.at, "auth_basic needs auth_basic_user_file (here or in the enclosing block)")
  | Some a, Some _ -> Error (a.at, "auth_basic takes a realm")

let user_file entries =
  match List.find_opt (fun e -> e.directive = "auth_basic_user_file") entries with
  | Some f -> Some f.at
  | None -> None
