(** Password hashes as user files of basic authentication hold them:
    bcrypt ([$2b$], [$2y$], [$2a$]) and SHA-crypt ([$5$] SHA-256, [$6$]
    SHA-512), as [htpasswd -B] and [openssl passwd -5]/[-6] write them,
    and MD5-crypt ([$1$], [openssl passwd -1]) checked by the system's
    libcrypt ([crypt_rn], the reentrant [crypt]; the runtime lock is
    released meanwhile); Apache's MD5 ([$apr1$], [htpasswd]'s default
    and [openssl passwd -apr1]), which libcrypt does not know, computed
    here (md5-crypt with Apache's magic, over {!Digest}) as nginx does.
    Each call allocates and takes the hash's whole cost (bcrypt of cost
    10: tens of milliseconds; MD5-crypt: about a thousand MD5s). *)

val hash : key:string -> setting:string -> (string, string) result
(** [hash ~key ~setting] is [crypt(key, setting)]: the hash of [key] with
    the method, cost and salt that [setting] names (a whole stored hash is
    a valid setting). [Error] is errno's text: [EINVAL] for a setting
    libcrypt does not know or cannot parse (an [$apr1$] one: a salt
    empty, longer than 8 bytes, or a hash part that is not 22 characters
    of [./0-9A-Za-z]; or a NUL byte in either), [ERANGE] for a key it
    refuses as too long, [ENOMEM]. *)

val verify : hash:string -> string -> (bool, string) result
(** [verify ~hash password]: [Ok true] when [password] hashes to [hash]
    under [hash]'s own setting (compared in time that does not depend on
    where they differ), [Ok false] when not, [Error] as {!hash} (the
    stored hash is malformed or of an unknown method). *)

val supported : string -> bool
(** [supported h]: [h] starts with a prefix this module accepts
    ([$2a$], [$2b$], [$2y$], [$5$], [$6$], [$apr1$], [$1$]). What else
    libcrypt would take (DES, NT hashes) is refused by the caller that
    asks. *)
