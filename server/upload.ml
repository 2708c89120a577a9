open Httpz

type error =
  | Not_multipart
  | Bad_multipart of Multipart.error
  | No_name
  | Field_too_large
  | File_too_large
  | Too_many_files
  | Disk_full of string
  | Disk_error of string

let status = function
  | Not_multipart -> Status.Unsupported_media_type
  | Bad_multipart (Multipart.Too_many_parts | Multipart.Header_too_large | Multipart.Too_large)
  | Field_too_large | File_too_large | Too_many_files ->
      Status.Content_too_large
  | Bad_multipart _ | No_name -> Status.Bad_request
  | Disk_full _ -> Status.Insufficient_storage
  | Disk_error _ -> Status.Internal_server_error

let error_to_string = function
  | Not_multipart -> "expected multipart/form-data with a boundary"
  | Bad_multipart e -> Multipart.error_to_string e
  | No_name -> "a multipart part has no form-data name"
  | Field_too_large -> "a form field is too large"
  | File_too_large -> "an uploaded file is too large"
  | Too_many_files -> "too many uploaded files"
  | Disk_full m -> "no space left to store the upload: " ^ m
  | Disk_error m -> "cannot store the upload: " ^ m

let respond_error c e =
  (* Disk details stay in the log, not in the answer. *)
  match e with
  | Disk_full m | Disk_error m ->
      Log.error "upload: %s" m;
      Respond.error c (status e)
  | _ -> Respond.error_reason c (status e) (error_to_string e)

type stored = { path : string; size : int }

let default_limit = 10 * 1024 * 1024

(* Write once this much is buffered. *)
let threshold = 128 * 1024

(* {1 The sink}

   One per upload, on the loop; its jobs run on the offload pool, one at a
   time (the next piece is read only when a job is over). [lock] orders a
   job against the cancel hook, which runs on the loop while a job may be
   running: whichever of the two comes last closes and removes. A job that
   was dropped before it started never sets [busy], so the hook cleans up
   at once. *)
