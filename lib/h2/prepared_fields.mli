(** Response header fields checked and encoded once, sent many times.

    A handler that answers many requests with the same fields (a file's
    Content-Type, ETag and Last-Modified; an API's Content-Type and
    Cache-Control) can build them once into a [t] and hand it to the
    server for each response. Each field is checked as {!Response}'s
    writers check it when it is added, and kept in the two forms a
    response can take: HTTP/1.1 text lines (["Name: value\r\n"]) and an
    HPACK (RFC 7541) encoding as literals without indexing, which touch
    no dynamic table and so are valid on any HTTP/2 connection. Writing
    the set into a response is then one copy, whatever the protocol.

    {b What may not be added.} The fields the server writes itself:
    Content-Length, Transfer-Encoding, Connection, Keep-Alive,
    Proxy-Connection, Upgrade and Date ([Invalid_argument]).

    {b Ownership.} [t] owns its two buffers. The server copies the bytes
    when the set is written into a response, so a [t] may be cleared and
    refilled between responses, and shared by every connection of a
    worker (not across domains or threads while it is being refilled).

    {b Allocation.} {!create} and {!of_list} allocate. The writers below
    allocate nothing, except {!add_s} the first time it meets a name
    holding upper-case letters (lowered for HPACK and remembered for
    every set, up to 64 such names). *)

type t

val create : ?capacity:int -> unit -> t
(** [create ~capacity ()] holds up to [capacity] bytes of text lines
    (default 1024).
    @raise Invalid_argument when [capacity < 0]. *)

val create_server : ?capacity:int -> unit -> t
(** As {!create}, for the server's own fields: Date may be added. *)

val clear : t -> unit
(** No fields. *)

val add : t -> Header_name.t -> string -> unit
val add_s : t -> string -> string -> unit
val add_int : t -> Header_name.t -> int -> unit
val add_date : t -> Header_name.t -> int -> unit
val add_bytes : t -> Header_name.t -> Bigstring.t -> off:int -> len:int -> unit
(** The writers of {!Response} ([add_s]: any token name; [add_date]: an
    IMF-fixdate of a Unix time; [add_bytes]: a value from a buffer). A
    refused field leaves [t] as it was.
    @raise Response.Invalid_field for a name or value Response refuses.
    @raise Response.No_space past the capacity (its bytes of text, or
    one field per 8 of them).
    @raise Invalid_argument for a field the server writes itself, or a
    range outside the buffer. *)

val of_list : ?capacity:int -> (Header_name.t * string) list -> t
(** [of_list fields] is a new set of those fields, in order. Raises as
    {!add}. *)

val count : t -> int
(** The number of fields. *)

val text : t -> Bigstring.t
val text_length : t -> int
(** The HTTP/1.1 lines are bytes [\[0, text_length)] of [text]. *)

val hpack : t -> Bigstring.t
val hpack_length : t -> int
(** Their HPACK encoding is bytes [\[0, hpack_length)] of [hpack]. *)

(** {1 For an encoder that indexes them} A connection can insert a set's
    fields into the peer's dynamic table once and then send each as a
    one- or two-byte index ({!Hpack_mirror}). *)

val id : t -> int
(** Unique among the sets of this process. *)

val version : t -> int
(** Changes whenever the fields do ({!clear}, the writers). *)

val indexed : t -> Bigstring.t
val indexed_length : t -> int
(** The fields as literals "with incremental indexing" (§6.2.1), in
    order: bytes [\[0, indexed_length)] of [indexed]. A field equal to a
    static entry stays that index (§6.1) in both encodings. *)

val field_start : t -> int -> int
(** Field [i] is bytes [\[field_start t i, field_start t (i+1))] of
    {!hpack}. *)

val entry_size : t -> int -> int
(** Field [i]'s size in a dynamic table (name + value + 32), or [0] when
    it is a static index (never inserted). *)

val table_size : t -> int
(** The sum of the entry sizes. *)

val inserted : t -> int
(** The fields with a non-zero entry size. *)
