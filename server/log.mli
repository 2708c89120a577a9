(** The server's messages to the operator (its error log): one line per
    message, on standard error or in the file {!use_file} names, as
    {v
2026-11-25T21:03:04.123Z [warn] httpz[4242]: worker 4243 was killed by SIGKILL (9); restarting
    v}
    the time in UTC (ISO 8601, milliseconds), the level, the process id
    (which worker, or the supervisor), the message. Each line is handed
    to the kernel whole by one [write(2)] (a line is far below [PIPE_BUF],
    and a file is opened for appending), so lines of several workers
    never interleave within a line.

    Levels, most severe first: [Error] (something failed that the
    operator must fix), [Warn] (something failed and the server went on:
    a worker restarted, a reload refused, a file the handler could not
    open), [Info] (start, reloads, worker exits) and [Debug] (per
    connection: TLS handshake failures). Messages below the configured
    level ({!set_level}, default [Info]) are not formatted at all.

    Everything here allocates: for start-up, errors and exits, and for
    per-request events only at levels an operator turned on. *)

type level = Error | Warn | Info | Debug

val level_of_string : string -> (level, string) result
(** ["error"], ["warn"], ["info"], ["debug"]. *)

val set_level : level -> unit

val enabled : level -> bool
(** [enabled l]: messages of level [l] are written. Does not allocate. *)

val use_file : ?owner:int * int -> string -> (unit, string) result
(** [use_file ?owner path] opens [path] as {!Log_dest.open_path} does
    (created 0640, never through a symlink, a regular file with one link,
    handed to [owner]'s user only if created here or root's) and makes
    it the process's standard error (dup2 onto descriptor 2), so that
    anything else written there (an uncaught exception) lands in it too,
    and forked workers inherit it. [Error] is the system's message; then
    nothing changes. *)

val reopen : ?owner:int * int -> unit -> (unit, string) result
(** [reopen ?owner ()] opens the file of the last {!use_file} again (after a
    log rotation moved it); [Ok ()] when there is none. *)

val file : unit -> string option
(** The file of the last {!use_file}. *)

val error : ('a, unit, string, unit) format4 -> 'a
val warn : ('a, unit, string, unit) format4 -> 'a
val info : ('a, unit, string, unit) format4 -> 'a
val debug : ('a, unit, string, unit) format4 -> 'a

val msg : ('a, unit, string, unit) format4 -> 'a
(** [msg] is {!info}. *)

val line : level -> string -> string
(** [line level message] is the line written for [message] now, newline
    included. *)
