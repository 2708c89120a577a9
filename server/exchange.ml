(* One handler lifecycle for HTTP/1.1 and HTTP/2 (see the .mli). The
   protocol carries out the step returned; no closure is passed or made,
   so a request answered normally allocates nothing here. *)

open Httpz
open Slot

type step = Send | Send_piece | Wait | Next_piece | Read_body | Send_error | Bare | Cut

(* HTTP/1.1 keeps the head in [out] until the socket takes it; HTTP/2
   queues HEADERS on the connection as the head ends, so past [Head]
   there is no taking it back. *)
let committed c =
  c.resp <> Idle && (c.sent > 0 || c.flushed || c.broken || (c.mode = H2_stream && c.resp <> Head))

let error_type = "text/plain; charset=utf-8"

(* The answer of a server with no renderer: the reason, as text. Through
   Ctx, so it is written in the slot's protocol, its head hooks run, and
   a HEAD gets no body. *)
let builtin cx status reason =
  Ctx.start cx status;
  Ctx.header cx Header_name.Content_type error_type;
  Ctx.body_string cx (reason ^ "\n")

(* [close]: over HTTP/1.1 the connection ends after the server's answer
   (a body may be unread); an HTTP/2 stream does not read it. *)
let error c status reason =
  if c.resp <> Done then run_cancels c;
  c.wait <- Running;
  if committed c then Cut
  else begin
    reset_response c;
    c.close <- true;
    c.unlogged <- Unlogged_request;
    let cx = Ctx.of_conn c in
    match if Errors.active None then Errors.answer cx status ~reason else builtin cx status reason with
    | () -> Send_error
    | exception e ->
        (* Errors.answer falls back to its text answer itself: this is a
           failure past that (configured fields that do not fit [out]). *)
        Log.error "error answer %d failed: %s" (Status.code status) (Printexc.to_string e);
        if committed c then Cut
        else begin
          reset_response c;
          c.status <- status;
          Bare
        end
  end

let internal_error c = error c Status.Internal_server_error (Status.reason Status.Internal_server_error)

(* Development mode, to a client on this host: the exception and its
   backtrace, written through Ctx in either protocol. *)
let dev_page c e bt =
  c.close <- true;
  match Handler_failure.write_page c e bt with
  | () -> Send_error
  | exception e ->
      Log.error "the development page failed: %s" (Printexc.to_string e);
      internal_error c

let rec run h c =
  c.state <- Handling;
  match h c with
  | () ->
      (* The common case first: answered in full, not waiting. *)
      if c.resp = Done && c.wait = Running then Send else answered c
  | exception e ->
      (* Now, before anything else can raise and replace it. *)
      let bt = Printexc.get_raw_backtrace () in
      failed c e bt

and answered c =
  if c.wait = Resumed then begin
    (* Its continuation is ready already: run it now. *)
    c.wait <- Running;
    run c.cont c
  end
  else if c.resp = Done then begin
    c.wait <- Running;
    Send
  end
  else if c.wait = Flush_wanted then begin
    c.wait <- Running;
    Send_piece
  end
  else if c.wait = Suspended then begin
    c.wait <- Running;
    c.state <- Handling;
    set_timer c Handler_timer c.sh.handler_ticks;
    Wait
  end
  else if c.wait = Piece_wanted then begin
    c.wait <- Running;
    Next_piece
  end
  else if c.resp = Idle && c.body = Body_wanted then Read_body
  else begin
    Handler_failure.incomplete c;
    internal_error c
  end

(* After a complete response, the response stands: a second answer
   ([Answered_twice]) or a late error is only logged. Before, the cancel
   hooks run (Handler_failure.log) and the server answers, or, if part of
   the response left, the exchange is cut; its log line then shows the
   status that was sent, cut. *)
and failed c e bt =
  let complete = c.resp = Done in
  Handler_failure.log c e bt ~answered:complete;
  c.wait <- Running;
  if complete then answered c
  else if committed c then Cut
  else if Handler_failure.wants_page c then dev_page c e bt
  else internal_error c

(* The request ends here for the application (Ctx.on_complete: not
   complete, no status; its continuations dropped); the 503 is the
   server's. *)
let handler_timeout c =
  Log.warn "a handler did not answer within the handler timeout (%s)" (Handler_failure.describe c);
  next_gen c;
  error c Status.Service_unavailable (Status.reason Status.Service_unavailable)

let ended c ~complete =
  if c.resp <> Done then run_cancels c;
  log_response c complete
