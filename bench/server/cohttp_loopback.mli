(** What both cohttp peers (cohttp_static.ml, cohttp_todos.ml) share. *)

val serve :
  host:string ->
  port:int ->
  (Cohttp_lwt_unix.Server.conn -> Cohttp.Request.t -> Cohttp_lwt.Body.t ->
   (Cohttp.Response.t * Cohttp_lwt.Body.t) Lwt.t) ->
  unit
(** [serve ~host ~port callback] binds [host:port] itself (conduit's
    [`Port] mode would bind every address), ignores SIGPIPE and runs
    [callback] on every request until the process ends. *)
