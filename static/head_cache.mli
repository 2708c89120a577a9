(** The header fields of recent file answers, prepared once
    ({!Httpz.Prepared_fields}) and reused while the file and the rule that
    answers it stay the same.

    A file answered again gets the same Content-Type, ETag, Last-Modified,
    Cache-Control, rule fields and Accept-Ranges: checking, formatting and
    (over HTTP/2) HPACK-encoding them once per file version rather than
    once per request is what this cache is for.

    Entries are direct-mapped by a hash of the key: a key is the kind of
    answer ([200] or [304]), the entity-tag's inputs (modification time in
    s and ns, size, suffix), the Last-Modified time, the content type, the
    rule (compared physically: a rule is made once per configuration) and
    two flags ([vary], [gz]). A key's fields depend on nothing else that
    can change while the static handler lives.

    {b Memory.} [size] sets of 768 bytes of text (and twice that for each
    HPACK form), made by [create] (their pages are touched only as
    entries are filled); a file's fields that do not fit are written one
    by one.
    {b Allocation.} [create] allocates; nothing else does, so a file met
    for the first time after a worker's warm-up costs no GC work. *)

type t

val create : size:int -> rule:Answer_rule.t -> t
(** [size] entries (a power of two); [rule] is any rule, a placeholder
    for empty entries. *)

val find :
  t -> status:int -> mtime_s:int -> mtime_ns:int -> size:int -> suffix:string -> mtime:int ->
  ctype:string -> rule:Answer_rule.t -> vary:bool -> gz:bool -> int
(** The entry holding that key ([>= 0]), or [-1 - i] when it is absent,
    [i] being the entry to fill with {!fill}. *)

val fields : t -> int -> Httpz.Prepared_fields.t
(** The fields of entry [i] (cleared by {!fill}). *)

val fill :
  t -> int -> status:int -> mtime_s:int -> mtime_ns:int -> size:int -> suffix:string -> mtime:int ->
  ctype:string -> rule:Answer_rule.t -> vary:bool -> gz:bool -> Httpz.Prepared_fields.t
(** [fill t i ...] makes entry [i] hold that key, its fields cleared for
    the caller to add; call {!forget} if adding them fails. *)

val forget : t -> int -> unit
(** Entry [i] holds no key. *)
