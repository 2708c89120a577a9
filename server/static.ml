open Httpz
module B = Bigstring

type config = {
  root : string;
  index : string;
  list_directories : bool;
  max_age : int;
  dotfiles : bool;
  mount : string;
  follow_symlinks : bool;
  gzip_static : bool;
  multipart_max : int;
  cache_max_file : int;
  cache_bytes : int;
  cache_ttl_ms : int;
}

let default_config = {
  root = ".";
  index = "index.html";
  list_directories = false;
  max_age = -1;
  dotfiles = false;
  mount = "/";
  follow_symlinks = true;
  gzip_static = true;
  multipart_max = 256 * 1024;
  cache_max_file = 64 * 1024;
  cache_bytes = 64 * 1024 * 1024;
  cache_ttl_ms = 1000;
}

let[@inline] lower c = if c >= 'A' && c <= 'Z' then Char.unsafe_chr (Char.code c + 32) else c

(* {1 MIME types} *)

let default_type = "application/octet-stream"

(* magic-mime's table predates these registrations; browsers insist on
   [application/wasm] for streaming compilation. *)
let override = function
  | "wasm" -> Some "application/wasm"
  | "avif" -> Some "image/avif"
  | "gz" -> Some "application/gzip"
  | "map" -> Some "application/json"
  | "webmanifest" -> Some "application/manifest+json"
  | "mjs" -> Some "application/javascript"
  | _ -> None

let needs_charset ty =
  (String.length ty > 5 && String.sub ty 0 5 = "text/")
  || ty = "application/javascript" || ty = "application/json"
  || ty = "application/xml" || ty = "image/svg+xml"

let ends_with ~suffix s =
  let n = String.length s and k = String.length suffix in
  n >= k && String.sub s (n - k) k = suffix

let is_compressible ty =
  let ty = match String.index_opt ty ';' with Some i -> String.sub ty 0 i | None -> ty in
  (String.length ty > 5 && String.sub ty 0 5 = "text/")
  || List.mem ty
       [ "application/javascript"; "application/json"; "application/xml";
         "image/svg+xml"; "application/wasm"; "image/x-icon" ]
  || ends_with ~suffix:"+xml" ty || ends_with ~suffix:"+json" ty

let content_type_of_ext ext =
  let ty =
    match override ext with
    | Some t -> t
    | None -> Magic_mime.lookup ~default:default_type ("x." ^ ext)
  in
  if needs_charset ty then ty ^ "; charset=utf-8" else ty

(* An open-addressing table from lower-cased extension to content type.
   A hit compares bytes of the request path with a stored key and returns
   a slot number, so serving a known extension allocates nothing. Misses
   fill the table (each new extension allocates once); extensions come
   from files that exist under the root, so the set is bounded, and past
   [max_entries] a miss is answered from the overflow slot [cap] without
   being cached, so a docroot with thousands of odd extensions costs
   allocation, never memory. *)
