let alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

let base64url s =
  let n = String.length s in
  let out = Bytes.create ((n * 4 + 2) / 3) in
  let o = ref 0 in
  let put v = Bytes.unsafe_set out !o alphabet.[v land 63]; incr o in
  let i = ref 0 in
  while !i + 2 < n do
    let v = (Char.code s.[!i] lsl 16) lor (Char.code s.[!i + 1] lsl 8) lor Char.code s.[!i + 2] in
    put (v lsr 18); put (v lsr 12); put (v lsr 6); put v;
    i := !i + 3
  done;
  (match n - !i with
   | 1 -> let v = Char.code s.[!i] in put (v lsr 2); put (v lsl 4)
   | 2 ->
       let v = (Char.code s.[!i] lsl 8) lor Char.code s.[!i + 1] in
       put (v lsr 10); put (v lsr 4); put (v lsl 2)
   | _ -> ());
  Bytes.unsafe_to_string out

let value_of = function
  | 'A' .. 'Z' as c -> Char.code c - 65
  | 'a' .. 'z' as c -> Char.code c - 97 + 26
  | '0' .. '9' as c -> Char.code c - 48 + 52
  | '-' -> 62
  | '_' -> 63
  | _ -> -1

exception Bad

let of_base64url s =
  let n = String.length s in
  if n mod 4 = 1 then None
  else
    let out = Bytes.create (n * 3 / 4) in
    let o = ref 0 and acc = ref 0 and bits = ref 0 in
    match
      String.iter
        (fun c ->
          let v = value_of c in
          if v < 0 then raise_notrace Bad;
          acc := (!acc lsl 6) lor v;
          bits := !bits + 6;
          if !bits >= 8 then begin
            bits := !bits - 8;
            Bytes.unsafe_set out !o (Char.unsafe_chr ((!acc lsr !bits) land 255));
            incr o
          end)
        s
    with
    | () -> Some (Bytes.sub_string out 0 !o)
    | exception Bad -> None

let generate n =
  if n < 0 then invalid_arg "Token.generate: negative length";
  base64url (Httpz_sys.Entropy.bytes n)
