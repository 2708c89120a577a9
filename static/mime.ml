open Httpz
module B = Bigstring

let[@inline] lower c = if c >= 'A' && c <= 'Z' then Char.unsafe_chr (Char.code c + 32) else c

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

let is_type s =
  let main = match String.index_opt s ';' with Some i -> String.sub s 0 i | None -> s in
  let main = String.trim main in
  Httpz.Response.is_field_value s
  &&
  match String.split_on_char '/' main with
  | [ ty; sub ] ->
      ty <> "" && sub <> "" && String.for_all Charset.is_tchar ty && String.for_all Charset.is_tchar sub
  | _ -> false

let content_type_of_ext ?(default = default_type) ext =
  match override ext with
  | Some ty -> if needs_charset ty then ty ^ "; charset=utf-8" else ty
  | None -> (
      (* magic-mime answers its default for what it does not know: ours,
         as given, without a charset added. *)
      match Magic_mime.lookup ~default:"" ("x." ^ ext) with
      | "" -> default
      | ty -> if needs_charset ty then ty ^ "; charset=utf-8" else ty)

(* An open-addressing table from lower-cased extension to content type.
   A hit compares bytes of the request path with a stored key and returns
   a slot number, so serving a known extension allocates nothing. Misses
   fill the table (each new extension allocates once); extensions come
   from files that exist under the root, so the set is bounded, and past
   [max_entries] a miss is answered from the overflow slot [cap] without
   being cached, so a docroot with thousands of odd extensions costs
   allocation, never memory. *)
module Cache = struct
  let cap = 256
  let max_entries = 192
  let max_ext = 16

  type t = {
    keys : string array;  (** [""] marks an empty slot; [cap] is the overflow slot *)
    types : string array;
    comp : bool array;
    mutable count : int;
    default : string;  (** for no extension or an unknown one *)
    default_comp : bool;
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
      let ty = content_type_of_ext ~default:t.default ext in
      let slot = if t.count < max_entries then (t.count <- t.count + 1; empty) else cap in
      t.keys.(slot) <- (if slot = cap then "" else ext);
      t.types.(slot) <- ty;
      t.comp.(slot) <- is_compressible ty;
      slot
    end

  let create ?(default = default_type) () =
    let t = {
      keys = Array.make (cap + 1) "";
      types = Array.make (cap + 1) default;
      comp = Array.make (cap + 1) false;
      count = 0;
      default;
      default_comp = is_compressible default;
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

  let stable_slot slot = slot <> cap

  let[@inline] type_of t slot = if slot < 0 then t.default else Array.unsafe_get t.types slot
  let[@inline] compressible t slot =
    if slot < 0 then t.default_comp else Array.unsafe_get t.comp slot
end