module Mime_cache = struct
  let cap = 256
  let max_entries = 192
  let max_ext = 16

  type t = {
    keys : string array;  (** [""] marks an empty slot; [cap] is the overflow slot *)
    types : string array;
    comp : bool array;
    mutable count : int;
  }

  let hash (buf : B.t) off len =
    let h = ref 5381 in
    for i = off to off + len - 1 do
      h := (!h * 33) lxor Char.code (lower (B.unsafe_get buf i))
    done;
    !h land (cap - 1)

  let key_equal key (buf : B.t) off len =
    String.length key = len
    && begin
      let i = ref 0 in
      while !i < len && String.unsafe_get key !i = lower (B.unsafe_get buf (off + !i)) do incr i done;
      !i = len
    end

  (* Slot of the extension [buf.{off .. off+len-1}], [1 <= len <= max_ext]. *)
  let lookup t (buf : B.t) off len =
    let s = ref (hash buf off len) and found = ref (-1) in
    while !found < 0 do
      let k = Array.unsafe_get t.keys !s in
      if String.length k = 0 then found := cap + 1 + !s (* empty: miss *)
      else if key_equal k buf off len then found := !s
      else s := (!s + 1) land (cap - 1)
    done;
    if !found <= cap then !found
    else begin
      let empty = !found - cap - 1 in
      let ext = String.init len (fun i -> lower (B.unsafe_get buf (off + i))) in
      let ty = content_type_of_ext ext in
      let slot = if t.count < max_entries then (t.count <- t.count + 1; empty) else cap in
      t.keys.(slot) <- (if slot = cap then "" else ext);
      t.types.(slot) <- ty;
      t.comp.(slot) <- is_compressible ty;
      slot
    end

  let create () =
    let t = {
      keys = Array.make (cap + 1) "";
      types = Array.make (cap + 1) default_type;
      comp = Array.make (cap + 1) false;
      count = 0;
    } in
    List.iter
      (fun e -> ignore (lookup t (B.of_string e) 0 (String.length e)))
      [ "html"; "htm"; "css"; "js"; "mjs"; "json"; "map"; "svg"; "png"; "jpg"; "jpeg";
        "gif"; "webp"; "avif"; "ico"; "txt"; "xml"; "pdf"; "wasm"; "woff"; "woff2";
        "ttf"; "otf"; "mp4"; "webm"; "mp3"; "ogg"; "wav"; "zip"; "gz"; "tar"; "md";
        "csv"; "webmanifest"; "xhtml" ];
    t

  (* Slot for the file name ending the path [buf.{0 .. n-1}], or [-1] for
     the default type (no extension, a dotfile's leading dot, an
     extension longer than [max_ext]). *)
  let slot_of_path t (buf : B.t) n =
    let i = ref (n - 1) and dot = ref (-1) in
    while !i >= 0 && B.unsafe_get buf !i <> '/' do
      if !dot < 0 && B.unsafe_get buf !i = '.' then dot := !i;
      decr i
    done;
    let seg = !i + 1 in
    if !dot <= seg then -1
    else begin
      let len = n - !dot - 1 in
      if len = 0 || len > max_ext then -1 else lookup t buf (!dot + 1) len
    end

  let[@inline] type_of t slot = if slot < 0 then default_type else Array.unsafe_get t.types slot
  let[@inline] compressible t slot = slot >= 0 && Array.unsafe_get t.comp slot
end

(* {1 Accept-Encoding (RFC 9110 §12.5.3)}

     Accept-Encoding  = #( codings [ weight ] )
     codings          = content-coding / "identity" / "*"
     weight           = OWS ";" OWS "q=" qvalue
     qvalue           = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] )

   Weights are kept in thousandths. The scanner writes the highest weight
   seen for gzip (x-gzip is the same coding, §8.4.1.3) and for "*" into
   [w], [-1] when not listed; an element that does not parse is skipped
   whole (no guess at what the client meant). *)

type weights = { mutable gzip : int; mutable star : int }

let[@inline] is_ows c = c = ' ' || c = '\t'

let scan_accept_encoding w (buf : B.t) ~off ~len =
  let stop = off + len in
  let i = ref off in
  while !i < stop do
    while !i < stop && (let c = B.unsafe_get buf !i in is_ows c || c = ',') do incr i done;
    if !i < stop then begin
      let s = !i in
      while !i < stop && Charset.is_tchar (B.unsafe_get buf !i) do incr i done;
      let tlen = !i - s in
      let q = ref (if tlen = 0 then -1 else 1000) in
      while !i < stop && is_ows (B.unsafe_get buf !i) do incr i done;
      while !q >= 0 && !i < stop && B.unsafe_get buf !i = ';' do
        incr i;
        while !i < stop && is_ows (B.unsafe_get buf !i) do incr i done;
        let ps = !i in
        while !i < stop && Charset.is_tchar (B.unsafe_get buf !i) do incr i done;
        let plen = !i - ps in
        if plen = 1 && lower (B.unsafe_get buf ps) = 'q'
           && !i < stop && B.unsafe_get buf !i = '=' then begin
          incr i;
          if !i < stop && (B.unsafe_get buf !i = '0' || B.unsafe_get buf !i = '1') then begin
            let one = B.unsafe_get buf !i = '1' in
            incr i;
            let v = ref (if one then 1000 else 0) in
            if !i < stop && B.unsafe_get buf !i = '.' then begin
              incr i;
              let digits = ref 0 and scale = ref 100 in
              while !i < stop && !digits <= 3
                    && (let c = B.unsafe_get buf !i in c >= '0' && c <= '9') do
                v := !v + (Char.code (B.unsafe_get buf !i) - 48) * !scale;
                scale := !scale / 10; incr digits; incr i
              done;
              if !digits > 3 then v := -1
            end;
            q := if !v > 1000 then -1 else !v
          end
          else q := -1
        end
        else if plen > 0 then
          (* A parameter the grammar does not have: tolerated, skipped. *)
          while !i < stop && (let c = B.unsafe_get buf !i in c <> ';' && c <> ',') do incr i done
        else q := -1;
        while !i < stop && is_ows (B.unsafe_get buf !i) do incr i done
      done;
      if !i < stop && B.unsafe_get buf !i <> ',' then begin
        q := -1;
        while !i < stop && B.unsafe_get buf !i <> ',' do incr i done
      end;
      if !q >= 0 then begin
        if (tlen = 4 && B.equal_caseless buf ~off:s ~len:4 "gzip")
           || (tlen = 6 && B.equal_caseless buf ~off:s ~len:6 "x-gzip")
        then (if !q > w.gzip then w.gzip <- !q)
        else if tlen = 1 && B.unsafe_get buf s = '*' then (if !q > w.star then w.star <- !q)
      end
    end
  done

