module B = Httpz.Bigstring

type t = { names : string array; ids : int array }

let create pairs =
  (* Sorted by bytes, the first of equal names kept: found by binary
     search, so a table of 50,000 names costs 16 comparisons. *)
  let sorted = List.stable_sort (fun (a, _) (b, _) -> String.compare a b) pairs in
  let rec uniq = function
    | (a, i) :: (b, _) :: rest when a = b -> uniq ((a, i) :: rest)
    | x :: rest -> x :: uniq rest
    | [] -> []
  in
  let kept = uniq sorted in
  { names = Array.of_list (List.map fst kept); ids = Array.of_list (List.map snd kept) }

let lower c = if c >= 'A' && c <= 'Z' then Char.unsafe_chr (Char.code c + 32) else c

(* The order of [buf.{off .. off+len-1}] (lower-cased when [caseless])
   against [s], as [String.compare]. *)
let compare_span buf ~off ~len ~caseless s =
  let m = String.length s in
  let k = if len < m then len else m in
  let i = ref 0 and d = ref 0 in
  while !d = 0 && !i < k do
    let c = B.unsafe_get buf (off + !i) in
    let c = if caseless then lower c else c in
    d := Char.code c - Char.code (String.unsafe_get s !i);
    incr i
  done;
  if !d <> 0 then !d else len - m

let find t buf ~off ~len ~caseless =
  let lo = ref 0 and hi = ref (Array.length t.names - 1) and found = ref (-1) in
  while !found < 0 && !lo <= !hi do
    let mid = (!lo + !hi) lsr 1 in
    let d = compare_span buf ~off ~len ~caseless (Array.unsafe_get t.names mid) in
    if d = 0 then found := Array.unsafe_get t.ids mid else if d < 0 then hi := mid - 1 else lo := mid + 1
  done;
  !found
