(** A small-file cache for the static handler: path → file contents and
    metadata, so that serving a cached file costs no open, fstat, close or
    sendfile, just the response's one sendmsg.

    {2 What is cached}
    Only regular files of at most [max_file] bytes, keyed by their
    normalised, percent-decoded path {e after} the handler opened them with
    [openat2(RESOLVE_BENEATH)] and checked them (so a key never names
    anything outside the root); also "no such file" for [.gz] sidecar
    lookups, which would otherwise cost a failed open per request.

    {2 Freshness}
    An entry is trusted for [ttl_ms] milliseconds after it was last
    checked (default 1 s, like lighttpd's stat cache); after that the
    handler re-opens and re-stats the path and calls {!revalidate}. A file
    changed in place or replaced (another inode, size, mtime) is re-read.
    So a change is visible at most [ttl_ms] later.

    {2 Ownership}
    Contents are never modified in place: a changed file gets a new buffer,
    so a response still being sent from the old one (under backpressure)
    stays correct; the GC frees the old buffer when nothing uses it.

    {2 Allocation}
    {!find}, {!revalidate} (unchanged file) and the accessors allocate
    nothing. {!insert} allocates the entry's key and content buffers: a
    miss path, once per file (and once per change). *)

type t

val create : ?capacity:int -> max_file:int -> max_bytes:int -> ttl_ms:int -> unit -> t
(** [create ~max_file ~max_bytes ~ttl_ms ()] holds at most [capacity]
    entries (default 4096, rounded up to a power of two), files of at most
    [max_file] bytes and [max_bytes] of contents in all. [max_file = 0]
    disables the cache ({!find} never hits, {!insert} does nothing). *)

val enabled : t -> bool
val max_file : t -> int

val find : t -> Httpz.Bigstring.t -> len:int -> int
(** [find t path ~len] is the slot of the entry for the first [len] bytes
    of [path], or [-1]. *)

val fresh : t -> int -> now_ms:int -> bool
(** [fresh t slot ~now_ms] is [true] while the entry was checked less than
    [ttl_ms] ago. *)

val is_absent : t -> int -> bool
(** The entry records that no regular file exists at that path. *)

val content : t -> int -> Httpz.Bigstring.t
(** The file's bytes: [size t slot] bytes from offset 0. *)

val size : t -> int -> int
val mtime_s : t -> int -> int
val mtime_ns : t -> int -> int

val revalidate : t -> int -> Syscall.stat -> now_ms:int -> bool
(** [revalidate t slot st ~now_ms] compares a fresh [fstat] of the path
    with the entry: [true] (and the entry trusted again for [ttl_ms]) when
    device, inode, size and mtime are unchanged; [false] when the caller
    must re-read the file and {!insert} it again. *)

val insert : t -> Httpz.Bigstring.t -> len:int -> fd:int -> Syscall.stat -> now_ms:int -> int
(** [insert t path ~len ~fd st ~now_ms] reads the regular file open on
    [fd] (whose [fstat] is [st]; freshly opened, so its position is 0; the
    reads move it, which sendfile, taking explicit offsets, ignores) into a
    new buffer and records it under the path. The slot, or [-1] when the file is too large, the byte budget is
    spent, or the read came up short (the file changed under us): then
    nothing is cached and the caller serves from [fd] as usual. *)

(** {2 The compressed form}
    A file entry may also hold its gzip form ({!Compress.gzip}), made on
    the first request that wants it and dropped with the entry: a changed
    file (another inode, size or mtime) is re-inserted untried, so the
    compressed bytes always belong to the identity bytes beside them.
    They count in [max_bytes]. *)

val zip_untried : int
val zip_ready : int
val zip_refused : int

val note : t -> int -> int
val set_note : t -> int -> int -> unit
(** An integer the caller keeps with entry [slot]'s key (a fact derived
    from the path alone, such as its content type's slot): [-1] until
    set, and again whenever the slot is filled ({!insert},
    {!insert_absent} with a new key). *)

val zip_state : t -> int -> int
(** [zip_state t slot]: {!zip_untried} (not made yet), {!zip_ready}
    ({!zipped} holds it) or {!zip_refused} (not smaller than the file, no
    room left in [max_bytes], or not wanted: serve the identity form). *)

val zipped : t -> int -> Httpz.Bigstring.t
(** The gzip form when {!zip_state} is {!zip_ready}: all of its bytes. *)

val set_zipped : t -> int -> Httpz.Bigstring.t -> unit
(** [set_zipped t slot z] keeps [z] as the entry's gzip form when it is
    smaller than the file and fits in the budget, else records
    {!zip_refused}. Only for an untried file entry. *)

val refuse_zip : t -> int -> unit
(** [refuse_zip t slot] records that the entry is not to be compressed. *)

val insert_absent : t -> Httpz.Bigstring.t -> len:int -> now_ms:int -> unit
(** [insert_absent t path ~len ~now_ms] records that [path] has no regular
    file (for sidecar lookups). *)

val bytes : t -> int
(** Total bytes of cached contents. *)
