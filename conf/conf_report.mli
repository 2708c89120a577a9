(** What [httpz check] does beyond {!Conf_file.read}. Opens files; not on
    the request path. *)

val check_files : Conf_file.t -> (unit, string) result
(** [check_files t]: every root is a directory that opens, every
    certificate loads with its key, every error page exists, every user file of [auth_basic_user_file]
    reads, as [serve]
    would find them now; the first failure with the position of its
    directive. Opens and closes files. *)

val summary : Conf_file.t -> string
(** [summary t] is the line [httpz check] prints for a valid file: the
    sites, the rules and where it listens. *)

