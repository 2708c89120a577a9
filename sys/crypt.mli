(** Password hashes checked by the system's libcrypt ([crypt_rn], the
    reentrant [crypt]): bcrypt ([$2b$], [$2y$], [$2a$]) and SHA-crypt
    ([$5$] SHA-256, [$6$] SHA-512), as [htpasswd -B] and
    [openssl passwd -5]/[-6] write them. For basic authentication's user
    files. Each call allocates and takes the hash's whole cost (bcrypt of
    cost 10: tens of milliseconds); the runtime lock is released meanwhile. *)

val hash : key:string -> setting:string -> (string, string) result
(** [hash ~key ~setting] is [crypt(key, setting)]: the hash of [key] with
    the method, cost and salt that [setting] names (a whole stored hash is
    a valid setting). [Error] is errno's text: [EINVAL] for a setting
    libcrypt does not know or cannot parse (or a NUL byte in either),
    [ERANGE] for a key it refuses as too long, [ENOMEM]. *)

val verify : hash:string -> string -> (bool, string) result
(** [verify ~hash password]: [Ok true] when [password] hashes to [hash]
    under [hash]'s own setting (compared in time that does not depend on
    where they differ), [Ok false] when not, [Error] as {!hash} (the
    stored hash is malformed or of an unknown method). *)

val supported : string -> bool
(** [supported h]: [h] starts with a prefix this module accepts
    ([$2a$], [$2b$], [$2y$], [$5$], [$6$]). Weaker methods libcrypt
    would also take (DES, MD5 [$1$]) are refused by the caller that asks. *)
