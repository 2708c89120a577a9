(** The HPACK static table (RFC 7541 Appendix A) and what httpz derives
    from it once, at initialisation: the {!Header_name.t} and pseudo-header
    kind of each entry, and the reverse maps the encoder uses.

    Indices are the RFC's, [1 .. length]. Lookups by index are unchecked:
    callers check [1 <= i <= length]. Nothing here allocates after
    initialisation. *)

(** What a field name is, as far as HTTP/2 pseudo-header fields go
    (RFC 9113 §8.3; [:protocol] is RFC 8441's). *)
type pseudo =
  | Regular  (** not a pseudo-header: the name does not start with [':'] *)
  | Authority
  | Method
  | Path
  | Scheme
  | Status
  | Protocol
  | Unknown_pseudo  (** starts with [':'] but is none of the above *)

val length : int
(** [61]. *)

val name : int -> string
(** [name i] is the (lower-case) name of entry [i]. *)

val value : int -> string
(** [value i] is the value of entry [i] ([""] for name-only entries). *)

val header_name : int -> Header_name.t
(** [header_name i] is the known name of entry [i], or [Other] (pseudo
    names and [refresh]). *)

val pseudo : int -> pseudo

val pseudo_of_buffer : Bigstring.t -> off:int -> len:int -> pseudo
(** [pseudo_of_buffer b ~off ~len] classifies a name held in [b]
    (exact, lower-case match). Unchecked range. *)

val index_of_name : Header_name.t -> int
(** [index_of_name n] is the first static entry named [n], or [0] when the
    table has none (as for [X_request_id] or [Other]). *)

val status_index : int -> int
(** [status_index code] is the entry holding [:status code] (200, 204, 206,
    304, 400, 404, 500), or [0]. *)

val lowercase_name : Header_name.t -> string
(** [lowercase_name n] is [n]'s name as HTTP/2 writes it (lower case), or
    [""] for [Other]. A short linear search over {!Header_name.all}: for
    the names the static table lacks. *)