type sink = {
  dir : string;
  fsync : bool;
  lock : Mutex.t;
  mutable busy : bool;
  mutable cancelled : bool;  (* the request ended first, or the upload failed *)
  mutable handed : bool;  (* [k] got the result: the files are the caller's *)
  mutable fd : Unix.file_descr option;  (* the file being written *)
  mutable tmp : string;  (* its temporary path, "" when none *)
  mutable temps : (string * string) list;  (* closed files: temporary, final *)
  mutable renamed : string list;  (* finals already in place, during commit *)
  mutable replaces : bool;
      (* the final name is the caller's: once renamed over the old file,
         the new one stays even if the request ends before [k] (removing
         it would lose both) *)
  mutable buf : Bytes.t;
  mutable fill : int;
  mutable size : int;  (* bytes of the current file *)
}

let new_sink ~dir ~fsync =
  {
    dir; fsync; lock = Mutex.create (); busy = false; cancelled = false; handed = false; fd = None; tmp = "";
    (* Grown by [append] as data comes (to [threshold] and one piece at
       most, then written out): an upload whose client sends little, or
       stalls, holds little. *)
    temps = []; renamed = []; replaces = false; buf = Bytes.create 16384; fill = 0; size = 0;
  }

let hex s =
  let h = "0123456789abcdef" in
  String.init (2 * String.length s) (fun i ->
      let b = Char.code s.[i / 2] in
      h.[if i land 1 = 0 then b lsr 4 else b land 15])

let unique () = hex (Entropy.bytes 16)
let quiet f = try f () with Unix.Unix_error _ -> ()

(* Under [lock], or once nothing else can touch [s]. *)
let cleanup s =
  (match s.fd with Some fd -> quiet (fun () -> Unix.close fd) | None -> ());
  s.fd <- None;
  if s.tmp <> "" then quiet (fun () -> Unix.unlink s.tmp);
  s.tmp <- "";
  List.iter (fun (t, _) -> quiet (fun () -> Unix.unlink t)) s.temps;
  s.temps <- [];
  List.iter (fun f -> quiet (fun () -> Unix.unlink f)) s.renamed;
  s.renamed <- []

let cancel s () =
  Mutex.lock s.lock;
  if not s.handed then begin
    s.cancelled <- true;
    if not s.busy then cleanup s
  end;
  Mutex.unlock s.lock

let disk what path = function
  (* EDQUOT (122 on Linux) has no constructor in OCaml 4.13's Unix. *)
  | Unix.Unix_error (((Unix.ENOSPC | Unix.EUNKNOWNERR 122) as e), _, _) ->
      Error (Disk_full (Printf.sprintf "%s %s: %s" what path (Unix.error_message e)))
  | Unix.Unix_error (e, _, _) -> Error (Disk_error (Printf.sprintf "%s %s: %s" what path (Unix.error_message e)))
  | e -> Error (Disk_error (Printf.sprintf "%s %s: %s" what path (Printexc.to_string e)))

(* A job's body: [f] runs unless the upload is over; if it ended while
   [f] ran, the job cleans up. *)
let job s f () =
  Mutex.lock s.lock;
  let go = not s.cancelled in
  if go then s.busy <- true;
  Mutex.unlock s.lock;
  if not go then Error (Disk_error "cancelled")
  else begin
    let r = try f () with e -> disk "writing in" s.dir e in
    Mutex.lock s.lock;
    s.busy <- false;
    if s.cancelled then cleanup s;
    Mutex.unlock s.lock;
    r
  end

let rec open_temp s tries =
  let tmp = Filename.concat s.dir (".upload-" ^ unique () ^ ".tmp") in
  match Unix.openfile tmp [ Unix.O_WRONLY; Unix.O_CREAT; Unix.O_EXCL; Unix.O_CLOEXEC ] 0o600 with
  | fd ->
      s.fd <- Some fd;
      s.tmp <- tmp;
      Ok ()
  | exception Unix.Unix_error (Unix.EEXIST, _, _) when tries > 0 -> open_temp s (tries - 1)
  | exception e -> disk "creating a file in" s.dir e

(* On a thread: the buffered bytes to the current file (opened first if
   need be). *)
let write_buffered s =
  let r = if s.fd = None then open_temp s 3 else Ok () in
  match r, s.fd with
  | Ok (), Some fd ->
      let rec go off =
        if off < s.fill then
          match Unix.single_write fd s.buf off (s.fill - off) with
          | n -> go (off + n)
          | exception Unix.Unix_error (Unix.EINTR, _, _) -> go off
      in
      (try go 0; s.fill <- 0; Ok () with e -> disk "writing" s.tmp e)
  | (Error _ as e), _ -> e
  | Ok (), None -> Error (Disk_error "no file")

(* On a thread: the current file complete, closed, kept as a temporary. *)
let close_file s final =
  match write_buffered s with
  | Error _ as e -> e
  | Ok () -> (
      match s.fd with
      | None -> Error (Disk_error "no file")
      | Some fd -> (
          try
            if s.fsync then Unix.fsync fd;
            s.fd <- None;
            Unix.close fd;
            s.temps <- (s.tmp, final) :: s.temps;
            s.tmp <- "";
            Ok ()
          with e -> disk "closing" s.tmp e))

let fsync_dir dir =
  let fd = Unix.openfile dir [ Unix.O_RDONLY; Unix.O_CLOEXEC ] 0 in
  Fun.protect ~finally:(fun () -> Unix.close fd) (fun () -> Unix.fsync fd)

(* On a thread: every closed temporary renamed to its final name, in the
   order the files came. *)
let commit s =
  let rec go = function
    | [] -> Ok ()
    | (tmp, final) :: rest -> (
        match Unix.rename tmp final with
        | () ->
            if not s.replaces then s.renamed <- final :: s.renamed;
            s.temps <- rest;
            go rest
        | exception e -> disk "renaming into" s.dir e)
  in
  match go (List.rev s.temps) with
  | Error _ as e -> e
  | Ok () -> (
      try
        if s.fsync then fsync_dir s.dir;
        Ok ()
      with e -> disk "syncing" s.dir e)

(* Copies a span of a bigstring into the sink's buffer, growing it if a
   piece is larger than the room left (pieces are at most a read buffer). *)
external bytes_set64u : Bytes.t -> int -> int64 -> unit = "%caml_bytes_set64u"

let append s src off len =
  if s.fill + len > Bytes.length s.buf then begin
    let b = Bytes.create (max (2 * Bytes.length s.buf) (s.fill + len)) in
    Bytes.blit s.buf 0 b 0 s.fill;
    s.buf <- b
  end;
  let dst = s.buf and d = s.fill in
  let i = ref 0 in
  while !i + 8 <= len do
    bytes_set64u dst (d + !i) (Bigstring.unsafe_get64 src (off + !i));
    i := !i + 8
  done;
  while !i < len do
    Bytes.unsafe_set dst (d + !i) (Bigstring.unsafe_get src (off + !i));
    incr i
  done;
  s.fill <- s.fill + len;
  s.size <- s.size + len

(* The upload failed on the loop: nothing runs for it any more (no job in
   flight: jobs run one at a time and this is called between them). *)
let fail_now s =
  Mutex.lock s.lock;
  s.cancelled <- true;
  if not s.busy then cleanup s;
  s.handed <- true;
  Mutex.unlock s.lock

let hand s = Mutex.lock s.lock; s.handed <- true; Mutex.unlock s.lock

(* [Ctx.offload], and if the pool refused the job (the server answered
   503; neither [work] nor [k] will run), clean up at once. *)
let offload c s work k =
  Ctx.offload c (job s work) k;
  if not (Ctx.waiting c) then fail_now s

let check_name name =
  if name = "" || name = "." || name = ".." || String.contains name '/' || String.contains name '\000' then
    invalid_arg ("Upload.to_file: bad file name " ^ String.escaped name)

let to_file c ~dir ?name ?(limit = default_limit) ?(fsync = false) k =
  (match name with Some n -> check_name n | None -> ());
  let s = new_sink ~dir ~fsync in
  s.replaces <- name <> None;
  let final = Filename.concat dir (match name with Some n -> n | None -> "upload-" ^ unique ()) in
  Ctx.on_cancel c (cancel s);
  let failed c e = fail_now s; k c (Error e) in
  let rec next c =
    if Ctx.body_ended c then
      offload c s
        (fun () -> match close_file s final with Error _ as e -> e | Ok () -> commit s)
        (fun r c ->
          match r with
          | Ok () ->
              hand s;
              k c (Ok { path = final; size = s.size })
          | Error e -> failed c e)
    else begin
      let p = Ctx.body_piece c in
      append s (Ctx.body_buffer c) (Span.off p) (Span.len p);
      if s.fill >= threshold then
        offload c s (fun () -> write_buffered s) (fun r c ->
            match r with Ok () -> Ctx.read_body c ~limit next | Error e -> failed c e)
      else Ctx.read_body c ~limit next
    end
  in
  Ctx.read_body c ~limit next

(* {1 Multipart} *)

type file = { field : string; filename : string; content_type : string; path : string; size : int }
type form = { fields : (string * string) list; files : file list }

type limits = {
  max_body : int;
  max_file : int;
  max_files : int;
  max_field : int;
  max_parts : int;
  max_part_header : int;
}

let default_limits =
  {
    max_body = default_limit; max_file = default_limit; max_files = 16; max_field = 64 * 1024; max_parts = 128;
    max_part_header = 8192;
  }

let sanitise_filename f =
  let start =
    match (String.rindex_opt f '/', String.rindex_opt f '\\') with
    | None, None -> 0
    | Some a, None | None, Some a -> a + 1
    | Some a, Some b -> max a b + 1
  in
  let b = Buffer.create (String.length f - start) in
  for i = start to String.length f - 1 do
    let ch = f.[i] in
    if ch >= ' ' && ch <> '\127' && Buffer.length b < 255 then Buffer.add_char b ch
  done;
  match Buffer.contents b with "." | ".." -> "" | s -> s

type mp = {
  c_k : Ctx.t -> (form, error) result -> unit;
  ms : sink;
  p : Multipart.t;
  lim : limits;
  mutable raw : Bigstring.t;  (* the piece, copied: the parser's spans outlive a job *)
  mutable eof : bool;
  mutable in_file : bool;
  mutable cur_field : string;
  mutable cur_filename : string;
  mutable cur_ct : string;
  mutable cur_final : string;
  value : Buffer.t;
  mutable fields : (string * string) list;
  mutable files : file list;
  mutable nfiles : int;
}

let form_of (m : mp) : form =
  { fields = List.rev m.fields; files = List.rev m.files }

let rec pump m c =
  let p = m.p in
  match Multipart.next p with
  | Multipart.Part ->
      let hb = Multipart.header_buffer p in
      if (not (Span.equal_caseless hb (Multipart.disposition p) "form-data")) || Span.len (Multipart.name p) = 0
      then mfail m c No_name
      else begin
        m.cur_field <- Span.to_string hb (Multipart.name p);
        m.in_file <- Multipart.has_filename p;
        if m.in_file then begin
          m.nfiles <- m.nfiles + 1;
          if m.nfiles > m.lim.max_files then mfail m c Too_many_files
          else begin
            m.cur_filename <- sanitise_filename (Span.to_string hb (Multipart.filename p));
            m.cur_ct <- Span.to_string hb (Multipart.content_type p);
            m.cur_final <- Filename.concat m.ms.dir ("upload-" ^ unique ());
            m.ms.size <- 0;
            pump m c
          end
        end
        else begin
          Buffer.clear m.value;
          pump m c
        end
      end
  | Multipart.Data ->
      let d = Multipart.data p in
      let len = Span.len d in
      if m.in_file then begin
        if m.ms.size + len > m.lim.max_file then mfail m c File_too_large
        else begin
          append m.ms (Multipart.data_buffer p) (Span.off d) len;
          if m.ms.fill >= threshold then
            offload c m.ms (fun () -> write_buffered m.ms) (fun r c ->
                match r with Ok () -> pump m c | Error e -> mfail m c e)
          else pump m c
        end
      end
      else if Buffer.length m.value + len > m.lim.max_field then mfail m c Field_too_large
      else begin
        Buffer.add_string m.value (Span.to_string (Multipart.data_buffer p) d);
        pump m c
      end
  | Multipart.Part_end ->
      if m.in_file then begin
        let final = m.cur_final in
        offload c m.ms (fun () -> close_file m.ms final) (fun r c ->
            match r with
            | Error e -> mfail m c e
            | Ok () ->
                m.files <-
                  { field = m.cur_field; filename = m.cur_filename; content_type = m.cur_ct; path = final;
                    size = m.ms.size }
                  :: m.files;
                m.in_file <- false;
                pump m c)
      end
      else begin
        m.fields <- (m.cur_field, Buffer.contents m.value) :: m.fields;
        pump m c
      end
  | Multipart.End ->
      if not m.eof then Ctx.read_body c ~limit:m.lim.max_body (piece m)
      else if m.ms.temps = [] then begin
        hand m.ms;
        m.c_k c (Ok (form_of m))
      end
      else
        offload c m.ms (fun () -> commit m.ms) (fun r c ->
            match r with
            | Ok () ->
                hand m.ms;
                m.c_k c (Ok (form_of m))
            | Error e -> mfail m c e)
  | Multipart.Await -> Ctx.read_body c ~limit:m.lim.max_body (piece m)
  | Multipart.Error -> mfail m c (Bad_multipart (Multipart.error p))

and piece m c =
  if Ctx.body_ended c then begin
    m.eof <- true;
    Multipart.finish m.p;
    pump m c
  end
  else begin
    let sp = Ctx.body_piece c in
    let len = Span.len sp in
    if len > Bigstring.length m.raw then m.raw <- Bigstring.create (max len (2 * Bigstring.length m.raw));
    Bigstring.blit ~src:(Ctx.body_buffer c) ~src_off:(Span.off sp) ~dst:m.raw ~dst_off:0 ~len;
    Multipart.feed m.p m.raw ~off:0 ~len;
    pump m c
  end

and mfail m c e =
  fail_now m.ms;
  m.c_k c (Error e)

let boundary c =
  let buf = Ctx.buffer c in
  let ct = Media_type.content_type buf (Ctx.request c) in
  if not (Media_type.matches buf ct "multipart/form-data") then None
  else
    let b = Media_type.param buf ct "boundary" in
    if Multipart.valid_boundary buf b then Some b else None

let multipart c ~dir ?(limits = default_limits) ?(fsync = false) k =
  match boundary c with
  | None -> k c (Error Not_multipart)
  | Some b ->
      let p =
        Multipart.create
          ~limits:
            { Multipart.max_parts = limits.max_parts; max_header_bytes = limits.max_part_header;
              max_total = limits.max_body }
          ()
      in
      ignore (Multipart.reset p (Ctx.buffer c) b : bool);
      let s = new_sink ~dir ~fsync in
      Ctx.on_cancel c (cancel s);
      let m =
        {
          c_k = k; ms = s; p; lim = limits; raw = Bigstring.create 16384; eof = false; in_file = false;
          cur_field = ""; cur_filename = ""; cur_ct = ""; cur_final = ""; value = Buffer.create 64; fields = [];
          files = []; nfiles = 0;
        }
      in
      Ctx.read_body c ~limit:limits.max_body (piece m)

let remove (form : form) = List.iter (fun (f : file) -> quiet (fun () -> Unix.unlink f.path)) form.files
