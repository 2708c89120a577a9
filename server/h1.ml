(* The HTTP/1.1 connection state machine, sans I/O. Every function takes
   the slot [c] and answers with what the connection needs next; nothing
   here reads or writes a socket, and nothing on the keep-alive path
   allocates (test/server/loop's zero-allocation test, test/server/h1's
   transcripts). *)

open Httpz
open Slot

type action = Conn_action.t = Read | Write | Close | Linger | Wait | Detach | Nothing | Read_buffered | Push

(* Chunked bodies are decoded in the read buffer, after the head; a head
   leaving less room than this is refused (431). *)
let min_chunk_room = 512


let linger_ticks = 20 (* 2 s *)


(* {1 Opening and closing} *)

let next_gen = Slot.next_gen

let opened c ~fd ~listener ~peer_len =
  c.fd <- fd;
  c.proto <- H1_response.protocol;
  c.listener <- listener;
  c.peer_len <- peer_len;
  c.peer_family <- 0;
  next_gen c;
  c.state <- Reading_head;
  c.rpos <- 0;
  c.rlen <- 0;
  c.served <- 0;
  c.close <- false;
  c.broken <- false;
  c.held <- false;
  c.body <- No_body;
  c.unlogged <- Logged;
  set_timer c Header_timer c.sh.header_ticks;
  Read

(* {1 The access log} A response is logged once, when it is over: its last
   byte handed to the socket ([written]), or its connection closed first
   ([closed]: cut). The line then tells what the client got. *)
let log_response = Slot.log_response

(* Some of the current response left already: it can no longer be
   replaced by an error answer. *)
let on_wire c = c.resp <> Idle && (c.sent > 0 || c.flushed || c.broken)

