open Httpz
module B = Bigstring

type t = {
  codes : int array;
  paths : B.t array;  (** the page for [codes.(i)], as a request path: one leading '/' *)
  st : Syscall.stat;
  beneath : Beneath.t;
}

let statuses = [ 400; 401; 403; 404; 405; 412; 414; 416; 429; 500; 502; 503 ]

let path_of p = if String.length p > 0 && p.[0] = '/' then p else "/" ^ p

(* A page must be a regular file that opens beneath the root now (it is
   opened the same way, through the cache, when served). *)
let check t code p =
  let n = B.length p in
  let fail why = Error (Printf.sprintf "error page for %d: %s %s" code (B.to_string p) why) in
  if List.mem ".." (String.split_on_char '/' (B.to_string p)) then
    fail "cannot be opened beneath the root: '..' leaves it"
  else if Beneath.hides t.beneath p n then fail "is a dotfile, which is not served"
  else
    let fd = if n <= 1 then -Syscall.enoent else Beneath.openat t.beneath p 1 (n - 1) in
    if fd < 0 then fail ("cannot be opened beneath the root: " ^ Syscall.error_message fd)
    else begin
      let regular = Syscall.fstat fd t.st = 0 && Syscall.stat_is_regular t.st in
      ignore (Syscall.close fd);
      if regular then Ok () else fail "is not a regular file"
    end

let create beneath pages =
  let rec dup = function [] -> None | (c, _) :: r -> if List.mem_assoc c r then Some c else dup r in
  match List.find_opt (fun (code, _) -> not (List.mem code statuses)) pages, dup pages with
  | Some (code, _), _ ->
    Error (Printf.sprintf "error page for %d: the handler never answers %d (it answers %s)" code code
             (String.concat ", " (List.map string_of_int statuses)))
  | None, Some code -> Error (Printf.sprintf "error page for %d: given twice" code)
  | None, None ->
    let t =
      { codes = Array.of_list (List.map fst pages);
        paths = Array.of_list (List.map (fun (_, p) -> B.of_string (path_of p)) pages);
        st = Syscall.stat_create (); beneath }
    in
    let rec go i =
      if i = Array.length t.codes then Ok t
      else match check t t.codes.(i) t.paths.(i) with Ok () -> go (i + 1) | Error e -> Error e
    in
    go 0

let find t (status : Status.t) =
  let code = Status.code status in
  let i = ref (Array.length t.codes - 1) in
  while !i >= 0 && Array.unsafe_get t.codes !i <> code do decr i done;
  !i

(* From the file cache when the page is small (checked once per TTL like
   any file), else sent from its fd; the built-in page if it cannot be
   opened now. *)
let answer ?extra t c (status : Status.t) i ~cache ~mime ~content_range ~range_len =
  let p = t.paths.(i) in
  let n = B.length p in
  let now_ms = Syscall.clock_monotonic_ns () / 1_000_000 in
  let slot = File_cache.find cache p ~len:n in
  let slot, fd =
    if slot >= 0 && (not (File_cache.is_absent cache slot)) && File_cache.fresh cache slot ~now_ms
    then slot, -1
    else begin
      let fd = Beneath.openat t.beneath p 1 (n - 1) in
      if fd < 0 then -1, -1
      else if Syscall.fstat fd t.st <> 0 || not (Syscall.stat_is_regular t.st) then begin
        ignore (Syscall.close fd); -1, -1
      end
      else if slot >= 0 && File_cache.revalidate cache slot t.st ~now_ms then begin
        ignore (Syscall.close fd); slot, -1
      end
      else
        let cached = File_cache.insert cache p ~len:n ~fd t.st ~now_ms in
        if cached >= 0 then (ignore (Syscall.close fd); cached, -1) else -1, fd
    end
  in
  if slot < 0 && fd < 0 then begin
    if range_len > 0 then begin
      Ctx.start c status;
      Ctx.header_bytes c Content_range content_range ~off:0 ~len:range_len;
      Ctx.header c Content_type Pages.html_type;
      Ctx.body_string c Pages.p416
    end
    else Pages.error_page_extra c status extra
  end
  else begin
    Ctx.start c status;
    (match status with Method_not_allowed -> Ctx.header c Allow Pages.allow | _ -> ());
    (match extra with Some (name, value) -> Ctx.header c name value | None -> ());
    if range_len > 0 then Ctx.header_bytes c Content_range content_range ~off:0 ~len:range_len;
    Ctx.header c Content_type (Mime.Cache.type_of mime (Mime.Cache.slot_of_path mime p n));
    if fd >= 0 then Ctx.body_file c ~fd ~off:0 ~len:(Syscall.stat_size t.st) ~close:true
    else Ctx.body_bigstring_stable c (File_cache.content cache slot) ~off:0 ~len:(File_cache.size cache slot)
  end
