(** OpenSSL 3 (Debian's [libssl]) for the TLS transport: thin stubs in
    [tls_stubs.c], one libssl call each.

    Why not the ocaml-ssl binding ([libssl-ocaml-dev])? Its non-blocking
    reads and writes report "would block" by raising an exception with an
    argument (an allocation per event), and it has no way to set a ticket
    key callback (tickets shared by the workers), kTLS, or the buffer
    release mode that keeps idle connections small. These stubs return
    integers, allocate nothing on the OCaml heap on the request path, and
    take bigstrings and strings without copying.

    Handles are immediate integers holding the C pointer; [0] is "none".
    A context ({!ctx}) is shared by the connections created from it and
    freed with {!ctx_free} (connections keep their own reference, so a
    context replaced on reload stays alive until its last connection is
    freed). A connection ({!ssl}) belongs to one socket and is freed with
    {!free}, before its socket is closed.

    {2 Results of I/O}
    [n > 0]: bytes; [0]: the peer closed (close_notify or a plain end of
    stream); {!want_read} / {!want_write}: retry the same call when the
    socket is readable / writable (a write must be retried with the same
    bytes, which may have moved); {!failed}: protocol or socket error, the
    connection is over ({!error} tells why). *)

type ctx = private int
type ssl = private int

val none : ssl
(** [0]: no connection (a plain one). *)

val want_read : int
(** [-1] *)

val want_write : int
(** [-2] *)

val failed : int
(** [-3] *)

val init_tickets : period:int -> (unit, string) result
(** [init_tickets ~period] draws the secret that session-ticket keys are
    derived from: call it once, in the process that forks the workers,
    before forking, so they all share it. Ticket keys rotate every
    [period] seconds (a ticket is accepted for the period it was issued in
    and the next one, then renewed); [period <= 0] keeps the default,
    3600. Without it no ticket is issued. *)

val ctx_create : cert:string -> key:string -> ktls:bool -> (ctx, string) result
(** [ctx_create ~cert ~key ~ktls] is a server context for the PEM
    certificate chain [cert] (leaf first) and unencrypted PEM private key
    [key] (RSA or ECDSA): TLS 1.2 and 1.3 only, Mozilla's "intermediate"
    cipher suites in the server's order (but ChaCha20 first for a client
    that prefers it), groups X25519, P-256, P-384, no renegotiation, no
    compression, ALPN [http/1.1] only (a client offering only other
    protocols is refused), stateless session tickets (one per TLS 1.3
    handshake; see
    {!init_tickets}) and no session cache, record buffers released when
    empty. [ktls]: ask for kernel TLS where the kernel offers it.
    Allocates. *)

val ctx_free : ctx -> unit

val error : unit -> string
(** The reason of the last failure of a stub (allocates). *)

external create : (ctx[@untagged]) -> (int[@untagged]) -> (ssl[@untagged]) = "httpz_tls_new_byte" "httpz_tls_new"
  [@@noalloc]
(** [create ctx fd]: a server-side connection over socket [fd], in
    accepting state; [0] when OpenSSL is out of memory. *)

external free : (ssl[@untagged]) -> (int[@untagged]) = "httpz_tls_free_byte" "httpz_tls_free"
  [@@noalloc]
(** Frees the connection (not the socket). [free 0] does nothing. *)

external handshake : (ssl[@untagged]) -> (int[@untagged]) = "httpz_tls_handshake_byte" "httpz_tls_handshake"
  [@@noalloc]
(** [1] when the handshake is complete, else {!want_read}, {!want_write} or
    {!failed}. *)

external plain_http : unit -> (int[@untagged]) = "httpz_tls_plain_http_byte" "httpz_tls_plain_http"
  [@@noalloc]
