module P = Route_pattern

(* ---- methods ---- *)

let n_meths = 10
let get_i = 0
let head_i = 1
let options_i = 6

let meth_index : Meth.t -> int = function
  | Get -> 0 | Head -> 1 | Post -> 2 | Put -> 3 | Delete -> 4 | Connect -> 5
  | Options -> 6 | Trace -> 7 | Patch -> 8 | Other -> 9

let meth_bit (m : Meth.t) = match m with Other -> 0 | _ -> 1 lsl meth_index m

(* In bit order, so [write_allow] walks the bits 0 to 8. *)
let allow_names = [| "GET"; "HEAD"; "POST"; "PUT"; "DELETE"; "CONNECT"; "OPTIONS"; "TRACE"; "PATCH" |]

(* ---- building ---- *)

type 'a entry =
  | Route of Meth.t * P.segment list * 'a
  | Mount of P.segment list * 'a
  | Sub of P.segment list * 'a t

and 'a t = { mutable entries : 'a entry list (* newest first *) }

let create () = { entries = [] }

let fail fmt = Printf.ksprintf invalid_arg ("Httpz.Router." ^^ fmt)

let add r meth pattern h =
  if meth = Meth.Other then fail "add: Meth.Other cannot be routed (mount a handler instead)";
  let segs = P.parse pattern in
  List.iter
    (function
      | Route (m', s', _) when m' = meth && P.same_shape s' segs ->
          fail "add: duplicate route %s %s" (Meth.to_string meth) (P.to_string segs)
      | _ -> ())
    r.entries;
  r.entries <- Route (meth, segs, h) :: r.entries

let prefix_segments fn pattern =
  let segs = P.parse pattern in
  let segs = match List.rev segs with P.Lit "" :: rest -> List.rev rest | _ -> segs in
  if List.exists (function P.Wild _ -> true | _ -> false) segs then
    fail "%s: prefix %S has a wildcard" fn pattern;
  segs

let mount r prefix h =
  let segs = prefix_segments "mount" prefix in
  List.iter
    (function
      | Mount (s', _) when P.same_shape s' segs -> fail "mount: duplicate mount %s" (P.to_string segs)
      | _ -> ())
    r.entries;
  r.entries <- Mount (segs, h) :: r.entries

let mount_router r prefix sub =
  let segs = prefix_segments "mount_router" prefix in
  r.entries <- Sub (segs, sub) :: r.entries

(* ---- compiling ---- *)

type node = {
  lit_keys : string array;
  lit_nodes : node array;
  param : node option;
  exact : int array;  (* method index -> route id, or -1 *)
  exact_mask : int;  (* methods registered; 0 = no route ends here *)
  exact_allow : int;  (* what Allow says for them *)
  wild : int array;
  wild_mask : int;
  wild_allow : int;
  mount : int;  (* route id, or -1 *)
}

type 'a compiled = {
  root : node;
  payloads : 'a array;
  names : string array array;  (* route id -> parameter names *)
  prefix_depth : int array;  (* route id -> segments of its mount prefix *)
  max_params : int;
}

type flat = { kind : Meth.t option (* None: a mount *); segs : P.segment list; depth : int }

type bnode = {
  mutable lits : (string * bnode) list;
  mutable bparam : bnode option;
  bexact : int array;
  bwild : int array;
  mutable bmount : int;
}

let new_bnode () =
  { lits = []; bparam = None; bexact = Array.make n_meths (-1); bwild = Array.make n_meths (-1); bmount = -1 }

let flatten root =
  let out = ref [] in
  let rec go stack prefix r =
    if List.memq r stack then fail "compile: a sub-router is mounted inside itself";
    List.iter
      (function
        | Route (m, segs, h) ->
            out := ({ kind = Some m; segs = prefix @ segs; depth = List.length prefix }, h) :: !out
        | Mount (segs, h) ->
            let segs = prefix @ segs in
            out := ({ kind = None; segs; depth = List.length segs }, h) :: !out
        | Sub (segs, sub) -> go (r :: stack) (prefix @ segs) sub)
      (List.rev r.entries)
  in
  go [] [] root;
  List.rev !out

