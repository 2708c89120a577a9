(** The access log, one line per response, in one of four formats.

    {b Common} (Common Log Format, as Apache and nginx write it, plus the
    request time):
    {v
127.0.0.1 - - [10/Oct/2000:13:55:36 +0000] "GET /index.html HTTP/1.1" 200 2326 152
    v}
    client address, identity and user (always [-]), time in UTC, request
    line, status, body bytes ([-] when none), and the request time in
    microseconds; then [ cut] when the response did not complete (see
    below):
    {v
127.0.0.1 - - [10/Oct/2000:13:55:36 +0000] "GET /big HTTP/1.1" 200 4915200 2013641 cut
    v}

    {b Combined} adds the [Referer] and [User-Agent] fields, quoted ([-]
    when absent), before the request time:
    {v
127.0.0.1 - - [10/Oct/2000:13:55:36 +0000] "GET / HTTP/1.1" 200 2326 "https://a.example/" "curl/7.88.1" 152
    v}

    {b Vhost_combined} is combined with the request's [Host] value first
    (as sent, port included; [-] when absent), as Apache's
    [vhost_combined], for one log of several sites:
    {v
a.example:8443 127.0.0.1 - - [10/Oct/2000:13:55:36 +0000] "GET / HTTP/1.1" 200 2326 "-" "curl/7.88.1" 152
    v}

    {b Json}, one object per line:
    {v
{"time":"2000-10-10T13:55:36Z","remote_addr":"127.0.0.1","request":"GET / HTTP/1.1","host":"a.example","scheme":"https","tls":"TLSv1.3","protocol":"HTTP/1.1","status":200,"body_bytes_sent":2326,"referer":null,"user_agent":"curl/7.88.1","request_time_us":152,"complete":true}
    v}
    absent values are [null]; [body_bytes_sent] is [0] when there is no
    body. [host] is the [Host] value as sent; [scheme] is [https] on a
    TLS connection; [tls] its version ([TLSv1.3], [TLSv1.2], or [null]:
    plain, or not known); [protocol] the request's ([HTTP/1.0],
    [HTTP/1.1]; [null] for a request that could not be parsed).

    {b Custom} formats ({!compile}: a configuration file's [log_format
    NAME [escape=…] '…']) write nginx's variables ({!var}) between
    literal text, escaped as {!escape} says; a line of plain fields costs
    no allocation, as the built-in formats.

    {b Where.} A file, or syslog ({!Log_dest}: one RFC 5424 datagram per
    line). A handler that serves several sites sends each request to its
    site's or location's log, or to none ({!use_routes}).

        {b What the client got.} A line is written when the response is over:
    its last byte handed to the socket, or its connection closed first
    (the client left, a write failed or timed out, the handler raised
    after part of the response left, the [--grace] period ended). The
    status is the one sent (a handler that fails after its head left is
    logged with that head's status, not a 500), and a response that did
    not complete is marked: [ cut] after the request time (common and
    combined), ["complete":false] (JSON). Its body bytes are those handed
    to the socket after the head (for a chunked body, its framing
    included), never more than the body, so a download cut after 4.9 MB of
    52 MB logs about 4.9 MB; a complete response logs its whole body.

    {b Escaping.} Common and combined escape as nginx does: double quote,
    backslash and bytes outside [0x20 - 0x7E] become [\xHH]. JSON
    strings put a backslash before a double quote or a backslash, and
    write every byte outside [0x20 - 0x7E]
    as [\u00HH], so a line is valid ASCII JSON whatever the client sent
    (a byte [b >= 0x80] reads back as the code point [U+00b]). The request
    line is cut at 8 KiB, [Referer] and [User-Agent] at 2 KiB each. A
    request whose head could not be parsed is logged with request ["-"]
    ([null] in JSON): its bytes are not trusted to be a request line.

    {b Request time}: from the first byte of the request head read (for a
    pipelined request, from the end of the previous response) to the
    moment the line is written: the last byte handed to the socket (the
    kernel may still be sending it), or the close that cut the
    response.

    Lines are formatted into a worker-owned buffer without allocating and
    written to the file descriptor whole, by {!flush} (the loop calls it
    once a second and at exit) or when the buffer is full. A [write] never
    carries a partial line, so workers sharing one log file never
    interleave inside a line. The write is a plain blocking [write(2)]:
    a log on a slow pipe slows the worker down rather than losing lines. *)

