(** Opening request paths beneath the document root: the kernel keeps
    every open inside it ({!Syscall.openat2_beneath}, [RESOLVE_BENEATH]),
    and the dotfile rule holds for what was opened, not only for the path
    asked (see {!Static}, "Dotfiles"). Shared by the handler, its listings
    and its custom error pages, so they all open files the same way. *)

type t

val create : root_fd:int -> dotfiles:bool -> follow_symlinks:bool -> room:int -> t
(** [create ~root_fd ~dotfiles ~follow_symlinks ~room] opens beneath the
    directory [root_fd] paths of up to [room] bytes. Reads the root's real
    path once (when /proc cannot tell it, the opened-path check is off).
    Allocates. *)

val root_fd : t -> int

val has_hidden_segment : Httpz.Bigstring.t -> int -> bool
(** [has_hidden_segment p n]: the normalised path [p.{0 .. n-1}] has a
    segment starting with ['.'] other than [.well-known]. Reads [p] eight
    bytes at a time, so up to 7 bytes past [n] when [p] has them (their
    values change nothing). Does not allocate. *)

val openat : t -> Httpz.Bigstring.t -> int -> int -> int
(** [openat t b off len] opens the relative path [b.{off .. off+len-1}]
    beneath the root (read-only, non-blocking), and unless dotfiles are
    served, closes a descriptor that leads to one and answers [-enoent].
    The fd or [-errno]. One [readlink] per open. Does not allocate. *)

val hides : t -> Httpz.Bigstring.t -> int -> bool
(** [hides t p n]: dotfiles are not served and [p.{0 .. n-1}] has a hidden
    segment ({!has_hidden_segment}): such a path answers 404 unopened. *)
