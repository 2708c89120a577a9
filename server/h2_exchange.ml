(* The exchange of one HTTP/2 stream: a Slot.t (from the worker's pool, not
   a connection slot) that handlers see as a Ctx.t. The request head is
   written into its read buffer as an HTTP/1.1 head and parsed there by
   Httpz.Request, so every validation and span handlers rely on is the
   one they know; the response head the handler writes into [out] (our own
   well-formed lines) becomes HEADERS through the connection's
   H2_connection, and its body DATA (see the .mli). *)

open Httpz
open Slot
module C = H2_connection

let session = H2_response.session
let queue_rest = H2_response.queue_rest
let queue_piece = H2_response.queue_piece
let protocol = H2_response.protocol

(* What the exchange waits for, and until when (its own timer, which the
   connection's mirrors at the earliest: see [next_deadline]): set when it
   starts waiting, moved only by its own progress, so a client busy on
   other streams (or sending PINGs) does not keep a stalled one alive. *)
let writing x =
  x.state <- Writing;
  set_timer x Write_timer x.sh.write_ticks

(* A wait for body bytes: the body's clock (Slot.start_body_clock) starts
   at the first, and later waits keep its deadline, which only bytes
   received move on (Slot.body_progress, at the slowest rate HTTP/1.1
   allows), so a byte now and then does not keep a stream alive. *)
let reading_body x =
  x.state <- Reading_body;
  if x.body_deadline = 0 then start_body_clock x else set_deadline x Body_timer x.body_deadline

(* {1 Handlers} As H1's: run, then turn what the handler did into the next
   step; the connection's action is decided by H2_session afterwards. *)

let error_head = "text/plain; charset=utf-8"

(* What one connection's whole bodies may hold credited: the larger of
   one [max_body] (a single body always fits) and the connection window
   HTTP/2 gives by default. *)
let whole_budget x = if x.sh.max_body > 1 lsl 20 then x.sh.max_body else 1 lsl 20

(* [len] more bytes of [x]'s whole body: the stream's window credited, and
   the connection's as far as the budget allows (the rest owed). One
   exchange at a time passes the budget ([whole_pass]): it is credited in
   full, so a connection whose bodies together exceed the budget still
   completes them one after another instead of stalling them all (the
   connection then holds at most the budget and one [max_body]). *)
let credit_whole s x len =
  if len > 0 then begin
    let stream = x.h2s.stream in
    let room = whole_budget x - s.whole_bodies in
    let now =
      if len <= room || s.whole_pass = stream then len
      else if s.whole_pass = 0 then begin
        s.whole_pass <- stream;
        len
      end
      else if room > 0 then room
      else 0
    in
    if now > 0 then begin
      C.consumed s.h2c ~stream now;
      s.whole_bodies <- s.whole_bodies + now;
      x.h2s.whole_credited <- x.h2s.whole_credited + now
    end;
    (* Owed: credited to neither window, so the stream's own window (not
       the connection's, which the exchange passing the budget needs)
       bounds what the client can send it meanwhile. *)
    if len > now then x.h2s.conn_debt <- x.h2s.conn_debt + (len - now)
  end

(* [y] is paid [n] of what it is owed. *)
let pay s y n =
  C.consumed s.h2c ~stream:y.h2s.stream n;
  y.h2s.conn_debt <- y.h2s.conn_debt - n;
  y.h2s.whole_credited <- y.h2s.whole_credited + n;
  s.whole_bodies <- s.whole_bodies + n

(* [x] ends: its whole body leaves the budget (and the pass, if it held
   it), and what other exchanges are owed is paid: in full to the one
   that takes the pass, then as far as the budget allows. Its own debt
   the stream's close pays (H2_connection credits what a closed stream
   held). *)
let[@inline never] release_whole s x =
  begin
    s.whole_bodies <- s.whole_bodies - x.h2s.whole_credited;
    x.h2s.whole_credited <- 0;
    if x.h2s.conn_debt > 0 && C.stream_state s.h2c ~stream:x.h2s.stream <> 0 then
      C.consumed s.h2c ~stream:x.h2s.stream x.h2s.conn_debt;
    x.h2s.conn_debt <- 0;
    if s.whole_pass = x.h2s.stream then s.whole_pass <- 0;
    for i = 0 to s.nstreams - 1 do
      let y = s.streams.(i) in
      if y != x && y.h2s.conn_debt > 0 then begin
        if s.whole_pass = 0 then begin
          s.whole_pass <- y.h2s.stream;
          pay s y y.h2s.conn_debt
        end
        else begin
          let room = whole_budget y - s.whole_bodies in
          if room > 0 then pay s y (if y.h2s.conn_debt < room then y.h2s.conn_debt else room)
        end
      end
    done
  end

(* The body bytes of [x] that left, for the log line of a response cut
   short (Access_log.body_sent): as HTTP/1.1 counts what the socket took,
   HTTP/2 counts what went into the connection's output. Read while the
   stream is open, before a reset of ours closes it; a reset by the
   client says it with its event ([cancel ~sent]). *)
let account h2c x =
  let n = C.data_sent h2c ~stream:x.h2s.stream in
  if n >= 0 then x.sent <- n

(* The lifecycle is HTTP/1.1's (Exchange); here what each step is on a
   stream. *)
let rec run h x = step x (Exchange.run h x)

and step x (s : Exchange.step) =
  match s with
  | Send | Send_error ->
      writing x;
      queue_rest x
  | Send_piece ->
      writing x;
      queue_piece x
  | Wait -> ()
  | Next_piece -> stream_next x
  | Read_body -> wanted x
  | Bare | Cut -> reset x H2_error.Internal_error

(* The server's answer (413, 408): through the exchange's rules, as over
   HTTP/1.1; a reset once its HEADERS left. *)
and answer_error x status = step x (Exchange.error x status (Status.reason status))

and reset x code =
  if x.resp <> Done then run_cancels x;
  account (session x).h2c x;
  C.reset_stream (session x).h2c ~stream:x.h2s.stream code;
  x.resp <- Done;
  x.broken <- true;
  x.h2s.fin_queued <- true;
  writing x

(* {2 Request bodies} DATA goes to the handler as it asks: a piece it
   waits for straight from the connection's read buffer, otherwise into
   [body_store]. Bytes are credited to the client's windows as the handler
   takes them, so a body nobody reads stops at the stream window. A body
   read whole (Ctx.await_body) is credited as it arrives, up to
   [max_body], to its stream's window; to the connection's only while the
   connection's whole bodies stay within [whole_budget] (see
   [credit_whole]): past it the client waits for exchanges to end, so one
   connection makes the worker hold at most that much, not a body per
   stream. *)

