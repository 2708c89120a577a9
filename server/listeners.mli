(** The listening sockets, one set for the whole server: taken over from
    systemd (socket activation) or bound here, tuned, and created before
    any worker is forked, so every worker (and every restarted one, which
    finds the accept queue as it was) inherits the same sockets. Also the
    steps that make a {!Config.t}'s addresses concrete: host names
    resolved, port 0 replaced by the port the kernel picked.

    Everything here allocates and runs at start-up only; failures are
    [Error] with one line, never an exception. *)

val systemd_listen_fds : unit -> (int list, string) result
(** [systemd_listen_fds ()] is the sockets systemd passed to this process
    (sd_listen_fds(3)): [[3; …; 3 + n - 1]] when [LISTEN_PID] is this
    process's pid and [LISTEN_FDS] is [n], [[]] when the variables are
    absent or name another process. The variables are then emptied, so a
    child process does not take the sockets again. [Error] for variables
    that do not parse. Use the result as {!Config.t.listen_fds}. *)

val adopt : Config.t -> (Config.t, string) result
(** [adopt c]: with {!Config.t.listen_fds} given, [c] whose addresses are
    those read from the sockets, each in the role its port has
    ({!Config.inherited_role}): [listen] holds the HTTPS (or, without
    TLS, plain) ones, and in [tls.listen_plain] and [tls.redirect_http]
    the sockets' addresses replace the configured ones on their ports
    (the rest stay, to be bound by {!open_all}). Each socket is checked to
    be a listening TCP stream socket and made non-blocking and
    close-on-exec (the caller keeps owning the fds). [c] itself when there
    are none. [Error "inherited socket: fd N: …"] for a socket that is not
    one, or an ambiguous port; [Error] too when every socket took a plain
    role and none is left for [listen]. *)

val resolve : Config.t -> (Config.t, string) result
(** [resolve c]: [c] with every host (of every role's addresses,
    {!Config.role_addresses}) replaced by the first address it resolves to
    ([getaddrinfo]; numeric addresses are kept), or the first failure. *)

val open_all : Config.t -> (int list, string) result
(** [open_all c] opens a socket for each of {!Config.endpoints}[ c], in
    that order, or none: the fds (owned by the caller), or the first error
    (["listen on URL: reason"]) with the sockets opened so far closed.
    A socket handed over ({!Config.t.listen_fds}) stands for the endpoint
    at its own address (as {!adopt} put it in [c]); the others are
    bound. Each socket is bound without [SO_REUSEPORT] (a second server
    on the same address fails instead of sharing the traffic) and given,
    before it listens, [TCP_NODELAY], [TCP_NOTSENT_LOWAT] ({!Config.t.send_lowat})
    and [TCP_DEFER_ACCEPT] ({!Config.t.defer_accept}), which accepted
    sockets inherit; an option the kernel refuses is logged and skipped. *)

val bound_ports : Config.t -> int list -> Config.t
(** [bound_ports c lfds]: [c] with the ports the sockets [lfds] (as from
    {!open_all}) are bound to, so a port [0] becomes the one the kernel
    picked. *)

val close_all : int list -> unit
(** [close_all fds] closes every fd [>= 0] of [fds]. *)
