(* [Error errno] (positive). *)
external crypt_raw : string -> string -> (string, int) result = "httpz_crypt"

let einval = 22
let itoa64 = "./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
let apr1 = "$apr1$"

let starts_with ~prefix s =
  String.length s >= String.length prefix && String.sub s 0 (String.length prefix) = prefix

(* The salt of an [$apr1$] setting: up to 8 bytes after the magic, to the
   next ['$']; what follows, if anything, must be a whole 22-character
   hash (a stored hash is a valid setting). [None] when malformed. *)
let apr1_salt setting =
  let m = String.length apr1 and n = String.length setting in
  let stop = match String.index_from_opt setting m '$' with Some i -> i | None -> n in
  let salt = String.sub setting m (min 8 (stop - m)) in
  let rest = String.sub setting stop (n - stop) in
  let hash_ok =
    rest = "" || rest = "$"
    || (String.length rest = 23 && String.for_all (fun ch -> String.contains itoa64 ch) (String.sub rest 1 22))
  in
  if salt = "" || stop - m > 8 || (not hash_ok) || String.exists (fun ch -> ch = '\000' || ch = ':') salt then None
  else Some salt

(* Apache's APR1: md5-crypt (Poul-Henning Kamp's, FreeBSD's [$1$]) with
   the magic ["$apr1$"]; libcrypt (libxcrypt) knows [$1$] but not this
   magic. *)
let apr1_hash pw salt =
  let md5 = Digest.string in
  let alt = md5 (pw ^ salt ^ pw) in
  let b = Buffer.create 64 in
  Buffer.add_string b pw;
  Buffer.add_string b apr1;
  Buffer.add_string b salt;
  let i = ref (String.length pw) in
  while !i > 0 do
    Buffer.add_string b (String.sub alt 0 (min 16 !i));
    i := !i - 16
  done;
  i := String.length pw;
  while !i > 0 do
    Buffer.add_char b (if !i land 1 = 1 then '\000' else pw.[0]);
    i := !i lsr 1
  done;
  let final = ref (md5 (Buffer.contents b)) in
  for r = 0 to 999 do
    Buffer.clear b;
    Buffer.add_string b (if r land 1 = 1 then pw else !final);
    if r mod 3 <> 0 then Buffer.add_string b salt;
    if r mod 7 <> 0 then Buffer.add_string b pw;
    Buffer.add_string b (if r land 1 = 1 then !final else pw);
    final := md5 (Buffer.contents b)
  done;
  let f k = Char.code !final.[k] in
  Buffer.clear b;
  Buffer.add_string b apr1;
  Buffer.add_string b salt;
  Buffer.add_char b '$';
  let to64 v n =
    let v = ref v in
    for _ = 1 to n do
      Buffer.add_char b itoa64.[!v land 0x3f];
      v := !v lsr 6
    done
  in
  List.iter
    (fun (x, y, z) -> to64 ((f x lsl 16) lor (f y lsl 8) lor f z) 4)
    [ (0, 6, 12); (1, 7, 13); (2, 8, 14); (3, 9, 15); (4, 10, 5) ];
  to64 (f 11) 2;
  Buffer.contents b

let hash ~key ~setting =
  if starts_with ~prefix:apr1 setting then
    match apr1_salt setting with
    | None -> Error (Syscall.error_message einval)
    | Some _ when String.contains key '\000' -> Error (Syscall.error_message einval)
    | Some salt -> Ok (apr1_hash key salt)
  else Result.map_error Syscall.error_message (crypt_raw key setting)

let verify ~hash:stored password =
  match hash ~key:password ~setting:stored with
  | Error e -> Error e
  | Ok h -> Ok (Hmac.equal h stored)

let supported h =
  List.exists
    (fun p -> String.length h > String.length p && starts_with ~prefix:p h)
    [ "$2a$"; "$2b$"; "$2y$"; "$5$"; "$6$"; "$apr1$"; "$1$" ]
