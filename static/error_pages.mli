(** Custom error pages ({!Static.config.error_pages}): a status answered
    with a file of the root instead of the built-in page, the status kept.
    The file is opened like a request path ({!Beneath}) and kept in the
    {!File_cache} like any small file, so a page answers without a syscall
    while it is fresh and a changed page shows within the cache's TTL. *)

type t

val statuses : int list
(** The statuses answered with a page: 400, 401, 403, 404, 405, 412,
    414, 416, 429, 500, 502, 503 (401 and 429 are the refusals of a
    configuration file's access control, 502 a [return]'s). *)

val create : Beneath.t -> (int * string) list -> (t, string) result
(** [create beneath pages] checks every [(status, path)]: a status of
    {!statuses}, given once, and a path (relative to the root, with or
    without its leading ['/']) that is a regular file opening beneath the
    root now. [Error] names the first page that is not. Allocates. *)

val find : t -> Httpz.Status.t -> int
(** [find t status] is the page for [status], or [-1]. Does not allocate. *)

val answer :
  ?extra:Httpz.Header_name.t * string ->
  t ->
  Httpz_server.Ctx.t ->
  Httpz.Status.t ->
  int ->
  cache:File_cache.t ->
  mime:Mime.Cache.t ->
  content_range:Httpz.Bigstring.t ->
  range_len:int ->
  unit
(** [answer t c status i ~cache ~mime ~content_range ~range_len] answers
    [status] with page [i] (from {!find}), its [Content-Type] from its
    extension, [Allow] for a 405 and, when [range_len > 0] (a 416), the
    [Content-Range] [content_range.{0 .. range_len-1}]. A page that cannot
    be opened now (removed since) gets the built-in page. [extra]: one
    more field, as a 401's [WWW-Authenticate]. *)
