(** [httpz parse]: what the parser saw in a raw request, for people and
    tools debugging why a request is refused. *)

type outcome = Valid | Invalid | Incomplete

val run : json:bool -> string -> string * outcome
(** [run ~json bytes] parses [bytes] as one request (head, then a
    Content-Length or chunked body if the head announces one) and is the
    report to print with the outcome. The JSON report is one object:
    [status], [error] and [http_status] (on error only), [method],
    [target], [version], [headers] (pairs, names as sent, values OWS-trimmed,
    in order), [content_length] (or null), [chunked], [keep_alive],
    [expect_continue], [head_length], and when the whole body is present
    [message_length] and [body] (decoded). Strings escape bytes below 0x20
    and from 0x7F as [\u00XX]. *)

val exit_code : outcome -> int
(** 0 valid, 1 invalid, 2 incomplete. *)