let describe f =
  (match f.kind with Some m -> Meth.to_string m ^ " " | None -> "mount ") ^ P.to_string f.segs

let insert root id f =
  let rec go node = function
    | [] -> (
        match f.kind with
        | None ->
            if node.bmount >= 0 then fail "compile: duplicate %s" (describe f);
            node.bmount <- id
        | Some m ->
            let i = meth_index m in
            if node.bexact.(i) >= 0 then fail "compile: duplicate %s" (describe f);
            node.bexact.(i) <- id)
    | [ P.Wild _ ] -> (
        match f.kind with
        | Some m ->
            let i = meth_index m in
            if node.bwild.(i) >= 0 then fail "compile: duplicate %s" (describe f);
            node.bwild.(i) <- id
        | None -> assert false (* prefixes have no wildcard *))
    | P.Wild _ :: _ -> assert false (* parse keeps wildcards last *)
    | P.Param _ :: rest ->
        let child =
          match node.bparam with
          | Some c -> c
          | None -> let c = new_bnode () in node.bparam <- Some c; c
        in
        go child rest
    | P.Lit s :: rest ->
        let child =
          match List.assoc_opt s node.lits with
          | Some c -> c
          | None -> let c = new_bnode () in node.lits <- node.lits @ [ (s, c) ]; c
        in
        go child rest
  in
  go root f.segs

let mask_of table =
  let m = ref 0 in
  Array.iteri (fun i id -> if id >= 0 && i < 9 then m := !m lor (1 lsl i)) table;
  !m

(* What Allow lists: the methods, HEAD with GET, and OPTIONS (the server
   answers it whenever the path is routed). *)
let allow_of mask =
  if mask = 0 then 0
  else mask lor (if mask land (1 lsl get_i) <> 0 then 1 lsl head_i else 0) lor (1 lsl options_i)

let rec freeze b =
  let exact_mask = mask_of b.bexact and wild_mask = mask_of b.bwild in
  { lit_keys = Array.of_list (List.map fst b.lits);
    lit_nodes = Array.of_list (List.map (fun (_, c) -> freeze c) b.lits);
    param = Option.map freeze b.bparam;
    exact = Array.copy b.bexact; exact_mask; exact_allow = allow_of exact_mask;
    wild = Array.copy b.bwild; wild_mask; wild_allow = allow_of wild_mask;
    mount = b.bmount }

let compile r =
  let flats = Array.of_list (flatten r) in
  let root = new_bnode () in
  Array.iteri
    (fun id (f, _) ->
      let names = P.names f.segs in
      List.iteri
        (fun i x ->
          if List.mem x (List.filteri (fun j _ -> j > i) names) then
            fail "compile: %s repeats the name %s" (describe f) x)
        names;
      insert root id f)
    flats;
  let names = Array.map (fun (f, _) -> Array.of_list (P.names f.segs)) flats in
  { root = freeze root;
    payloads = Array.map snd flats;
    names;
    prefix_depth = Array.map (fun (f, _) -> f.depth) flats;
    max_params = Array.fold_left (fun acc a -> max acc (Array.length a)) 0 names }

let max_params c = c.max_params
let route_count c = Array.length c.payloads

(* ---- matching ---- *)

type result = Found | Head_by_get | Auto_options | Not_found | Method_not_allowed

let result_to_string = function
  | Found -> "found" | Head_by_get -> "head_by_get" | Auto_options -> "auto_options"
  | Not_found -> "not_found" | Method_not_allowed -> "method_not_allowed"