and wanted x =
  let s = session x in
  if x.body_len > x.sh.max_body then answer_error x Status.Content_too_large
  else begin
    credit_whole s x x.body_len;
    if x.h2s.peer_done then body_arrived x else reading_body x
  end

and body_arrived x =
  x.body <- Body_ready;
  x.body_src <- x.body_store;
  x.body_off <- 0;
  run x.sh.hooks.app x

and stream_next x =
  match x.body with
  | Body_streamed | No_body ->
      x.body <- Body_streamed;
      deliver x x.sh.empty ~off:0 ~len:0
  | Body_ready ->
      x.body <- Body_streamed;
      deliver x x.body_src ~off:x.body_off ~len:x.body_len
  | Body_unread ->
      x.body <- Body_streaming;
      x.body_need <- 0;
      stream_next x
  | Body_wanted -> invalid_arg "Ctx.read_body: the body is read whole (await_body)"
  | Body_streaming ->
      if x.body_len > 0 then begin
        let len = x.body_len in
        x.body_len <- 0;
        C.consumed (session x).h2c ~stream:x.h2s.stream len;
        deliver x x.body_store ~off:0 ~len
      end
      else if x.h2s.peer_done then begin
        x.body <- Body_streamed;
        deliver x x.sh.empty ~off:0 ~len:0
      end
      else reading_body x

and deliver x src ~off ~len =
  x.body_need <- x.body_need + len;
  if x.body_need > x.body_limit then answer_error x Status.Content_too_large
  else begin
    x.body_src <- src;
    x.piece_off <- off;
    x.piece_len <- len;
    run x.cont x
  end

