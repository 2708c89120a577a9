(** What a per-path rule changes in the static handler's answers
    ({!Static.answer}): extra header fields, whether directories are
    listed and answers compressed, and a fallback path for files that are
    not found (a single-page application's [/index.html]). Built once per
    rule at start-up (allocates); read per request without allocating. *)

type t = private {
  names : string array;
  values : string array;
      (** [names.(i): values.(i)] is added to file answers (200, 206, 304)
          and redirects, not to error pages *)
  own_cache_control : bool;
      (** the fields hold [Cache-Control]: the one of
          {!Static.config.max_age} is not sent *)
  listing : bool;  (** list directories without an index file *)
  compress : bool;  (** compress on the fly (see {!Static.config.compress}) *)
  fallback : string;
      (** decoded path (starting with ['/']) answered, with its own status,
          when the request's path is not found ([ENOENT], [ENOTDIR]); [""]:
          none *)
}

val max_path : int
(** [1024]: the longest fallback or rewrite path. *)

val make :
  headers:(string * string) list -> listing:bool -> compress:bool -> fallback:string -> (t, string) result
(** [make ~headers ~listing ~compress ~fallback]; [Error] when the
    fallback is not a path starting with ['/'] of at most {!max_path}
    bytes. Header fields are taken as given (checked by whoever read
    them). *)
