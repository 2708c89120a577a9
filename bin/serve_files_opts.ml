(* The options of `httpz serve` that configure the static handler
   ([Httpz_static.Static.config]): the directory, listings, caching,
   content types, error pages, compression. Each group is one term; its
   [*_config] function turns it into configuration values or the line an
   operator sees. *)

open Cmdliner
module Static = Httpz_static.Static

(* {1 The files} What is served and how. *)

type files_options = {
  pos_dir : string option;
  dir : string option;
  max_age : int option;
  list : bool;
  list_max : int;
  dotfiles : bool;
  no_symlinks : bool;
  no_gzip : bool;
  cache_max_file : int;
  cache_size : int;
}

(* The directory, given once (DIR or --dir), else the current one, once
   the numbers are within their bounds. *)
let files_config f =
  let bad fmt = Printf.ksprintf (fun s -> Error s) fmt in
  match f.pos_dir, f.dir with
  | Some a, Some b when a <> b -> bad "the directory is given twice (DIR and --dir): give it once"
  | given, dir ->
      if (match f.max_age with Some n -> n < 0 | None -> false) then bad "--max-age must not be negative"
      else if f.cache_max_file < 0 then bad "--cache-max-file must not be negative"
      else if f.cache_size < 0 then bad "--cache-size must not be negative"
      else if f.list_max < 1 then bad "--list-max must be at least 1"
      else Ok (match given, dir with Some d, _ | None, Some d -> d | None, None -> ".")

let pos_dir =
  Arg.(value & pos 0 (some string) None
       & info [] ~docv:"DIR" ~doc:"Directory to serve (the same as $(b,--dir)).")

let dir =
  Arg.(value & opt (some string) None
       & info [ "d"; "dir" ] ~docv:"DIR" ~doc:"Directory to serve. Default: the current directory.")

let max_age =
  Arg.(value & opt (some int) None
       & info [ "max-age" ] ~docv:"SECONDS"
           ~doc:"Send $(b,Cache-Control: max-age=)$(i,SECONDS) with files. Default: no Cache-Control.")

let list =
  Arg.(value & flag
       & info [ "list" ] ~doc:"List directories that have no index.html (otherwise 403).")

let list_max =
  Arg.(value & opt int Static.default_config.list_max
       & info [ "list-max" ] ~docv:"N"
           ~doc:"Most entries a directory listing ($(b,--list)) reads and shows; a larger \
                 directory's listing says it was cut.")

let dotfiles =
  Arg.(value & flag
       & info [ "dotfiles" ]
           ~doc:"Serve files and directories whose name starts with a dot (by default they answer 404, \
                 except $(b,.well-known)).")

let no_symlinks =
  Arg.(value & flag
       & info [ "no-symlinks" ]
           ~doc:"Refuse (404) any path through a symlink. Symlinks leading out of the directory are \
                 always refused.")

let no_gzip =
  Arg.(value & flag
       & info [ "no-gzip-static" ]
           ~doc:"Never serve precompressed $(i,FILE).gz sidecars.")

let cache_max_file =
  Arg.(value & opt int Static.default_config.cache_max_file
       & info [ "cache-max-file" ] ~docv:"BYTES"
           ~doc:"Files up to this size are kept in memory and answered without touching the \
                 file system (re-checked every second, so a change shows within a second); \
                 larger ones are sent with sendfile. 0 disables the cache.")

let cache_size =
  Arg.(value & opt int Static.default_config.cache_bytes
       & info [ "cache-size" ] ~docv:"BYTES" ~doc:"Memory for cached files, per worker.")

let files_term =
  Term.(const (fun pos_dir dir max_age list list_max dotfiles no_symlinks no_gzip cache_max_file
                   cache_size ->
            { pos_dir; dir; max_age; list; list_max; dotfiles; no_symlinks; no_gzip; cache_max_file;
              cache_size })
        $ pos_dir $ dir $ max_age $ list $ list_max $ dotfiles $ no_symlinks $ no_gzip
        $ cache_max_file $ cache_size)

(* {1 Content} --default-type, --error-page. *)

type content_options = { default_type : string option; error_pages : string list }

