(** The options of [httpz serve] that configure the static handler
    ({!Httpz_static.Static.config}), in groups, each parsed by one term:
    the directory and how files are served, content types and error
    pages, compression. Everything here runs once at start and
    allocates. *)

type files_options = {
  pos_dir : string option;  (** [DIR] *)
  dir : string option;  (** [-d]/[--dir] *)
  max_age : int option;
  list : bool;
  list_max : int;
  dotfiles : bool;
  no_symlinks : bool;
  no_gzip : bool;  (** [--no-gzip-static] *)
  cache_max_file : int;
  cache_size : int;
}

type content_options = { default_type : string option; error_pages : string list }
(** [--default-type], [--error-page] (repeatable, as given). *)

type compress_options = { compress : bool; compress_level : int }

type t = { files : files_options; content : content_options; compression : compress_options }

val term : t Cmdliner.Term.t
(** Every option above. *)

val static_config : t -> (Httpz_static.Static.config, string) result
(** [static_config t] is the handler's configuration (defaults where no
    option is given, the directory ["."] when none is), or the first
    problem as the one line an operator sees (the directory given twice,
    a negative [--max-age], an [--error-page] that does not parse, …).
    Opens nothing: {!Httpz_static.Static.create} checks the directory and
    the error pages. *)