type escape = Escape_default | Escape_json | Escape_none
(** How a custom format writes a value ([log_format NAME escape=…]):
    [Escape_default] as nginx's default (double quote, backslash and bytes
    outside [0x20 - 0x7E] as [\xHH], an absent or empty value as [-]);
    [Escape_json] as JSON strings want it (double quote and backslash
    behind a backslash, control bytes and DEL as [\u00HH], well-formed
    UTF-8 kept as it is, each byte of a malformed sequence as [\u00HH], an
    absent value empty), so that a line that puts values in quotes is
    valid UTF-8 JSON whatever the client sent; [Escape_none] the bytes as
    they are (an absent value [-]) but for C0 controls other than tab
    (CR, LF, NUL…), written [\xHH] (unlike nginx): a client's value never
    makes a line, or a syslog datagram, of its own. *)

type var =
  | Remote_addr | Remote_user | Time_local | Time_iso8601 | Msec | Request | Request_method
  | Request_uri | Args | Server_protocol | Scheme | Https | Status | Body_bytes_sent | Bytes_sent
  | Request_time | Host | Http_host | Server_name | Request_id | Pid | Ssl_protocol
  | Request_completion | Http_referer | Http_user_agent
  | Http of string  (** [$http_NAME]: the field [NAME] ([_] read as [-]) *)
(** nginx's variables, with nginx's names and meanings: [$remote_addr],
    [$remote_user] (the user of a Basic credential, checked or not),
    [$time_local] ([10/Oct/2000:13:55:36 +0000], UTC), [$time_iso8601]
    ([2000-10-10T13:55:36+00:00]), [$msec] (Unix time, milliseconds),
    [$request] (the request line, at most 8 KiB), [$request_method],
    [$request_uri] (the target as sent), [$args] / [$query_string],
    [$server_protocol], [$scheme], [$https] ([on] or empty), [$status],
    [$body_bytes_sent], [$bytes_sent] (what was handed to the socket: head
    and body over HTTP/1.1, DATA bytes over HTTP/2), [$request_time]
    (seconds, milliseconds), [$host] (the [Host] without its port, lower
    case; else the site's name), [$http_host], [$server_name] (the site's
    first name; empty for the server's own log), [$request_id] (the id
    {!Middleware.Request_id} gave the request; empty without it),
    [$pid], [$ssl_protocol], [$request_completion] ([OK] when the response
    went out whole, empty when cut), [$http_referer],
    [$http_user_agent], [$http_NAME]. Header values are cut at 2 KiB.
    [$upstream_*] are refused: there is no upstream. *)

type seg = Lit of string | Var of var

type custom = private { name : string; escape : escape; segs : seg array; need : int }
(** A compiled [log_format]: [need] bounds the bytes of one line. *)

type format = Common | Combined | Json | Vhost_combined | Custom of custom

val compile : name:string -> escape:escape -> string -> (custom, string) result
(** [compile ~name ~escape text]: [$name] and [${name}] are variables,
    everything else is written as is. [Error]: an unknown variable, a
    lone [$], a control character. Allocates (at configuration time). *)

val variable_names : string
(** How a message lists the variables. *)

val format_of_string : string -> format option
(** ["common"], ["combined"], ["vhost_combined"], ["json"]. *)

val format_names : string
(** How a message lists them. *)

type t

val create : fd:int -> format:format -> t
(** [create ~fd ~format] logs to [fd]; [fd < 0] is a disabled log on which
    every call is a no-op. A descriptor {!Log_dest.open_dest} opened for
    syslog gets syslog framing (each line sent as one datagram). Allocates (a 128 KiB buffer, more for a custom
    format whose line may be longer). *)