(** Non-zero when the last {!handshake} that returned {!failed} failed
    because the client spoke plain HTTP to the TLS port: OpenSSL read a
    request line ([GET], [POST], [HEAD], [PUT]: [SSL_R_HTTP_REQUEST]; a
    proxy's [CONNECT]: [SSL_R_HTTPS_PROXY_REQUEST]) where a record header
    belongs. It sent nothing; the socket still holds the rest of the
    request. Reads a flag the last failure set (no libssl call). *)

external read :
  (ssl[@untagged]) -> Httpz.Bigstring.t -> (int[@untagged]) -> (int[@untagged]) -> (int[@untagged])
  = "httpz_tls_read_byte" "httpz_tls_read"
  [@@noalloc]
(** [read s buf off len] decrypts at most [len > 0] bytes into [buf] at
    [off]. *)

external write :
  (ssl[@untagged]) -> Httpz.Bigstring.t -> (int[@untagged]) -> (int[@untagged]) -> (int[@untagged])
  = "httpz_tls_write_byte" "httpz_tls_write"
  [@@noalloc]
(** [write s buf off len] encrypts one record of at most 16 KiB of the
    [len > 0] bytes and sends it (or holds it: {!set_more}, {!held}): the
    count taken. *)

external write_string :
  (ssl[@untagged]) -> string -> (int[@untagged]) -> (int[@untagged]) -> (int[@untagged])
  = "httpz_tls_write_string_byte" "httpz_tls_write_string"
  [@@noalloc]

external set_alpn_h2 : bool -> unit = "httpz_tls_set_alpn_h2"
(** [set_alpn_h2 on]: whether ALPN selects "h2" when a client offers it
    (else "http/1.1"; a client offering neither gets the
    no_application_protocol alert). One setting per process; [true] until
    set. *)

external alpn_h2 : (ssl[@untagged]) -> (int[@untagged]) = "httpz_tls_alpn_h2_byte" "httpz_tls_alpn_h2"
  [@@noalloc]
(** Non-zero when the handshake selected "h2" by ALPN. *)

external version : (ssl[@untagged]) -> (int[@untagged]) = "httpz_tls_version_byte" "httpz_tls_version"
  [@@noalloc]
(** The protocol version of an established connection as TLS numbers it
    ([0x0304]: TLS 1.3, [0x0303]: TLS 1.2), for the access log. *)

external pending : (ssl[@untagged]) -> (int[@untagged]) = "httpz_tls_pending_byte" "httpz_tls_pending"
  [@@noalloc]
(** Non-zero when bytes read from the socket wait inside OpenSSL (a record
    not yet decrypted, or plaintext not yet returned): readiness of the
    socket will not announce them. *)

external close_notify : (ssl[@untagged]) -> (int[@untagged])
  = "httpz_tls_close_notify_byte" "httpz_tls_close_notify"
  [@@noalloc]
(** Sends the close_notify alert if the handshake is done and it was not
    sent yet; best effort, never blocks. *)

external set_more : (ssl[@untagged]) -> (int[@untagged]) -> (int[@untagged])
  = "httpz_tls_set_more_byte" "httpz_tls_set_more"
  [@@noalloc]
(** [set_more s 1]: more records follow at once, so the records {!write}
    makes are held, not sent, until a write after [set_more s 0] sends
    them and its own with one [sendmsg] (or until 128 KiB wait: they go,
    with [MSG_MORE]). Does nothing on a kTLS connection. No system call. *)

external held : (ssl[@untagged]) -> (int[@untagged]) = "httpz_tls_held_byte" "httpz_tls_held"
  [@@noalloc]
(** Bytes of records made but not yet given to the kernel: held while
    more follow ({!set_more}), or what a write after that could not send
    at once (a full socket). OpenSSL counts those as written: they are
    the connection's pending output until {!flush} has sent them. *)

external flush : (ssl[@untagged]) -> (int[@untagged]) -> (int[@untagged])
  = "httpz_tls_flush_byte" "httpz_tls_flush"
  [@@noalloc]
(** [flush s more] sends what is {!held} ([more]: with [MSG_MORE]): the
    count sent ([0]: nothing held), {!want_write} or {!failed}. *)

external ktls_send : (ssl[@untagged]) -> (int[@untagged]) = "httpz_tls_ktls_send_byte" "httpz_tls_ktls_send"
  [@@noalloc]
(** Non-zero when the kernel encrypts what this connection sends (kTLS):
    {!sendfile} works. *)

external sendfile :
  (ssl[@untagged]) -> (int[@untagged]) -> (int[@untagged]) -> (int[@untagged]) -> (int[@untagged])
  = "httpz_tls_sendfile_byte" "httpz_tls_sendfile"
  [@@noalloc]
(** [sendfile s fd off len] (kTLS only): bytes sent, {!want_write} or
    {!failed}. *)

val describe : ssl -> string
(** ["TLSv1.3 TLS_AES_128_GCM_SHA256 http/1.1"], plus [" resumed"] for a
    resumed session (allocates). *)

(** {1 SNI} Several certificates behind one listener: a table of
    [(name, context)] attached to the default context picks, during each
    handshake, the context of the name the client sends (an exact name
    first, then the longest [*.suffix] wildcard, ASCII case-insensitively;
    no name, or an unknown one: the default context). Start-up and
    [SIGHUP] only; all of these allocate or call [malloc]. *)

type sni = private int

val sni_create : unit -> (sni, string) result
(** An empty table. *)

val sni_add : sni -> string -> ctx -> (unit, string) result
(** [sni_add t name ctx]: [name] (["example.com"] or ["*.example.com"])
    is served with [ctx]'s certificate. The table does not own [ctx]. *)

val sni_attach : ctx -> sni -> unit
(** [sni_attach default t]: handshakes on connections made from [default]
    look names up in [t], which must outlive every connection made from
    [default]. *)

val sni_free : sni -> unit
(** Frees the table (not the contexts). *)

val kernel_tls_available : unit -> bool
(** The kernel offers the TLS upper-layer protocol
    ([/proc/sys/net/ipv4/tcp_available_ulp] lists [tls]). *)
