(** HTML listings of directories ([--list]).

    Entries are opened beneath the root like any request would be, so what
    a listing shows is exactly what can be fetched; dotfiles are left out
    unless served. Allocates freely: listings are not a hot path. *)

val answer :
  Httpz_server.Ctx.t ->
  root_fd:int ->
  dfd:int ->
  dir_path:string ->
  dotfiles:bool ->
  follow_symlinks:bool ->
  unit
(** [answer c ~root_fd ~dfd ~dir_path ~dotfiles ~follow_symlinks] answers
    with the listing of the directory open as [dfd], whose decoded path
    below the root is [dir_path] (ending in ['/']); 403 if it cannot be
    read. Does not close [dfd]. *)