module Match = struct
  type t = {
    params : int array;  (* spans *)
    mutable count : int;
    mutable route : int;
    mutable allow : int;
    mutable candidates : int;  (* path-matching candidates that refused the method *)
    mutable head_by_get : bool;
    mutable meth : int;
    mutable stop : int;
    mutable vstop : int;  (* [stop + 1] when a trailing '/' is imagined *)
    mutable path_off : int;
    mutable path_len : int;
    mutable prefix : int;
    mutable result : result;
  }

  let create ~max_params =
    { params = Array.make (max 1 max_params) 0; count = 0; route = -1; allow = 0; candidates = 0;
      head_by_get = false; meth = 0; stop = 0; vstop = 0; path_off = 0; path_len = 0; prefix = 0;
      result = Not_found }
end

open Match

let terminal m table mask allow =
  if mask = 0 then -1
  else begin
    let mi = m.meth in
    let r = Array.unsafe_get table mi in
    if r >= 0 then r
    else if mi = head_i && Array.unsafe_get table get_i >= 0 then begin
      m.head_by_get <- true;
      Array.unsafe_get table get_i
    end
    else begin
      m.allow <- m.allow lor allow;
      m.candidates <- m.candidates + 1;
      -1
    end
  end

(* Depth-first, most specific first; [pos] starts the next segment (past
   [vstop]: none left), [k] parameters are bound. Returns a route id or -1.
   Everything it needs is an argument or a field of [m]: no closure. *)
let rec walk m buf node pos k =
  if pos > m.vstop then begin
    let r = terminal m node.exact node.exact_mask node.exact_allow in
    if r >= 0 then r else tail m buf node pos k
  end
  else begin
    let se = P.segment_end buf pos m.stop in
    let e = se lsr 1 in
    let r = literal m buf node pos e (se land 1 = 1) k in
    if r >= 0 then r
    else begin
      let r =
        match node.param with
        | Some child when e > pos && not (P.is_dot_segment buf pos e) ->
            Array.unsafe_set m.params k (Span.make ~off:pos ~len:(e - pos) :> int);
            walk m buf child (e + 1) (k + 1)
        | _ -> -1
      in
      if r >= 0 then r else tail m buf node pos k
    end
  end

and literal m buf node pos e pct k =
  let keys = node.lit_keys in
  let n = Array.length keys in
  let i = ref 0 and found = ref (-1) in
  while !found < 0 && !i < n do
    if P.equal_literal buf pos e pct (Array.unsafe_get keys !i) then found := !i;
    incr i
  done;
  if !found < 0 then -1 else walk m buf (Array.unsafe_get node.lit_nodes !found) (e + 1) k

and tail m buf node pos k =
  let r =
    if node.wild_mask = 0 then -1
    else begin
      let stop = m.stop in
      let s = if pos < stop then pos else stop in
      if P.has_dot_segment buf s stop then -1
      else begin
        Array.unsafe_set m.params k (Span.make ~off:s ~len:(stop - s) :> int);
        terminal m node.wild node.wild_mask node.wild_allow
      end
    end
  in
  if r >= 0 then r else node.mount

(* The bytes of the first [depth] segments of the path. *)
let prefix_bytes buf off stop depth =
  let i = ref off in
  for _ = 1 to depth do
    let j = ref (!i + 1) in
    while !j < stop && Bigstring.unsafe_get buf !j <> '/' do incr j done;
    i := if !j < stop then !j else stop
  done;
  !i - off

let reset m =
  m.count <- 0; m.route <- -1; m.allow <- 0; m.candidates <- 0; m.head_by_get <- false;
  m.prefix <- 0

let run c m buf off stop extra =
  reset m;
  if stop > off && Bigstring.unsafe_get buf off <> '/' then Not_found
  else begin
    m.stop <- stop;
    m.vstop <- (if extra then stop + 1 else stop);
    let pos = if stop - off <= 1 then m.vstop + 1 else off + 1 in
    let r = walk m buf c.root pos 0 in
    if r >= 0 then begin
      m.route <- r;
      m.allow <- 0;
      m.count <- Array.length (Array.unsafe_get c.names r);
      let d = Array.unsafe_get c.prefix_depth r in
      if d > 0 then m.prefix <- prefix_bytes buf off stop d;
      if m.head_by_get then Head_by_get else Found
    end
    else begin
      m.count <- 0;
      if m.candidates = 0 then begin m.allow <- 0; Not_found end
      else if m.meth = options_i then Auto_options
      else Method_not_allowed
    end
  end

