(** HTTP Basic authentication (RFC 7617) against a user file of
    [user:hash] lines, as Apache's [htpasswd -B] and nginx's
    [auth_basic_user_file] use: bcrypt ([$2b$], [$2y$], [$2a$]),
    SHA-crypt ([$5$], [$6$]), and, as nginx, the MD5 ones: Apache's
    [$apr1$] ([htpasswd]'s default) and MD5-crypt [$1$] ({!Crypt}).
    Blank lines and lines starting with [#] are skipped. Other methods
    (DES, plain text) are refused when the file is read. MD5 is weak
    against an offline guess of a stolen file: prefer bcrypt
    ([htpasswd -B]).

    {b Cost.} A password check costs what its hash costs (bcrypt of cost
    10: about 50 ms of the worker's time, during which it serves nothing
    else). So a [user:password] pair once verified is remembered in a
    fixed table of {!cache_entries} entries (the decoded credentials, at
    most {!max_credentials} bytes, compared in constant time): a
    keep-alive client, or a browser resending the same [Authorization] on
    each request, pays the hash once, and every later request is checked
    without allocating. A wrong password is never remembered and always
    costs a hash: put a rate limit ({!Rate_limit}) in front of a
    password-protected prefix against guessing. A user that does not
    exist costs a hash too (of another user's method and cost), so
    response times do not tell which names exist.

    The table belongs to one worker and to one user file: a reload reads
    the file again into new workers with empty tables. *)

type t

val max_credentials : int
(** [255]: longest [user:password] (decoded) accepted; longer is
    refused. *)

val cache_entries : int
(** [128] verified pairs remembered per user file and worker. *)

val load : realm:string -> string -> (t, string) result
(** [load ~realm path] reads the user file at [path]; [Error] names the
    file and the line ("FILE:3: user bob: $3$ hashes are not supported
    (use bcrypt, htpasswd -B, ...)"), or the system's error, or a realm that
    holds a double quote, backslash or control byte. Allocates. *)

val of_users : realm:string -> (string * string) list -> (t, string) result
(** [of_users ~realm users] is {!load} with the [(user, hash)] pairs given
    instead of a file. *)

val realm : t -> string

val challenge : t -> string
(** [challenge t] is the [WWW-Authenticate] value of a 401:
    [Basic realm="REALM", charset="UTF-8"]. *)

type verdict = Granted | Missing | Refused
(** The request carries valid credentials; it carries no [Authorization:
    Basic] credentials; it carries some that are wrong (unknown user,
    wrong password, malformed). *)

val check : t -> Httpz.Bigstring.t -> Httpz.Span.t -> verdict
(** [check t buf value] judges an [Authorization] field value (its span
    in [buf]; {!Httpz.Span.empty} when the field is absent). Does not
    allocate when the value is absent, malformed or remembered; a pair
    not remembered yet costs a hash (allocates), and is remembered when
    right. *)

val user_count : t -> int

type refusal = No_such_user | Mismatch | Malformed | No_credentials

val last_refusal : t -> refusal
(** Why the latest {!check} that answered [Refused] or [Missing] did (for
    the error log's line); meaningless after [Granted]. *)

val last_user : t -> Bytes.t
val last_user_length : t -> int
(** The user of the latest [No_such_user] or [Mismatch]: the first
    [last_user_length t] bytes of [last_user t] (overwritten by the next
    {!check}). *)

val file : t -> string
(** The user file's path ([-] for {!of_users}). *)
