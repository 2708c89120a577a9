(** Request bodies stored in files, off the event loop: a whole body
    ({!to_file}) or the files of a [multipart/form-data] form
    ({!multipart}, with {!Httpz.Multipart}).

    {[
      Route.post r "/upload" (fun c ->
          Upload.multipart c ~dir:"uploads" (fun c -> function
            | Ok form -> Respond.json c (Printf.sprintf {|{"files":%d}|} (List.length form.files))
            | Error e -> Upload.respond_error c e))
    ]}

    {2 How a file is written}
    The body is read piece by piece ({!Ctx.read_body}); each piece is
    copied into a buffer of the upload's own (the piece is the server's
    and only valid until the continuation returns), and the buffer, once
    it holds 128 KiB or the file ends, is written by a job on the worker's
    offload pool ({!Ctx.offload}): the loop never waits for the disk, and
    the body is not read further while a write is in flight (the client is
    held back by TCP or HTTP/2 flow control, so memory stays at one buffer
    per upload whatever the body's size: it starts at 16 KiB and grows
    with what the client sent and is not yet written, to 128 KiB and one
    piece at most, so a client that stalls holds what it sent; plus the
    form fields
    [multipart] collects, bounded by its limits). The buffer is [Bytes], written
    with [Unix.single_write], because that call releases the runtime lock while
    the disk works; [Httpz_sys.Syscall.write] takes a bigstring but keeps
    the lock, which would stall the loop for the write's duration.

    A file is created as a temporary [.upload-HEX.tmp] in [dir]
    ([O_CREAT | O_EXCL], mode 0600, close-on-exec; 16 random bytes from
    getrandom), written, optionally [fsync]ed, closed, and [rename]d to
    its final name in the same directory once the whole body is read and
    valid: the final name never names a partial file. On any failure
    (body over a limit, malformed multipart, disk error, client gone,
    handler timeout, worker shutdown: {!Ctx.on_cancel}) every temporary
    file of the upload is closed and removed, as are the files of a form
    already renamed if a later rename fails. Stored files keep mode 0600.

    {2 Who answers}
    On a result the callback [k] answers (for an error, {!respond_error}
    gives the precise status). A body over its limit ([Content-Length] or
    as it arrives) is answered [413] by the server itself, as
    {!Ctx.read_body} does, and [k] is not called; nor is it when the
    request ends first, or when the offload pool's queue is full (the
    server answers [503]). Files are removed in all three cases.
    Once [k] is called with [Ok], the files are the application's (see
    {!remove}). *)

type error =
  | Not_multipart  (** no [multipart/form-data] [Content-Type] with a valid boundary: 415 *)
  | Bad_multipart of Httpz.Multipart.error
      (** malformed body: 400; [Too_many_parts], [Header_too_large], [Too_large]: 413 *)
  | No_name  (** a part without [Content-Disposition: form-data; name=...]: 400 (RFC 7578 §4.2) *)
  | Field_too_large  (** an ordinary field over [max_field] bytes: 413 *)
  | File_too_large  (** a file over [max_file] bytes: 413 *)
  | Too_many_files  (** more than [max_files] file parts: 413 *)
  | Disk_full of string  (** [ENOSPC] or [EDQUOT]: 507 *)
  | Disk_error of string  (** any other failure to create, write or rename: 500 *)

val status : error -> Httpz.Status.t
val error_to_string : error -> string

val respond_error : Ctx.t -> error -> unit
(** Answers [error] with {!status} and a short text reason
    ({!Respond.error_reason}). *)

type stored = { path : string;  (** [dir ^ "/" ^ name] *) size : int }

val default_limit : int
(** 10 MiB. *)

val to_file :
  Ctx.t -> dir:string -> ?name:string -> ?limit:int -> ?fsync:bool ->
  (Ctx.t -> (stored, error) result -> unit) -> unit
(** [to_file c ~dir k] stores the request body in a new file of [dir] and
    calls [k] with its path and size. The file is [name] if given (it
    replaces an existing file of that name, atomically, and once renamed
    stays even if the request then ends before [k] runs), else a generated
    [upload-HEX] (32 hex digits). [limit]: the most body bytes
    ({!default_limit}). With [fsync] (default [false]) the file's data and
    the directory entry reach the disk before [k] runs. Return from the
    handler after calling it.
    @raise Invalid_argument when [name] is empty, [.], [..] or holds ['/']
    or NUL. *)

(** {1 Multipart forms} *)

type file = {
  field : string;  (** the part's [name] *)
  filename : string;
      (** the client's file name, sanitised for display: its last path
          component (after any ['/'] or ['\\']), control bytes removed, at
          most 255 bytes, [""] for [.] or [..]. Never used as a path. *)
  content_type : string;  (** the part's [Content-Type], [""] when absent *)
  path : string;  (** where it is stored: [dir/upload-HEX], a generated name *)
  size : int;
}

type form = {
  fields : (string * string) list;  (** ordinary fields, in order *)
  files : file list;  (** file parts (those with a [filename]), in order *)
}

type limits = {
  max_body : int;  (** the whole body (server answers 413) *)
  max_file : int;  (** one file *)
  max_files : int;
  max_field : int;  (** one ordinary field's value *)
  max_parts : int;
  max_part_header : int;  (** one part's header block *)
}

val default_limits : limits
(** Body 10 MiB, file 10 MiB, 16 files, field 64 KiB, 128 parts, part
    header 8 KiB. *)

val multipart :
  Ctx.t -> dir:string -> ?limits:limits -> ?fsync:bool -> (Ctx.t -> (form, error) result -> unit) -> unit
(** [multipart c ~dir k] reads a [multipart/form-data] body with
    {!Httpz.Multipart} (boundary from [Content-Type], by
    {!Httpz.Media_type.param}), stores each file part in [dir] as
    {!to_file} does (all renamed once the whole body was read and valid,
    all removed otherwise), collects the other fields, and calls [k]. A
    part with a [filename] parameter (even empty) is a file. *)

val remove : form -> unit
(** [remove form] deletes the stored files of [form] (ignoring those
    already gone): for an application that refuses a form after all.
    Blocking (unlink); call it from an offloaded job on a busy server. *)

val sanitise_filename : string -> string
(** The {!file.filename} rule, exposed for tests. *)
