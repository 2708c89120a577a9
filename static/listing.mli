(** HTML listings of directories ([--list]).

    Entries are opened beneath the root like any request would be, so what
    a listing shows is exactly what can be fetched; dotfiles are left out
    unless served. Allocates freely: listings are not a hot path. *)

val answer :
  Httpz_server.Ctx.t ->
  dfd:int ->
  dir_path:string ->
  dotfiles:bool ->
  max_entries:int ->
  open_entry:(string -> int) ->
  unit
(** [answer c ~dfd ~dir_path ~dotfiles ~max_entries ~open_entry] answers
    with the listing of the directory open as [dfd], whose decoded path
    below the root is [dir_path] (ending in ['/']): at most [max_entries]
    entries, in the order the directory gives them (then sorted,
    directories first), with a note when there are more. Each entry is
    opened with [open_entry] (its path below the root, without the
    leading ['/']), which applies the handler's rules; entries it refuses
    are left out. 403 if the directory cannot be read. Does not close
    [dfd]. *)
