(* Running the router on a path placed inside garbage, and reading back
   what it found as plain strings. *)

open Httpz
module S = Httpz_test_support

let fail fmt = Printf.ksprintf failwith fmt

(* A router whose payloads are strings naming the route. *)
let build ?(subs = []) routes mounts =
  let r = Router.create () in
  List.iter (fun (m, p) -> Router.add r m p (Meth.to_string m ^ " " ^ p)) routes;
  List.iter (fun p -> Router.mount r p ("mount " ^ p)) mounts;
  List.iter (fun (p, sub) -> Router.mount_router r p sub) subs;
  Router.compile r

type outcome = {
  result : string;
  payload : string;  (* "" unless found *)
  params : (string * string) list;  (* name, raw value *)
  allow : string;
  remainder : string;
  prefix : int;
}

let pp_outcome ppf o =
  Format.fprintf ppf "{%s %S params=[%s] allow=%S rem=%S prefix=%d}" o.result o.payload
    (String.concat "; " (List.map (fun (n, v) -> n ^ "=" ^ v) o.params))
    o.allow o.remainder o.prefix

let outcome_t = Alcotest.testable pp_outcome ( = )

(* Runs [find] with the path at an offset inside garbage. *)
let route_with show ?(off = 7) c meth path =
  let buf = S.bigstring_at ~garbage:'/' ~off path in
  let m = Router.Match.create ~max_params:(Router.max_params c) in
  let r = Router.find c m meth buf ~path:(Span.make ~off ~len:(String.length path)) in
  let found = r = Found || r = Head_by_get in
  let o =
    { result = Router.result_to_string r;
      payload = (if found then show (Router.payload c m) else "");
      params =
        List.init (Router.param_count m) (fun i ->
            Router.param_name c m i, Span.to_string buf (Router.param m i));
      allow = Router.allow_string (Router.allow m);
      remainder = (if found then Span.to_string buf (Router.remainder m) else "");
      prefix = Router.prefix_length m }
  in
  o, buf, m

let route c = route_with Fun.id c

let expect ?(params = []) ?(allow = "") ?(remainder = "") ?(prefix = 0) result payload =
  { result; payload; params; allow; remainder; prefix }

let check c meth path e =
  let o, _, _ = route c meth path in
  Alcotest.check outcome_t (Printf.sprintf "%s %S" (Meth.to_string meth) path) e o

let found ?params ?remainder ?prefix payload = expect ?params ?remainder ?prefix "found" payload
let not_found = expect "not_found" ""

let decoded buf s =
  match Router.param_string buf s with Ok v -> v | Error e -> "error " ^ Target.error_to_string e

