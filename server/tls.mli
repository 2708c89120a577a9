(** The TLS transport: a connection's bytes through OpenSSL ({!Openssl}),
    over its socket.

    A listener with TLS has a {!server}: the certificate and key it was
    loaded from, and the OpenSSL context every new connection starts from
    ({!reload} replaces it for new connections; open ones keep theirs).
    A connection accepted there gets [c.ssl] from {!accept} and
    [c.tls = Tls_handshake] until {!handshake} says [Done], which reports
    ALPN's answer ([Tls_h2] or [Tls_http1], {!Slot.tls_established}): the
    protocols read that, never OpenSSL. From then on the
    backend moves its bytes with {!read} and {!write} exactly as with
    {!Plain}, and asks {!buffered} before waiting for the socket:
    OpenSSL reads whole records ahead, so bytes of the next request may
    already sit inside it when the socket has nothing more to say.

    {2 Writing}
    Output is [out] then [ext], as for {!Plain}, one TLS record (at most
    16 KiB) per [SSL_write]. While HTTP/2 announces more ([more_output]),
    records are held in user space ({!Openssl.set_more}) and leave with
    the first write that follows in one [sendmsg]; held bytes that a full
    socket did not take are pending output ([unsent], the walk's
    [Unsent] segment) until {!write} has flushed them. A small body is
    copied behind its head in [out] first, so that head and body leave as
    one record in one [write(2)]. A file body is read into [out] ([pread]) and encrypted
    from there (behind its head when both fit in a record, as an HTTP/2
    DATA frame's payload always does: {!Output.file_absorbable}), unless
    the kernel encrypts ({!server.ktls}: kTLS), when it
    goes out with [SSL_sendfile]. A write that would block is retried with
    the same bytes: they stay in [out] (or [ext]) until taken, possibly
    moved to its front by a compaction, which OpenSSL is told to accept.

    {2 Allocation}
    None per request: every OpenSSL call is a [@@noalloc] stub on
    integers and buffers. The handshake allocates in C only. *)

type server = private {
  cert_file : string;
  key_file : string;
  sni : (string list * string * string) list;  (** {!Config.tls.sni} *)
  ktls : bool;  (** the kernel offers kernel TLS, and it was asked for *)
  mutable ctx : Openssl.ctx;
  mutable named : Openssl.ctx list;  (** the contexts of [sni] *)
  mutable table : Openssl.sni option;  (** picks among them ({!Openssl.sni_attach}) *)
}

val load :
  ?sni:(string list * string * string) list -> cert_file:string -> key_file:string -> unit ->
  (server, string) result
(** [load ~sni ~cert_file ~key_file ()] reads a PEM certificate chain
    (leaf first) and its unencrypted PEM key (RSA or ECDSA) and makes the
    context new connections start from; with [sni] ([(names, cert_file,
    key_file)], default none), a context for each, picked by the name
    the client sends ({!Openssl.sni_attach}). The first file that does
    not load is the [Error]. *)

val reload : server -> (unit, string) result
(** [reload s] reads the files again (SIGHUP, after a renewal): new
    connections use them; on an error the old ones stay in use. The
    previous SNI table is not freed (a connection accepted before may
    still look a name up in it): a few hundred bytes per reload of a
    single in-process worker. *)

val free : server -> unit
(** [free s] frees every context and the SNI table of [s]: for the
    supervisor, which makes no connection, once a generation that used
    [s] is replaced. *)

val accept : server -> Slot.t -> bool
(** [accept s c]: [c] (just accepted, [c.fd] set) speaks TLS from now on;
    [false] when OpenSSL could not create the connection (out of
    memory). *)

type step = Done | Want_read | Want_write | Failed

val handshake : Slot.t -> step
(** One step of the handshake, as far as the socket allows. When it fails
    because the client spoke plain HTTP ({!Openssl.plain_http}), the client
    first gets [400 Bad Request] with [Connection: close] and a short
    text/html page saying "The plain HTTP request was sent to an HTTPS
    port", written to the socket directly (not through OpenSSL), then FIN;
    what it sent is read and dropped (at most 64 KiB, what is there), so
    the close that follows does not reset the reply. [Failed]: close the
    connection. Allocates nothing. *)

val read : Slot.t -> int
(** As {!Plain.read}: decrypted bytes put at [c.in_buf] from [c.in_off]
    (at most [c.in_len]), [0] at the end of the stream, or [-errno]
    ([-eagain]: wait until the socket is readable; any failure of the
    TLS layer is [-econnreset]). *)

val write : Slot.t -> Output.result
(** As {!Plain.write}. *)


val buffered : Slot.t -> bool
(** Bytes received on the socket wait inside OpenSSL: read again before
    waiting for readiness. *)

val close_notify : Slot.t -> unit
(** Sends close_notify (once, after a complete handshake; never blocks). *)

val release : Slot.t -> unit
(** Frees [c.ssl] (the socket stays open) and makes [c] plain again. *)
