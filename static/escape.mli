(** Escaping for what the static handler writes: URLs in [Location] and
    listing links, and text in HTML pages. *)

val encode_into : Httpz.Bigstring.t -> off:int -> len:int -> Httpz.Bigstring.t -> int -> int
(** [encode_into src ~off ~len dst pos] percent-encodes
    [src.{off .. off+len-1}] (every byte but [A-Za-z0-9-._~/], as upper-case
    hex) into [dst] at [pos] and is the position after it. The caller
    guarantees room for [3 * len] bytes. Does not allocate. *)

val encode_path : string -> string
(** {!encode_into} of a whole string. Allocates. *)

val html_escape : string -> string
(** [html_escape s] is [s] with [&], [<], [>], double quote and single
    quote replaced by character references. Allocates. *)
