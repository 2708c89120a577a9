(** The static file handler: serves a directory tree over HTTP/1.1
    ({{:https://www.rfc-editor.org/rfc/rfc9110} RFC 9110}: GET and HEAD
    §9.3.1-§9.3.2, conditional requests §13, range requests §14, content
    codings §8.4).

    From another library or program this module is
    [Httpz_static.Static]: the library [httpz.static] (dune:
    [(libraries httpz.static)]) wraps its modules under [Httpz_static],
    so write [Httpz_static.Static.create], or [open Httpz_static] first
    as below (and [open Httpz_server] for [Server]).

    {[
      open Httpz_server
      open Httpz_static

      let () =
        match Static.create { Static.default_config with root = "site" } with
        | Error msg -> prerr_endline msg; exit 2
        | Ok st -> exit (Server.run Server.default_config (Static.handler st))
    ]}

    {2 From request-target to file}
    {ol
    {- The target is split ({!Httpz.Target.split}; absolute-form is served
       like origin-form, its authority is not compared with [Host]) and its
       path percent-decoded and normalised ({!Httpz.Target.decode_path})
       into a buffer of this handler. Any error there is a [400] whose body
       never echoes the path.}
    {- The decoded path, without its leading ['/'], is opened with
       {!Syscall.openat2_beneath} relative to the document root's directory
       fd, opened once by {!create}: the {e kernel} refuses every
       resolution that would leave the root ([..], absolute symlinks,
       symlinks pointing outside, races with renames). The empty path opens
       the root itself.}
    {- {!Syscall.fstat} decides: a regular file is served; a directory is
       redirected, indexed or listed (below); anything else (FIFO, socket,
       device) is refused with [403]. Files are opened with [O_NONBLOCK], so
       a FIFO never blocks the worker.}}

    {b Status for each outcome.}
    {ul
    {- [ENOENT], [ENOTDIR], [EXDEV] (escape), [ELOOP] (symlink refused),
       [ENAMETOOLONG], [EINVAL]: [404]. Escapes answer [404], not [403], so
       the answer tells nothing about what lies outside the root.}
    {- [EACCES], [EPERM], [ENXIO] (a socket file), a FIFO or device: [403].}
    {- [EMFILE], [ENFILE], [ENOMEM]: [503]; any other errno: [500].}}

    {b Dotfiles} (decision). By default ({!config.dotfiles} [= false]) any
    path with a segment starting with ['.'] ([/.git/config], [/.env],
    [/a/.htpasswd]) answers [404] without touching the file system, and
    listings leave such entries out. The one exception is the segment
    [.well-known] (RFC 8615), which exists to be public. nginx serves
    dotfiles unless told otherwise; we hide them by default because a
    deployed [.git] or [.env] is a classic leak, and the answer is [404]
    rather than [403] so it does not confirm that they exist. With
    [dotfiles = true] they are served like other files.

    {b Directories.} A directory whose request path does not end in ['/']
    answers [301] to the same path plus ['/'] (and the query, if any). The
    [Location] is built from the {e decoded, normalised} path, re-encoded
    (every byte but [A-Za-z0-9-._~/] becomes [%XX]), so it starts with
    exactly one ['/'] and can never be read as a scheme-relative URL
    ([//evil.example]) or hold CR/LF. A directory path ending in ['/'] serves
    its {!config.index} file if that is a regular file; else, with
    {!config.list_directories}, an HTML listing (names HTML-escaped and
    percent-encoded in hrefs, directories first, then by byte order;
    entries the kernel will not open beneath the root, such as symlinks
    leading out, are left out); else [403], as nginx does.

    {b Methods.} GET and HEAD. OPTIONS answers [204] with
    [Allow: GET, HEAD, OPTIONS]; any other method [405] with the same
    [Allow].

    {2 Response fields}
    A file answer carries [Content-Type] (from the extension, see {!mime};
    {!config.default_type} when there is none or it is unknown),
    a strong [ETag] ({!Httpz.Etag.write} from mtime with nanoseconds and
    size), [Last-Modified], [Accept-Ranges: bytes], [Cache-Control:
    max-age=N] when {!config.max_age} [>= 0], and [Vary: Accept-Encoding]
    (see below). The server adds [Date], [Content-Length] and
    [Connection]. A modification time later than the server's clock is
    replaced by the current time (RFC 9110 §8.8.2.1), in [Last-Modified]
    and in the date comparisons below.

    {b Preconditions}, in the order of RFC 9110 §13.2.2: [If-Match] (strong
    comparison; false: [412]); else [If-Unmodified-Since] (modified after
    the date: [412]); then [If-None-Match] (weak comparison; a match:
    [304]); else [If-Modified-Since] (not modified since the date: [304]).
    Unparsable dates are ignored, as the RFC requires; several field lines
    of [If-Match]/[If-None-Match] count as one list. A [304] carries
    [ETag], [Last-Modified], [Cache-Control] and [Vary], and no body.

    {b Ranges} (GET only: RFC 9110 §14.2 defines them for no other method).
    [If-Range] with an entity-tag must match strongly, with a date must
    equal [Last-Modified] exactly; otherwise the whole file is sent. A
    malformed [Range], another unit or more than 16 ranges: [200] with the
    whole file. One resolved interval: [206] with [Content-Range], sent with
    sendfile. Several disjoint intervals (decision): a [206]
    [multipart/byteranges] body (RFC 9110 §14.6), assembled in a per-worker
    buffer with a boundary chosen at random when the handler is created,
    provided the selected bytes total at most {!config.multipart_max};
    above that the answer is [200] with the whole file, which RFC 9110 §14.2
    always allows (so a client cannot make the worker buffer much). No
    satisfiable range: [416] with [Content-Range: bytes */LENGTH].

    {b Precompressed sidecars.} With {!config.gzip_static} (default on), for
    a {e compressible} type (text/*, JavaScript, JSON, XML, SVG, WebAssembly,
    [+xml]/[+json] types) whose request accepts gzip, and a regular file
    [FILE.gz] beside [FILE] that is not older than it, the answer is
    [FILE.gz] with [Content-Encoding: gzip], [FILE]'s [Content-Type], and
    the sidecar's own [ETag] with [-gz] appended to its opaque part, so the
    two variants never share a tag. [Accept-Encoding] is parsed with its
    q-values (RFC 9110 §12.5.3): [gzip] or [x-gzip] with [q > 0], or an
    unlisted gzip and [*] with [q > 0]; [gzip;q=0] refuses it, and no
    [Accept-Encoding] field means no gzip (the safe reading of §12.5.3).
    {e Vary decision}: every answer for a compressible type carries
    [Vary: Accept-Encoding], whether or not a sidecar exists, so caches
    never mix variants even while sidecars are being added; other types
    never vary. Non-compressible types never look for a sidecar, which
    saves an [openat2] per image.

    {b Error pages} are short fixed HTML strings per status; they never
    contain a file-system path or bytes of the request. {!config.error_pages}
    replaces them with files of the root ({!Error_pages}); where it does
    not, the application's error renderer does when one is set
    ([Server.config.errors], {!Httpz_server.Errors}: [Allow] of a 405 and
    [Content-Range] of a 416 kept).

    {b On-the-fly compression} (decision: off by default, {!config.compress}).
    For a compressible type, a client that accepts gzip (the same
    [Accept-Encoding] rules as for sidecars) and no sidecar served, a file
    held by the {!File_cache} is answered with its gzip form
    ({!Compress.gzip} at {!config.compress_level}), made on the first such
    request and kept in the cache entry beside the identity bytes until the
    file changes; so the steady state allocates nothing and compresses
    nothing. The answer carries [Content-Encoding: gzip], the file's
    [Content-Type], and a strong [ETag]: the file's with [-zN] ([N] the
    level) appended to its opaque part, distinct from the identity's and
    from a sidecar's, and stable across workers and restarts (the gzip
    header holds no time). A file larger than {!config.cache_max_file},
    up to {!config.compress_max_file}, is handled the same way through a
    second cache of its own, bounded by {!config.compress_cache_bytes}
    and filled only by requests that want gzip (a client that does not
    gets the file by sendfile as before), so a 200 KB JavaScript bundle
    goes out compressed. Not compressed: larger files and files that find
    that budget spent (no per-request compression), files under 256
    bytes, files whose gzip form is not smaller, and range requests, which
    are answered on the identity form (with its ETag). Off by default
    because it changes what caches in front of the server hold (new
    variants, new ETags) and costs per-worker memory and a compression on
    the event loop per file version; nginx ([gzip]) and Caddy ([encode])
    are off by default too.

    {2 Allocation}
    {!create} allocates all per-worker state once (path buffer, stat
    records, range state, MIME cache). In the steady state, a [200] or
    [304] for a regular file (with or without sidecar, GET or HEAD, with
    ranges resolving to one interval) allocates nothing: no string is built,
    the MIME type comes from a cache keyed by extension (a miss allocates
    once per new extension), and the entity-tag is written into a
    preallocated bytes buffer of the exact length. Redirects, listings,
    multipart answers and error pages may allocate.

    {2 Processes}
    A {!t} is mutable scratch state for one request at a time: one per
    event loop. Creating it before {!Server.run} forks its workers is fine:
    each worker gets its own copy, and they share the root directory fd,
    which they use only as the base of [openat2]. *)

type config = {
  root : string;  (** The document root directory. Default ["."]. *)
  index : string;
      (** File served for a directory path ending in ['/']. Default
          ["index.html"]. Must be a single file name (no ['/']). *)
  list_directories : bool;
      (** Generate an HTML listing for a directory without index file.
          Default [false] ([403] instead). *)
  list_max : int;
      (** Most entries a listing reads and shows; a larger directory's
          listing says it was cut (a listing is built on the event loop,
          so its cost must stay bounded: about 1 ms per 100 entries).
          Default 1000. *)
  max_age : int;
      (** Seconds for [Cache-Control: max-age=N] on file answers; negative
          (the default, [-1]) sends no [Cache-Control]. *)
  dotfiles : bool;  (** Serve dotfiles (see above). Default [false]. *)
  mount : string;
      (** The path prefix the handler answers under, starting and ending
          with ['/'], e.g. ["/static/"]: [/static/a.css] is the file
          [a.css] of the root, [/static] redirects to [/static/], any other
          path is 404. The request path is decoded and normalised before
          the prefix is checked and removed, and the rest opens beneath
          the root with the kernel's containment, so no encoding of ".."
          leaves the mount or the root. Default ["/"].

          {b Under a {!Route} mount, give the prefix once.} With the
          default ["/"], a handler run by [Route.mount r "/assets"
          (Static.handler st)] (or by a route of a sub-router grafted with
          [Route.mount_router]) serves the path {e below} the route's
          prefix ({!Route.prefix_length}): [/assets/x.css] is the file
          [x.css] of the root, [/assets] redirects to [/assets/]. That
          remainder is decoded and normalised on its own, so a [..] in it
          ([/assets/../x], [/assets/%2e%2e/x]) is refused (400) instead of
          reaching a sibling of the prefix. A [mount] other than ["/"]
          wins: the whole request path is matched against it as before,
          whatever the route (so [Route.mount r "/assets"] with [mount =
          "/assets/"] keeps working). (Decision: before this, the default
          served [/assets/x.css] as the file [assets/x.css] of the root;
          such a setup now sets its root one level down.) Outside a
          route, or under a top-level route that is not a mount, the
          whole path is served. *)
  follow_symlinks : bool;
      (** Follow symlinks that stay beneath the root. Default [true]; with
          [false] any symlink on the path answers [404]. Symlinks leading
          out of the root are refused either way. *)
  gzip_static : bool;  (** Serve [FILE.gz] sidecars. Default [true]. *)
  multipart_max : int;
      (** Largest total of selected bytes answered as
          [multipart/byteranges]; above it the whole file is sent. Default
          256 KiB (the per-worker buffer is allocated on first use). *)
  cache_max_file : int;
      (** Files of at most this many bytes are kept in memory
          ({!File_cache}) and answered with one [sendmsg] and no syscall on
          the file; larger ones go out with sendfile. Default 64 KiB; [0]
          disables the cache. *)
  cache_bytes : int;  (** Memory for cached contents, per worker. Default 64 MiB. *)
  cache_ttl_ms : int;
      (** How long a cached file is trusted before it is re-checked with
          openat2 + fstat (a change shows at most this late). Default 1000. *)
  default_type : string;
      (** [Content-Type] of files without an extension or with one no
          registry knows, sent as given (no charset added). Must be a
          media type ([type/subtype], optional parameters). Default
          ["application/octet-stream"]. *)
  error_pages : (int * string) list;
      (** Custom error pages: [(status, path)] answers [status] with the
          file at [path] (relative to the root, with or without a leading
          ['/']) instead of the built-in page, keeping the status, with
          the file's [Content-Type] and no validators. The statuses the
          handler answers with a page: 400, 401, 403, 404, 405, 412, 414,
          416, 429, 500, 502, 503 ({!create} refuses others). The file is opened like any
          request path (openat2 [RESOLVE_BENEATH] from the root's fd, the
          dotfile rule, the file cache), so it cannot lie outside the
          root; {!create} checks that it is a regular file there. If it
          disappears later, the built-in page is sent. Default [[]]. *)
  compress : bool;
      (** Compress on the fly (gzip) the answers of compressible types
          (see {!is_compressible}) to clients that accept gzip, when no
          [FILE.gz] sidecar is served. Default [false]. See "On-the-fly
          compression" above. *)
  compress_level : int;  (** zlib level, 1-9. Default 6. *)
  compress_max_file : int;
      (** With {!compress}, files larger than {!cache_max_file} and at most
          this many bytes are compressed too: read whole on the first
          request that wants them gzipped and kept with their gzip form in
          a cache of their own ({!compress_cache_bytes}). Default 4 MiB;
          [0]: only files the main cache holds. *)
  compress_cache_bytes : int;
      (** Memory per worker for those larger files (identity and gzip
          bytes together). When it is spent, further large files are sent
          as they are (sendfile), never compressed per request. Default
          32 MiB. *)
}

val default_config : config

type t
(** Per-worker handler state (see Processes). *)

val create : config -> (t, string) result
(** [create config] opens [config.root] ({!Syscall.open_dir}) and
    allocates the handler's state, or explains in [Error] why the root
    cannot be used (missing, not a directory, not readable) or the
    configuration is invalid. Allocates; start-up only. *)

val handler : t -> Ctx.t -> unit
(** [handler t c] answers the request of [c] as described above. *)

(** {1 Per-path rules}
    A caller that picks a rule per request (the configuration file's
    locations, {!Httpz_conf.Sites}) decodes the path with {!decode},
    matches it in {!path}, may {!rewrite} it, then calls {!answer} with
    the rule; {!handler} is [answer] with {!plain_rule}. None of these
    allocates. *)

type rule = Answer_rule.t

val plain_rule : t -> rule
(** The rule of the configuration alone: no extra field, listing and
    compression as configured, no fallback. *)

val decode : t -> Ctx.t -> int
(** [decode t c] decodes and normalises the request's path into {!path}
    (without the mount prefix): its length, or a negative code that
    {!answer} turns into its error (400, 404, 414) or the mount
    redirect. The path stays valid until the next [decode] on [t]. *)

val path : t -> Httpz.Bigstring.t
(** The buffer {!decode} writes the path into, from offset 0. *)

val rewrite : t -> int -> prefix:int -> string -> int
(** [rewrite t n ~prefix replacement] replaces the first [prefix] bytes of
    the decoded path of length [n] with [replacement]; the new length ([n]
    unchanged when it would not fit, or [n] is a code). *)

val answer : t -> rule -> Ctx.t -> int -> int
(** [answer t rule c n] answers the request of [c] as {!handler} does,
    for the decoded path of length [n] (or the code) from {!decode} (and
    {!rewrite}), with [rule]'s fields, listing, compression and fallback:
    a path that is not found ([ENOENT], [ENOTDIR]) is answered as the
    fallback path instead, once (a missing fallback is a 404).

    Before it serves another path than [n]'s (a directory's index file
    that exists, the fallback), it asks the function given to
    {!set_relocate} with that path's length (the path is in {!path}).
    [true]: it serves it under [rule]. [false]: it answers nothing and
    returns that length, and the caller must treat the request as an
    internal redirect to {!path} (pick its rule, check its access, and
    call [answer] again); this is how a location's rules apply to the
    path actually served, as nginx's [index] and [try_files] do.
    Otherwise the request is answered and the result is [-1]. *)

val set_relocate : t -> (int -> bool) -> unit
(** [set_relocate t f]: [f m] is asked as said in {!answer}; it must not
    allocate nor touch {!path}. Default: always [true]. Start-up only.
    {!handler} serves the configuration's own rule and never relocates: a
    [t] given such a function is to be answered through {!answer}. *)

val error : t -> Ctx.t -> Httpz.Status.t -> unit
(** [error t c status] answers [status] with its page (custom or
    built-in), as the handler does. *)

val error_with : t -> Ctx.t -> Httpz.Status.t -> Httpz.Header_name.t -> string -> unit
(** [error_with t c status name value] is {!error} with the field
    [name: value] added (a 401's challenge, a 429's [Retry-After]). *)

val has_page : t -> Httpz.Status.t -> bool
(** [has_page t status]: {!config.error_pages} gives a page for
    [status]. *)

val root_fd : t -> Syscall.fd
(** [root_fd t] is the document root's directory fd. *)

val close : t -> unit
(** [close t] closes the root fd; [t] must not be used afterwards. *)

(** {1 Pure parts} Exposed for tests and for other handlers. *)

val mime : t -> string -> string
(** [mime t name] is the [Content-Type] the handler sends for a file named
    [name] (only its extension after the last ['.'] counts, ASCII
    case-insensitively): from [magic-mime], with a few corrections it lacks
    ([.wasm] [application/wasm], [.avif] [image/avif], [.gz]
    [application/gzip], [.map] [application/json], [.webmanifest]
    [application/manifest+json]) and [; charset=utf-8] appended to [text/*],
    [application/javascript], [application/json], [application/xml] and
    [image/svg+xml]. No extension, or an unknown one:
    [application/octet-stream]. Goes through the cache (may allocate on a
    miss). *)

val is_compressible : string -> bool
(** [is_compressible content_type] is [true] for the types for which
    sidecars are looked up and [Vary: Accept-Encoding] is sent. *)

val accepts_gzip : Httpz.Bigstring.t -> Httpz.Request.t -> bool
(** [accepts_gzip buf req] is [true] iff the [Accept-Encoding] fields of
    [req] (values in [buf]) accept the [gzip] coding, by the rules above.
    Elements that do not parse (bad q-value, stray bytes) are ignored; a
    coding listed twice takes its highest q. Does not allocate. *)

val accepts_gzip_value : string -> bool
(** [accepts_gzip_value v] is {!accepts_gzip} for a request with one
    [Accept-Encoding] field of value [v]. Allocates: for tests. *)

val encode_path : string -> string
(** [encode_path p] is [p] with every byte but [A-Za-z0-9-._~/]
    percent-encoded (upper-case hex), as used in [Location] and listing
    hrefs. *)

val html_escape : string -> string
(** [html_escape s] is [s] with the five bytes [&], [<], [>], double
    quote and single quote replaced by character references. *)
