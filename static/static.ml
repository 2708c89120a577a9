open Httpz
module B = Bigstring

type config = {
  root : string;
  index : string;
  list_directories : bool;
  list_max : int;
  max_age : int;
  dotfiles : bool;
  mount : string;
  follow_symlinks : bool;
  gzip_static : bool;
  multipart_max : int;
  cache_max_file : int;
  cache_bytes : int;
  cache_ttl_ms : int;
  default_type : string;
  error_pages : (int * string) list;
  compress : bool;
  compress_level : int;
  compress_max_file : int;
  compress_cache_bytes : int;
}

let default_config = {
  root = ".";
  index = "index.html";
  list_directories = false;
  list_max = 1000;
  max_age = -1;
  dotfiles = false;
  mount = "/";
  follow_symlinks = true;
  gzip_static = true;
  multipart_max = 256 * 1024;
  cache_max_file = 64 * 1024;
  cache_bytes = 64 * 1024 * 1024;
  cache_ttl_ms = 1000;
  default_type = Mime.default_type;
  error_pages = [];
  compress = false;
  compress_level = 6;
  compress_max_file = 4 * 1024 * 1024;
  compress_cache_bytes = 32 * 1024 * 1024;
}

open Pages
open Preconditions

let is_compressible = Mime.is_compressible
let accepts_gzip = Accept_encoding.accepts_gzip
let accepts_gzip_value = Accept_encoding.accepts_gzip_value
let encode_path = Escape.encode_path
let html_escape = Escape.html_escape

module Mime_cache = Mime.Cache

(* {1 Handler state} *)

let path_capacity = 4096
(* Room after the decoded path for "/" ^ index or ".gz". *)
let suffix_room = 256

