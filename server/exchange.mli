(** The life of one exchange (a request and the handler's answer to it),
    the same for an HTTP/1.1 connection ({!H1}) and an HTTP/2 stream
    ({!H2_exchange}): the handler runs, and what it did decides the next
    {!step}; a failure becomes the server's answer; the exchange's end runs
    its cancel hooks and writes its log line once.

    What differs per protocol is only how a step is carried out (HTTP/1.1:
    an action for the connection; HTTP/2: frames queued on the stream) and
    when part of a response counts as gone ({!committed}); the protocol
    module matches on the step this module returns. Nothing here allocates
    on the path of a request answered normally (test/server/loop's 0-words
    test); error paths log, which allocates.

    {b Rules} (test/server/exchange checks each over both protocols):
    {ul
    {- A handler (or continuation) that raises after a complete answer
       ({!Slot.Answered_twice} included): the answer stands, the failure is
       logged.}
    {- One that raises, or returns without answering or waiting, before:
       its {!Ctx.on_cancel} hooks run, then, unless part of the response is
       {!committed} ({!Cut}), the server answers 500: the development page
       ({!Handler_failure.write_page}) with [dev_errors] to a client on the
       loopback, else through the {!Errors} renderer when one is set, else
       the built-in text answer. Every such answer is written through
       {!Ctx} (so {!Ctx.on_head} hooks run and a HEAD gets no body).}
    {- The handler timeout ({!handler_timeout}): its continuations are
       dropped, its cancel hooks run, then its completion hooks
       ({!Ctx.on_complete}: not complete, no status), and a 503 replaces
       what it started, unless part of it is committed ({!Cut}); the log
       line shows the 503.}
    {- An exchange that ends early ({!ended} with [complete = false]: the
       client closed the connection or reset the stream, a write failed,
       the worker stopped): the cancel hooks run if the handler had not
       answered in full, then the completion hooks and the access-log line
       (cut: the status started, the body bytes that left).}} *)

type step =
  | Send  (** the response is complete: send it (HTTP/1.1: then the next request) *)
  | Send_piece  (** {!Ctx.flush}: send what [out] holds, then run [cont] *)
  | Wait  (** the handler waits ({!Ctx.suspend}); the handler timer is armed *)
  | Next_piece  (** {!Ctx.read_body}: hand the handler its next body piece *)
  | Read_body  (** {!Ctx.await_body}: read the body whole, then run the application again *)
  | Send_error
      (** the server wrote its own complete answer (a 4xx/5xx, the
          development page): send it; HTTP/1.1 closes the connection after
          it ([close] is set) *)
  | Bare
      (** the server's answer could not be written through {!Ctx} (the
          configured fields do not fit [out]); none of the response left:
          HTTP/1.1 writes its bare answer for [c.status], HTTP/2 resets the
          stream *)
  | Cut
      (** part of the response left and it cannot be completed: end the
          exchange (HTTP/1.1: close the connection; HTTP/2: reset the
          stream) *)

val committed : Slot.t -> bool
(** Part of the current response has left, so it can no longer be
    replaced by an error answer: over HTTP/1.1 a byte was handed to the
    socket (or flushed, or the write failed); over HTTP/2 its HEADERS were
    queued (they are once the head ends). *)

val run : (Slot.t -> unit) -> Slot.t -> step
(** [run h c] runs the handler (or continuation) [h] for [c] and says what
    comes next: {!answered} when it returns, the failure rules above when
    it raises. *)

val answered : Slot.t -> step
(** What the handler did, once it returned: a continuation ready already
    ([Resumed]) runs now. *)

val error : Slot.t -> Httpz.Status.t -> string -> step
(** [error c status reason]: the server's answer for a parsed request
    (413, 408, 500, 503...), [reason] its plain-text reason: the cancel
    hooks run (unless the answer was complete), then {!Cut} if part of the
    response is {!committed}, else the answer is written ({!Send_error}). *)

val handler_timeout : Slot.t -> step
(** The handler did not answer within [handler_timeout]: logged, the
    request ended for the application ({!Slot.next_gen}: continuations
    dropped, cancel and completion hooks run), then {!error} 503. *)

val ended : Slot.t -> complete:bool -> unit
(** [ended c ~complete]: the exchange is over, its response complete (all
    of it handed to the socket or queued) or not: the cancel hooks run if
    the handler had not answered in full, then {!Slot.log_response} (the
    completion hooks and the log line, at most once). The caller then
    moves [gen] on ({!Slot.next_gen}) and frees what the exchange held. *)
