open Httpz

let max_credentials = 255
let cache_entries = 128

type t = {
  realm : string;
  challenge : string;
  users : (string, string) Hashtbl.t;
  decoy : string;  (** a hash checked for unknown users, so they cost as much *)
  scratch : Bytes.t;  (** the decoded credentials of the request at hand *)
  cache : Bytes.t;  (** [cache_entries] rows of [max_credentials] bytes *)
  cache_len : int array;  (** per row: length, [-1] when empty *)
  file : string;
  mutable why : refusal;  (** of the latest [Refused] *)
  mutable user_len : int;  (** its user, at the start of [scratch] *)
}

and refusal = No_such_user | Mismatch | Malformed | No_credentials

type verdict = Granted | Missing | Refused

let realm t = t.realm
let challenge t = t.challenge
let user_count t = Hashtbl.length t.users

let method_of h =
  if String.length h >= 4 && h.[0] = '$' then
    match String.index_from_opt h 1 '$' with Some i -> String.sub h 0 (i + 1) | None -> h
  else "plain text"

let check_realm r =
  if String.exists (fun ch -> ch = '"' || ch = '\\' || Char.code ch < 0x20 || ch = '\x7f') r then
    Error (Printf.sprintf "realm %S: no double quote, backslash or control byte" r)
  else Ok ()

let make ~realm ?(file = "-") pairs ~where =
  match check_realm realm with
  | Error e -> Error e
  | Ok () -> (
      let users = Hashtbl.create 16 in
      let rec add = function
        | [] -> Ok ()
        | (lineno, user, hash) :: rest ->
            if user = "" then Error (Printf.sprintf "%s: an empty user name" (where lineno))
            else if Hashtbl.mem users user then
              Error (Printf.sprintf "%s: user %s is listed twice" (where lineno) user)
            else if not (Crypt.supported hash) then
              Error
                (Printf.sprintf
                   "%s: user %s: %s hashes are not supported (use bcrypt, htpasswd -B, or \
                    SHA-crypt, openssl passwd -6; Apache MD5 and MD5-crypt are accepted)"
                   (where lineno) user (method_of hash))
            else begin
              (* A hash libcrypt cannot parse is refused now, not at the
                 first login. *)
              match Crypt.hash ~key:"" ~setting:hash with
              | Error e -> Error (Printf.sprintf "%s: user %s: the hash is malformed (%s)" (where lineno) user e)
              | Ok _ ->
                  Hashtbl.replace users user hash;
                  add rest
            end
      in
      match add pairs with
      | Error e -> Error e
      | Ok () ->
          let decoy = match pairs with (_, _, h) :: _ -> h | [] -> "$5$decoydecoy$" in
          Ok
            {
              realm;
              challenge = Printf.sprintf "Basic realm=\"%s\", charset=\"UTF-8\"" realm;
              users;
              decoy;
              scratch = Bytes.create (max_credentials + 3);
              cache = Bytes.make (cache_entries * max_credentials) '\000';
              cache_len = Array.make cache_entries (-1);
              file; why = Malformed; user_len = 0;
            })

let of_users ~realm users =
  make ~realm (List.mapi (fun i (u, h) -> (i + 1, u, h)) users) ~where:(Printf.sprintf "user %d")

let load ~realm path =
  let read () =
    let ic = open_in_bin path in
    Fun.protect ~finally:(fun () -> close_in ic) (fun () -> really_input_string ic (in_channel_length ic))
  in
  match read () with
  | exception Sys_error e -> Error e
  | text ->
      let lines = String.split_on_char '\n' text in
      let rec parse acc i = function
        | [] -> Ok (List.rev acc)
        | l :: rest -> (
            let l = String.trim l in
            if l = "" || l.[0] = '#' then parse acc (i + 1) rest
            else
              match String.index_opt l ':' with
              | None -> Error (Printf.sprintf "%s:%d: give user:hash" path i)
              | Some c ->
                  let user = String.sub l 0 c and hash = String.sub l (c + 1) (String.length l - c - 1) in
                  parse ((i, user, hash) :: acc) (i + 1) rest)
      in
      Result.bind (parse [] 1 lines) (fun pairs -> make ~realm ~file:path pairs ~where:(Printf.sprintf "%s:%d" path))