type t = {
  cfg : config;
  beneath : Beneath.t;  (** opens paths beneath the root *)
  cache_control : string;
  multipart_type : string;
  boundary : string;
  target : Target.t;
  path : B.t;  (** decoded path, then [index] or [.gz] appended *)
  dot : B.t;  (** ["."], the root directory as a relative path *)
  st : Syscall.stat;
  st2 : Syscall.stat;
  range : Range.t;
  mime : Mime_cache.t;
  etag_buf : B.t;
  last_modified : Date.Cache.t;  (** the last Last-Modified formatted *)
  etag_pool : Bytes.t array;  (** [etag_pool.(n)] has length [n] *)
  mutable etag_mtime_s : int;  (** the last tag made ([etag_last]) was for these *)
  mutable etag_mtime_ns : int;
  mutable etag_size : int;
  mutable etag_suffix : string;
  mutable etag_last : string;
  scratch : B.t;  (** Location, Content-Range *)
  route_prefix : B.t;
      (** the prefix of the {!Route} mount being served, decoded and
          re-encoded as {!Escape.encode_into} does, for Locations *)
  mutable route_prefix_len : int;  (** its length; [-1]: [cfg.mount] applies *)
  mutable multipart : B.t;  (** allocated on the first multipart answer *)
  cache : File_cache.t;
  large : File_cache.t;
      (** files over [cache_max_file] kept for their gzip form
          ([compress_max_file]); disabled without [compress] *)
  mutable mem_cache : File_cache.t;  (** the cache [mem_slot] is a slot of *)
  mutable mem : B.t;
      (** The bytes being answered when the answer functions get [fd = -1]:
          a {!File_cache} entry's contents. *)
  mutable now_ms : int;  (** monotonic ms of this request *)
  mutable gz_slot : int;  (** cache slot of the sidecar being answered *)
  mutable mem_slot : int;  (** cache slot whose contents [mem] is, or [-1] *)
  zip_suffix : string;  (** appended to the entity-tag of a compressed form *)
  errors : Error_pages.t;
  plain_rule : Answer_rule.t;  (** the configuration's, without a per-path rule *)
  mutable rule : Answer_rule.t;  (** the rule of the request being answered *)
  mutable fell_back : bool;  (** the rule's fallback is being answered *)
  mutable relocate : int -> bool;
      (** asked before another path than the requested one is served
          (an index file, the fallback): [true] lets the answer go on *)
  mutable moved : int;
      (** [-1], or the length of the path [answer] hands back to its
          caller instead of serving it *)
  heads : Head_cache.t;  (** the fields of recent file answers *)
}

type rule = Answer_rule.t

let root_fd t = Beneath.root_fd t.beneath
let close t = ignore (Syscall.close (root_fd t))
let mime t name = Mime_cache.type_of t.mime (Mime_cache.slot_of_path t.mime (B.of_string name) (String.length name))

(* "/" or "/a/b/": what a normalised request path can start with. *)
let valid_mount m =
  let n = String.length m in
  let segments = String.split_on_char '/' (String.sub m 1 (max 0 (n - 2))) in
  n >= 1 && n < 1024 && m.[0] = '/' && m.[n - 1] = '/'
  && String.for_all (fun ch -> ch > ' ' && ch < '\127' && ch <> '?' && ch <> '#' && ch <> '%') m
  && (n = 1 || List.for_all (fun seg -> seg <> "" && seg <> "." && seg <> "..") segments)

let random_boundary () =
  let st = Random.State.make_self_init () in
  String.init 24 (fun _ -> "0123456789abcdefghijklmnopqrstuvwxyz".[Random.State.int st 36])

let create cfg =
  if cfg.index = "" || String.contains cfg.index '/' || String.contains cfg.index '\000'
     || String.length cfg.index > suffix_room - 8
  then Error "index must be a plain file name"
  else if not (valid_mount cfg.mount) then
    Error "mount must be a path that starts and ends with '/', without '.' or '..' segments"
  else if cfg.multipart_max < 0 then Error "multipart_max must not be negative"
  else if not (Mime.is_type cfg.default_type) then
    Error (Printf.sprintf "default type %S is not a media type (type/subtype)" cfg.default_type)
  else if cfg.compress_level < 1 || cfg.compress_level > 9 then
    Error "compress_level must be between 1 and 9"
  else
    match Sys.is_directory cfg.root with
    | exception Sys_error _ -> Error (Printf.sprintf "%s: no such directory" cfg.root)
    | false -> Error (Printf.sprintf "%s: not a directory" cfg.root)
    | true ->
      let fd = Syscall.open_dir cfg.root in
      if fd < 0 then Error (Printf.sprintf "%s: %s" cfg.root (Syscall.error_message fd))
      else
        let beneath =
          Beneath.create ~root_fd:fd ~dotfiles:cfg.dotfiles ~follow_symlinks:cfg.follow_symlinks
            ~room:(path_capacity + suffix_room)
        in
        match Error_pages.create beneath cfg.error_pages with
        | Error e -> ignore (Syscall.close fd); Error e
        | Ok errors ->
        let boundary = random_boundary () in
        let plain_rule =
          match
            Answer_rule.make ~headers:[] ~listing:cfg.list_directories ~compress:cfg.compress ~fallback:""
          with
          | Ok r -> r
          | Error e -> invalid_arg e
        in
        let cache =
          File_cache.create ~max_file:cfg.cache_max_file ~max_bytes:cfg.cache_bytes ~ttl_ms:cfg.cache_ttl_ms ()
        in
        Ok {
          cfg; beneath;
          cache_control = (if cfg.max_age >= 0 then Printf.sprintf "max-age=%d" cfg.max_age else "");
          multipart_type = "multipart/byteranges; boundary=" ^ boundary;
          boundary;
          target = Target.create ();
          path = B.create (path_capacity + suffix_room);
          dot = B.of_string ".";
          st = Syscall.stat_create ();
          st2 = Syscall.stat_create ();
          range = Range.create ();
          mime = Mime_cache.create ~default:cfg.default_type ();
          etag_buf = B.create 64;
          last_modified = Date.Cache.create ();
          etag_pool = Array.init 64 Bytes.create;
          etag_mtime_s = -1;
          etag_mtime_ns = -1;
          etag_size = -1;
          etag_suffix = "";
          etag_last = "";
          scratch = B.create (3 * path_capacity + 16 + 32 * 1024);
          route_prefix = B.create (3 * path_capacity);
          route_prefix_len = -1;
          multipart = B.create 0;
          cache;
          large =
            File_cache.create ~capacity:256
              ~max_file:(if cfg.compress then max 0 cfg.compress_max_file else 0)
              ~max_bytes:cfg.compress_cache_bytes ~ttl_ms:cfg.cache_ttl_ms ();
          mem_cache = cache;
          mem = B.create 0;
          now_ms = 0;
          gz_slot = -1;
          mem_slot = -1;
          zip_suffix = Printf.sprintf "-z%d" cfg.compress_level;
          errors;
          plain_rule;
          rule = plain_rule;
          fell_back = false;
          relocate = (fun _ -> true);
          moved = -1;
          heads = Head_cache.create ~size:128 ~rule:plain_rule;
        }

(* {1 Paths} *)

(* A file that exists but cannot be served is the operator's to fix, as
   nginx logs its open() failures: at warn, with the path and errno; a
   missing file is the client's business (debug). Formatted only when the
   level is on. *)
let log_open_failure t n err status =
  let level = if status = Status.Not_found then Log.Debug else Log.Warn in
  if Log.enabled level then
    (if level = Log.Debug then Log.debug else Log.warn)
      "open() \"%s%s\" failed (%s): %d" (Filename.concat t.cfg.root "")
      (if n <= 1 then "" else B.sub_string t.path ~off:1 ~len:(n - 1))
      (Syscall.error_message err) (Status.code status)

(* Opens the decoded path [t.path.{0 .. n-1}] beneath the root. *)
let open_path t n = if n <= 1 then Beneath.openat t.beneath t.dot 0 1 else Beneath.openat t.beneath t.path 1 (n - 1)

(* {1 Error pages} *)

(* The answer for an error [status]: the custom page if one is set. *)
let custom_page t c status i ~range_len =
  Error_pages.answer t.errors c status i ~cache:t.cache ~mime:t.mime ~content_range:t.scratch ~range_len

let error_page t c status =
  let i = Error_pages.find t.errors status in
  if i < 0 then error_page c status else custom_page t c status i ~range_len:0

let append_string (b : B.t) n s =
  B.blit_from_string s ~src_off:0 b ~dst_off:n ~len:(String.length s);
  n + String.length s

(* Cache-Control from [max_age] unless the rule gives its own, then the
   rule's fields: on file answers and redirects. *)
let cache_headers t c =
  let r = t.rule in
  if t.cfg.max_age >= 0 && not r.Answer_rule.own_cache_control then Ctx.header c Cache_control t.cache_control;
  for i = 0 to Array.length r.names - 1 do
    Ctx.header_s c (Array.unsafe_get r.names i) (Array.unsafe_get r.values i)
  done

(* {1 Entity-tags} *)

(* Where the sidecar's bytes are, after {!find_sidecar}; [Zipped]: the
   compressed form of the cached file (in [t.mem], cache slot
   [t.mem_slot]). *)
type sidecar = No_sidecar | Sidecar_fd of int | Sidecar_mem | Zipped

(* Writes the tag of the representation [side] (of [size] bytes) into
   [etag_buf] and copies it into the pooled bytes of exactly its length,
   so it can be handed to [Etag] and [Ctx.header] as a string without
   allocating. A sidecar's tag has "-gz" inside the quotes; the compressed
   form's is the file's (of [file_size] bytes) with [zip_suffix]: its
   bytes follow from the file's and the level. The string is valid until
   the next request. The same tag as the last one (a file answered again)
   is that string again: the pooled bytes still hold it. *)
let make_etag t side ~mtime_s ~mtime_ns ~size ~file_size =
  let size, suffix =
    match side with
    | No_sidecar -> size, ""
    | Zipped -> file_size, t.zip_suffix
    | Sidecar_fd _ | Sidecar_mem -> size, "-gz"
  in
  if mtime_s = t.etag_mtime_s && mtime_ns = t.etag_mtime_ns && size = t.etag_size && suffix == t.etag_suffix
  then t.etag_last
  else
  let n = Etag.write t.etag_buf ~off:0 ~mtime:mtime_s ~nsec:mtime_ns ~size in
  let k = String.length suffix in
  let n =
    if k > 0 then begin
      (* replace the closing quote *)
      let o = n - 1 in
      B.blit_from_string suffix ~src_off:0 t.etag_buf ~dst_off:o ~len:k;
      B.unsafe_set t.etag_buf (o + k) '"';
      n + k
    end
    else n
  in
  let b = Array.unsafe_get t.etag_pool n in
  for i = 0 to n - 1 do Bytes.unsafe_set b i (B.unsafe_get t.etag_buf i) done;
  t.etag_mtime_s <- mtime_s;
  t.etag_mtime_ns <- mtime_ns;
  t.etag_size <- size;
  t.etag_suffix <- suffix;
  t.etag_last <- Bytes.unsafe_to_string b;
  t.etag_last

(* The answer functions below take [fd]: an open file to send with
   sendfile, or [-1] when the bytes are [t.mem] (from the file cache). *)
let release fd = if fd >= 0 then ignore (Syscall.close fd)

(* {1 Answers for a regular file} *)

(* A file dated beyond year 9999 (or before year 0) has no IMF-fixdate:
   leave the field out rather than fail the answer. *)
let last_modified t c mtime =
  if mtime >= Date.min_time && mtime <= Date.max_time then
    Ctx.header_date_cached c Last_modified t.last_modified mtime

let common_headers t c ~ctype ~etag ~mtime ~vary ~gz =
  Ctx.header c Content_type ctype;
  Ctx.header c Etag etag;
  last_modified t c mtime;
  cache_headers t c;
  if vary then Ctx.header c Vary "Accept-Encoding";
  if gz then Ctx.header c Content_encoding "gzip"

let multipart_answer t c fd ~ctype ~etag ~mtime ~vary ~gz ~size =
  let r = t.range in
  let n = Range.count r in
  let need = ref 0 in
  for k = 0 to n - 1 do
    need := !need + (Range.stop r k - Range.start r k + 1) + 256 + String.length ctype
  done;
  let need = !need + 64 in
  if B.length t.multipart < need then t.multipart <- B.create need;
  let b = t.multipart in
  let o = ref 0 in
  let ok = ref true in
  for k = 0 to n - 1 do
    if !ok then begin
      let first = Range.start r k and last = Range.stop r k in
      o := append_string b !o (if k = 0 then "--" else "\r\n--");
      o := append_string b !o t.boundary;
      o := append_string b !o "\r\nContent-Type: ";
      o := append_string b !o ctype;
      o := append_string b !o "\r\nContent-Range: ";
      o := Range.write_content_range b ~off:!o ~first ~last ~length:size;
      o := append_string b !o "\r\n\r\n";
      let want = last - first + 1 in
      if fd < 0 then begin
        B.blit ~src:t.mem ~src_off:first ~dst:b ~dst_off:!o ~len:want;
        o := !o + want
      end else
      (match Unix.lseek (Syscall.unix_of_fd fd) first Unix.SEEK_SET with
       | exception Unix.Unix_error _ -> ok := false
       | _ ->
         let got = ref 0 in
         while !ok && !got < want do
           let k = Syscall.read fd b (!o + !got) (want - !got) in
           if k > 0 then got := !got + k
           else if k = - Syscall.eintr then ()
           else ok := false (* EOF: the file shrank under us *)
         done;
         o := !o + want)
    end
  done;
  release fd;
  if not !ok then error_page t c Internal_server_error
  else begin
    o := append_string b !o "\r\n--";
    o := append_string b !o t.boundary;
    o := append_string b !o "--\r\n";
    Ctx.start c Partial_content;
    Ctx.header c Content_type t.multipart_type;
    Ctx.header c Etag etag;
    last_modified t c mtime;
    cache_headers t c;
    if vary then Ctx.header c Vary "Accept-Encoding";
    if gz then Ctx.header c Content_encoding "gzip";
    Ctx.header c Accept_ranges "bytes";
    Ctx.body_bigstring c b ~off:0 ~len:!o
  end

(* {2 Prepared fields} A file answered again gets the fields it got
   last time: they come from [t.heads], made once per file version and
   rule ({!Head_cache}). The key's entity-tag inputs are those of the tag
   [make_etag] made last, [etag]. *)

let add_cache_fields t p =
  let r = t.rule in
  if t.cfg.max_age >= 0 && not r.Answer_rule.own_cache_control then
    Prepared_fields.add p Cache_control t.cache_control;
  for i = 0 to Array.length r.names - 1 do
    Prepared_fields.add_s p (Array.unsafe_get r.names i) (Array.unsafe_get r.values i)
  done

(* The fields [send_full] (status 200) or the 304 answer write, in the
   same order. *)
let add_file_fields t p ~status ~ctype ~etag ~mtime ~vary ~gz =
  if status = 200 then Prepared_fields.add p Content_type ctype;
  Prepared_fields.add p Etag etag;
  if mtime >= Date.min_time && mtime <= Date.max_time then Prepared_fields.add_date p Last_modified mtime;
  add_cache_fields t p;
  if vary then Prepared_fields.add p Vary "Accept-Encoding";
  if status = 200 then begin
    if gz then Prepared_fields.add p Content_encoding "gzip";
    Prepared_fields.add p Accept_ranges "bytes"
  end

(* Writes the fields through the cache: false when they could not be
   prepared (a rule's field the writers refuse, or too many bytes), for
   the caller to write them one by one. *)
let prepared_fields t c ~status ~ctype ~etag ~mtime ~vary ~gz =
  let h = t.heads in
  let i =
    Head_cache.find h ~status ~mtime_s:t.etag_mtime_s ~mtime_ns:t.etag_mtime_ns ~size:t.etag_size
      ~suffix:t.etag_suffix ~mtime ~ctype ~rule:t.rule ~vary ~gz
  in
  let i =
    if i >= 0 then i
    else begin
      let i = -1 - i in
      let p =
        Head_cache.fill h i ~status ~mtime_s:t.etag_mtime_s ~mtime_ns:t.etag_mtime_ns ~size:t.etag_size
          ~suffix:t.etag_suffix ~mtime ~ctype ~rule:t.rule ~vary ~gz
      in
      match add_file_fields t p ~status ~ctype ~etag ~mtime ~vary ~gz with
      | () -> i
      | exception (Response.Invalid_field | Response.No_space | Invalid_argument _) ->
          Head_cache.forget h i;
          -1
    end
  in
  i >= 0 && (Ctx.fields c (Head_cache.fields h i); true)

let send_full t c fd ~is_get ~ctype ~etag ~mtime ~vary ~gz ~size =
  Ctx.start c Ok;
  if not (prepared_fields t c ~status:200 ~ctype ~etag ~mtime ~vary ~gz) then begin
    common_headers t c ~ctype ~etag ~mtime ~vary ~gz;
    Ctx.header c Accept_ranges "bytes"
  end;
  if is_get && size > 0 then begin
    if fd >= 0 then Ctx.body_file c ~fd ~off:0 ~len:size ~close:true
    else Ctx.body_bigstring_stable c t.mem ~off:0 ~len:size
  end
  else begin
    release fd;
    Ctx.no_body c ~content_length:size
  end

let range_answer t c req buf fd ~ctype ~etag ~mtime ~vary ~gz ~size =
  let ri = Request.find req Range in
  let v = Request.header_value req ri in
  let r = t.range in
  match Range.parse r buf ~off:(Span.off v) ~len:(Span.len v) with
  | Invalid | Not_bytes | Too_many -> send_full t c fd ~is_get:true ~ctype ~etag ~mtime ~vary ~gz ~size
  | Valid ->
    match Range.resolve r ~length:size with
    | Empty -> send_full t c fd ~is_get:true ~ctype ~etag ~mtime ~vary ~gz ~size
    | Unsatisfiable ->
      release fd;
      let o = Range.write_unsatisfied t.scratch ~off:0 ~length:size in
      let i = Error_pages.find t.errors Range_not_satisfiable in
      if i >= 0 then custom_page t c Range_not_satisfiable i ~range_len:o
      else if Errors.active None then begin
        Errors.require Content_range (B.sub_string t.scratch ~off:0 ~len:o);
        Errors.answer c Range_not_satisfiable ~reason:(Status.reason Range_not_satisfiable)
      end
      else begin
        Ctx.start c Range_not_satisfiable;
        Ctx.header_bytes c Content_range t.scratch ~off:0 ~len:o;
        Ctx.header c Content_type html_type;
        Ctx.body_string c p416
      end
    | Satisfiable ->
      if Range.count r = 1 then begin
        let first = Range.start r 0 and last = Range.stop r 0 in
        let o = Range.write_content_range t.scratch ~off:0 ~first ~last ~length:size in
        Ctx.start c Partial_content;
        common_headers t c ~ctype ~etag ~mtime ~vary ~gz;
        Ctx.header c Accept_ranges "bytes";
        Ctx.header_bytes c Content_range t.scratch ~off:0 ~len:o;
        if fd >= 0 then Ctx.body_file c ~fd ~off:first ~len:(last - first + 1) ~close:true
        else Ctx.body_bigstring_stable c t.mem ~off:first ~len:(last - first + 1)
      end
      else begin
        let total = ref 0 in
        for k = 0 to Range.count r - 1 do total := !total + Range.stop r k - Range.start r k + 1 done;
        if !total > t.cfg.multipart_max then
          send_full t c fd ~is_get:true ~ctype ~etag ~mtime ~vary ~gz ~size
        else multipart_answer t c fd ~ctype ~etag ~mtime ~vary ~gz ~size
      end

(* {1 Files} *)


(* [FILE.gz] beside the file at [t.path.{0 .. n-1}] (whose mtime is
   [orig_mtime]): used when it is a regular file no older than the
   original. From the cache when possible ([Sidecar_mem]: bytes in [t.mem],
   metadata in cache slot [t.gz_slot]), else opened ([Sidecar_fd], stat in
   [t.st2]). Absence is cached too, so a file without a sidecar costs no
   failed open per request. *)
let find_sidecar t n ~orig_mtime =
  let m = append_string t.path n ".gz" in
  let cache = t.cache in
  let slot = File_cache.find cache t.path ~len:m in
  t.gz_slot <- -1;
  if slot >= 0 && File_cache.fresh cache slot ~now_ms:t.now_ms then begin
    if File_cache.is_absent cache slot || File_cache.mtime_s cache slot < orig_mtime then No_sidecar
    else (t.gz_slot <- slot; t.mem <- File_cache.content cache slot; Sidecar_mem)
  end
  else begin
    let fd = Beneath.openat t.beneath t.path 1 (m - 1) in
    if fd < 0 then (File_cache.insert_absent cache t.path ~len:m ~now_ms:t.now_ms; No_sidecar)
    else if Syscall.fstat fd t.st2 = 0 && Syscall.stat_is_regular t.st2 then begin
      if Syscall.stat_mtime_s t.st2 < orig_mtime then (release fd; No_sidecar)
      else begin
        let cached =
          if slot >= 0 && File_cache.revalidate cache slot t.st2 ~now_ms:t.now_ms then slot
          else File_cache.insert cache t.path ~len:m ~fd t.st2 ~now_ms:t.now_ms
        in
        if cached >= 0 then begin
          release fd; t.gz_slot <- cached; t.mem <- File_cache.content cache cached; Sidecar_mem
        end
        else Sidecar_fd fd
      end
    end
    else (release fd; File_cache.insert_absent cache t.path ~len:m ~now_ms:t.now_ms; No_sidecar)
  end

(* The compressed form of the cached file in [t.mem] (slot [t.mem_slot]),
   made now if this is its first request: [Zipped] with [t.mem] set to
   it, or [No_sidecar] when it is not worth keeping (not smaller, too
   small to bother, no room in the cache). *)
let min_compress = 256

let zipped_form t =
  let cache = t.mem_cache and s = t.mem_slot in
  (* The sidecar lookup before may have evicted the entry. *)
  if File_cache.content cache s != t.mem then No_sidecar
  else begin
  if File_cache.zip_state cache s = File_cache.zip_untried then begin
    let size = File_cache.size cache s in
    if size < min_compress then File_cache.refuse_zip cache s
    else
      File_cache.set_zipped cache s
        (Compress.gzip ~level:t.cfg.compress_level (File_cache.content cache s) ~off:0 ~len:size)
  end;
  if File_cache.zip_state cache s = File_cache.zip_ready then begin
    t.mem <- File_cache.zipped cache s;
    Zipped
  end
  else No_sidecar
  end

(* Answers with the regular file at [t.path.{0 .. n-1}]: its bytes are on
   [fd] ([>= 0]) or in [t.mem] ([fd = -1]), with the given metadata. From
   here on [fd] is closed on every path. *)
let serve_file t c req (buf : B.t) fd n ~is_get ~size ~mtime_s ~mtime_ns =
  (* A cached file's path is its cache key: its type's slot is kept
     there (as slot + 1: the default type's slot is -1). *)
  let slot =
    let known = if t.mem_slot >= 0 then File_cache.note t.mem_cache t.mem_slot else -1 in
    if known >= 0 then known - 1
    else begin
      let slot = Mime_cache.slot_of_path t.mime t.path n in
      if t.mem_slot >= 0 && Mime_cache.stable_slot slot then File_cache.set_note t.mem_cache t.mem_slot (slot + 1);
      slot
    end
  in
  let ctype = Mime_cache.type_of t.mime slot in
  let vary = (t.cfg.gzip_static || t.rule.compress) && Mime_cache.compressible t.mime slot in
  let present = Preconditions.fields req in
  let wants_range = is_get && present land Preconditions.has_range <> 0 in
  let gzip_ok =
    vary && present land Preconditions.has_accept_encoding <> 0 && Accept_encoding.accepts_gzip buf req
  in
  let side = if gzip_ok && t.cfg.gzip_static then find_sidecar t n ~orig_mtime:mtime_s else No_sidecar in
  (* Matches, not [=]: on this type [=] is a call to compare. *)
  let side =
    match side with
    | No_sidecar when gzip_ok && t.rule.compress && fd < 0 && t.mem_slot >= 0
                      && not wants_range -> zipped_form t
    | side -> side
  in
  let file_size = size in
  let gz, fd, size, e_mtime, e_ns =
    match side with
    | No_sidecar -> false, fd, size, mtime_s, mtime_ns
    | Sidecar_fd gzfd ->
      release fd;
      true, gzfd, Syscall.stat_size t.st2, Syscall.stat_mtime_s t.st2, Syscall.stat_mtime_ns t.st2
    | Sidecar_mem ->
      release fd;
      let s = t.gz_slot in
      true, -1, File_cache.size t.cache s, File_cache.mtime_s t.cache s, File_cache.mtime_ns t.cache s
    | Zipped -> true, -1, B.length t.mem, mtime_s, mtime_ns
  in

  (* RFC 9110 §8.8.2.1: a modification time in the future (clock skew,
     touch -d) is replaced by the time of the answer, in Last-Modified and
     in every comparison made against it. The ETag keeps the real mtime. *)
  let mtime = let now = Ctx.now c in if e_mtime > now then now else e_mtime in
  match
    let etag = make_etag t side ~mtime_s:e_mtime ~mtime_ns:e_ns ~size ~file_size in
    match
      if present land Preconditions.has_conditional = 0 then Proceed
      else preconditions c req buf etag mtime
    with
    | Send_412 ->
      release fd;
      error_page t c Precondition_failed
    | Send_304 ->
      release fd;
      Ctx.start c Not_modified;
      if not (prepared_fields t c ~status:304 ~ctype ~etag ~mtime ~vary ~gz) then begin
        Ctx.header c Etag etag;
        last_modified t c mtime;
        cache_headers t c;
        if vary then Ctx.header c Vary "Accept-Encoding"
      end;
      Ctx.no_body c ~content_length:(-1)
    | Proceed ->
      if wants_range && if_range_holds c req buf etag mtime then
        range_answer t c req buf fd ~ctype ~etag ~mtime ~vary ~gz ~size
      else send_full t c fd ~is_get ~ctype ~etag ~mtime ~vary ~gz ~size
  with
  | () -> ()
  | exception e ->
    (* Only header writers can raise here, before the fd is handed over;
       closing twice is harmless ([-ebadf]) but would be a bug if the
       number were reused, so this path is only for writer errors. *)
    release fd;
    raise e

(* [fd] is open on a regular file whose stat is in [t.st], at
   [t.path.{0 .. n-1}]: serve it, through the cache when it is small. *)
(* A file over the main cache's limit that this request would get
   compressed: a compressible type, gzip accepted, not a range, within
   [compress_max_file]. *)
let large_wanted t req buf n ~is_get ~size =
  File_cache.enabled t.large && size <= File_cache.max_file t.large
  && Mime_cache.compressible t.mime (Mime_cache.slot_of_path t.mime t.path n)
  && Accept_encoding.accepts_gzip buf req
  && not (is_get && Request.find req Range >= 0)

let serve_opened t c req buf fd n ~is_get =
  let st = t.st in
  let size = Syscall.stat_size st in
  let cache = t.cache in
  let cached =
    if File_cache.enabled cache && size <= File_cache.max_file cache then begin
      let slot = File_cache.find cache t.path ~len:n in
      if slot >= 0 && File_cache.revalidate cache slot st ~now_ms:t.now_ms then slot
      else File_cache.insert cache t.path ~len:n ~fd st ~now_ms:t.now_ms
    end
    else -1
  in
  (* Too large for the cache: kept in the large-file one only when this
     answer would be compressed. *)
  t.mem_cache <- cache;
  let cached =
    if cached >= 0 || not (large_wanted t req buf n ~is_get ~size) then cached
    else begin
      let large = t.large in
      let slot = File_cache.find large t.path ~len:n in
      let slot =
        if slot >= 0 && File_cache.revalidate large slot st ~now_ms:t.now_ms then slot
        else File_cache.insert large t.path ~len:n ~fd st ~now_ms:t.now_ms
      in
      if slot >= 0 then t.mem_cache <- large;
      slot
    end
  in
  if cached >= 0 then begin
    let cache = t.mem_cache in
    release fd;
    t.mem <- File_cache.content cache cached;
    t.mem_slot <- cached;
    t.mem_cache <- cache;
    serve_file t c req buf (-1) n ~is_get ~size:(File_cache.size cache cached)
      ~mtime_s:(File_cache.mtime_s cache cached) ~mtime_ns:(File_cache.mtime_ns cache cached)
  end
  else
    serve_file t c req buf fd n ~is_get ~size ~mtime_s:(Syscall.stat_mtime_s st)
      ~mtime_ns:(Syscall.stat_mtime_ns st)

(* {1 Directories} *)

(* The mount point without its trailing '/' into [s] at 0: its length. *)
let write_mount_point t s =
  if t.route_prefix_len >= 0 then begin
    B.blit ~src:t.route_prefix ~src_off:0 ~dst:s ~dst_off:0 ~len:t.route_prefix_len;
    t.route_prefix_len
  end
  else begin
    let m = String.length t.cfg.mount - 1 in
    B.blit_from_string t.cfg.mount ~src_off:0 s ~dst_off:0 ~len:m;
    m
  end

let redirect_to_slash t c n =
  let s = t.scratch in
  (* The path is relative to the mount point: the client's has it first. *)
  let m = write_mount_point t s in
  let o = Escape.encode_into t.path ~off:0 ~len:n s m in
  B.unsafe_set s o '/';
  let o = o + 1 in
  let q = Target.query t.target in
  let o =
    if Target.has_query t.target && o + 1 + Span.len q <= B.length s then begin
      B.unsafe_set s o '?';
      B.blit ~src:(Ctx.buffer c) ~src_off:(Span.off q) ~dst:s ~dst_off:(o + 1) ~len:(Span.len q);
      o + 1 + Span.len q
    end
    else o
  in
  Ctx.start c Moved_permanently;
  Ctx.header_bytes c Location s ~off:0 ~len:o;
  (* A redirect is an answer like the file's: without Cache-Control a
     cache would guess its freshness (RFC 9111 §4.2.2). *)
  cache_headers t c;
  Ctx.header c Content_type html_type;
  Ctx.body_string c p301

let serve_directory t c req buf dfd n ~is_get =
  if not (Target.ends_in_slash t.path n) then begin
    ignore (Syscall.close dfd);
    redirect_to_slash t c n
  end
  else begin
    let m = append_string t.path n t.cfg.index in
    let fd = Beneath.openat t.beneath t.path 1 (m - 1) in
    if fd >= 0 && Syscall.fstat fd t.st = 0 && Syscall.stat_is_regular t.st then begin
      ignore (Syscall.close dfd);
      if t.relocate m then serve_opened t c req buf fd m ~is_get
      else begin
        ignore (Syscall.close fd);
        t.moved <- m
      end
    end
    else begin
      if fd >= 0 then ignore (Syscall.close fd);
      if t.rule.listing then begin
        match
          Listing.answer c ~dfd ~dir_path:(B.sub_string t.path ~off:0 ~len:n)
            ~dotfiles:t.cfg.dotfiles ~max_entries:t.cfg.list_max
            ~open_entry:(fun rel -> Beneath.openat t.beneath (B.of_string rel) 0 (String.length rel))
        with
        | () -> ignore (Syscall.close dfd)
        | exception e -> ignore (Syscall.close dfd); raise e
      end
      else begin
        ignore (Syscall.close dfd);
        error_page t c Forbidden
      end
    end
  end

(* {1 Entry point} *)

(* The request's decoded, normalised path [t.path.{0 .. n-1}] seen from
   the mount point: the mount prefix is removed (the rest keeps its
   leading '/'), so everything after it resolves beneath the root as for a
   handler mounted at "/". Decoding and normalising come first, so an
   encoded "../" can never step out of the prefix. [mount_point]: the path
   is the mount point without its slash (redirect); [outside_mount]: it
   does not start with the prefix. (Both differ from every decoding error,
   which are small negative numbers.) *)
let mount_point = min_int
let outside_mount = min_int + 1

let unmount t n =
  let mount = t.cfg.mount in
  let m = String.length mount in
  if m = 1 then n
  else if n = m - 1 && B.equal_string t.path ~off:0 ~len:n (String.sub mount 0 (m - 1)) then mount_point
  else if n >= m && B.equal_string t.path ~off:0 ~len:m mount then begin
    B.blit ~src:t.path ~src_off:(m - 1) ~dst:t.path ~dst_off:0 ~len:(n - m + 1);
    n - m + 1
  end
  else outside_mount

let mount_redirect t c =
  Ctx.start c Moved_permanently;
  if t.route_prefix_len < 0 then Ctx.header c Location t.cfg.mount
  else begin
    let m = write_mount_point t t.scratch in
    B.unsafe_set t.scratch m '/';
    Ctx.header_bytes c Location t.scratch ~off:0 ~len:(m + 1)
  end;
  cache_headers t c;
  Ctx.header c Content_type html_type;
  Ctx.body_string c p301

(* The request's path, decoded and normalised into [t.path], seen from
   the mount point: its length, or [bad_target], [mount_point],
   [outside_mount] or a decoding error (negative). *)
let bad_target = min_int + 2

(* Under a {!Route} mount (or sub-router) and with the default
   [cfg.mount] of "/", the path served is the route's remainder: the
   router matched the prefix, so it is given once. The remainder is
   decoded and normalised on its own, as a whole path would be, so a ".."
   in it can only climb to the mount point, and is refused there
   (Above_root), never into the prefix's siblings. *)
let decode_below_route t buf p =
  let path = Target.path t.target in
  let pn = Target.decode_path buf (Span.make ~off:(Span.off path) ~len:p) ~dst:t.path in
  if pn < 0 || pn > path_capacity then pn
  else begin
    t.route_prefix_len <- Escape.encode_into t.path ~off:0 ~len:pn t.route_prefix 0;
    let rest = Span.make ~off:(Span.off path + p) ~len:(Span.len path - p) in
    if Span.len rest = 0 then mount_point else Target.decode_path buf rest ~dst:t.path
  end

let decode t c =
  let buf = Ctx.buffer c in
  t.route_prefix_len <- -1;
  match Target.split t.target buf (Request.target (Ctx.request c)) with
  | Error | Asterisk -> bad_target
  | Origin | Absolute ->
    let p = if String.length t.cfg.mount = 1 then Route.prefix_length c else 0 in
    if p > 0 then decode_below_route t buf p
    else
    let n = Target.decode_path buf (Target.path t.target) ~dst:t.path in
    if n < 0 || n > path_capacity then n else unmount t n

let path t = t.path

let rewrite t n ~prefix replacement =
  let r = String.length replacement in
  if n < 0 || prefix > n || r + (n - prefix) > path_capacity then n
  else begin
    B.blit ~src:t.path ~src_off:prefix ~dst:t.path ~dst_off:r ~len:(n - prefix);
    B.blit_from_string replacement ~src_off:0 t.path ~dst_off:0 ~len:r;
    r + (n - prefix)
  end

(* Answers with the decoded path [t.path.{0 .. n-1}] (or the code from
   {!decode}). *)
let rec serve t c req n ~is_get =
  let buf = Ctx.buffer c in
    if n = bad_target then error_page t c Bad_request
    else if n = mount_point then mount_redirect t c
    else if n = outside_mount then error_page t c Not_found
    else if n > path_capacity || (n < 0 && Target.decode_error n = Target.Too_long) then
      error_page t c Uri_too_long
    else if n < 0 then error_page t c Bad_request
    else if Beneath.hides t.beneath t.path n then error_page t c Not_found
    else begin
      t.now_ms <- Ctx.now_ms c;
      t.mem_slot <- -1;
      (* Pointer fields are written only when they change: a write is a
         call into the GC (caml_modify) even when it stores the same value. *)
      if t.mem_cache != t.cache then t.mem_cache <- t.cache;
      (* The cache is keyed by file path; a path ending in '/' names its
         index file. A fresh entry answers without a single syscall. *)
      let key = if Target.ends_in_slash t.path n then append_string t.path n t.cfg.index else n in
      let slot = File_cache.find t.cache t.path ~len:key in
      if slot >= 0 && (not (File_cache.is_absent t.cache slot))
         && File_cache.fresh t.cache slot ~now_ms:t.now_ms
      then begin
        if key <> n && not (t.relocate key) then t.moved <- key
        else
        let content = File_cache.content t.cache slot in
        if t.mem != content then t.mem <- content;
        t.mem_slot <- slot;
        serve_file t c req buf (-1) key ~is_get ~size:(File_cache.size t.cache slot)
          ~mtime_s:(File_cache.mtime_s t.cache slot) ~mtime_ns:(File_cache.mtime_ns t.cache slot)
      end
      else
      let fd = open_path t n in
      if fd < 0 && slot >= 0 && (not (File_cache.is_absent t.cache slot))
         && (fd = - Syscall.emfile || fd = - Syscall.enfile)
      then begin
        (* Out of descriptors, the re-check cannot open the file: the copy
           we hold is better than a 503; it is checked again next time. *)
        if key <> n && not (t.relocate key) then t.moved <- key
        else begin
        t.mem <- File_cache.content t.cache slot;
        t.mem_slot <- slot;
        serve_file t c req buf (-1) key ~is_get ~size:(File_cache.size t.cache slot)
          ~mtime_s:(File_cache.mtime_s t.cache slot) ~mtime_ns:(File_cache.mtime_ns t.cache slot)
        end
      end
      else if fd < 0 && t.rule.fallback <> "" && not t.fell_back
              && (fd = - Syscall.enoent || fd = - Syscall.enotdir) then begin
        (* try_files: the rule's fallback answers a path that is not there. *)
        t.fell_back <- true;
        let f = t.rule.fallback in
        let m = String.length f in
        B.blit_from_string f ~src_off:0 t.path ~dst_off:0 ~len:m;
        if t.relocate m then serve t c req m ~is_get else t.moved <- m
      end
      else if fd < 0 then begin
        let status = status_of_errno fd in
        log_open_failure t n fd status;
        error_page t c status
      end
      else
        let r = Syscall.fstat fd t.st in
        if r <> 0 then begin
          ignore (Syscall.close fd);
          log_open_failure t n r Internal_server_error;
          error_page t c Internal_server_error
        end
        else
        match Syscall.stat_kind t.st with
        | Regular -> serve_opened t c req buf fd n ~is_get
        | Directory -> serve_directory t c req buf fd n ~is_get
        | Fifo | Socket | Char_device | Block_device | Symlink | Other ->
          ignore (Syscall.close fd);
          error_page t c Forbidden
    end

let answer t rule c n =
  if t.rule != rule then t.rule <- rule;
  t.fell_back <- false;
  t.moved <- -1;
  let req = Ctx.request c in
  (match Request.meth req with
   | Get -> serve t c req n ~is_get:true
   | Head -> serve t c req n ~is_get:false
   | Options ->
     Ctx.start c No_content;
     Ctx.header c Allow allow;
     Ctx.no_body c ~content_length:(-1)
   | Post | Put | Delete | Connect | Trace | Patch | Other -> error_page t c Method_not_allowed);
  t.moved

let set_relocate t f = t.relocate <- f

let error t c status = t.rule <- t.plain_rule; error_page t c status

let error_with t c status name value =
  t.rule <- t.plain_rule;
  let i = Error_pages.find t.errors status in
  if i < 0 then Pages.error_page_extra c status (Some (name, value))
  else
    Error_pages.answer ~extra:(name, value) t.errors c status i ~cache:t.cache ~mime:t.mime ~content_range:t.scratch
      ~range_len:0

let has_page t status = Error_pages.find t.errors status >= 0
let plain_rule t = t.plain_rule

let handler t c =
  let req = Ctx.request c in
  match Request.meth req with
  | (Get | Head) as m ->
    (* [answer] for the configuration's own rule, where nothing relocates
       a path (no per-path rules): straight to [serve]. *)
    if t.rule != t.plain_rule then t.rule <- t.plain_rule;
    t.fell_back <- false;
    serve t c req (decode t c) ~is_get:(match m with Get -> true | _ -> false)
  | Options ->
    Ctx.start c No_content;
    Ctx.header c Allow allow;
    Ctx.no_body c ~content_length:(-1)
  | Post | Put | Delete | Connect | Trace | Patch | Other -> error_page t c Method_not_allowed