let content_config c =
  let rec pages acc = function
    | [] -> Ok (List.rev acc)
    | p :: rest -> (
        match String.index_opt p '=' with
        | None -> Error (Printf.sprintf "--error-page %S: give CODE=PATH" p)
        | Some i -> (
            let code = String.sub p 0 i and path = String.sub p (i + 1) (String.length p - i - 1) in
            match int_of_string_opt code with
            | Some n when String.length code = 3 && String.for_all (fun ch -> ch >= '0' && ch <= '9') code ->
                if path = "" || String.contains path '\000' then
                  Error (Printf.sprintf "--error-page %S: give a file path after '='" p)
                else if List.mem_assoc n acc then
                  Error (Printf.sprintf "--error-page: %d is given twice" n)
                else pages ((n, path) :: acc) rest
            | _ -> Error (Printf.sprintf "--error-page %S: %S is not a status code" p code)))
  in
  match c.default_type with
  | Some ty when not (Httpz_static.Mime.is_type ty) ->
      Error (Printf.sprintf "--default-type %S: not a media type (type/subtype[; parameters])" ty)
  | _ -> Result.map (fun p -> (c.default_type, p)) (pages [] c.error_pages)

let default_type =
  Arg.(value & opt (some string) None
       & info [ "default-type" ] ~docv:"TYPE"
           ~doc:"Content-Type of files without an extension or with an unknown one, sent as \
                 given (e.g. $(b,'text/plain; charset=utf-8')). Default: \
                 application/octet-stream.")

let error_page =
  Arg.(value & opt_all string []
       & info [ "error-page" ] ~docv:"CODE=PATH"
           ~doc:"Answer status $(i,CODE) with the file $(i,PATH) of the served directory instead \
                 of the built-in page, keeping the status; repeatable. $(i,CODE) is one the \
                 server answers with a page: 400, 403, 404, 405, 412, 414, 416, 500, 503. \
                 $(i,PATH) is opened beneath the directory like any request (openat2 \
                 RESOLVE_BENEATH, dotfiles hidden) and must be a regular file at start; if it \
                 is gone later, the built-in page is sent.")

let content_term =
  Term.(const (fun default_type error_pages -> { default_type; error_pages }) $ default_type $ error_page)

(* {1 Compression} --compress. *)

type compress_options = { compress : bool; compress_level : int }

let compress_config c =
  if c.compress_level < 1 || c.compress_level > 9 then Error "--compress-level must be between 1 and 9"
  else Ok c

let compress =
  Arg.(value & flag
       & info [ "compress" ]
           ~doc:"Compress answers with gzip on the fly for clients that accept it \
                 (Accept-Encoding, with q-values), for compressible types (text/*, JavaScript, \
                 JSON, XML, SVG, WebAssembly, icons) without a precompressed $(i,FILE).gz: \
                 each cached file ($(b,--cache-max-file)) is compressed once per version and \
                 worker, and kept beside it in the cache; larger files are sent as they are. \
                 Range requests get the uncompressed file. The compressed answer has its own \
                 ETag and Vary: Accept-Encoding. Off by default.")

let compress_level =
  Arg.(value & opt int 6
       & info [ "compress-level" ] ~docv:"N" ~doc:"zlib compression level for $(b,--compress), 1 (fastest) to 9 (smallest).")

let compress_term =
  Term.(const (fun compress compress_level -> { compress; compress_level }) $ compress $ compress_level)

(* {1 All of them} *)

type t = { files : files_options; content : content_options; compression : compress_options }

let term =
  Term.(const (fun files content compression -> { files; content; compression })
        $ files_term $ content_term $ compress_term)

let static_config t =
  let ( let* ) = Result.bind in
  let f = t.files in
  let* root = files_config f in
  let* default_type, error_pages = content_config t.content in
  let* compression = compress_config t.compression in
  Ok
    { Static.default_config with
      root; list_directories = f.list; list_max = f.list_max;
      max_age = (match f.max_age with Some n -> n | None -> -1);
      dotfiles = f.dotfiles; follow_symlinks = not f.no_symlinks; gzip_static = not f.no_gzip;
      cache_max_file = f.cache_max_file; cache_bytes = f.cache_size;
      default_type = Option.value default_type ~default:Static.default_config.default_type;
      error_pages; compress = compression.compress; compress_level = compression.compress_level }