let find c m meth buf ~path =
  if Array.length m.params < c.max_params then invalid_arg "Httpz.Router.find: Match.t too small";
  let off = Span.off path and len = Span.len path in
  Bigstring.check_range "Httpz.Router.find" buf ~off ~len;
  m.meth <- meth_index meth;
  m.path_off <- off;
  m.path_len <- len;
  let r = run c m buf off (off + len) false in
  m.result <- r;
  r

let slash_redirect c m buf =
  let off = m.path_off and len = m.path_len in
  if m.result <> Not_found || len <= 1 || off + len > Bigstring.length buf then false
  else begin
    let r =
      if Bigstring.unsafe_get buf (off + len - 1) = '/' then run c m buf off (off + len - 1) false
      else run c m buf off (off + len) true
    in
    reset m;
    r = Found || r = Head_by_get || r = Auto_options
  end

(* ---- results ---- *)

let payload c m =
  if m.route < 0 then invalid_arg "Httpz.Router.payload: no route found";
  c.payloads.(m.route)

let param_count m = m.count

let param m i =
  if i < 0 || i >= m.count then invalid_arg "Httpz.Router.param: index out of range";
  Span.unsafe_of_int (Array.unsafe_get m.params i)

let param_name c m i =
  if i < 0 || i >= m.count then invalid_arg "Httpz.Router.param_name: index out of range";
  c.names.(m.route).(i)

let param_index c m name =
  if m.route < 0 then -1
  else begin
    let names = c.names.(m.route) in
    let n = Array.length names in
    let i = ref 0 in
    while !i < n && not (String.equal (Array.unsafe_get names !i) name) do incr i done;
    if !i < n then !i else -1
  end

let param_by_name c m name =
  let i = param_index c m name in
  if i < 0 then Span.empty else Span.unsafe_of_int (Array.unsafe_get m.params i)

let prefix_length m = m.prefix

let remainder m = Span.make ~off:(m.path_off + m.prefix) ~len:(m.path_len - m.prefix)

let decode_param = Target.decode_segment

(* Decoding goes through a buffer kept for the next call (grown on
   demand): only the string returned is allocated, not a bigarray per
   call (a malloc and a custom block). Matching runs on one thread. *)
let scratch = ref (Bigstring.create 256)

let param_string buf s =
  if Span.len s > Bigstring.length !scratch then scratch := Bigstring.create (2 * Span.len s);
  let dst = !scratch in
  let n = Target.decode_segment buf s ~dst ~dst_off:0 in
  if n < 0 then Error (Target.decode_error n) else Ok (Bigstring.sub_string dst ~off:0 ~len:n)

let allow m = m.allow

let allow_length mask =
  let n = ref 0 in
  for i = 0 to 8 do
    if mask land (1 lsl i) <> 0 then
      n := !n + (if !n > 0 then 2 else 0) + String.length (Array.unsafe_get allow_names i)
  done;
  !n

let write_allow mask dst ~off =
  let n = allow_length mask in
  if off < 0 || off > Bigstring.length dst - n then -1
  else begin
    let w = ref off in
    for i = 0 to 8 do
      if mask land (1 lsl i) <> 0 then begin
        if !w > off then begin
          Bigstring.unsafe_set dst !w ',';
          Bigstring.unsafe_set dst (!w + 1) ' ';
          w := !w + 2
        end;
        let s = Array.unsafe_get allow_names i in
        Bigstring.unsafe_blit_from_string s ~src_off:0 dst ~dst_off:!w ~len:(String.length s);
        w := !w + String.length s
      end
    done;
    n
  end

let allow_string mask =
  let b = Bigstring.create (allow_length mask) in
  let n = write_allow mask b ~off:0 in
  Bigstring.sub_string b ~off:0 ~len:n
