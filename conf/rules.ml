module B = Httpz.Bigstring

type t = {
  exact : Name_table.t;
  prefix : string array;  (** sorted by bytes *)
  prefix_rule : int array;
  parent : int array;
      (** [parent.(i)]: the longest other prefix that [prefix.(i)] starts
          with, or [-1] *)
}

let create locations =
  let indexed = List.mapi (fun i (exact, p) -> (exact, p, i)) locations in
  let exact = List.filter_map (fun (e, p, i) -> if e then Some (p, i) else None) indexed in
  (* Of a path given twice, the first. *)
  let prefixes =
    List.filter_map (fun (e, p, i) -> if e then None else Some (p, i)) indexed
    |> List.stable_sort (fun (a, _) (b, _) -> String.compare a b)
  in
  let rec uniq = function
    | (a, i) :: (b, _) :: rest when a = b -> uniq ((a, i) :: rest)
    | x :: rest -> x :: uniq rest
    | [] -> []
  in
  let prefix = Array.of_list (List.map fst (uniq prefixes)) in
  let prefix_rule = Array.of_list (List.map snd (uniq prefixes)) in
  (* In sorted order the paths that start with [p] follow [p] together:
     a stack of the paths the current one may start with finds each
     one's parent in linear time. *)
  let parent = Array.make (Array.length prefix) (-1) in
  let starts_with s p = String.length p <= String.length s && String.sub s 0 (String.length p) = p in
  let stack = ref [] in
  Array.iteri
    (fun i p ->
      let rec pop = function j :: rest when not (starts_with p prefix.(j)) -> pop rest | l -> l in
      stack := pop !stack;
      (match !stack with j :: _ -> parent.(i) <- j | [] -> ());
      stack := i :: !stack)
    prefix;
  { exact = Name_table.create exact; prefix; prefix_rule; parent }

(* The longest prefix of the path: every prefix of it sorts at or before
   it, and is a prefix of [p], the last prefix that sorts at or before it;
   so the answer is on [p]'s chain of parents, the first no longer than
   what [p] and the path have in common. O(log n) comparisons plus the
   chain, whose length is the nesting of the locations, not their
   number. *)
let find_prefix t path n =
  let lo = ref 0 and hi = ref (Array.length t.prefix - 1) in
  (* the last index whose prefix sorts at or before the path *)
  while !lo <= !hi do
    let mid = (!lo + !hi) lsr 1 in
    if Name_table.compare_span path ~off:0 ~len:n ~caseless:false (Array.unsafe_get t.prefix mid) >= 0 then
      lo := mid + 1
    else hi := mid - 1
  done;
  let j = ref !hi in
  if !j < 0 then -1
  else begin
    let p = Array.unsafe_get t.prefix !j in
    let m = String.length p in
    let k = if n < m then n else m in
    let q = ref 0 in
    while !q < k && B.unsafe_get path !q = String.unsafe_get p !q do incr q done;
    while !j >= 0 && String.length (Array.unsafe_get t.prefix !j) > !q do j := Array.unsafe_get t.parent !j done;
    if !j < 0 then -1 else Array.unsafe_get t.prefix_rule !j
  end

let find t path n =
  let found = Name_table.find t.exact path ~off:0 ~len:n ~caseless:false in
  if found >= 0 then found else find_prefix t path n
