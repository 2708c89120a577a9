(** The static handler's fixed answers: its HTML error pages, and the
    status a failed open means. Pages never echo the request (no path, no
    header value), so they cannot reflect anything a client sent. *)

val html_type : string
(** ["text/html; charset=utf-8"] *)

val allow : string
(** ["GET, HEAD, OPTIONS"]: the methods the handler answers. *)

val p301 : string
(** The body of a redirect. *)

val p416 : string
(** The body of a 416, sent with its [Content-Range]. *)

val error_page : Httpz_server.Ctx.t -> Httpz.Status.t -> unit
(** [error_page c status] answers [status] with its page (and [Allow] for
    405), or through the application's error renderer when one is set
    ([Server.config.errors], {!Httpz_server.Errors}; [Allow] kept). Does
    not allocate (a renderer aside). *)

val error_page_extra : Httpz_server.Ctx.t -> Httpz.Status.t -> (Httpz.Header_name.t * string) option -> unit
(** [error_page_extra c status extra] is {!error_page} with one more
    field ([WWW-Authenticate] of a 401, [Retry-After] of a 429). *)

val status_of_errno : int -> Httpz.Status.t
(** [status_of_errno (-errno)] of a failed open: 404 for what does not
    exist or is refused as an escape (ENOENT, ENOTDIR, EXDEV, ELOOP,
    ENAMETOOLONG, EINVAL), 403 for EACCES, EPERM, ENXIO, 503 when out of
    descriptors or memory, 500 otherwise. *)
