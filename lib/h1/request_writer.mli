(** HTTP/1.1 request-head writer for a client (RFC 9112 §3, §6, §7.1),
    with the chunk framing of a streamed request body and its trailers.

    Writes into a window of a caller's bigstring given to {!start}. No
    function raises or allocates on bad input or a full window: the first
    failure is kept ({!error}, sticky until the next {!start}) and every
    later call then writes nothing, so a request is written as a straight
    sequence of calls and checked once with {!finish}:

    {[
      Request_writer.start w buf ~off ~len;
      Request_writer.request_line w Meth.Post ~target:"/upload";
      Request_writer.host w "example.com";
      Request_writer.field w Header_name.Content_type "text/plain";
      Request_writer.chunked w;
      Request_writer.end_head w;
      match Request_writer.finish w with
      | -1 -> (* Request_writer.error w: No_space, Bad_value, ... *)
      | n -> (* send buf.{off .. off+n-1} *)
    ]}

    {b Injection.} Every value from the caller is checked: a value holding
    a control byte other than HTAB (CR, LF and NUL above all, which would
    end the field or the head: header injection, request smuggling) is
    {!Bad_value}; a field name must be a token ({!Bad_name}); a target
    must be visible ASCII without ['#'] ({!Bad_target}); a method a token
    ({!Bad_method}).

    {b Framing is written by its own functions.} [Content-Length],
    [Transfer-Encoding], [Host] and [Expect] given to {!field} and friends
    are {!Bad_name}: {!content_length}, {!chunked}, {!host} and
    {!expect_continue} write them, and at most one framing per head
    ({!Bad_framing}), so a head cannot announce two body lengths. A head
    without {!host} is {!Bad_framing} at {!end_head} (RFC 9112 §3.2).

    {b Order.} The writer knows where the message is: request line, head
    fields, {!end_head}; then nothing (no body, or a [Content-Length] body
    the caller sends itself) or, after {!chunked}, chunks ({!chunk_header}
    then {!chunk_end}), {!last_chunk}, trailers, {!end_trailers}. A call out
    of turn (a field after {!end_head}, a chunk in a [Content-Length] body,
    a second request line) is {!Bad_order} and writes nothing. {!start}
    begins a new message; {!resume} continues the current one (a body's
    next batch of chunks) in a new window.

    {b Allocation.} None, except {!create}. *)

type error =
  | No_error
  | No_space  (** the window is full: nothing of the failed call was written *)
  | Bad_method
  | Bad_target
  | Bad_name
  | Bad_value
  | Bad_framing
  | Bad_order  (** a call out of turn (see Order above) *)

val error_to_string : error -> string

type t

val create : unit -> t

val start : t -> Bigstring.t -> off:int -> len:int -> unit
(** [start t buf ~off ~len] begins a new message (its request line
    first) in [buf.{off .. off+len-1}], clearing the error, framing, Host
    and order state (what the last message left unfinished is dropped). The writer keeps [buf] until the next [start].
    @raise Invalid_argument if the window is outside [buf] (start-up
    code's bug, not input). *)

val error : t -> error
val ok : t -> bool

val finish : t -> int
(** Bytes written since {!start}, or [-1] after an error. *)

val written : t -> int
(** Bytes written since {!start} (whatever the error). *)

val pos : t -> int
(** Offset in the buffer of the next byte to write. *)

(** {1 Head} *)

val request_line : t -> Meth.t -> target:string -> unit
(** [METHOD SP target SP HTTP/1.1 CRLF]. [Meth.Other] is {!Bad_method}: use
    {!request_line_token}. *)

val request_line_token : t -> meth:string -> target:string -> unit

val host : t -> string -> unit
(** The Host field, once per head. *)

val field : t -> Header_name.t -> string -> unit
(** A known field ([Header_name.Other] is {!Bad_name}: use {!field_other}). *)

val field_other : t -> name:string -> string -> unit
val field_int : t -> Header_name.t -> int -> unit
(** A non-negative decimal value. *)

val field_span : t -> Bigstring.t -> Header_name.t -> Span.t -> unit
(** A value taken from [src]'s span (e.g. a field of a parsed request, for a
    proxy); checked like any other value. *)

val content_length : t -> int -> unit
val chunked : t -> unit
(** [Transfer-Encoding: chunked]: the body follows as {!chunk}s, then
    {!last_chunk}, trailers and {!end_trailers}. *)

val expect_continue : t -> unit
(** [Expect: 100-continue] (RFC 9110 §10.1.1): send the head, then wait for
    a 100 ({!Response_head.Interim}) or a final status before the body. *)

val connection_close : t -> unit

val end_head : t -> unit
(** The empty line ending the head. *)

val resume : t -> Bigstring.t -> off:int -> len:int -> unit
(** [resume t buf ~off ~len]: like {!start} (the error cleared, the
    window new), but the message goes on where it was: a chunked body's
    next batch once the head, or the previous batch, was sent.
    @raise Invalid_argument as {!start}. *)

(** {1 Chunked body} After {!end_head} of a head with {!chunked}, in the
    same window or one given to {!resume} per batch. *)

val chunk : t -> Bigstring.t -> off:int -> len:int -> unit
(** One chunk holding [src.{off .. off+len-1}] (size line, data, CRLF);
    [len = 0] writes nothing (an empty chunk would end the body). *)

val chunk_header : t -> int -> unit
(** The size line of a chunk of [n > 0] bytes whose data the caller sends
    itself (e.g. straight from a file), then {!chunk_end}. *)

val chunk_end : t -> unit

val last_chunk : t -> unit
(** ["0\r\n"]: then {!trailer}s and {!end_trailers}. *)

val trailer : t -> Header_name.t -> string -> unit
(** A trailer field; one {!Chunked.forbidden_trailer} names is {!Bad_name}. *)

val trailer_other : t -> name:string -> string -> unit
val end_trailers : t -> unit