(* {1 The request's credentials} *)

let b64 =
  let t = Bytes.make 256 '\255' in
  String.iteri
    (fun i ch -> Bytes.set t (Char.code ch) (Char.chr i))
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  Bytes.unsafe_to_string t

(* Decodes the base64 at [buf.(off .. off + len)] into [t.scratch]: its
   length, or [-1] when malformed or longer than [max_credentials]. *)
let decode t buf off len =
  let n = ref 0 and acc = ref 0 and bits = ref 0 and pad = ref 0 and bad = ref false in
  let i = ref 0 in
  while (not !bad) && !i < len do
    let ch = Bigstring.unsafe_get buf (off + !i) in
    if ch = '=' then incr pad
    else begin
      let v = Char.code (String.unsafe_get b64 (Char.code ch)) in
      if v = 255 || !pad > 0 then bad := true
      else begin
        acc := (!acc lsl 6) lor v;
        bits := !bits + 6;
        if !bits >= 8 then begin
          bits := !bits - 8;
          if !n >= max_credentials then bad := true
          else begin
            Bytes.unsafe_set t.scratch !n (Char.unsafe_chr ((!acc lsr !bits) land 0xff));
            incr n
          end
        end
      end
    end;
    incr i
  done;
  if !bad || len mod 4 <> 0 || !pad > 2 then -1 else !n

let hash_of b n =
  let h = ref 0xcbf29ce4 in
  for i = 0 to n - 1 do
    h := (!h lxor Char.code (Bytes.unsafe_get b i)) * 0x100000001b3
  done;
  (!h lxor (!h lsr 32)) land (cache_entries - 1)

(* Whether row [row] holds the [n] scratch bytes: in time that depends on
   [n] only. *)
let remembered t row n =
  t.cache_len.(row) = n
  &&
  let d = ref 0 and base = row * max_credentials in
  for i = 0 to n - 1 do
    d := !d lor (Char.code (Bytes.unsafe_get t.scratch i) lxor Char.code (Bytes.unsafe_get t.cache (base + i)))
  done;
  !d = 0

(* Not remembered: the hash decides (allocates). *)
let verify t n row =
  match Bytes.index_from_opt t.scratch 0 ':' with
  | Some c when c < n -> (
      let user = Bytes.sub_string t.scratch 0 c and password = Bytes.sub_string t.scratch (c + 1) (n - c - 1) in
      t.user_len <- c;
      match Hashtbl.find_opt t.users user with
      | None ->
          t.why <- No_such_user;
          ignore (Crypt.verify ~hash:t.decoy password : (bool, string) result);
          Refused
      | Some hash -> (
          match Crypt.verify ~hash password with
          | Ok true ->
              Bytes.blit t.scratch 0 t.cache (row * max_credentials) n;
              t.cache_len.(row) <- n;
              Granted
          | Ok false | Error _ -> t.why <- Mismatch; Refused))
  | _ -> t.why <- Malformed; Refused

let is_space ch = ch = ' ' || ch = '\t'

let check t buf value =
  let off = Span.off value and len = Span.len value in
  if len < 6 || not (Bigstring.equal_caseless buf ~off ~len:6 "basic ") then (t.why <- No_credentials; Missing)
  else begin
    let p = ref (off + 6) and stop = off + len in
    while !p < stop && is_space (Bigstring.unsafe_get buf !p) do incr p done;
    let n = decode t buf !p (stop - !p) in
    if n < 0 then (t.why <- Malformed; Refused)
    else
      let row = hash_of t.scratch n in
      if remembered t row n then Granted else verify t n row
  end

let last_refusal t = t.why
let last_user t = t.scratch
let last_user_length t = t.user_len
let file t = t.file