let buffer_body x buf ~off ~len =
  if len > 0 then begin
    ensure_body_store x (x.body_len + len);
    Bigstring.blit ~src:buf ~src_off:off ~dst:x.body_store ~dst_off:x.body_len ~len;
    x.body_len <- x.body_len + len
  end

let data x buf ~off ~len ~fin =
  let h2c = (session x).h2c in
  if fin then x.h2s.peer_done <- true;
  (* Body bytes arrived: they buy time at the body's rate. *)
  if x.body_deadline > 0 then begin
    body_progress x len;
    if x.timer = Body_timer then set_deadline x Body_timer x.body_deadline
  end;
  match x.body with
  | Body_streaming when x.state = Reading_body && x.body_len = 0 ->
      (* The handler waits for a piece: it reads it where it is. *)
      if len > 0 then begin
        C.consumed h2c ~stream:x.h2s.stream len;
        x.state <- Handling;
        deliver x buf ~off ~len
      end
      else if fin then begin
        x.state <- Handling;
        x.body <- Body_streamed;
        deliver x x.sh.empty ~off:0 ~len:0
      end
  | Body_wanted ->
      if x.body_len + len > x.sh.max_body then begin
        C.consumed h2c ~stream:x.h2s.stream len;
        if x.resp = Idle then answer_error x Status.Content_too_large
      end
      else begin
        buffer_body x buf ~off ~len;
        credit_whole (session x) x len;
        if x.h2s.peer_done && x.state = Reading_body then body_arrived x
      end
  | Body_unread | Body_streaming -> buffer_body x buf ~off ~len
  | No_body | Body_ready | Body_streamed -> C.consumed h2c ~stream:x.h2s.stream len

(* {1 Opening} *)

exception Too_large

(* A Host field naming another host than :authority, or a :path that is
   not origin-form: the request is malformed (RFC 9113 §8.3.1), answered
   400 as nginx does, so a site's rules can never be chosen by one name
   and applied under another. *)
exception Host_mismatch

let same_host b (a : Span.t) (h : Span.t) =
  let n = Span.len a in
  n = Span.len h
  && begin
    let i = ref 0 in
    while !i < n && Char.lowercase_ascii (Bigstring.unsafe_get b (Span.off a + !i))
                    = Char.lowercase_ascii (Bigstring.unsafe_get b (Span.off h + !i)) do incr i done;
    !i = n
  end

(* [len] bytes by whole words when both buffers have room for the last
   word: up to 7 bytes past the end are read and written too, which the
   next piece of the line covers. *)
let copy_short src soff dst doff len =
  let words = (len + 7) land lnot 7 in
  if soff + words <= Bigstring.length src && doff + words <= Bigstring.length dst then begin
    let i = ref 0 in
    while !i < len do
      Bigstring.unsafe_set64 dst (doff + !i) (Bigstring.unsafe_get64 src (soff + !i));
      i := !i + 8
    done
  end
  else Bigstring.blit ~src ~src_off:soff ~dst ~dst_off:doff ~len

(* [s] moved [by] bytes on: the offset is the int's upper part. *)
let[@inline] shifted by (s : Span.t) = Span.unsafe_of_int ((s :> int) + (by lsl 31))

(* The head's fields built as [present] does, but the Cookie fields
   joined by "; " into one, written at [at] (room for it is there). *)
let[@inline] build_field req b ~plain id ~name ~value =
  if plain then Request.build_field_checked req b id ~name ~value else Request.build_field req b id ~name ~value

let[@inline never] fields_joining_cookies req b h ~line ~plain ~at =
  let n = H2_head.field_count h and i = ref 0 and ok = ref true in
  let stop = ref at and cookie_name = ref Span.empty in
  while !ok && !i < n do
    let id = H2_head.field_name h !i
    and name = shifted line (H2_head.field_name_span h !i)
    and value = shifted line (H2_head.field_value h !i) in
    if id = Header_name.Cookie then begin
      if !stop > at then begin
        Bigstring.unsafe_set b !stop ';';
        Bigstring.unsafe_set b (!stop + 1) ' ';
        stop := !stop + 2
      end
      else cookie_name := name;
      let len = Span.len value in
      Bigstring.blit ~src:b ~src_off:(Span.off value) ~dst:b ~dst_off:!stop ~len;
      stop := !stop + len
    end
    else ok := build_field req b ~plain id ~name ~value;
    incr i
  done;
  !ok && build_field req b ~plain Header_name.Cookie ~name:!cookie_name ~value:(Span.make ~off:at ~len:(!stop - at))

(* The head presented to Ctx.request, in [rbuf]: a request line for the
   access log ("GET /a HTTP/2.0"), then the decoded names and values as
   they lie in the worker's workspace (their spans shifted by the line's
   length), and "host" when :authority stands in for a missing Host
   (RFC 9113 §8.3.1). Request checks them as its parser would; no
   HTTP/1.1 text is written and parsed again. *)
let present x h2c =
  let h = C.head h2c and src = C.head_buffer h2c in
  let target =
    match H2_head.meth h with Meth.Connect -> H2_head.authority h | _ -> H2_head.path h
  in
  (* :path is origin-form, or "*" for OPTIONS (RFC 9113 §8.3.1): an
     absolute URI there would name a host of its own beside :authority. *)
  (match H2_head.meth h with
   | Meth.Connect -> ()
   | _ -> (
       if Span.len target = 0 then raise_notrace Host_mismatch;
       match Bigstring.unsafe_get src (Span.off target) with
       | '/' -> ()
       | '*' when Span.len target = 1 -> ()
       | _ -> raise_notrace Host_mismatch));
  let m = H2_head.method_span h in
  let used = C.head_length h2c in
  let m_len = Span.len m and t_len = Span.len target in
  let n = H2_head.field_count h in
  (* Cookie crumbs (RFC 9113 §8.2.3: a client may split Cookie into one
     field per pair, for HPACK) are one Cookie field for the handler,
     joined by "; " after the other fields, so 300 crumbs are one field,
     not 300 of the header count. *)
  let cookies = H2_head.cookies h in
  let merged = if cookies > 1 then H2_head.cookie_bytes h + (2 * (cookies - 1)) else 0 in
  take_head_rbuf x (m_len + t_len + 13 + used + 4 + merged);
  let b = x.rbuf in
  let t_off = m_len + 1 in
  let line = t_off + t_len + 11 in
  (* Room for the line, the fields, a "host" name and the joined cookie;
     each piece is written left to right, covering what the one before
     wrote past its end. *)
  if line + used + 4 + merged > Bigstring.length b then raise_notrace Too_large;
  copy_short src (Span.off m) b 0 m_len;
  Bigstring.unsafe_set b m_len ' ';
  copy_short src (Span.off target) b t_off t_len;
  Bigstring.unsafe_blit_from_string " HTTP/2.0\r\n" ~src_off:0 b ~dst_off:(t_off + t_len) ~len:11;
  Bigstring.blit ~src ~src_off:0 ~dst:b ~dst_off:line ~len:used;
  let req = Slot.req x in
  (* H2_head matched the method's bytes already (a known one is a token). *)
  let ok =
    ref
      (Request.build_start_known req b ~version:Version.Http_2 ~meth:(Span.make ~off:0 ~len:(Span.len m)) ~known:(H2_head.meth h)
         ~target:(Span.make ~off:t_off ~len:(Span.len target)))
  in
  (* Plain values (the pseudo-headers' too) passed the check build_field
     would make, in H2_head; names are lower-case tokens there. *)
  let i = ref 0 and plain = H2_head.values_plain h in
  let stop = line + used in
  if merged = 0 then
    while !ok && !i < n do
      let id = H2_head.field_name h !i
      and name = shifted line (H2_head.field_name_span h !i)
      and value = shifted line (H2_head.field_value h !i) in
      ok :=
        if plain then Request.build_field_checked req b id ~name ~value
        else Request.build_field req b id ~name ~value;
      incr i
    done
  else if !ok then ok := fields_joining_cookies req b h ~line ~plain ~at:(stop + 4);
  if !ok && H2_head.has_authority h then begin
    if not (Request.has_host req) then begin
      Bigstring.unsafe_blit_from_string "host" ~src_off:0 b ~dst_off:stop ~len:4;
      let name = Span.make ~off:stop ~len:4 and value = shifted line (H2_head.authority h) in
      ok :=
        if plain then Request.build_field_checked req b Header_name.Host ~name ~value
        else Request.build_field req b Header_name.Host ~name ~value
    end
    else if not (same_host b (Request.host req) (shifted line (H2_head.authority h))) then
      raise_notrace Host_mismatch
  end;
  if !ok then Request.build_end req ~head_length:(stop + 4 + merged) else Request.Error

let take_exchange c =
  let sh = c.sh in
  if sh.nexchanges_free = 0 then Slot.create sh ~slot:(-1) ~peer:(timed c)
  else begin
    sh.nexchanges_free <- sh.nexchanges_free - 1;
    sh.exchanges_free.(sh.nexchanges_free)
  end

(* Exchanges kept for reuse, per worker (each a slot record, about 2 KiB,
   holding no buffer); beyond, after a burst of streams, the GC takes
   them. *)
let spare_exchanges = Slot.stream_keep

(* Whether [x] is kept. Taking one leaves its entry in place, so the
   same exchange given back often finds itself there: no write (and no
   caml_modify) then. *)
let give_exchange x =
  let sh = x.sh in
  if sh.nexchanges_free < spare_exchanges then begin
    let a = with_room sh.exchanges_free sh.nexchanges_free x in
    if a != sh.exchanges_free then sh.exchanges_free <- a;
    if Array.unsafe_get sh.exchanges_free sh.nexchanges_free != x then sh.exchanges_free.(sh.nexchanges_free) <- x;
    sh.nexchanges_free <- sh.nexchanges_free + 1;
    true
  end
  else false

(* Entries past [nstreams] may still name an exchange that ended (kept
   for reuse, see [finish]): the one that comes back finds itself there. *)
let add s x =
  let a = with_room s.streams s.nstreams x in
  if a != s.streams then s.streams <- a;
  if Array.unsafe_get s.streams s.nstreams != x then s.streams.(s.nstreams) <- x;
  s.nstreams <- s.nstreams + 1

let find s stream =
  let r = ref (-1) in
  for i = 0 to s.nstreams - 1 do
    if s.streams.(i).h2s.stream = stream then r := i
  done;
  !r

(* A head that cannot be presented answers at once, with no handler. *)
let refuse x status =
  let cx = Ctx.of_conn x in
  Ctx.start cx status;
  Ctx.header cx Header_name.Content_type error_head;
  Ctx.body_string cx (Status.reason status ^ "\n");
  (* Its log line must not trust a head that was not parsed. *)
  x.unlogged <- Unlogged_unparsed;
  writing x;
  queue_rest x

(* Everything an exchange takes from its connection, set for every
   stream: the record comes from the worker's pool, and whatever its last
   stream (another client's, perhaps) left in these fields must not
   survive (test/e2e/test_h2_redteam.py judges streams of two clients
   through one pooled exchange). *)
let bind x c ~stream =
  x.h2 <- c.h2;
  x.h2s.stream <- stream;
  x.fd <- c.fd;
  x.listener <- c.listener;
  x.ssl <- c.ssl;
  x.tls <- c.tls;
  x.tls_version <- c.tls_version;
  (* The client's address: Ctx.peer_ip asks the connection
     (Slot.carrier), so an exchange's own [peer_ip] and [peer_family] are
     never read; the access log's copy (an exchange is [timed] when the
     log is on) is made for every stream. *)
  if timed x then begin
    let n = if timed c then c.peer_len else 0 in
    if n > 0 then Bigstring.blit ~src:c.peer ~src_off:0 ~dst:x.peer ~dst_off:0 ~len:n;
    x.peer_len <- n
  end

let opened s c ~stream ~fin =
  let h2c = s.h2c in
  let x = take_exchange c in
  x.mode <- H2_stream;
  bind x c ~stream;
  if x.proto != protocol then x.proto <- protocol;
  x.h2s.peer_done <- fin;
  x.h2s.fin_queued <- false;
  x.close <- false;
  x.broken <- false;
  x.wait <- Running;
  x.after <- Then_next;
  x.unlogged <- Logged;
  x.body_limit <- max_int;
  x.h2s.window_wait <- -1;
  (* [whole_credited] and [conn_debt] are 0 here: [release_whole] leaves
     them so when an exchange ends. *)
  (* The body clock starts when the handler first waits for the body. *)
  x.body_deadline <- 0;
  x.body_credit <- 0;
  (* Before [present]: a refused head (431, 400) is answered with the
     HEAD rule of this stream, not of the exchange's last one. *)
  x.head_req <- (match H2_head.meth (C.head h2c) with Meth.Head -> true | _ -> false);
  stamp x;
  add s x;
  match present x h2c with
  | exception Too_large -> refuse x Status.Request_header_fields_too_large
  | exception Host_mismatch -> refuse x Status.Bad_request
  | status -> (
      match status with
      | Request.Complete ->
          let req = Slot.req x in
          let len = Request.head_length req in
          x.rpos <- 0;
          x.rlen <- len;
          x.body_start <- Request.head_length req;
          x.next_pos <- len;
          x.head_req <- (match Request.meth req with Meth.Head -> true | _ -> false);
          if x.body_src != x.sh.empty then x.body_src <- x.sh.empty;
          x.body_off <- 0;
          x.body_len <- 0;
          x.body_need <- 0;
          (* The handler runs at once, body or not: a body is read only
             as it asks (Ctx.await_body, Ctx.read_body), and credited to
             the client's windows as it takes the bytes, so what one
             connection can make us hold is bounded by its windows; a
             handler that answers without it (a GET to a file) ends the
             stream (RST_STREAM NO_ERROR, see [finish]). *)
          x.body <- (if fin then No_body else Body_unread);
          run x.sh.hooks.handler x
      | Request.Partial | Request.Error ->
          let e = Request.error (Slot.req x) in
          refuse x (Status.of_code_or ~default:Status.Bad_request (Parse_error.status e)))

(* {1 Ending} *)

(* A handler's continuation once the exchange ended: one closure, so
   that "already in place" is a pointer comparison. *)
let no_cont : Slot.t -> unit = ignore

(* The exchange at index [i] of its session is over (answered, reset, or
   its connection closed): logged, its stream closed if it is not, and
   the slot back in the pool holding nothing. *)
let[@inline] finish s i ~complete =
  let x = s.streams.(i) in
  let c = s.conn in
  (* A complete response's log line counts its whole body. *)
  if not complete then account s.h2c x;
  if x.h2s.whole_credited lor x.h2s.conn_debt <> 0 then release_whole s x;
  Exchange.ended x ~complete;
  (* Cut short: the stream is reset. Answered while the client still
     sends: nothing yet (its frames may still be on their way, a
     WINDOW_UPDATE among them, or DATA whose length the stream's
     content-length must still check); more DATA then gets RST_STREAM
     NO_ERROR (RFC 9113 §8.1), see H2_session. Such a stream has no
     exchange, so it keeps no timer of its own: the connection's idle
     timer runs (H2_session.next), and the connection is evictable. *)
  if (not complete) && C.stream_state s.h2c ~stream:x.h2s.stream <> 0 && not (C.failed s.h2c) then
    C.reset_stream s.h2c ~stream:x.h2s.stream H2_error.Cancel;
  next_gen x;
  x.wait <- Running;
  if x.cont != no_cont then x.cont <- no_cont;
  Request.reset (Slot.req x);
  release_all x;
  reset_response x;
  x.state <- Free;
  clear_timer x;
  x.fd <- -1;
  Slot.forget_tls x;
  x.h2 <- None;
  x.mode <- H1_mode;
  x.body <- No_body;
  x.broken <- false;
  if x.in_buf != x.sh.empty then x.in_buf <- x.sh.empty;
  s.nstreams <- s.nstreams - 1;
  let last = s.nstreams in
  if i <> last then s.streams.(i) <- s.streams.(last);
  c.served <- c.served + 1;
  (* The entry past the end keeps naming [x] only while the pool holds it
     anyway; one the GC is to take is not held from here. *)
  if not (give_exchange x) then s.streams.(last) <- c

let cancel s stream ~sent =
  let i = find s stream in
  if i >= 0 then begin
    s.streams.(i).sent <- sent;
    finish s i ~complete:false
  end

let cancel_all s =
  for i = s.nstreams - 1 downto 0 do
    finish s i ~complete:false
  done

(* Runs once the connection's output buffer is filled: an exchange whose
   frames are all in it (its END_STREAM too) ends now, not when the write
   completes, so with thousands of streams in flight each connection's
   exchanges go back to the pool before the next connection's are taken
   (the same few, warm in the cache). One whose file bytes are still to
   be sent from its descriptor ([ext_fd], sendfile) waits for {!settle}. *)
let emitted s ~ext_fd =
  let h2c = s.h2c in
  for i = s.nstreams - 1 downto 0 do
    if i < s.nstreams then begin
      let x = s.streams.(i) in
      if x.resp = Done && x.h2s.fin_queued && (x.file_fd < 0 || x.file_fd <> ext_fd)
         && C.body_pending h2c ~stream:x.h2s.stream = 0
      then finish s i ~complete:(not x.broken)
    end
  done

(* Runs when the connection's output has all left: exchanges whose
   response is out end; a handler that flushed goes on; a complete
   response waiting for its turn is queued. *)
let settle s =
  let h2c = s.h2c in
  for i = s.nstreams - 1 downto 0 do
    if i < s.nstreams then begin
      let x = s.streams.(i) in
      let left = C.body_pending h2c ~stream:x.h2s.stream in
      let pending = left > 0 in
      (* Its bytes are leaving: the wait for the client's window starts
         again. *)
      if x.state = Writing && left <> x.h2s.window_wait then begin
        x.h2s.window_wait <- left;
        set_timer x Write_timer x.sh.write_ticks
      end;
      if x.resp = Done && x.h2s.fin_queued && not pending then finish s i ~complete:(not x.broken)
      else if x.after = Then_resume && not pending then begin
        x.out_len <- 0;
        x.out_sent <- 0;
        x.after <- Then_next;
        x.flushed <- true;
        run x.cont x
      end
      else if x.resp = Done && not x.h2s.fin_queued then queue_rest x
    end
  done

(* The connection saw no progress for a timeout while streams were open: a
   handler that never answered gets a 503 (its continuations dropped), a
   body that stopped coming a 408, a response the client's window holds
   back (or the rest of a cut one) a reset; the stream ends, the others
   are unaffected. *)
let expire s =
  let h2c = s.h2c in
  for i = s.nstreams - 1 downto 0 do
    if i < s.nstreams && s.streams.(i).timer <> No_timer && s.streams.(i).deadline <= s.conn.sh.tick then begin
      let x = s.streams.(i) in
      clear_timer x;
      match x.state with
      | Handling -> step x (Exchange.handler_timeout x)
      | Reading_body when x.h2s.conn_debt > 0 ->
          (* Its bytes wait for credit we withheld (the whole-body budget),
             not for the client: the clock starts again. *)
          start_body_clock x
      | Reading_body | Reading_head ->
          if x.resp = Idle then answer_error x Status.Request_timeout else reset x H2_error.Cancel
      | Writing ->
          if C.body_pending h2c ~stream:x.h2s.stream > 0 || not x.h2s.fin_queued then reset x H2_error.Cancel
      | Free | Lingering -> ()
    end
  done

let next_deadline s =
  let d = ref max_int in
  for i = 0 to s.nstreams - 1 do
    let x = s.streams.(i) in
    if x.timer <> No_timer && x.deadline < !d then d := x.deadline
  done;
  if !d = max_int then -1 else !d

let resume x ~gen k =
  if x.gen <> gen || x.mode <> H2_stream then false
  else
    match x.wait with
    | Suspended ->
        x.wait <- Resumed;
        x.cont <- k;
        false
    | Running | Resumed | Flush_wanted | Piece_wanted ->
        if x.state = Handling then begin
          run k x;
          true
        end
        else false
