(* The slow obvious router: every route matched on its own, candidates
   sorted by specificity, the first that accepts the method wins. *)

open Httpz

type kind = Route_of of Meth.t | Mount_of

type pseg = L of string | Pm | Wd  (* literal (decoded), parameter, wildcard *)

type rroute = { id : int; kind : kind; segs : pseg list }

let hex c =
  match c with
  | '0' .. '9' -> Some (Char.code c - 48)
  | 'a' .. 'f' -> Some (Char.code c - 87)
  | 'A' .. 'F' -> Some (Char.code c - 55)
  | _ -> None

(* Strict percent-decoding, the obvious way. *)
let pct_decode s =
  let b = Buffer.create 8 in
  let rec go i =
    if i >= String.length s then Some (Buffer.contents b)
    else if s.[i] = '%' then
      if i + 2 >= String.length s then None
      else
        match hex s.[i + 1], hex s.[i + 2] with
        | Some h, Some l -> Buffer.add_char b (Char.chr ((h * 16) + l)); go (i + 3)
        | _ -> None
    else begin Buffer.add_char b s.[i]; go (i + 1) end
  in
  go 0

let is_dot s = match pct_decode s with Some ("." | "..") -> true | _ -> false

let ref_split path =
  if path = "" || path = "/" then Some []
  else if path.[0] <> '/' then None
  else Some (String.split_on_char '/' (String.sub path 1 (String.length path - 1)))

(* The ranks that order candidates, position by position: where a segment
   is left, literal 0 < parameter 1 < wildcard 2 < mount 3; where the path
   has ended, route end 0 < wildcard 1 < mount 2. *)
let rec ref_match kind pat segs =
  match pat, segs with
  | [], [] -> Some ((if kind = Mount_of then [ 2 ] else [ 0 ]), [])
  | [], _ :: _ -> if kind = Mount_of then Some ([ 3 ], []) else None
  | [ Wd ], [] -> Some ([ 1 ], [ "" ])
  | [ Wd ], _ ->
      let tail = String.concat "/" segs in
      if List.exists is_dot segs then None else Some ([ 2 ], [ tail ])
  | Wd :: _, _ -> assert false
  | _ :: _, [] -> None
  | L l :: rest, s :: srest ->
      if pct_decode s = Some l then
        Option.map (fun (k, ps) -> 0 :: k, ps) (ref_match kind rest srest)
      else None
  | Pm :: rest, s :: srest ->
      if s <> "" && not (is_dot s) then
        Option.map (fun (k, ps) -> 1 :: k, s :: ps) (ref_match kind rest srest)
      else None

let bit m = Router.meth_bit m

let allow_of meths =
  let mask = List.fold_left (fun a m -> a lor bit m) 0 meths in
  if mask = 0 then 0
  else mask lor (if mask land bit Get <> 0 then bit Head else 0) lor bit Options

(* result, route id, params, allow mask, prefix length *)
let ref_find routes meth path =
  match ref_split path with
  | None -> "not_found", -1, [], 0, 0
  | Some segs ->
      let cands =
        List.filter_map
          (fun r -> Option.map (fun (key, ps) -> key, r, ps) (ref_match r.kind r.segs segs))
          routes
      in
      let cands = List.stable_sort (fun (a, _, _) (b, _, _) -> compare a b) cands in
      let rec groups = function
        | [] -> []
        | (k, _, _) :: _ as l ->
            let g, rest = List.partition (fun (k', _, _) -> k' = k) l in
            g :: groups rest
      in
      let prefix r =
        match r.kind with
        | Route_of _ -> 0
        | Mount_of ->
            let d = List.length r.segs in
            List.fold_left ( + ) 0 (List.filteri (fun i _ -> i < d) (List.map (fun s -> String.length s + 1) segs))
      in
      let rec pick allow = function
        | [] ->
            if cands = [] then "not_found", -1, [], 0, 0
            else if meth = Meth.Options then "auto_options", -1, [], allow, 0
            else "method_not_allowed", -1, [], allow, 0
        | g :: rest -> (
            let with_kind k = List.find_opt (fun (_, r, _) -> r.kind = k) g in
            match with_kind Mount_of with
            | Some (_, r, ps) -> "found", r.id, ps, 0, prefix r
            | None -> (
                match with_kind (Route_of meth) with
                | Some (_, r, ps) -> "found", r.id, ps, 0, prefix r
                | None -> (
                    match meth, with_kind (Route_of Get) with
                    | Meth.Head, Some (_, r, ps) -> "head_by_get", r.id, ps, 0, prefix r
                    | _ ->
                        let ms = List.filter_map (fun (_, r, _) ->
                            match r.kind with Route_of m -> Some m | Mount_of -> None) g in
                        pick (allow lor allow_of ms) rest)))
      in
      pick 0 (groups cands)

let ref_redirect routes meth path =
  let n = String.length path in
  let r, _, _, _, _ = ref_find routes meth path in
  r = "not_found" && n > 1
  && begin
    let other = if path.[n - 1] = '/' then String.sub path 0 (n - 1) else path ^ "/" in
    let r', _, _, _, _ = ref_find routes meth other in
    r' = "found" || r' = "head_by_get" || r' = "auto_options"
  end

