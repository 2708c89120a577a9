(** Content types of files, by extension.

    From [magic-mime], with the registrations its table predates ([.wasm]
    [application/wasm], [.avif] [image/avif], [.gz] [application/gzip],
    [.map] [application/json], [.webmanifest] [application/manifest+json],
    [.mjs] [application/javascript]) and [; charset=utf-8] appended to
    [text/*], [application/javascript], [application/json],
    [application/xml] and [image/svg+xml]. No extension, or an unknown
    one: [application/octet-stream]. *)

val default_type : string

val content_type_of_ext : ?default:string -> string -> string
(** [content_type_of_ext "css"] is ["text/css; charset=utf-8"]; an
    extension nobody registered gives [default] as it is (no charset
    added; default {!default_type}). Allocates. *)

val is_type : string -> bool
(** [is_type s]: [s] is a media type a [Content-Type] may carry,
    [type/subtype] (tokens) optionally followed by [;] parameters, with no
    byte a field value refuses. For checking a configured default. *)

val is_compressible : string -> bool
(** [is_compressible content_type] is [true] for textual types (and SVG,
    WebAssembly, icons): those for which a gzip sidecar is looked up and
    [Vary: Accept-Encoding] is sent. *)

(** A per-worker table from lower-cased extension to content type: a hit
    compares bytes of the request path with a stored key and gives a slot,
    so serving a known extension allocates nothing. Each new extension
    allocates once; past 192 of them a miss is answered without being
    kept, so a root with thousands of odd extensions costs allocation,
    never memory. *)
module Cache : sig
  type t

  val create : ?default:string -> unit -> t
  (** With the common web extensions already in; [default] (default
      {!default_type}) is the type of files without an extension or with
      one that is not registered. Allocates. *)

  val slot_of_path : t -> Httpz.Bigstring.t -> int -> int
  (** [slot_of_path t buf n]: the slot for the file name ending the path
      [buf.{0 .. n-1}], or [-1] for the default type (no extension, a
      dotfile's leading dot, an extension over 16 bytes). *)

  val stable_slot : int -> bool
  (** Whether the slot names the same type for as long as [t] lives (all
      but the overflow slot, which answers the latest uncached miss). *)

  val type_of : t -> int -> string
  val compressible : t -> int -> bool
end
