(** Unguessable tokens (session ids, CSRF tokens) and the URL-safe base64
    they are spelt in ({{:https://www.rfc-editor.org/rfc/rfc4648#section-5} RFC 4648 §5},
    alphabet [A-Za-z0-9-_], no padding): such a token may appear in a
    cookie value, a URL, a form field or an HTML attribute unescaped.
    Everything here allocates. *)

val generate : int -> string
(** [generate n] is [n] bytes from the kernel ({!Httpz_sys.Entropy}) in
    URL-safe base64: [ceil (4n/3)] characters. 16 bytes (128 bits) make a
    token no one can guess; 32 are used for sessions.
    @raise Invalid_argument when [n < 0].
    @raise Httpz_sys.Entropy.Unavailable when the kernel gives none. *)

val base64url : string -> string
(** [base64url s] is [s] in URL-safe base64 without padding. *)

val of_base64url : string -> string option
(** [of_base64url s] decodes what {!base64url} wrote; [None] on a byte
    outside the alphabet, [=] padding, or a length that no encoding has
    (one character left over). *)