val enabled : t -> bool
(** [t] logs, or some site does ({!routes}): the client address is worth
    keeping. *)

val reopen_all : t -> unit
(** [reopen_all t]: SIGUSR1 in a worker. Every buffered line written
    first, then {!Log_dest.reopen_files} [~owner:None] and the error log
    ({!Log.reopen}); errors are logged, the old files kept. *)

val reopen : t -> string -> (unit, string) result
(** [reopen t path] flushes [t] and makes its descriptor the file at
    [path] (opened for appending, created 0644 if missing), as after a log
    rotation; on [Error] nothing changes. Allocates. *)

(** {2 Routes}
    A handler that serves several sites (a configuration file's) picks
    the log of each request: it sets [Slot.t.log_route] to [i + 1] for
    route [i] of the array it installed with {!use_routes}. A route
    writes to its own log ([main = false]; a disabled one for
    [access_log off]) or the worker's ([main]), with [server] as
    [$server_name]. *)

type route = { log : t; main : bool; server : string }

val use_routes : route array -> unit
(** [use_routes r] makes [r] the worker's routes (a physical comparison
    when they already are: call it per request). Does not allocate. *)

val routes_open : bool ref
(** Set when a route has a log of its own: the client address is kept
    even when the server's log is off. *)

val route_server : Slot.t -> string
(** The [server] of the request's route ([""] for the server's). *)

type 'r line_fields =
  now:int ->
  peer:Httpz.Bigstring.t ->
  peer_len:int ->
  src:Httpz.Bigstring.t ->
  req_off:int ->
  req_len:int ->
  status:int ->
  bytes:int ->
  ref_off:int ->
  ref_len:int ->
  ua_off:int ->
  ua_len:int ->
  elapsed_us:int ->
  complete:bool ->
  'r
(** The fields of a line, then ['r]. *)

val line : t -> unit line_fields
(** [line t ~now ~peer ~peer_len ~src ~req_off ~req_len ~status ~bytes
    ~ref_off ~ref_len ~ua_off ~ua_len ~elapsed_us ~complete] appends one
    line ([complete = false]: marked cut): the
    client address is the first [peer_len] bytes of [peer] (absent when
    [0]), the request line is [src] at [req_off], of [req_len] bytes
    ([req_len < 0]: absent), the [Referer] and [User-Agent] values are in
    [src] too (length [< 0]: absent; unused by [Common]), the time is Unix
    time [now]. Does not allocate. *)

val exchange_line : t -> (host_off:int -> host_len:int -> tls:int -> protocol:int -> unit) line_fields
(** {!line} with the exchange's fields: the [Host] value in [src] at
    [host_off] ([host_len < 0]: absent), the TLS version as the protocol
    numbers it ([0x0304]: TLS 1.3; [0]: plain TCP, [-1]: TLS of an unknown
    version) and the protocol as [major * 10 + minor] ([11]: HTTP/1.1,
    [20]: HTTP/2.0; [0]: unknown). {!line} is this with none of them
    known. Does not allocate. *)

val request : t -> Slot.t -> parsed:bool -> complete:bool -> unit
(** [request t c ~parsed ~complete] logs the response of connection [c]
    (its request head is in its read buffer when [parsed]), with the time
    since the request started ([Slot.t.started_ns]); [complete]: its last
    byte left, else it was cut and its body bytes are what left of it
    ([Slot.t.sent] past [head_len]). The line goes to the request's route
    ({!use_routes}; [t] is the worker's own log). Does not allocate. *)

val pending : t -> bool
(** [pending t] is [true] when lines wait in the buffer, or in a route's. *)

val syslog_dropped : unit -> int
(** Lines this process could not send to a syslog receiver since it
    started (its queue full or the receiver gone): dropped, never waited
    for. The error log says how many at most once every 10 s while lines
    are being lost. Does not allocate. *)

val flush : t -> unit
(** [flush t] writes the buffered lines, and the routes' ({!use_routes}).
    Errors are ignored (the log must not stop the server). *)
