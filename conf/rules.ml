module B = Httpz.Bigstring

type t = {
  exact : string array;
  exact_rule : int array;
  prefix : string array;  (** longest first *)
  prefix_rule : int array;
}

let create locations =
  let indexed = List.mapi (fun i (exact, p) -> (exact, p, i)) locations in
  let exact = List.filter (fun (e, _, _) -> e) indexed in
  let prefix =
    List.filter (fun (e, _, _) -> not e) indexed
    |> List.stable_sort (fun (_, a, _) (_, b, _) -> compare (String.length b) (String.length a))
  in
  { exact = Array.of_list (List.map (fun (_, p, _) -> p) exact);
    exact_rule = Array.of_list (List.map (fun (_, _, i) -> i) exact);
    prefix = Array.of_list (List.map (fun (_, p, _) -> p) prefix);
    prefix_rule = Array.of_list (List.map (fun (_, _, i) -> i) prefix) }

let find t path n =
  let found = ref (Name_table.find_equal t.exact t.exact_rule path ~off:0 ~len:n ~caseless:false) in
  let i = ref 0 in
  let k = Array.length t.prefix in
  while !found < 0 && !i < k do
    let s = Array.unsafe_get t.prefix !i in
    let m = String.length s in
    if m <= n && B.equal_string path ~off:0 ~len:m s then found := Array.unsafe_get t.prefix_rule !i;
    incr i
  done;
  !found
