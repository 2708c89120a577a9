(* Properties: the compiled router against the reference on random
   route sets and paths; reachability of every route. *)

open Httpz
open Router_harness
open Reference

(* ---------- generators ---------- *)

let lits = [ "a"; "b"; "ab" ]
let meths = Meth.[ Get; Head; Post; Delete; Options ]

let gen_pattern =
  let open QCheck2.Gen in
  let* body = list_size (int_bound 3) (frequency [ 3, map (fun l -> L l) (oneofl lits); 2, pure Pm ]) in
  let* ending = frequency [ 4, pure `None; 2, pure `Wild; 1, pure `Slash ] in
  let* kind = frequency [ 5, map (fun m -> Route_of m) (oneofl meths); 1, pure Mount_of ] in
  let segs =
    match ending, kind with
    | `Wild, Route_of _ -> body @ [ Wd ]
    | `Slash, Route_of _ when body <> [] -> body @ [ L "" ]
    | _ -> body
  in
  pure (kind, segs)

let pattern_string segs =
  let n = ref 0 in
  "/"
  ^ String.concat "/"
      (List.map
         (function L l -> l | Pm -> incr n; Printf.sprintf ":p%d" !n | Wd -> "*w")
         segs)

(* Builds the router and the reference from the routes [add] accepts. *)
let make_router specs =
  let r = Router.create () in
  let kept = ref [] and id = ref 0 in
  List.iter
    (fun (kind, segs) ->
      let p = pattern_string segs in
      match
        (match kind with Route_of m -> Router.add r m p !id | Mount_of -> Router.mount r p !id)
      with
      | () -> kept := { id = !id; kind; segs } :: !kept; incr id
      | exception Invalid_argument _ -> ())
    specs;
  Router.compile r, List.rev !kept

let gen_routes = QCheck2.Gen.(list_size (int_range 1 12) gen_pattern)

let path_pieces = [ "a"; "b"; "ab"; ""; "."; ".."; "%2e"; "%61"; "~x"; "a%2Fb"; "+"; "%zz"; "%" ]

let gen_path =
  let open QCheck2.Gen in
  frequency
    [ 8, map (fun l -> "/" ^ String.concat "/" l) (list_size (int_bound 5) (oneofl path_pieces));
      1, oneofl [ ""; "*"; "a"; "//"; "/a//"; "///a" ];
      1, string_size ~gen:(oneofl [ '/'; '%'; '.'; 'a'; 'b'; '2'; 'e'; 'F'; '+'; '\000' ]) (int_bound 10) ]

let gen_meth = QCheck2.Gen.oneofl Meth.[ Get; Head; Post; Delete; Options; Put; Other ]

let print_case (specs, meth, path) =
  Printf.sprintf "routes [%s]; %s %S"
    (String.concat "; "
       (List.map
          (fun (k, segs) ->
            (match k with Route_of m -> Meth.to_string m | Mount_of -> "mount") ^ " " ^ pattern_string segs)
          specs))
    (Meth.to_string meth) path

let prop_reference =
  QCheck2.Test.make ~name:"the most specific route wins, as a naive matcher says" ~count:3000
    ~print:print_case
    QCheck2.Gen.(triple gen_routes gen_meth gen_path)
    (fun (specs, meth, path) ->
      let c, routes = make_router specs in
      let o, buf, m = route_with string_of_int c meth path in
      let r, id, ps, allow, prefix = ref_find routes meth path in
      let payload_id =
        if o.result = "found" || o.result = "head_by_get" then Router.payload c m else -1
      in
      let ok =
        o.result = r && payload_id = id
        && List.map snd o.params = ps
        && Router.allow m = allow && o.prefix = prefix
      in
      if not ok then
        fail "router: %s id=%d params=[%s] allow=%S prefix=%d; reference: %s id=%d params=[%s] allow=%S prefix=%d"
          o.result payload_id (String.concat "," (List.map snd o.params)) o.allow o.prefix r id
          (String.concat "," ps) (Router.allow_string allow) prefix;
      let redirect = Router.slash_redirect c m buf in
      if redirect <> ref_redirect routes meth path then fail "slash_redirect: router says %b" redirect;
      true)

(* Parameter values never equal a literal (they hold a '~') and are never
   dot segments; they exercise %2F, '+' and escapes. *)
let gen_value =
  QCheck2.Gen.(
    map (fun l -> "~" ^ String.concat "" l)
      (list_size (int_bound 4) (oneofl [ "%2F"; "%2f"; "+"; "x"; "%20"; "%25"; "."; ":"; "%7E" ])))

let gen_reach =
  let open QCheck2.Gen in
  let* specs = gen_routes in
  let* values = list_repeat 8 gen_value in
  let* markers = list_size (int_range 1 3) gen_value in
  let* encode = bool in
  pure (specs, values, markers, encode)

let decode_value v = match pct_decode v with Some s -> s | None -> assert false

let prop_reachable =
  QCheck2.Test.make ~name:"every route is reachable and yields exactly its parameters" ~count:1000
    ~print:(fun (specs, values, markers, _) ->
      print_case (specs, Get, "") ^ " values " ^ String.concat "," values ^ " tail "
      ^ String.concat "," markers)
    gen_reach
    (fun (specs, values, markers, encode) ->
      let c, routes = make_router specs in
      List.for_all
        (fun r ->
          let vals = ref values in
          let next () = match !vals with v :: rest -> vals := rest; v | [] -> "~" in
          let params = ref [] in
          let segs =
            List.concat_map
              (function
                | L "a" when encode -> [ "%61" ]
                | L l -> [ l ]
                | Pm -> let v = next () in params := v :: !params; [ v ]
                | Wd -> params := String.concat "/" ("" :: markers) :: !params; "" :: markers)
              r.segs
          in
          (* a mount gets an empty segment then the markers below it *)
          let segs = if r.kind = Mount_of then segs @ ("" :: markers) else segs in
          let path = if segs = [] then "/" else "/" ^ String.concat "/" segs in
          let meth = match r.kind with Route_of m -> m | Mount_of -> Meth.Other in
          let o, buf, m = route_with string_of_int c meth path in
          let want = List.rev !params in
          let ok =
            o.result = "found" && Router.payload c m = r.id && List.map snd o.params = want
            && List.for_all2
                 (fun i v ->
                   (match r.segs with _ when List.mem Wd r.segs && i = List.length want - 1 -> true
                    | _ -> decoded buf (Router.param m i) = decode_value v))
                 (List.init (List.length want) Fun.id) want
          in
          if not ok then fail "route %d (%s) not reached by %S: %s" r.id (pattern_string r.segs) path o.result;
          true)
        routes)

let prop_never_raises =
  QCheck2.Test.make ~name:"random bytes never raise" ~count:2000
    QCheck2.Gen.(pair gen_routes (string_size (int_bound 24)))
    (fun (specs, path) ->
      let c, _ = make_router specs in
      List.iter
        (fun meth ->
          let _, buf, m = route_with string_of_int c meth path in
          ignore (Router.slash_redirect c m buf))
        Meth.[ Get; Head; Options; Other ];
      true)

let all = [ prop_reference; prop_reachable; prop_never_raises ]
