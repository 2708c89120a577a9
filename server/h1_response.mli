(** How an HTTP/1.1 response goes on the wire: {!Slot.protocol} for
    HTTP/1.1, which {!H1.opened} gives every connection.

    - The head starts with the status line, [Date] and the server's own
      fields; the handler's fields ({!Ctx.header} and the like) follow as
      text lines ["Name: value\r\n"] written by {!Httpz.Response}'s
      writers, a prepared set as its text ({!Httpz.Prepared_fields.text}),
      up to [out_limit] (the reserve is the framing's).
    - Its end adds the framing: [Content-Length], or
      [Transfer-Encoding: chunked] for a streamed body (none for HTTP/1.0,
      whose streamed body is delimited by the close instead), and the
      keep-alive decision: [Connection: close] when the request asked for
      it, when the server drains, or when a body was not read (the
      connection then lingers to drain it); [Connection: keep-alive] for
      an HTTP/1.0 client that keeps it.
    - Chunks are framed in [out], which grows: nothing is written while
      the handler runs (no I/O here), the backend writes them when it
      returns or calls [Ctx.flush]. More than 16 MiB waiting so fails the
      handler with [Invalid_argument] (a 500 if nothing was sent yet).
    - A 101 ends with [Connection: Upgrade] and hands the socket over once
      sent (refused on TLS: OpenSSL owns those bytes).

    Nothing here allocates on the request path. *)

val protocol : Slot.protocol

