(* [Error errno] (positive). *)
external crypt_raw : string -> string -> (string, int) result = "httpz_crypt"

let hash ~key ~setting = Result.map_error Syscall.error_message (crypt_raw key setting)

let verify ~hash:stored password =
  match hash ~key:password ~setting:stored with
  | Error e -> Error e
  | Ok h -> Ok (Hmac.equal h stored)

let supported h =
  List.exists
    (fun p -> String.length h > String.length p && String.sub h 0 (String.length p) = p)
    [ "$2a$"; "$2b$"; "$2y$"; "$5$"; "$6$" ]