let[@inline] weights_accept_gzip w = w.gzip > 0 || (w.gzip < 0 && w.star > 0)

let accepts_gzip_w w (buf : B.t) req =
  w.gzip <- -1;
  w.star <- -1;
  let i = ref (Request.find req Accept_encoding) in
  while !i >= 0 do
    let v = Request.header_value req !i in
    scan_accept_encoding w buf ~off:(Span.off v) ~len:(Span.len v);
    i := Request.find_next req Accept_encoding ~after:!i
  done;
  weights_accept_gzip w

(* Module-level scratch: the event loop is single-threaded (OCaml 4.13,
   one loop per process), so one record serves every caller. *)
let global_weights = { gzip = -1; star = -1 }
let accepts_gzip buf req = accepts_gzip_w global_weights buf req

let accepts_gzip_value v =
  let w = { gzip = -1; star = -1 } in
  scan_accept_encoding w (B.of_string v) ~off:0 ~len:(String.length v);
  weights_accept_gzip w

(* {1 Encoding helpers} *)

let hex_upper = "0123456789ABCDEF"

let[@inline] is_unreserved_or_slash c =
  (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
  || c = '-' || c = '.' || c = '_' || c = '~' || c = '/'

(* Percent-encodes [src.{off .. off+len-1}] into [dst] at [pos]; the
   caller guarantees room for [3 * len] bytes. *)
let encode_into (src : B.t) ~off ~len (dst : B.t) pos =
  let p = ref pos in
  for i = off to off + len - 1 do
    let c = B.unsafe_get src i in
    if is_unreserved_or_slash c then (B.unsafe_set dst !p c; incr p)
    else begin
      let k = Char.code c in
      B.unsafe_set dst !p '%';
      B.unsafe_set dst (!p + 1) hex_upper.[k lsr 4];
      B.unsafe_set dst (!p + 2) hex_upper.[k land 15];
      p := !p + 3
    end
  done;
  !p

let encode_path s =
  let src = B.of_string s in
  let dst = B.create (3 * String.length s + 1) in
  let n = encode_into src ~off:0 ~len:(String.length s) dst 0 in
  B.sub_string dst ~off:0 ~len:n

let html_escape s =
  let b = Buffer.create (String.length s + 16) in
  String.iter
    (function
      | '&' -> Buffer.add_string b "&amp;"
      | '<' -> Buffer.add_string b "&lt;"
      | '>' -> Buffer.add_string b "&gt;"
      | '"' -> Buffer.add_string b "&quot;"
      | '\'' -> Buffer.add_string b "&#39;"
      | c -> Buffer.add_char b c)
    s;
  Buffer.contents b

(* {1 Handler state} *)

let path_capacity = 4096
(* Room after the decoded path for "/" ^ index or ".gz". *)
let suffix_room = 256

type t = {
  cfg : config;
  root_fd : int;
  cache_control : string;
  multipart_type : string;
  boundary : string;
  target : Target.t;
  path : B.t;  (** decoded path, then [index] or [.gz] appended *)
  dot : B.t;  (** ["."], the root directory as a relative path *)
  st : Syscall.stat;
  st2 : Syscall.stat;
  range : Range.t;
  weights : weights;
  mime : Mime_cache.t;
  etag_buf : B.t;
  etag_pool : Bytes.t array;  (** [etag_pool.(n)] has length [n] *)
  scratch : B.t;  (** Location, Content-Range *)
  mutable multipart : B.t;  (** allocated on the first multipart answer *)
  cache : File_cache.t;
  mutable mem : B.t;
      (** The bytes being answered when the answer functions get [fd = -1]:
          a {!File_cache} entry's contents. *)
  mutable now_ms : int;  (** monotonic ms of this request *)
  mutable gz_slot : int;  (** cache slot of the sidecar being answered *)
}

let root_fd t = t.root_fd
let close t = ignore (Syscall.close t.root_fd)
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
  else
    match Sys.is_directory cfg.root with
    | exception Sys_error _ -> Error (Printf.sprintf "%s: no such directory" cfg.root)
    | false -> Error (Printf.sprintf "%s: not a directory" cfg.root)
    | true ->
      let fd = Syscall.open_dir cfg.root in
      if fd < 0 then Error (Printf.sprintf "%s: %s" cfg.root (Syscall.error_message fd))
      else begin
        let boundary = random_boundary () in
        Ok {
          cfg; root_fd = fd;
          cache_control = (if cfg.max_age >= 0 then Printf.sprintf "max-age=%d" cfg.max_age else "");
          multipart_type = "multipart/byteranges; boundary=" ^ boundary;
          boundary;
          target = Target.create ();
          path = B.create (path_capacity + suffix_room);
          dot = B.of_string ".";
          st = Syscall.stat_create ();
          st2 = Syscall.stat_create ();
          range = Range.create ();
          weights = { gzip = -1; star = -1 };
          mime = Mime_cache.create ();
          etag_buf = B.create 64;
          etag_pool = Array.init 64 Bytes.create;
          scratch = B.create (3 * path_capacity + 16 + 32 * 1024);
          multipart = B.create 0;
          cache =
            File_cache.create ~max_file:cfg.cache_max_file ~max_bytes:cfg.cache_bytes
              ~ttl_ms:cfg.cache_ttl_ms ();
          mem = B.create 0;
          now_ms = 0;
          gz_slot = -1;
        }
      end

(* {1 Fixed answers} *)

let page code reason =
  Printf.sprintf
    "<!DOCTYPE html>\n<html><head><title>%d %s</title></head>\
     <body><h1>%d %s</h1></body></html>\n" code reason code reason

let page_of (s : Status.t) = page (Status.code s) (Status.reason s)
let p301 = page_of Moved_permanently
let p400 = page_of Bad_request
let p403 = page_of Forbidden
let p404 = page_of Not_found
let p405 = page_of Method_not_allowed
let p412 = page_of Precondition_failed
let p416 = page_of Range_not_satisfiable
let p500 = page_of Internal_server_error
let p503 = page_of Service_unavailable

let html_type = "text/html; charset=utf-8"
let allow = "GET, HEAD, OPTIONS"

let error_page c (status : Status.t) =
  let body =
    match status with
    | Bad_request -> p400 | Forbidden -> p403 | Not_found -> p404
    | Method_not_allowed -> p405 | Precondition_failed -> p412
    | Range_not_satisfiable -> p416 | Service_unavailable -> p503
    | _ -> p500
  in
  Ctx.start c status;
  (match status with Method_not_allowed -> Ctx.header c Allow allow | _ -> ());
  Ctx.header c Content_type html_type;
  Ctx.body_string c body

let status_of_errno e =
  let e = -e in
  if e = Syscall.enoent || e = Syscall.enotdir || e = Syscall.exdev || e = Syscall.eloop
     || e = Syscall.enametoolong || e = Syscall.einval
  then Status.Not_found
  else if e = Syscall.eacces || e = Syscall.eperm || e = Syscall.enxio then Status.Forbidden
  else if e = Syscall.emfile || e = Syscall.enfile || e = Syscall.enomem then Status.Service_unavailable
  else Status.Internal_server_error

(* {1 Paths} *)

(* A segment starting with '.' ([/.git], [/a/.env]); normalisation has
   already removed "." and ".." segments, so this is exactly the dotfiles.
   [.well-known] (RFC 8615) is public by definition. *)
let has_hidden_segment (p : B.t) n =
  let hidden = ref false and i = ref 0 in
  while not !hidden && !i < n - 1 do
    if B.unsafe_get p !i = '/' && B.unsafe_get p (!i + 1) = '.' then begin
      let s = !i + 1 in
      let e = ref s in
      while !e < n && B.unsafe_get p !e <> '/' do incr e done;
      if not (!e - s = 11 && B.equal_string p ~off:s ~len:11 ".well-known") then hidden := true;
      i := !e
    end
    else incr i
  done;
  !hidden

(* Opens the decoded path [t.path.{0 .. n-1}] beneath the root. *)
let open_path t n =
  if n <= 1 then Syscall.openat2_beneath t.root_fd t.dot 0 1 ~no_symlinks:(not t.cfg.follow_symlinks)
  else Syscall.openat2_beneath t.root_fd t.path 1 (n - 1) ~no_symlinks:(not t.cfg.follow_symlinks)

let append_string (b : B.t) n s =
  B.blit_from_string s ~src_off:0 b ~dst_off:n ~len:(String.length s);
  n + String.length s

(* {1 Entity-tags} *)

(* Writes the tag of [st] (with "-gz" inside the quotes for a sidecar)
   into [etag_buf] and copies it into the pooled bytes of exactly its
   length, so it can be handed to [Etag] and [Ctx.header] as a string
   without allocating. The string is valid until the next request. *)
let make_etag t ~mtime_s ~mtime_ns ~size ~gz =
  let n = Etag.write t.etag_buf ~off:0 ~mtime:mtime_s ~nsec:mtime_ns ~size in
  let n =
    if gz then begin
      (* replace the closing quote *)
      let o = n - 1 in
      B.unsafe_set t.etag_buf o '-';
      B.unsafe_set t.etag_buf (o + 1) 'g';
      B.unsafe_set t.etag_buf (o + 2) 'z';
      B.unsafe_set t.etag_buf (o + 3) '"';
      n + 3
    end
    else n
  in
  let b = Array.unsafe_get t.etag_pool n in
  for i = 0 to n - 1 do Bytes.unsafe_set b i (B.unsafe_get t.etag_buf i) done;
  Bytes.unsafe_to_string b

(* The answer functions below take [fd]: an open file to send with
   sendfile, or [-1] when the bytes are [t.mem] (from the file cache). *)
let release fd = if fd >= 0 then ignore (Syscall.close fd)

(* {1 Preconditions (RFC 9110 §13.2.2)} *)

type decision = Proceed | Send_304 | Send_412

let any_match req (buf : B.t) (name : Header_name.t) etag ~strong =
  let i = ref (Request.find req name) and matched = ref false in
  while !i >= 0 && not !matched do
    let v = Request.header_value req !i in
    let r =
      if strong then Etag.if_match buf ~off:(Span.off v) ~len:(Span.len v) ~etag
      else Etag.if_none_match buf ~off:(Span.off v) ~len:(Span.len v) ~etag
    in
    (match r with Etag.Match -> matched := true | No_match | Invalid -> ());
    i := Request.find_next req name ~after:!i
  done;
  !matched

let date_field c req (buf : B.t) (name : Header_name.t) =
  let i = Request.find req name in
  if i < 0 then -1
  else
    (* A second line makes the value a list, which is no HTTP-date. *)
    if Request.find_next req name ~after:i >= 0 then -1
    else Date.parse_span buf (Request.header_value req i) ~now:(Ctx.now c)

let preconditions c req buf etag mtime =
  let failed =
    if Request.find req If_match >= 0 then not (any_match req buf If_match etag ~strong:true)
    else begin
      let d = date_field c req buf If_unmodified_since in
      d >= 0 && mtime > d
    end
  in
  if failed then Send_412
  else if Request.find req If_none_match >= 0 then
    (if any_match req buf If_none_match etag ~strong:false then Send_304 else Proceed)
  else begin
    let d = date_field c req buf If_modified_since in
    if d >= 0 && mtime <= d then Send_304 else Proceed
  end

(* If-Range (§13.1.5): honour Range only when the validator still holds. *)
let if_range_holds c req (buf : B.t) etag mtime =
  let i = Request.find req If_range in
  if i < 0 then true
  else begin
    let v = Request.header_value req i in
    match Etag.if_range buf ~off:(Span.off v) ~len:(Span.len v) ~etag with
    | Match -> true
    | No_match -> false
    | Invalid ->
      let d = Date.parse_span buf v ~now:(Ctx.now c) in
      d >= 0 && d = mtime
  end

(* {1 Answers for a regular file} *)

(* A file dated beyond year 9999 (or before year 0) has no IMF-fixdate:
   leave the field out rather than fail the answer. *)
let last_modified c mtime =
  if mtime >= Date.min_time && mtime <= Date.max_time then Ctx.header_date c Last_modified mtime

let common_headers t c ~ctype ~etag ~mtime ~vary ~gz =
  Ctx.header c Content_type ctype;
  Ctx.header c Etag etag;
  last_modified c mtime;
  if t.cfg.max_age >= 0 then Ctx.header c Cache_control t.cache_control;
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
  if not !ok then error_page c Internal_server_error
  else begin
    o := append_string b !o "\r\n--";
    o := append_string b !o t.boundary;
    o := append_string b !o "--\r\n";
    Ctx.start c Partial_content;
    Ctx.header c Content_type t.multipart_type;
    Ctx.header c Etag etag;
    last_modified c mtime;
    if t.cfg.max_age >= 0 then Ctx.header c Cache_control t.cache_control;
    if vary then Ctx.header c Vary "Accept-Encoding";
    if gz then Ctx.header c Content_encoding "gzip";
    Ctx.header c Accept_ranges "bytes";
    Ctx.body_bigstring c b ~off:0 ~len:!o
  end

let send_full t c fd ~is_get ~ctype ~etag ~mtime ~vary ~gz ~size =
  Ctx.start c Ok;
  common_headers t c ~ctype ~etag ~mtime ~vary ~gz;
  Ctx.header c Accept_ranges "bytes";
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
      Ctx.start c Range_not_satisfiable;
      Ctx.header_bytes c Content_range t.scratch ~off:0 ~len:o;
      Ctx.header c Content_type html_type;
      Ctx.body_string c p416
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

(* Where the sidecar's bytes are, after {!find_sidecar}. *)
type sidecar = No_sidecar | Sidecar_fd of int | Sidecar_mem

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
    let fd = Syscall.openat2_beneath t.root_fd t.path 1 (m - 1) ~no_symlinks:(not t.cfg.follow_symlinks) in
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

(* Answers with the regular file at [t.path.{0 .. n-1}]: its bytes are on
   [fd] ([>= 0]) or in [t.mem] ([fd = -1]), with the given metadata. From
   here on [fd] is closed on every path. *)
let serve_file t c req (buf : B.t) fd n ~is_get ~size ~mtime_s ~mtime_ns =
  let slot = Mime_cache.slot_of_path t.mime t.path n in
  let ctype = Mime_cache.type_of t.mime slot in
  let vary = t.cfg.gzip_static && Mime_cache.compressible t.mime slot in
  let side = if vary && accepts_gzip_w t.weights buf req then find_sidecar t n ~orig_mtime:mtime_s else No_sidecar in
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
  in
  (* RFC 9110 §8.8.2.1: a modification time in the future (clock skew,
     touch -d) is replaced by the time of the answer, in Last-Modified and
     in every comparison made against it. The ETag keeps the real mtime. *)
  let mtime = let now = Ctx.now c in if e_mtime > now then now else e_mtime in
  match
    let etag = make_etag t ~mtime_s:e_mtime ~mtime_ns:e_ns ~size ~gz in
    match preconditions c req buf etag mtime with
    | Send_412 ->
      release fd;
      error_page c Precondition_failed
    | Send_304 ->
      release fd;
      Ctx.start c Not_modified;
      Ctx.header c Etag etag;
      last_modified c mtime;
      if t.cfg.max_age >= 0 then Ctx.header c Cache_control t.cache_control;
      if vary then Ctx.header c Vary "Accept-Encoding";
      Ctx.no_body c ~content_length:(-1)
    | Proceed ->
      if is_get && Request.find req Range >= 0 && if_range_holds c req buf etag mtime then
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
  if cached >= 0 then begin
    release fd;
    t.mem <- File_cache.content cache cached;
    serve_file t c req buf (-1) n ~is_get ~size:(File_cache.size cache cached)
      ~mtime_s:(File_cache.mtime_s cache cached) ~mtime_ns:(File_cache.mtime_ns cache cached)
  end
  else
    serve_file t c req buf fd n ~is_get ~size ~mtime_s:(Syscall.stat_mtime_s st)
      ~mtime_ns:(Syscall.stat_mtime_ns st)

(* {1 Directories} *)

let redirect_to_slash t c n =
  let s = t.scratch in
  (* The path is relative to the mount point: the client's has it first. *)
  let m = String.length t.cfg.mount - 1 in
  B.blit_from_string t.cfg.mount ~src_off:0 s ~dst_off:0 ~len:m;
  let o = encode_into t.path ~off:0 ~len:n s m in
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
  Ctx.header c Content_type html_type;
  Ctx.body_string c p301

type entry = { name : string; is_dir : bool; size : int; mtime : int }

let format_time t =
  let tm = Unix.gmtime (float_of_int t) in
  Printf.sprintf "%04d-%02d-%02d %02d:%02d" (tm.tm_year + 1900) (tm.tm_mon + 1) tm.tm_mday
    tm.tm_hour tm.tm_min

(* The listing of the directory open as [dfd], whose decoded path is
   [t.path.{0 .. n-1}] (ending in '/'). Entries are opened beneath the
   root like any request would be, so what the listing shows is exactly
   what can be fetched. Allocates freely: listings are not a hot path. *)
let listing t c dfd n =
  let dir_path = B.sub_string t.path ~off:0 ~len:n in
  match Sys.readdir ("/proc/self/fd/" ^ string_of_int dfd) with
  | exception Sys_error _ -> error_page c Forbidden
  | names ->
    let st = Syscall.stat_create () in
    let entries =
      Array.fold_left
        (fun acc name ->
          if name = "" || name = "." || name = ".." then acc
          else if (not t.cfg.dotfiles) && name.[0] = '.' && name <> ".well-known" then acc
          else begin
            let rel = String.sub dir_path 1 (n - 1) ^ name in
            let rb = B.of_string rel in
            let fd =
              Syscall.openat2_beneath t.root_fd rb 0 (String.length rel)
                ~no_symlinks:(not t.cfg.follow_symlinks)
            in
            if fd < 0 then acc
            else begin
              let ok = Syscall.fstat fd st = 0 in
              ignore (Syscall.close fd);
              if not ok then acc
              else
                { name; is_dir = Syscall.stat_kind st = Directory; size = Syscall.stat_size st;
                  mtime = Syscall.stat_mtime_s st } :: acc
            end
          end)
        [] names
    in
    let entries =
      List.sort
        (fun a b -> if a.is_dir <> b.is_dir then (if a.is_dir then -1 else 1) else compare a.name b.name)
        entries
    in
    let title = html_escape dir_path in
    let b = Buffer.create 4096 in
    Buffer.add_string b "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Index of ";
    Buffer.add_string b title;
    Buffer.add_string b "</title></head>\n<body><h1>Index of ";
    Buffer.add_string b title;
    Buffer.add_string b "</h1>\n<table>\n";
    if n > 1 then Buffer.add_string b "<tr><td><a href=\"../\">../</a></td><td></td><td></td></tr>\n";
    List.iter
      (fun e ->
        let shown = if e.is_dir then e.name ^ "/" else e.name in
        let href = encode_path e.name ^ if e.is_dir then "/" else "" in
        Printf.bprintf b "<tr><td><a href=\"%s\">%s</a></td><td>%s</td><td>%s</td></tr>\n"
          (html_escape href) (html_escape shown)
          (if e.is_dir then "-" else string_of_int e.size)
          (format_time e.mtime))
      entries;
    Buffer.add_string b "</table>\n</body></html>\n";
    Ctx.start c Ok;
    Ctx.header c Content_type html_type;
    Ctx.header c Cache_control "no-cache";
    Ctx.body_string c (Buffer.contents b)

let serve_directory t c req buf dfd n ~is_get =
  if not (Target.ends_in_slash t.path n) then begin
    ignore (Syscall.close dfd);
    redirect_to_slash t c n
  end
  else begin
    let m = append_string t.path n t.cfg.index in
    let fd = Syscall.openat2_beneath t.root_fd t.path 1 (m - 1) ~no_symlinks:(not t.cfg.follow_symlinks) in
    if fd >= 0 && Syscall.fstat fd t.st = 0 && Syscall.stat_is_regular t.st then begin
      ignore (Syscall.close dfd);
      serve_opened t c req buf fd m ~is_get
    end
    else begin
      if fd >= 0 then ignore (Syscall.close fd);
      if t.cfg.list_directories then begin
        match listing t c dfd n with
        | () -> ignore (Syscall.close dfd)
        | exception e -> ignore (Syscall.close dfd); raise e
      end
      else begin
        ignore (Syscall.close dfd);
        error_page c Forbidden
      end
    end
  end

(* {1 Entry point} *)

(* The request's decoded, normalised path [t.path.{0 .. n-1}] seen from
   the mount point: the mount prefix is removed (the rest keeps its
   leading '/'), so everything after it resolves beneath the root as for a
   handler mounted at "/". Decoding and normalising come first, so an
   encoded "../" can never step out of the prefix. [-2]: the path is the
   mount point without its slash (redirect); [-3]: outside the mount. *)
let unmount t n =
  let mount = t.cfg.mount in
  let m = String.length mount in
  if m = 1 then n
  else if n = m - 1 && B.equal_string t.path ~off:0 ~len:n (String.sub mount 0 (m - 1)) then -2
  else if n >= m && B.equal_string t.path ~off:0 ~len:m mount then begin
    B.blit ~src:t.path ~src_off:(m - 1) ~dst:t.path ~dst_off:0 ~len:(n - m + 1);
    n - m + 1
  end
  else -3

let mount_redirect t c =
  Ctx.start c Moved_permanently;
  Ctx.header c Location t.cfg.mount;
  if t.cfg.max_age >= 0 then Ctx.header c Cache_control t.cache_control;
  Ctx.header c Content_type html_type;
  Ctx.body_string c p301

let serve t c req ~is_get =
  let buf = Ctx.buffer c in
  match Target.split t.target buf (Request.target req) with
  | Error | Asterisk -> error_page c Bad_request
  | Origin | Absolute ->
    let n = Target.decode_path buf (Target.path t.target) ~dst:t.path in
    let n = if n < 0 || n > path_capacity then n else unmount t n in
    if n = -2 then mount_redirect t c
    else if n = -3 then error_page c Not_found
    else if n < 0 || n > path_capacity then error_page c Bad_request
    else if (not t.cfg.dotfiles) && has_hidden_segment t.path n then error_page c Not_found
    else begin
      t.now_ms <- Syscall.clock_monotonic_ns () / 1_000_000;
      (* The cache is keyed by file path; a path ending in '/' names its
         index file. A fresh entry answers without a single syscall. *)
      let key = if Target.ends_in_slash t.path n then append_string t.path n t.cfg.index else n in
      let slot = File_cache.find t.cache t.path ~len:key in
      if slot >= 0 && (not (File_cache.is_absent t.cache slot))
         && File_cache.fresh t.cache slot ~now_ms:t.now_ms
      then begin
        t.mem <- File_cache.content t.cache slot;
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
        t.mem <- File_cache.content t.cache slot;
        serve_file t c req buf (-1) key ~is_get ~size:(File_cache.size t.cache slot)
          ~mtime_s:(File_cache.mtime_s t.cache slot) ~mtime_ns:(File_cache.mtime_ns t.cache slot)
      end
      else if fd < 0 then error_page c (status_of_errno fd)
      else if Syscall.fstat fd t.st <> 0 then begin
        ignore (Syscall.close fd);
        error_page c Internal_server_error
      end
      else
        match Syscall.stat_kind t.st with
        | Regular -> serve_opened t c req buf fd n ~is_get
        | Directory -> serve_directory t c req buf fd n ~is_get
        | Fifo | Socket | Char_device | Block_device | Symlink | Other ->
          ignore (Syscall.close fd);
          error_page c Forbidden
    end

let handler t c =
  let req = Ctx.request c in
  match Request.meth req with
  | Get -> serve t c req ~is_get:true
  | Head -> serve t c req ~is_get:false
  | Options ->
    Ctx.start c No_content;
    Ctx.header c Allow allow;
    Ctx.no_body c ~content_length:(-1)
  | Post | Put | Delete | Connect | Trace | Patch | Other -> error_page c Method_not_allowed
