(** Where logs go: files, or syslog (RFC 5424 over UDP or a unix
    datagram socket):
    [syslog:server=ADDRESS[:PORT][,facility=F][,severity=S][,tag=T]] or
    [syslog:server=unix:PATH…] (nginx's syntax; default facility [local7],
    severity [info], tag [httpz], port 514). Each line goes as one
    datagram,
    {v
<190>1 2026-11-28T19:00:00Z HOSTNAME httpz 4242 - - LINE
    v}
    (PRI, version, time, host, tag, the worker's pid, no MSGID, no
    structured data), sent when the access log's buffer is flushed (once
    a second and at exit), as the lines of a file are; a datagram the
    receiver did not take is lost, never retried. A unix socket is
    connected again by {!reopen_files} (SIGUSR1): after its receiver
    restarted, lines are lost until then. Syslog sockets are non-blocking:
    a receiver that stops reading costs lines (dropped and counted by
    the access log), never a stalled worker.

    Everything here allocates: start-up, reloads and SIGUSR1. *)

type syslog = private { prefix : string; host_tag : string }
(** The fixed parts of a syslog line: [<PRI>1 ] and [ HOST TAG ]. *)

val syslog_of : int -> syslog option
(** [syslog_of fd]: the framing of a syslog descriptor {!open_dest}
    gave, [None] for a file. *)

val open_path : ?owner:int * int -> string -> (Unix.file_descr, string) result
(** [open_path ?owner p] opens [p] for appending, created 0640 (less the
    umask). Refused ([Error]): a symlink as [p]'s last component (never
    followed, never created through), anything but a regular file, a file
    with more than one hard link. [owner]'s user id is given to the file
    (fchown on the descriptor, the group kept) only when this call created
    it or root owned it: never a file someone else put at the path, so a
    user who can write the log's directory (the workers') cannot make
    root write to, or hand them, a file of its choosing (CVE-2016-1247). *)

val check_dest : string -> (unit, string) result
(** [check_dest d]: a syslog destination's parameters are valid (a path
    always is). Opens nothing. *)

val is_syslog : string -> bool

val open_dest : string -> (int, string) result
(** [open_dest d] opens the file [d] as {!open_path} does or
    connects the syslog socket [d], and remembers it for
    {!reopen_files}. [Error] names [d] and the system's reason. *)

val close_dest : int -> unit
(** [close_dest fd] closes a descriptor {!open_dest} gave and forgets it. *)

val reopen_files : owner:(int * int) option -> string list
(** [reopen_files ~owner] opens every file {!open_dest} opened again at
    its path with {!open_path} (created if a rotation moved it away)
    onto the same descriptor number, given to [owner]'s user id if
    created (the workers', so that they can open it by path in turn; the
    group is kept, as nginx does); connects every unix syslog socket again (a UDP one is kept). A
    descriptor closed since is forgotten, never written over. The errors,
    one per destination (its descriptor then keeps the old one). *)

