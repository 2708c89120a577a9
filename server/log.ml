type level = Error | Warn | Info | Debug

let rank = function Error -> 0 | Warn -> 1 | Info -> 2 | Debug -> 3
let name = function Error -> "error" | Warn -> "warn" | Info -> "info" | Debug -> "debug"

let level_of_string = function
  | "error" -> Ok Error
  | "warn" -> Ok Warn
  | "info" -> Ok Info
  | "debug" -> Ok Debug
  | s -> Stdlib.Error (Printf.sprintf "%S: give error, warn, info or debug" s)

let threshold = ref (rank Info)
let set_level l = threshold := rank l
let enabled l = rank l <= !threshold
let path = ref None

let use_file ?owner p =
  match Log_dest.open_path ?owner p with
  | Error _ as e -> e
  | Ok fd ->
      Unix.dup2 ~cloexec:false fd Unix.stderr;
      Unix.close fd;
      path := Some p;
      Ok ()

let reopen ?owner () = match !path with None -> Ok () | Some p -> use_file ?owner p
let file () = !path

let line level message =
  let t = Unix.gettimeofday () in
  let tm = Unix.gmtime t in
  Printf.sprintf "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ [%s] httpz[%d]: %s\n" (tm.Unix.tm_year + 1900)
    (tm.Unix.tm_mon + 1) tm.Unix.tm_mday tm.Unix.tm_hour tm.Unix.tm_min tm.Unix.tm_sec
    (int_of_float ((t -. Float.of_int (int_of_float t)) *. 1000.))
    (name level) (Unix.getpid ()) message

(* One write: a line is never split between two, whatever other processes
   write to the same file. Errors are ignored (the log must not stop the
   server). *)
let write level message =
  let l = line level message in
  flush stderr;
  try ignore (Unix.single_write_substring Unix.stderr l 0 (String.length l) : int)
  with Unix.Unix_error _ -> ()

let at level fmt =
  if enabled level then Printf.ksprintf (write level) fmt else Printf.ikfprintf ignore () fmt

let error fmt = at Error fmt
let warn fmt = at Warn fmt
let info fmt = at Info fmt
let debug fmt = at Debug fmt
let msg fmt = at Info fmt
