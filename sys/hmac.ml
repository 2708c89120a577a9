external sha256_into : string -> string -> Bytes.t -> int = "httpz_hmac_sha256" [@@noalloc]

let sha256 ~key msg =
  let out = Bytes.create 32 in
  if sha256_into key msg out <> 32 then failwith "Hmac.sha256: OpenSSL HMAC failed";
  Bytes.unsafe_to_string out

let equal a b =
  let n = String.length a in
  if n <> String.length b then false
  else begin
    let d = ref 0 in
    for i = 0 to n - 1 do
      d := !d lor (Char.code (String.unsafe_get a i) lxor Char.code (String.unsafe_get b i))
    done;
    !d = 0
  end
