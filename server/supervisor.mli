(** The supervisor of a multi-process server (or of one worker run as
    another user): it forks the workers, restarts them, reloads them, and
    stops them. It serves no request itself and keeps the privileges it was
    started with, which reloads need; workers drop theirs right after fork.

    {2 Generations}
    Workers are forked in generations on the same listening sockets. A
    worker of the current generation that dies is restarted (at once, or
    after 0.2 s up to 10 s, doubling, while workers keep dying within a
    second of their start), and the reason is logged with the signal's
    system name. On [SIGHUP], once [reload] succeeded, a new generation is
    forked; when all of it serves, the previous one gets [SIGQUIT] (it stops
    accepting and finishes its requests, with no deadline until a [SIGTERM]
    gives it the grace period) and is only waited for, never
    restarted. If the new generation does not start, it is stopped the same
    way and the previous one stays current. Nothing is closed in between,
    so clients wait in the kernel's accept queue, never refused.

    {2 Reopening the logs}
    [SIGUSR1] reopens the logs and changes nothing else (no new
    generation): the supervisor opens every log file again at its path
    ({!Log_dest.reopen_files}, {!Log.reopen}; created if a rotation
    moved it), owned by the workers' user, then sends [SIGUSR1] to every
    worker, which reopens them by path in turn.

    {2 Stopping}
    [SIGTERM]/[SIGINT]: the supervisor closes its copies of the listening
    sockets, sends [SIGTERM] to the current generation, and returns once
    every worker of every generation has exited.

    Everything here allocates; none of it is on the request path. *)

type account = { name : string; uid : int; gid : int }
(** The user workers run as, resolved in the supervisor before any fork. *)

val account : string option -> (account option, string) result
(** [account user]: the ids of [user] ([getpwnam]), [Error] with one line
    when there is no such user or when the caller is neither root nor
    that user. [None] gives [Ok None], after a warning on stderr when the
    caller is root (it would serve as root). *)

val become : account -> (unit, string) result
(** [become a]: the user's groups ([initgroups], when root), [setgid],
    [setuid], then checked: every real and effective id is [a]'s and
    [setuid 0] fails (unless [a] is root). [Error] is one line naming the
    user and what failed. Called in each worker right after fork. *)

val run :
  worker_start:(unit -> bool) ->
  workers:int ->
  user:account option ->
  listeners:int list ->
  serve:(lfds:int list -> int) ->
  reload:(unit -> (string * (bool -> unit), string) result) ->
  announce:(unit -> unit) ->
  int
(** [run ~worker_start ~workers ~user ~listeners ~serve ~reload ~announce] forks
    [workers] workers and supervises them until [SIGTERM]/[SIGINT]; the
    caller has blocked [SIGCHLD], [SIGTERM], [SIGINT] and [SIGHUP] (they
    are read from a signalfd). Each worker becomes [user] ({!become}; on
    failure it logs the line and exits 2), asks for [SIGTERM] when the
    supervisor dies ([PR_SET_PDEATHSIG], after the ids changed since that
    clears it), runs [worker_start ()] (the application's hook: [false]
    and the worker exits 1 before it reports that it serves, so a first
    generation that fails there fails the start), then runs [serve ~lfds]
    and exits with its result.
    [announce] is called once the first generation serves. On [SIGHUP],
    [reload ()] reads again what the next generation needs: [Ok (what,
    settle)] ("access log reopened", …) starts it (its workers run the
    [serve] of that moment, which [reload] may have changed), then
    [settle ok] tells whether it serves ([false]: the previous generation
    stays current, and [serve] must be what it was); [Error msg] is logged
    as is and nothing changes. The result is [0], or [1] when the first generation
    did not start. [listeners] are closed on the way out. *)
