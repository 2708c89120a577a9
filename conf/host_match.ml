module B = Httpz.Bigstring

type t = {
  exact : Name_table.t;  (** lower case *)
  suffixes : string array;  (** ".example.com", longest first *)
  suffix_site : int array;
  default : int;
}

let create ~names ~default =
  let pairs = List.concat (Array.to_list (Array.mapi (fun i ns -> List.map (fun n -> (n, i)) ns) names)) in
  let is_wild (n, _) = String.length n > 2 && n.[0] = '*' && n.[1] = '.' in
  let exact = List.filter (fun p -> not (is_wild p)) pairs in
  let wild =
    List.filter is_wild pairs
    |> List.map (fun (n, i) -> (String.sub n 1 (String.length n - 1), i))
    |> List.stable_sort (fun (a, _) (b, _) -> compare (String.length b) (String.length a))
  in
  { exact = Name_table.create (List.map (fun (n, i) -> (String.lowercase_ascii n, i)) exact);
    suffixes = Array.of_list (List.map fst wild); suffix_site = Array.of_list (List.map snd wild); default }

(* The length of the name in [buf.{off .. off+len-1}]: without a port, nor
   a trailing dot. *)
let name_length buf off len =
  if len > 0 && B.unsafe_get buf off = '[' then begin
    let i = ref 0 in
    while !i < len && B.unsafe_get buf (off + !i) <> ']' do incr i done;
    if !i < len then !i + 1 else len
  end
  else begin
    let i = ref (len - 1) in
    while !i >= 0 && B.unsafe_get buf (off + !i) <> ':' do decr i done;
    let n = if !i >= 0 then !i else len in
    if n > 1 && B.unsafe_get buf (off + n - 1) = '.' then n - 1 else n
  end

let find t buf host =
  let off = Httpz.Span.off host in
  let len = name_length buf off (Httpz.Span.len host) in
  let found = ref (Name_table.find t.exact buf ~off ~len ~caseless:true) in
  let i = ref 0 in
  let n = Array.length t.suffixes in
  while !found < 0 && !i < n do
    let s = Array.unsafe_get t.suffixes !i in
    let k = String.length s in
    if len > k && B.equal_caseless buf ~off:(off + len - k) ~len:k s then found := Array.unsafe_get t.suffix_site !i;
    incr i
  done;
  if !found < 0 then t.default else !found

let find_string t host =
  find t (B.of_string host) (Httpz.Span.make ~off:0 ~len:(String.length host))