let closed c =
  Exchange.ended c ~complete:false;
  c.fd <- -1;
  next_gen c;
  c.wait <- Running;
  c.cont <- ignore;
  c.upgrade <- (fun _ _ -> ());
  release_all c;
  reset_response c;
  c.state <- Free;
  clear_timer c;
  c.close <- false;
  c.broken <- false;
  c.held <- false;
  (* A Partial head at offset 0 must not be continued by the next
     connection's bytes. *)
  Request.reset (Slot.req c);
  c.body <- No_body;
  c.body_need <- 0;
  c.in_buf <- c.sh.empty

(* {1 The body clock} (Slot.start_body_clock, shared with HTTP/2) *)

let start_body_clock = Slot.start_body_clock
let min_body_rate = Slot.min_body_rate

let body_progress c n =
  Slot.body_progress c n;
  set_deadline c Body_timer c.body_deadline

(* {1 Responses the server writes itself} *)

let error_head = "Content-Type: text/plain; charset=utf-8\r\n"

(* An error answer's bytes; without the configured headers
   ([server_lines]) when they do not fit, so that an answer always goes
   out (every write buffer holds the bare one). *)
let write_error c status msg ~ctype ~configured =
  let out = c.out in
  let pos = Response.status_line out ~off:0 Version.Http_1_1 status in
  let pos = Response.date out ~off:pos c.sh.date ~now:c.sh.now in
  let pos = if configured then Response.write_string out ~off:pos c.sh.server_lines.(c.listener) else pos in
  let pos = Response.write_string out ~off:pos ctype in
  let pos =
    Response.header_int out ~off:pos Header_name.Content_length (String.length msg + 1)
  in
  let pos = Response.write_string out ~off:pos "Connection: close\r\n\r\n" in
  let pos = Response.write_string out ~off:pos msg in
  Response.write_string out ~off:pos "\n"

let write_answer c status msg ~ctype ~parsed =
  reset_response c;
  release_body c;
  take_out c;
  c.close <- true;
  let pos =
    try write_error c status msg ~ctype ~configured:true
    with Response.No_space -> write_error c status msg ~ctype ~configured:false
  in
  c.out_len <- pos;
  c.status <- status;
  c.resp <- Done;
  c.resp_bytes <- String.length msg + 1;
  c.head_len <- pos - c.resp_bytes;
  c.unlogged <- (if parsed then Unlogged_request else Unlogged_unparsed);
  c.after <- Then_close;
  c.state <- Writing;
  Write

(* A head that did not parse gets the fixed answer: there is no request to
   show an application. The answer for a parsed one is the exchange's
   (Exchange.error: cancel hooks, renderer, through Ctx). A response of
   which bytes already left cannot be replaced: the connection closes,
   and [closed] logs what the client got, cut. *)
let rec respond_error c status msg ~parsed =
  if parsed then exchange_step c (Exchange.error c status msg)
  else if on_wire c then Close
  else write_answer c status msg ~ctype:error_head ~parsed

(* What the exchange's step is over HTTP/1.1. An answer of the server's
   closes the connection after it; what the body held is not needed for
   it. *)
and exchange_step c (step : Exchange.step) =
  match step with
  | Send ->
      if c.after <> Then_detach then c.after <- Then_next;
      c.state <- Writing;
      Write
  | Send_piece ->
      c.after <- Then_resume;
      c.state <- Writing;
      Write
  | Wait -> Wait
  | Send_error ->
      release_body c;
      c.after <- Then_close;
      c.state <- Writing;
      Write
  | Bare -> write_answer c c.status (Status.reason c.status) ~ctype:error_head ~parsed:true
  | Cut -> Close
  | Next_piece | Read_body -> invalid_arg "H1: a body step outside a handler's run"

let status_of_code n = Status.of_code_or ~default:Status.Bad_request n

(* {1 Writing} *)

let hold c last = c.held <- last
let arm_write_timer c = set_timer c Write_timer c.sh.write_ticks

let shutting_down c =
  release_file c;
  c.held <- false

(* A non-stable bigstring body must not be read after the handler returned
   and another request may run: copy what is left into [out]. *)
let detach_bigstring c =
  if c.ext = Ext_bigstring && c.ext_len > 0 && not c.ext_stable then begin
    grow_out c (c.out_len - c.out_sent + c.ext_len);
    Bigstring.blit ~src:c.ext_bs ~src_off:c.ext_off ~dst:c.out ~dst_off:c.out_len ~len:c.ext_len;
    c.out_len <- c.out_len + c.ext_len;
    c.ext <- No_ext;
    c.ext_bs <- c.sh.empty;
    c.ext_len <- 0
  end

let blocked c =
  detach_bigstring c;
  (* What the response sends from the body was copied just now. *)
  if c.after = Then_next then release_body c;
  set_timer c Write_timer c.sh.write_ticks

(* {1 Reading} *)

let compact = compact_rbuf

(* Moves a parsed head to offset 0 to make room for its body. The parse
   state's spans are absolute offsets, so the head is parsed again there. *)
let relocate_head c =
  compact c;
  match Request.parse (Slot.req c) c.rbuf ~off:0 ~len:c.rlen with
  | Request.Complete ->
      c.body_start <- Request.head_length (Slot.req c);
      true
  | _ -> false

type decoded = Decoding | Needs_more | Complete | Malformed

(* Decodes what the read buffer holds of a chunked body into [body_store]. *)
let decode_chunks c =
  let result = ref Decoding in
  while !result = Decoding do
    match Chunked.decode (Slot.chunked c) c.rbuf ~off:c.cpos ~len:(c.rlen - c.cpos) with
    | Chunked.Data ->
        let off = Chunked.data_off (Slot.chunked c) and len = Chunked.data_len (Slot.chunked c) in
        ensure_body_store c (c.body_len + len);
        Bigstring.blit ~src:c.rbuf ~src_off:off ~dst:c.body_store ~dst_off:c.body_len ~len;
        c.body_len <- c.body_len + len;
        c.cpos <- c.cpos + Chunked.consumed (Slot.chunked c)
    | Chunked.Need_more ->
        (* Everything after the head is decoded: reuse that space. *)
        c.rlen <- c.body_start;
        c.cpos <- c.body_start;
        result := Needs_more
    | Chunked.Done ->
        c.cpos <- c.cpos + Chunked.consumed (Slot.chunked c);
        c.next_pos <- c.cpos;
        c.body_src <- c.body_store;
        c.body_off <- 0;
        result := Complete
    | Chunked.Error -> result := Malformed
  done;
  !result

let chunk_error c =
  let st = status_of_code (Chunked.error_status (Chunked.error (Slot.chunked c))) in
  respond_error c st (Status.reason st) ~parsed:true

(* {1 Requests} *)

(* Runs the application (Exchange: the lifecycle HTTP/2 shares) and
   turns what it did into the next action. *)
let rec run handler c =
  take_out c;
  step c (Exchange.run handler c)

and step c (s : Exchange.step) =
  match s with
  | Next_piece -> stream_next c
  | Read_body -> read_wanted_body c
  | Send | Send_piece | Wait | Send_error | Bare | Cut -> exchange_step c s

(* The handler asked for a body that is not all here: make room for it,
   send [100 Continue] if the client waits for one, and read it. *)
and read_wanted_body c =
  if Request.is_chunked (Slot.req c) then begin
    Chunked.set_max_body (Slot.chunked c) c.sh.max_body;
    if c.body_len > c.sh.max_body then too_large c else await_body c
  end
  else begin
    let cl = Request.content_length (Slot.req c) in
    let cap = Bigstring.length c.rbuf in
    if cl > c.sh.max_body then too_large c
    else if c.body_start - c.rpos + cl <= cap then begin
      (* It fits in the read buffer behind its head: read it there and
         hand the handler a span of [rbuf], with no copy. *)
      if c.body_start + cl > cap && not (relocate_head c) then
        respond_error c Status.Internal_server_error "Internal Server Error" ~parsed:false
      else begin
        c.body_off <- c.body_start;
        c.body_len <- cl;
        c.next_pos <- c.body_start + cl;
        await_body c
      end
    end
    else begin
      let avail = c.rlen - c.body_start in
      c.body_len <- 0;
      ensure_body_store c cl;
      if avail > 0 then
        Bigstring.blit ~src:c.rbuf ~src_off:c.body_start ~dst:c.body_store ~dst_off:0 ~len:avail;
      c.body_src <- c.body_store;
      c.body_off <- 0;
      c.body_len <- avail;
      c.body_need <- cl - avail;
      c.rlen <- c.body_start;
      c.next_pos <- c.body_start;
      await_body c
    end
  end

and too_large c =
  respond_error c Status.Content_too_large (Status.reason Status.Content_too_large) ~parsed:true

and await_body c =
  c.state <- Reading_body;
  start_body_clock c;
  continue_if_expected c

(* [100 Continue] before the first byte of a body the handler asked for,
   when the client waits for it. *)
and continue_if_expected c =
  if Request.expect_continue (Slot.req c) && not c.body_started then begin
    c.body_started <- true;
    reset_response c;
    take_out c;
    c.out_len <- Response.write_string c.out ~off:0 "HTTP/1.1 100 Continue\r\n\r\n";
    c.out_sent <- 0;
    c.after <- Then_body;
    c.state <- Writing;
    Write
  end
  else Read

(* {2 Streamed bodies} Pieces go to the handler from where they are: the
   read buffer behind the head (Content-Length), or where the chunked
   decoder finds them in it; one read buffer whatever the body's size. *)

(* Delivers the next piece to the handler's continuation, or reads more. *)
and stream_next c =
  match c.body with
  | Body_streamed -> deliver c c.rbuf ~off:0 ~len:0
  | No_body ->
      c.body <- Body_streamed;
      deliver c c.rbuf ~off:0 ~len:0
  | Body_ready ->
      (* Whole already (it came with the head): one piece, then the end;
         the handler's limit holds for it too. *)
      if c.body_len > c.body_limit then too_large c
      else begin
        c.body <- Body_streamed;
        deliver c c.body_src ~off:c.body_off ~len:c.body_len
      end
  | Body_unread ->
      c.body <- Body_streaming;
      if Request.is_chunked (Slot.req c) then begin
        Chunked.set_max_body (Slot.chunked c) c.body_limit;
        stream_next c
      end
      else begin
        let cl = Request.content_length (Slot.req c) in
        if cl > c.body_limit then too_large c
        else begin
          c.body_need <- cl;
          c.cpos <- c.body_start;
          stream_next c
        end
      end
  | Body_wanted -> invalid_arg "Connection: a body read whole cannot also be streamed"
  | Body_streaming ->
      if c.body_len > 0 && Bigstring.length c.body_store > 0 then begin
        (* Decoded before the handler asked (it came with the head). *)
        let len = c.body_len in
        c.body_len <- 0;
        deliver c c.body_store ~off:0 ~len
      end
      else if Request.is_chunked (Slot.req c) then stream_chunks c
      else begin
        let avail = c.rlen - c.cpos in
        let n = if avail < c.body_need then avail else c.body_need in
        if n > 0 then begin
          let off = c.cpos in
          c.cpos <- c.cpos + n;
          c.body_need <- c.body_need - n;
          deliver c c.rbuf ~off ~len:n
        end
        else if c.body_need = 0 then begin
          c.next_pos <- c.cpos;
          c.body <- Body_streamed;
          deliver c c.rbuf ~off:0 ~len:0
        end
        else begin
          (* All that is here was delivered: read the rest into the same
             space, no further than the body's end. *)
          c.rlen <- c.body_start;
          c.cpos <- c.body_start;
          wait_piece c
        end
      end

and stream_chunks c =
  match Chunked.decode (Slot.chunked c) c.rbuf ~off:c.cpos ~len:(c.rlen - c.cpos) with
  | Chunked.Data ->
      let off = Chunked.data_off (Slot.chunked c) and len = Chunked.data_len (Slot.chunked c) in
      c.cpos <- c.cpos + Chunked.consumed (Slot.chunked c);
      deliver c c.rbuf ~off ~len
  | Chunked.Need_more ->
      c.rlen <- c.body_start;
      c.cpos <- c.body_start;
      wait_piece c
  | Chunked.Done ->
      c.cpos <- c.cpos + Chunked.consumed (Slot.chunked c);
      c.next_pos <- c.cpos;
      c.body <- Body_streamed;
      deliver c c.rbuf ~off:0 ~len:0
  | Chunked.Error -> chunk_error c

and deliver c src ~off ~len =
  c.body_src <- src;
  c.piece_off <- off;
  c.piece_len <- len;
  run c.cont c

and wait_piece c =
  c.state <- Reading_body;
  if c.timer <> Body_timer then start_body_clock c;
  continue_if_expected c

(* The head of a request is parsed: decide what its body needs, then run
   the handler. The handler runs at once, before any body is read: a body
   complete in the buffer is handed over with it; any other body is read
   only if the handler asks for it (Ctx.await_body), and [100 Continue] is
   sent only then. A handler that answers without it closes the
   connection after the response, which lingers to drain what comes. *)
let begin_request c =
  let req = (Slot.req c) in
  let cap = Bigstring.length c.rbuf in
  c.body_start <- c.rpos + Request.head_length req;
  c.head_req <- (match Request.meth req with Meth.Head -> true | _ -> false);
  c.close <- false;
  if c.body_src != c.rbuf then c.body_src <- c.rbuf;
  c.body_off <- c.body_start;
  c.body_len <- 0;
  c.body_need <- 0;
  c.body_started <- c.rlen > c.body_start;
  let connect = match Request.meth req with Meth.Connect -> true | _ -> false in
  if connect && (Request.is_chunked req || Request.content_length req >= 0) then
    (* RFC 9110 §9.3.6: a CONNECT request has no content; what follows its
       head would be tunnel bytes, never the next request. *)
    respond_error c Status.Bad_request "CONNECT request with content" ~parsed:true
  else begin
    (* Bytes after a CONNECT head belong to the tunnel we do not open. *)
    if connect then c.close <- true;
    if Request.is_chunked req then begin
      if cap - c.body_start < min_chunk_room then ignore (relocate_head c : bool);
      if cap - c.body_start < min_chunk_room then
        respond_error c Status.Request_header_fields_too_large
          "The request head leaves no room for its body." ~parsed:true
      else begin
        Chunked.reset (Slot.chunked c);
        (* What came with the head is decoded now, and kept as for a body
           read whole: at most a read buffer's worth. *)
        Chunked.set_max_body (Slot.chunked c) c.sh.max_body;
        c.cpos <- c.body_start;
        c.next_pos <- c.body_start;
        match decode_chunks c with
        | Malformed -> chunk_error c
        | r ->
          c.body <- (if r = Complete then Body_ready else Body_unread);
          run c.sh.hooks.handler c
      end
    end
    else begin
      let cl = Request.content_length req in
      if cl <= 0 then begin
        c.next_pos <- c.body_start;
        c.body <- No_body;
        run c.sh.hooks.handler c
      end
      else if c.rlen - c.body_start >= cl then begin
        (* Already here, behind the head: a span of [rbuf], no copy. *)
        c.body_len <- cl;
        c.next_pos <- c.body_start + cl;
        c.body <- Body_ready;
        run c.sh.hooks.handler c
      end
      else begin
        c.next_pos <- c.body_start;
        c.body <- Body_unread;
        run c.sh.hooks.handler c
      end
    end
  end

(* The first line is whole and has three tokens, the last of which is no
   HTTP version, in any case ("INVALID CONNECTION PREFACE"): a client of
   some other protocol, h2c's "invalid preface". *)
let not_http c =
  let b = c.rbuf in
  let eol = Bigstring.index_from b ~off:0 ~stop:c.rlen '\n' in
  if eol < 0 then false
  else begin
    let e = if eol > 0 && Bigstring.unsafe_get b (eol - 1) = '\r' then eol - 1 else eol in
    let sp1 = Bigstring.index_from b ~off:0 ~stop:e ' ' in
    let sp2 = if sp1 < 0 then -1 else Bigstring.index_from b ~off:(sp1 + 1) ~stop:e ' ' in
    sp1 > 0 && sp2 > sp1 + 1 && e > sp2 + 1
    && Bigstring.index_from b ~off:(sp2 + 1) ~stop:e ' ' < 0
    && not (e - sp2 - 1 >= 5 && Bigstring.equal_caseless b ~off:(sp2 + 1) ~len:5 "HTTP/")
  end

(* Parses the next request buffered in [rbuf] and answers it, or says what
   is missing. *)
let process c =
  if c.rpos >= c.rlen then begin
    c.rpos <- 0;
    c.rlen <- 0;
    if c.sh.draining then Close
    else begin
      if c.served = 0 then begin
        if c.timer <> Header_timer then set_timer c Header_timer c.sh.header_ticks
      end
      else set_timer c Idle_timer c.sh.idle_ticks;
      release_idle c;
      Read
    end
  end
  else
    match Request.parse (Slot.req c) c.rbuf ~off:c.rpos ~len:(c.rlen - c.rpos) with
    | Request.Complete -> begin_request c
    | Request.Partial ->
        if c.timer <> Header_timer then set_timer c Header_timer c.sh.header_ticks;
        if c.rlen = Bigstring.length c.rbuf then compact c;
        Read
    | Request.Error ->
        let e = Request.error (Slot.req c) in
        (* h2c's "invalid preface" (RFC 9113 §3.4): no answer would be read. *)
        if c.served = 0 && c.sh.http2 && c.tls = No_tls && not_http c then Close
        else respond_error c (status_of_code (Parse_error.status e)) (Parse_error.describe e)
          ~parsed:false

(* {1 Events} *)

let written c =
  match c.after with
  | Then_body ->
      c.out_len <- 0;
      c.out_sent <- 0;
      c.sent <- 0;
      c.after <- Then_next;
      c.state <- Reading_body;
      set_deadline c Body_timer c.body_deadline;
      Read
  | Then_close ->
      log_response c (not c.broken);
      release_file c;
      c.state <- Lingering;
      set_timer c Linger_timer linger_ticks;
      Linger
  | Then_resume ->
      (* The handler's flushed output left: it goes on producing. *)
      c.out_len <- 0;
      c.out_sent <- 0;
      c.after <- Then_next;
      clear_timer c;
      run c.cont c
  | Then_detach ->
      log_response c true;
      clear_timer c;
      Detach
  | Then_next ->
      log_response c (not c.broken);
      let close = c.close || c.broken || c.sh.draining in
      next_gen c;
      reset_response c;
      release_body c;
      c.served <- c.served + 1;
      c.close <- false;
      if close then begin
        (* Unread body bytes may still be on their way: close(2) would
           answer them with a reset that can destroy the response. *)
        if c.rlen > c.next_pos || c.body = Body_unread || c.body = Body_streaming then begin
          c.state <- Lingering;
          set_timer c Linger_timer linger_ticks;
          Linger
        end
        else Close
      end
      else begin
        c.rpos <- c.next_pos;
        c.body <- No_body;
        c.state <- Reading_head;
        (* A pipelined request starts now, its bytes already here. *)
        if c.rpos < c.rlen then stamp c;
        process c
      end

let prepare_read c =
  match c.state with
  | Reading_head ->
      take_rbuf c;
      let cap = Bigstring.length c.rbuf in
      if c.rlen = cap then compact c;
      if c.rlen = cap then
        (* Cannot happen while max_head = read_buffer (the parser refuses a
           head that fills the buffer), but never spin on a full buffer. *)
        respond_error c Status.Request_header_fields_too_large
          (Parse_error.describe Parse_error.Head_too_large) ~parsed:false
      else begin
        if c.in_buf != c.rbuf then c.in_buf <- c.rbuf;
        c.in_off <- c.rlen;
        c.in_len <- cap - c.rlen;
        Read
      end
  | Reading_body when c.body = Body_streaming && not (Request.is_chunked (Slot.req c)) ->
      (* No further than the body's end: what follows is the next request. *)
      let room = Bigstring.length c.rbuf - c.rlen in
      c.in_buf <- c.rbuf;
      c.in_off <- c.rlen;
      c.in_len <- (if room < c.body_need then room else c.body_need);
      Read
  | Reading_body ->
      if (not (Request.is_chunked (Slot.req c))) && c.body_src == c.body_store && c.body_need > 0 then begin
        c.in_buf <- c.body_store;
        c.in_off <- c.body_len;
        c.in_len <- c.body_need
      end
      else begin
        c.in_buf <- c.rbuf;
        c.in_off <- c.rlen;
        c.in_len <- Bigstring.length c.rbuf - c.rlen
      end;
      Read
  | Lingering ->
      read_scratch c;
      Read
  | Writing -> Write
  | Handling -> Wait
  | Free -> Close

let body_arrived c =
  c.state <- Reading_head;
  c.body <- Body_ready;
  run c.sh.hooks.app c

(* [sniff]: a first request's bytes, which may be HTTP/2's preface. *)
let[@inline] received_bytes c n ~sniff =
  if n <= 0 then Close (* EOF: in a head, a body, or while draining *)
  else
    match c.state with
    | Reading_head ->
        if c.rlen <= c.rpos then stamp c;
        c.rlen <- c.rlen + n;
        (* HTTP/2 with prior knowledge (h2c): the client preface is no
           HTTP/1.1 request, and the switch hands the connection over. *)
        if sniff && c.rpos = 0 && c.tls = No_tls && c.sh.http2 then
          match H2_frame.check_preface c.rbuf ~off:0 ~len:c.rlen with
          | H2_frame.Preface -> Detach
          | Need_more -> Read
          | Not_preface -> process c
        else process c
    | Reading_body when c.body = Body_streaming ->
        body_progress c n;
        c.rlen <- c.rlen + n;
        stream_next c
    | Reading_body ->
        body_progress c n;
        if Request.is_chunked (Slot.req c) then begin
          c.rlen <- c.rlen + n;
          match decode_chunks c with
          | Complete -> body_arrived c
          | Malformed -> chunk_error c
          | Decoding | Needs_more -> Read
        end
        else if c.body_src == c.body_store && c.body_need > 0 then begin
          c.body_len <- c.body_len + n;
          c.body_need <- c.body_need - n;
          if c.body_need = 0 then body_arrived c else Read
        end
        else begin
          c.rlen <- c.rlen + n;
          if c.rlen >= c.next_pos then body_arrived c else Read
        end
    | Lingering -> Read
    | Writing -> Write
    | Handling -> Wait
    | Free -> Close

let received c n = received_bytes c n ~sniff:(c.served = 0)
let later_received c n = received_bytes c n ~sniff:false

let timeout c =
  clear_timer c;
  match c.state with
  | Reading_head ->
      if c.rlen > c.rpos then
        respond_error c Status.Request_timeout (Status.reason Status.Request_timeout)
          ~parsed:false
      else Close
  | Reading_body ->
      if c.resp = Idle then
        respond_error c Status.Request_timeout (Status.reason Status.Request_timeout) ~parsed:true
      else Close
  | Handling -> exchange_step c (Exchange.handler_timeout c)
  | Writing | Lingering | Free -> Close

let resume c ~gen k =
  if c.gen <> gen then Nothing (* the request it belonged to has ended *)
  else
    match c.wait with
    | Suspended ->
        (* The handler has not returned yet: [k] runs when it does. *)
        c.wait <- Resumed;
        c.cont <- k;
        Nothing
    | Running | Resumed | Flush_wanted | Piece_wanted ->
        if c.state = Handling then begin
          clear_timer c;
          run k c
        end
        else Nothing

let detach c =
  next_gen c;
  let rest =
    if c.rlen > c.next_pos then Bigstring.sub_string c.rbuf ~off:c.next_pos ~len:(c.rlen - c.next_pos)
    else ""
  in
  reset_response c;
  release_body c;
  rest

let idle c = c.state = Reading_head && c.rpos >= c.rlen
