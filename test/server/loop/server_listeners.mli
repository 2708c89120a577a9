(** Servers with listeners of different kinds (issue 24): HTTPS and plain
    HTTP serving one handler in one process ({!Httpz_server.Server.tls}
    [listen_plain]), sockets handed over taking their role by port, and
    the combinations refused at start. The TLS cases make a self-signed
    certificate with [openssl] and fetch over https with [curl]. *)

val tls_and_plain : unit -> unit
(** One TLS and one plain listener: the same answer on both, HSTS on the
    https one only, plain HTTP on the TLS port answered 400. *)

val inherited_roles : unit -> unit
(** Two sockets handed over ([listen_fds]): the one on a [listen_plain]
    port serves plain HTTP, the other HTTPS. *)

val refused : unit -> unit
(** An address in two roles ({!Httpz_server.Config.check}), a port in both
    [listen_plain] and [redirect_http] or no socket left for HTTPS
    ({!Httpz_server.Listeners.adopt}): each an [Error] naming it. *)
