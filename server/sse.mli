(** Server-sent events ({{:https://html.spec.whatwg.org/multipage/server-sent-events.html} HTML
    §9.2}): a [text/event-stream] response the browser's [EventSource]
    reads as a sequence of events.

    {[
      Sse.start c;
      Sse.event c ~id:"1" "first";
      Ctx.flush c (fun c -> Sse.event c ~id:"2" "second"; Sse.close c)
    ]}

    Events are chunks of the response ({!Ctx.chunk}): they leave when the
    handler returns, or at {!Ctx.flush}, whose continuation runs once the
    client took them (the backpressure: produce the next event there, or
    after a {!Ctx.sleep}). A stream may stay open as long as it makes
    progress: [Server.config.handler_timeout] bounds each wait on its own
    (one {!Ctx.sleep} or {!Ctx.suspend}), not the stream, and
    [Server.config.write_timeout] bounds a client that stops reading.
    Every function allocates the event's text. *)

val start : Ctx.t -> unit
(** [start c] answers [200] with [Content-Type: text/event-stream],
    [Cache-Control: no-cache] and the pending headers
    ({!Respond.add_header}), opens the chunked body and sends one empty
    comment line ([:]), which clients ignore: browsers fire
    [EventSource]'s [open] only once a first body byte arrives, so a
    stream whose first event comes later still opens at once. *)

val event : Ctx.t -> ?event:string -> ?id:string -> ?retry:int -> string -> unit
(** [event c ?event ?id ?retry data] sends one event. [data] may hold
    several lines (separated by LF, CRLF or CR): each becomes its own
    [data:] line, and the client joins them with LF.
    @raise Invalid_argument when [event] or [id] holds CR or LF (or [id]
    a NUL, which makes clients ignore it), or [retry] is negative. *)

val comment : Ctx.t -> string -> unit
(** [comment c text] sends [: text], which clients ignore: a keep-alive
    through proxies that close idle connections. Same line rule as
    [event]'s name. *)

val close : Ctx.t -> unit
(** [close c] ends the response ({!Ctx.chunked_end}). *)

val format : ?event:string -> ?id:string -> ?retry:int -> string -> string
(** [format ?event ?id ?retry data] is the text {!event} sends: optional
    [event:], [id:] and [retry:] lines, one [data:] line per line of
    [data], then an empty line. *)
