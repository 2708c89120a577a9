type t

type groups = int array

external compile_raw : string -> bool -> (t, string * int) result = "httpz_pcre2_compile"
external captures : t -> int = "httpz_pcre2_captures" [@@noalloc]
external jit : t -> bool = "httpz_pcre2_jit" [@@noalloc]
external exec_raw : t -> Httpz.Bigstring.t -> int -> int -> groups -> int = "httpz_pcre2_match" [@@noalloc]

let compile ?(caseless = false) pattern =
  if String.contains pattern '\000' then Error "a NUL byte in the pattern"
  else
    match compile_raw pattern caseless with
    | Ok t -> Ok t
    | Error (m, off) -> Error (Printf.sprintf "%s at offset %d" m off)

let groups t = Array.make (2 * (captures t + 1)) (-1)

let run t buf ~off ~len g =
  if off < 0 || len < 0 || off > Httpz.Bigstring.length buf - len then invalid_arg "Pcre2.run: outside the buffer";
  let rc = exec_raw t buf off len g in
  if rc > 0 then 1 else if rc = 0 then 0 else -1

let exec t buf ~off ~len g = run t buf ~off ~len g > 0
