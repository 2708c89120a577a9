open Conf_syntax
open Conf_args
module Guard = Httpz_server.Guard
module Address_rules = Httpz_server.Address_rules

type entry = { directive : string; args : string list; at : Conf_lexer.pos }

let directives = [ "auth_basic"; "auth_basic_user_file"; "allow"; "deny"; "limit_req"; "limit_req_status" ]
let zone_directives = [ "limit_req_zone" ]
let repeatable d = d = "allow" || d = "deny" || d = "limit_req_zone"

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

(* {1 Zones} *)

(* nginx's variables as keys: what a limit counts by. *)
let key_arg (a : arg) =
  let v = a.value in
  let after p = if String.length v > String.length p && String.sub v 0 (String.length p) = p then Some (String.sub v (String.length p) (String.length v - String.length p)) else None in
  let token s = s <> "" && String.for_all (fun c -> (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c = '_' || c = '-') s in
  match v with
  | "$binary_remote_addr" | "$remote_addr" -> Guard.Address
  | "$server_name" -> Guard.Site ""
  | _ -> (
      match after "$http_", after "$cookie_" with
      | Some h, _ when token h ->
          (* nginx's $http_x_api_key is the field X-Api-Key. *)
          Guard.Header (String.map (fun c -> if c = '_' then '-' else Char.lowercase_ascii c) h)
      | _, Some c when token c -> Guard.Cookie c
      | _ ->
          bad a.apos "%S is not a key a limit can count by: give $binary_remote_addr, $http_NAME, $cookie_NAME or $server_name" v)

let key_text = function
  | Guard.Address -> "$binary_remote_addr"
  | Header h -> "$http_" ^ String.map (fun c -> if c = '-' then '_' else c) h
  | Cookie c -> "$cookie_" ^ c
  | Site _ -> "$server_name"

(* At least 16 entries (a neighbourhood), at most 2^21 (64 MiB). *)
let min_zone = 512
let max_zone = 64 * 1024 * 1024

(* zone=NAME:SIZE *)
let zone_arg (a : arg) =
  let v = a.value in
  let bad_zone () = bad a.apos "%S: give zone=NAME:SIZE (zone=one:10m)" v in
  if String.length v < 5 || String.sub v 0 5 <> "zone=" then bad_zone ();
  match String.index_opt v ':' with
  | None -> bad_zone ()
  | Some i ->
      let name = String.sub v 5 (i - 5) and sz = String.sub v (i + 1) (String.length v - i - 1) in
      if name = "" || not (String.for_all (fun c -> (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c = '_' || c = '-') name) then
        bad a.apos "%S: a zone's name is letters, digits, '_' and '-'" name;
      let size = size { a with value = sz } in
      if size < min_zone then bad a.apos "%S: a zone needs at least 512 bytes (16 clients)" sz;
      if size > max_zone then bad a.apos "%S: a zone holds at most 64m" sz;
      (name, size)

(* The argument after [prefix=]. *)
let named prefix (a : arg) =
  let p = prefix ^ "=" in
  let n = String.length p in
  if String.length a.value > n && String.sub a.value 0 n = p then Some { a with value = String.sub a.value n (String.length a.value - n) }
  else None

let zone_entries size = Httpz_server.Limit_zone.entries_of_size size

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
    | "limit_req_zone" -> (
        match d.args with
        | [ k; z; r ] ->
            let key = key_arg k in
            let name, size = zone_arg z in
            let rate = match named "rate" r with Some r -> r | None -> bad r.apos "%S: give rate=10r/s (or r/m)" r.value in
            ignore (rate_arg rate);
            [ name; key_text key; string_of_int size; rate.value ]
        | _ -> bad d.npos "'limit_req_zone' takes a key, a zone and a rate: limit_req_zone $binary_remote_addr zone=one:10m rate=1r/s;")
    | "limit_req_status" ->
        let a = one d in
        let code = int_arg ~min:400 ~max:599 a in
        if Httpz.Status.of_code code = None then bad a.apos "%d is not a status the server can send" code;
        [ a.value ]
    | "limit_req" -> (
        match d.args with
        | [ { value = "off"; quoted = false; _ } ] -> [ "off" ]
        | z :: rest when named "zone" z <> None ->
            (* nginx's form: the zone gives the rate and the key; burst=N
               is the excess over the first request, so N + 1 at once.
               Requests within the burst are served at once (nodelay is
               the only behaviour: nothing is queued). *)
            let name = (Option.get (named "zone" z)).value in
            let burst = ref 0 in
            List.iter
              (fun (a : arg) ->
                match named "burst" a with
                | Some b -> burst := int_arg ~min:0 ~max:(max_burst - 1) b
                | None ->
                    if a.value <> "nodelay" then
                      bad a.apos "%S: 'limit_req zone=NAME' takes burst=N and nodelay (requests within the burst are never delayed)" a.value)
              rest;
            [ "zone"; name; string_of_int (!burst + 1) ]
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

let config ?(site = "") entries =
  let find name = List.find_opt (fun e -> e.directive = name) entries in
  let status = match find "limit_req_status" with Some { args = [ c ]; _ } -> int_of_string c | _ -> 429 in
  let access =
    List.filter_map
      (fun e ->
        match e.directive, e.args with
        | "allow", [ a ] -> Some (Address_rules.Allow, a)
        | "deny", [ a ] -> Some (Address_rules.Deny, a)
        | _ -> None)
      entries
  in
  let per_second r = rate_arg { value = r; quoted = false; apos = Conf_lexer.nowhere } in
  let zones = List.filter (fun e -> e.directive = "limit_req_zone") entries in
  let default = { Guard.default_zone with status } in
  let limit =
    match find "limit_req" with
    | Some { args = [ "zone"; name; b ]; at; _ } -> (
        match List.find_opt (fun z -> List.hd z.args = name) zones with
        | Some { args = [ _; key; size; r ]; _ } ->
            let key = match key_arg { value = key; quoted = false; apos = at } with Guard.Site _ -> Guard.Site site | k -> k in
            Ok (Some { Guard.per_second = per_second r; burst = int_of_string b }, { Guard.name; key; entries = zone_entries (int_of_string size); status })
        | _ -> Error (at, Printf.sprintf "no zone %S: give limit_req_zone KEY zone=%s:SIZE rate=RATE; at the top level" name name))
    | Some { args = [ r; b ]; _ } -> Ok (Some { Guard.per_second = per_second r; burst = int_of_string b }, default)
    | _ -> Ok (None, default)
  in
  match limit with
  | Error e -> Error e
  | Ok (rate, zone) -> (
      match find "auth_basic", find "auth_basic_user_file" with
      | Some { args = [ "off" ]; _ }, _ | None, _ -> Ok { Guard.access; rate; auth = None; zone }
      | Some { args = [ realm ]; _ }, Some { args = [ user_file ]; _ } -> Ok { Guard.access; rate; auth = Some { realm; user_file }; zone }
      | Some a, None -> Error (a.at, "auth_basic needs auth_basic_user_file (here or in the enclosing block)")
      | Some a, Some _ -> Error (a.at, "auth_basic takes a realm"))

let user_file entries =
  match List.find_opt (fun e -> e.directive = "auth_basic_user_file") entries with
  | Some f -> Some f.at
  | None -> None
