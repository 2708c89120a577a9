(* The worker's event loop. Every function takes the loop state [w] and the
   connection [c] explicitly: no closure is built per event, and nothing on
   the keep-alive path allocates (see test/server's zero-allocation test).
   Functions that may close [c] leave [c.fd = -1]; callers check it. *)

open Httpz
open Conn

type params = {
  max_connections : int;
  read_buffer : int;
  write_buffer : int;
  max_body : int;
  header_timeout_ms : int;
  idle_timeout_ms : int;
  body_timeout_ms : int;
  write_timeout_ms : int;
  grace_ms : int;
  stats : bool;
  log_fd : int;
  server_name : string;
}

let tick_ms = 100
let tick_ns = tick_ms * 1_000_000
let linger_ms = 2000
let accept_pause_ns = 100 * 1_000_000
let accept_batch = 64
let events_cap = 512

(* Bytes one connection may send per readiness before the loop turns to the
   others: a client on loopback reads a large file as fast as we send it. *)
let write_budget = 1 lsl 20

(* Chunked bodies are decoded in the read buffer, after the head; a head
   leaving less room than this is refused (431). *)
let min_chunk_room = 512

(* The slowest average rate at which a request body may arrive: every byte
   received moves the body's deadline by 1/min_body_rate s, never further
   than [body_timeout] ahead. One byte every 25 s no longer holds a
   connection: the body is cut at [body_timeout] unless it keeps this pace. *)
let min_body_rate = 1024

(* Requests before the steady-state allocation figure starts counting. *)
let warmup = 1000

type t = {
  p : params;
  handler : Ctx.t -> unit;
  epfd : int;
  mutable lfd : int;
  sfd : int;
  listen_token : int;
  signal_token : int;
  evs : Syscall.events;
  dummy : Conn.t;
  conns : Conn.t array;
  free : int array;
  mutable nfree : int;
  mutable active : int;
  wheel : Timer_wheel.t;
  sh : Conn.shared;
  log : Access_log.t;
  mutable now_ns : int;
  mutable tick : int;
  mutable listening : bool;
  mutable accept_resume_ns : int; (* 0: not paused *)
  mutable accept_error_logged : bool;
  mutable draining : bool;
  mutable drain_deadline_ns : int;
  mutable stop : bool;
  mutable log_flushed_s : int;
  (* statistics *)
  mutable requests : int;
  mutable start_words : int;
  mutable excluded_words : int;
      (* allocated by the stats endpoint and by slot set-up, which are not
         per-request work *)
  mutable setup_words : int; (* allocated setting up connection slots *)
  mutable slots_created : int;
  mutable base_words : int; (* at the warm-up request, net of excluded *)
  mutable base_requests : int;
  mutable final_words : int; (* at the start of the shutdown *)
  mutable final_requests : int;
}

let words () = int_of_float (Gc.minor_words ())
let net_words w = words () - w.excluded_words

let log_msg fmt = Printf.eprintf ("httpz: " ^^ fmt ^^ "\n%!")

(* {1 Clock and timers} *)

let update_clock w =
  w.now_ns <- Syscall.clock_monotonic_ns ();
  w.tick <- w.now_ns / tick_ns;
  w.sh.now <- Syscall.clock_realtime_s ()

(* +1: the current tick is already partly over, so a deadline [ms] ticks
   away could fire up to one tick early. *)
let deadline_in w ms = w.tick + ((ms + tick_ms - 1) / tick_ms) + 1

let set_timer_at w c kind d =
  c.timer <- kind;
  if Timer_wheel.deadline w.wheel c.slot <> d then Timer_wheel.set w.wheel c.slot d

let set_timer w c kind ms = set_timer_at w c kind (deadline_in w ms)

(* The body's total deadline: set once when the loop starts reading it. *)
let start_body_clock w c =
  c.body_deadline <- deadline_in w w.p.body_timeout_ms;
  c.body_credit <- 0;
  set_timer_at w c Body_timer c.body_deadline

(* [n] more body bytes arrived: they buy time at [min_body_rate]. *)
let body_progress w c n =
  let per_tick = min_body_rate * tick_ms / 1000 in
  c.body_credit <- c.body_credit + n;
  if c.body_credit >= per_tick then begin
    let earned = c.body_credit / per_tick in
    c.body_credit <- c.body_credit - (earned * per_tick);
    let cap = deadline_in w w.p.body_timeout_ms in
    let d = c.body_deadline + earned in
    c.body_deadline <- (if d < cap then d else cap)
  end;
  set_timer_at w c Body_timer c.body_deadline


(* {1 Accepting} *)

let stop_listening w =
  if w.listening then begin
    ignore (Syscall.epoll_ctl_del w.epfd w.lfd : int);
    w.listening <- false
  end

let maybe_resume_accept w =
  if (not w.listening) && (not w.draining) && w.lfd >= 0 && w.accept_resume_ns = 0
     && w.active < w.p.max_connections
  then begin
    if Syscall.epoll_ctl_add w.epfd w.lfd Syscall.epollin w.listen_token = 0 then
      w.listening <- true
  end

(* {1 Closing} *)

let close_conn w c =
  if c.fd >= 0 then begin
    Conn.release_file c;
    (* Bytes held by MSG_MORE leave now, with the FIN, in one packet: a
       close(2) that finds unread input would send a reset and drop them. *)
    if c.held then ignore (Syscall.shutdown_write c.fd : int);
    c.held <- false;
    (* close(2) also removes the fd from the epoll set. Its result is
       deliberately ignored: on Linux the fd is gone even on EINTR/EIO. *)
    ignore (Syscall.close c.fd : int);
    c.fd <- -1;
    c.state <- Free;
    c.events <- 0;
    Timer_wheel.cancel w.wheel c.slot;
    c.timer <- No_timer;
    Conn.reset_response c;
    c.close <- false;
    c.broken <- false;
    (* A Partial head at offset 0 must not be continued by the next
       connection's bytes. *)
    Request.reset c.req;
    c.rpos <- 0;
    c.rlen <- 0;
    Conn.release_body c;
    c.body <- No_body;
    c.body_len <- 0;
    c.body_need <- 0;
    w.free.(w.nfree) <- c.slot;
    w.nfree <- w.nfree + 1;
    w.active <- w.active - 1;
    maybe_resume_accept w
  end

(* Sets the epoll interest of [c] to [ev]. A connection is registered on
   its first wait, not when accepted: one answered straight away and
   closed (Connection: close) never touches epoll. If registering fails
   (ENOMEM, ENOSPC: the per-user watch limit) the connection could never
   be woken, so it is closed. *)
let want w c ev =
  if c.events <> ev then begin
    if c.events = 0 then begin
      let r = Syscall.epoll_ctl_add w.epfd c.fd ev c.slot in
      if r < 0 then begin
        log_msg "epoll_ctl: %s (closing the connection)" (Syscall.error_message r);
        close_conn w c
      end
      else c.events <- ev
    end
    else begin
      ignore (Syscall.epoll_ctl_mod w.epfd c.fd ev c.slot : int);
      c.events <- ev
    end
  end

let linger_close w c =
  if c.fd >= 0 then begin
    Conn.release_file c;
    c.held <- false;
    if Syscall.shutdown_write c.fd < 0 then close_conn w c
    else begin
      c.state <- Lingering;
      want w c Syscall.epollin;
      if c.fd >= 0 then set_timer w c Linger_timer linger_ms
    end
  end

(* {1 Writing} *)

let w_done = 0
let w_blocked = 1
let w_dead = 2

(* A non-stable bigstring body must not be read after the handler returned
   and another request may run: copy what is left into [out]. *)
let detach_bigstring c =
  if c.ext = Ext_bigstring && c.ext_len > 0 && not c.ext_stable then begin
    Conn.grow_out c (c.out_len - c.out_sent + c.ext_len);
    Bigstring.blit ~src:c.ext_bs ~src_off:c.ext_off ~dst:c.out ~dst_off:c.out_len ~len:c.ext_len;
    c.out_len <- c.out_len + c.ext_len;
    c.ext <- No_ext;
    c.ext_bs <- c.sh.empty;
    c.ext_len <- 0
  end

let flush_out w c =
  let result = ref (-1) in
  (* The connection closes after this response: its last bytes go out with
     MSG_MORE and wait for the FIN (close_conn, linger_close), so the client
     gets response and FIN in one packet and acknowledges both at once. *)
  let last =
    match c.after with
    | Then_close -> 1
    | Then_next -> if c.close || w.draining then 1 else 0
    | Then_body -> 0
  in
  (* No budget for a non-stable bigstring: yielding would mean copying it
     (see [detach_bigstring]); only a full socket makes that necessary. *)
  let budget = ref (if c.ext = Ext_bigstring && not c.ext_stable then max_int else write_budget) in
  while !result < 0 do
    let out_rem = c.out_len - c.out_sent in
    if out_rem = 0 && c.ext_len = 0 then result := w_done
    else if !budget <= 0 then result := w_blocked
    else begin
      let n =
        match c.ext with
        | Ext_string when c.ext_len > 0 ->
            let len = if c.ext_len < !budget then c.ext_len else !budget in
            c.held <- last = 1;
            Syscall.sendv_string c.fd c.out c.out_sent out_rem c.ext_str c.ext_off len last
        | Ext_bigstring when c.ext_len > 0 ->
            let len = if c.ext_len < !budget then c.ext_len else !budget in
            c.held <- last = 1;
            Syscall.sendv2 c.fd c.out c.out_sent out_rem c.ext_bs c.ext_off len last
        | Ext_file when out_rem > 0 -> Syscall.send c.fd c.out c.out_sent out_rem 1
        | Ext_file ->
            let len = if c.ext_len < !budget then c.ext_len else !budget in
            Syscall.sendfile c.fd c.file_fd c.ext_off len
        | _ ->
            c.held <- last = 1;
            Syscall.send c.fd c.out c.out_sent out_rem last
      in
      if n > 0 then begin
        budget := !budget - n;
        let k = if n < out_rem then n else out_rem in
        c.out_sent <- c.out_sent + k;
        let rest = n - k in
        if rest > 0 then begin
          c.ext_off <- c.ext_off + rest;
          c.ext_len <- c.ext_len - rest
        end
      end
      else if n = - Syscall.eintr then ()
      else if n = - Syscall.eagain then result := w_blocked
      else
        (* 0 from sendfile: the file is shorter than the Content-Length
           sent; the response cannot be completed. Anything else (EPIPE,
           ECONNRESET, …): the client is gone. Either way, close quietly. *)
        result := w_dead
    end
  done;
  if !result = w_dead then close_conn w c
  else if !result = w_blocked then detach_bigstring c;
  !result

(* {1 Responses the server writes itself} *)

let error_head = "Content-Type: text/plain; charset=utf-8\r\nX-Content-Type-Options: nosniff\r\n"

let rec respond_error w c status msg ~parsed =
  Conn.reset_response c;
  Conn.release_body c;
  c.close <- true;
  let out = c.out in
  let pos = Response.status_line out ~off:0 Version.Http_1_1 status in
  let pos = Response.date out ~off:pos c.sh.date ~now:c.sh.now in
  let pos = Response.write_string out ~off:pos c.sh.server_line in
  let pos = Response.write_string out ~off:pos error_head in
  let pos =
    Response.header_int out ~off:pos Header_name.Content_length (String.length msg + 1)
  in
  let pos = Response.write_string out ~off:pos "Connection: close\r\n\r\n" in
  let pos = Response.write_string out ~off:pos msg in
  let pos = Response.write_string out ~off:pos "\n" in
  c.out_len <- pos;
  c.status <- status;
  c.resp <- Done;
  c.resp_bytes <- String.length msg + 1;
  log_access w c ~parsed;
  c.after <- Then_close;
  ignore (start_write w c : bool)

and log_access w c ~parsed =
  if Access_log.enabled w.log then begin
    let req_len =
      if parsed then
        let cr = Bigstring.index_from c.rbuf ~off:c.rpos ~stop:c.body_start '\r' in
        if cr < 0 then -1 else cr - c.rpos
      else -1
    in
    Access_log.line w.log ~now:c.sh.now ~peer:c.peer ~peer_len:c.peer_len ~src:c.rbuf
      ~req_off:c.rpos ~req_len ~status:(Status.code c.status) ~bytes:c.resp_bytes
  end

(* Writes what [out]/[ext] hold; [true] when the caller should go on
   parsing the next request. *)
and start_write w c =
  c.state <- Writing;
  let r = flush_out w c in
  if r = w_done then complete_write w c
  else begin
    if r = w_blocked then begin
      want w c Syscall.epollout;
      if c.fd >= 0 then set_timer w c Write_timer w.p.write_timeout_ms
    end;
    false
  end

and complete_write w c =
  match c.after with
  | Then_body ->
      c.out_len <- 0;
      c.out_sent <- 0;
      c.after <- Then_next;
      c.state <- Reading_body;
      want w c Syscall.epollin;
      if c.fd >= 0 then set_timer_at w c Body_timer c.body_deadline;
      false
  | Then_close ->
      linger_close w c;
      false
  | Then_next ->
      let close = c.close || c.broken || w.draining in
      Conn.reset_response c;
      c.served <- c.served + 1;
      c.close <- false;
      if close then begin
        (* Unread body bytes may still be on their way: close(2) would
           answer them with a reset that can destroy the response. *)
        if c.rlen > c.next_pos || c.body = Body_unread then linger_close w c
        else close_conn w c;
        false
      end
      else begin
        c.rpos <- c.next_pos;
        c.body_len <- 0;
        c.body_src <- c.rbuf;
        c.state <- Reading_head;
        want w c Syscall.epollin;
        c.fd >= 0
      end

let status_of_code n = Status.of_code_or ~default:Status.Bad_request n

(* {1 The handler} *)

let stats_path = "/__httpz/stats"

(* The counters reveal the worker's pid and load: only a client on this
   machine may read them; anyone else gets what the handler answers for
   that path. *)
let is_loopback = function
  | Unix.ADDR_INET (a, _) ->
      let s = Unix.string_of_inet_addr a in
      let prefix p = String.length s >= String.length p && String.sub s 0 (String.length p) = p in
      prefix "127." || s = "::1" || prefix "::ffff:127."
  | Unix.ADDR_UNIX _ -> true

let peer_is_loopback c =
  match Unix.getpeername (Syscall.unix_of_fd c.fd) with
  | a -> is_loopback a
  | exception Unix.Unix_error _ -> false

let is_stats_request w c =
  (match Request.meth c.req with Meth.Get | Meth.Head -> true | _ -> false)
  && Span.equal c.rbuf (Request.target c.req) stats_path
  &&
  let before = words () in
  let local = peer_is_loopback c in
  w.excluded_words <- w.excluded_words + (words () - before);
  local

let serve_stats w c =
  let before = words () in
  let g = Gc.quick_stat () in
  let json =
    Printf.sprintf
      "{\"requests\": %d, \"minor_words\": %d, \"minor_collections\": %d, \
       \"major_collections\": %d, \"heap_words\": %d, \"connections\": %d, \
       \"slots_created\": %d, \"setup_words\": %d, \"pid\": %d}\n"
      w.requests
      (before - w.excluded_words - w.start_words)
      g.Gc.minor_collections g.Gc.major_collections g.Gc.heap_words w.active
      w.slots_created w.setup_words (Syscall.getpid ())
  in
  let ctx = Ctx.of_conn c in
  Ctx.start ctx Status.Ok;
  Ctx.header ctx Header_name.Content_type "application/json";
  Ctx.header ctx Header_name.Cache_control "no-store";
  Ctx.body_string ctx json;
  w.excluded_words <- w.excluded_words + (words () - before)

let handler_failed w c e =
  log_msg "handler raised %s" (Printexc.to_string e);
  if c.flushed || c.broken then begin
    Conn.reset_response c;
    close_conn w c;
    false
  end
  else begin
    respond_error w c Status.Internal_server_error "Internal Server Error" ~parsed:true;
    false
  end

(* Runs the handler and writes its answer; [true] when the caller should go
   on with the next request. The handler may instead ask for a body that
   has not arrived ([Ctx.await_body]): the loop reads it and runs the
   handler again (read_body). *)
let rec run_handler w c =
  match w.handler (Ctx.of_conn c) with
  | () ->
      if c.resp = Done then begin
        log_access w c ~parsed:true;
        c.after <- Then_next;
        let r = start_write w c in
        (* The response no longer needs the body: what it sends from the
           body buffer was copied if it could not leave at once. *)
        Conn.release_body c;
        r
      end
      else if c.resp = Idle && c.body = Body_wanted then begin
        read_wanted_body w c;
        false
      end
      else if c.flushed || c.broken then begin
        close_conn w c;
        false
      end
      else begin
        log_msg "handler returned without a complete response";
        respond_error w c Status.Internal_server_error "Internal Server Error" ~parsed:true;
        false
      end
  | exception e -> handler_failed w c e

(* The handler asked for a body that is not all here: make room for it,
   send [100 Continue] if the client waits for one, and read it. *)
and read_wanted_body w c =
  if Request.is_chunked c.req then await_body w c
  else begin
    let cl = Request.content_length c.req in
    let cap = Bigstring.length c.rbuf in
    if c.body_start - c.rpos + cl <= cap then begin
      (* It fits in the read buffer behind its head: read it there and
         hand the handler a span of [rbuf], with no copy. *)
      if c.body_start + cl > cap && not (relocate_head c) then
        respond_error w c Status.Internal_server_error "Internal Server Error" ~parsed:false
      else begin
        c.body_off <- c.body_start;
        c.body_len <- cl;
        c.next_pos <- c.body_start + cl;
        await_body w c
      end
    end
    else begin
      let avail = c.rlen - c.body_start in
      c.body_len <- 0;
      Conn.ensure_body_store c cl;
      if avail > 0 then
        Bigstring.blit ~src:c.rbuf ~src_off:c.body_start ~dst:c.body_store ~dst_off:0 ~len:avail;
      c.body_src <- c.body_store;
      c.body_off <- 0;
      c.body_len <- avail;
      c.body_need <- cl - avail;
      c.rlen <- c.body_start;
      c.next_pos <- c.body_start;
      await_body w c
    end
  end

and await_body w c =
  c.state <- Reading_body;
  start_body_clock w c;
  if Request.expect_continue c.req && not c.body_started then send_continue w c

and send_continue w c =
  c.out_len <- Response.write_string c.out ~off:0 "HTTP/1.1 100 Continue\r\n\r\n";
  c.out_sent <- 0;
  c.after <- Then_body;
  ignore (start_write w c : bool)

(* Moves a parsed head to offset 0 to make room for its body. The parse
   state's spans are absolute offsets, so the head is parsed again there. *)
and relocate_head c =
  compact c;
  match Request.parse c.req c.rbuf ~off:0 ~len:c.rlen with
  | Request.Complete ->
      c.body_start <- Request.head_length c.req;
      true
  | _ -> false

and compact c =
  if c.rpos > 0 then begin
    let n = c.rlen - c.rpos in
    if n > 0 then Bigstring.blit ~src:c.rbuf ~src_off:c.rpos ~dst:c.rbuf ~dst_off:0 ~len:n;
    c.rlen <- n;
    c.rpos <- 0
  end

(* A request head is complete: count it, answer the stats endpoint
   ourselves, or run the handler. *)
let dispatch w c =
  if w.p.stats && is_stats_request w c then begin
    serve_stats w c;
    log_access w c ~parsed:true;
    c.after <- Then_next;
    start_write w c
  end
  else begin
    w.requests <- w.requests + 1;
    if w.requests = warmup then begin
      w.base_words <- net_words w;
      w.base_requests <- w.requests
    end;
    run_handler w c
  end

(* {1 Reading} *)

let decode_chunks w c =
  let result = ref (-1) in
  while !result < 0 do
    match Chunked.decode c.chunked c.rbuf ~off:c.cpos ~len:(c.rlen - c.cpos) with
    | Chunked.Data ->
        let off = Chunked.data_off c.chunked and len = Chunked.data_len c.chunked in
        Conn.ensure_body_store c (c.body_len + len);
        Bigstring.blit ~src:c.rbuf ~src_off:off ~dst:c.body_store ~dst_off:c.body_len ~len;
        c.body_len <- c.body_len + len;
        c.cpos <- c.cpos + Chunked.consumed c.chunked
    | Chunked.Need_more ->
        (* Everything after the head is decoded: reuse that space. *)
        c.rlen <- c.body_start;
        c.cpos <- c.body_start;
        result := 0
    | Chunked.Done ->
        c.cpos <- c.cpos + Chunked.consumed c.chunked;
        c.next_pos <- c.cpos;
        c.body_src <- c.body_store;
        c.body_off <- 0;
        result := 1
    | Chunked.Error ->
        let e = Chunked.error c.chunked in
        let st = status_of_code (Chunked.error_status e) in
        respond_error w c st (Status.reason st) ~parsed:true;
        result := 2
  done;
  !result

(* The head of a request is parsed: decide what its body needs, then run
   the handler. The handler runs at once, before any body is read: a body
   complete in the buffer is handed over with it; any other body is read
   only if the handler asks for it (Ctx.await_body), and [100 Continue] is
   sent only then. A handler that answers without it closes the
   connection after the response, which lingers to drain what comes. *)
let begin_request w c =
  let req = c.req in
  let cap = Bigstring.length c.rbuf in
  c.body_start <- c.rpos + Request.head_length req;
  c.head_req <- (match Request.meth req with Meth.Head -> true | _ -> false);
  c.close <- false;
  c.body_src <- c.rbuf;
  c.body_off <- c.body_start;
  c.body_len <- 0;
  c.body_need <- 0;
  c.body_started <- c.rlen > c.body_start;
  let connect = (match Request.meth req with Meth.Connect -> true | _ -> false) in
  if connect && (Request.is_chunked req || Request.content_length req >= 0) then begin
    (* RFC 9110 §9.3.6: a CONNECT request has no content; what follows its
       head would be tunnel bytes, never the next request. *)
    respond_error w c Status.Bad_request "CONNECT request with content" ~parsed:true;
    false
  end
  else begin
    (* Bytes after a CONNECT head belong to the tunnel we do not open. *)
    if connect then c.close <- true;
    if Request.is_chunked req then begin
      if cap - c.body_start < min_chunk_room then ignore (relocate_head c : bool);
      if cap - c.body_start < min_chunk_room then begin
        respond_error w c Status.Request_header_fields_too_large
          "The request head leaves no room for its body." ~parsed:true;
        false
      end
      else begin
        Chunked.reset c.chunked;
        c.cpos <- c.body_start;
        c.next_pos <- c.body_start;
        let r = decode_chunks w c in
        if r = 2 then false
        else begin
          c.body <- (if r = 1 then Body_ready else Body_unread);
          dispatch w c
        end
      end
    end
    else begin
      let cl = Request.content_length req in
      if cl <= 0 then begin
        c.next_pos <- c.body_start;
        c.body <- No_body;
        dispatch w c
      end
      else if cl > w.p.max_body then begin
        respond_error w c Status.Content_too_large (Status.reason Status.Content_too_large)
          ~parsed:true;
        false
      end
      else if c.rlen - c.body_start >= cl then begin
        (* Already here, behind the head: a span of [rbuf], no copy. *)
        c.body_len <- cl;
        c.next_pos <- c.body_start + cl;
        c.body <- Body_ready;
        dispatch w c
      end
      else begin
        c.next_pos <- c.body_start;
        c.body <- Body_unread;
        dispatch w c
      end
    end
  end

(* Parses and answers the requests buffered in [rbuf], in order, until one
   is incomplete or its answer cannot be written at once. *)
let process w c =
  let continue = ref true in
  while !continue && c.fd >= 0 && c.state = Reading_head do
    if c.rpos >= c.rlen then begin
      c.rpos <- 0;
      c.rlen <- 0;
      if w.draining then close_conn w c
      else if c.served = 0 then (if c.timer <> Header_timer then set_timer w c Header_timer w.p.header_timeout_ms)
      else set_timer w c Idle_timer w.p.idle_timeout_ms;
      continue := false
    end
    else
      match Request.parse c.req c.rbuf ~off:c.rpos ~len:(c.rlen - c.rpos) with
      | Request.Complete -> continue := begin_request w c
      | Request.Partial ->
          if c.timer <> Header_timer then set_timer w c Header_timer w.p.header_timeout_ms;
          if c.rlen = Bigstring.length c.rbuf then compact c;
          continue := false
      | Request.Error ->
          let e = Request.error c.req in
          respond_error w c (status_of_code (Parse_error.status e)) (Parse_error.describe e)
            ~parsed:false;
          continue := false
  done

let read_head w c =
  let cap = Bigstring.length c.rbuf in
  if c.rlen = cap then compact c;
  if c.rlen = cap then
    (* Cannot happen while max_head = read_buffer (the parser refuses a
       head that fills the buffer), but never spin on a full buffer. *)
    respond_error w c Status.Request_header_fields_too_large
      (Parse_error.describe Parse_error.Head_too_large) ~parsed:false
  else begin
    let n = Syscall.read c.fd c.rbuf c.rlen (cap - c.rlen) in
    if n > 0 then begin
      c.rlen <- c.rlen + n;
      process w c
    end
    else if n = - Syscall.eagain || n = - Syscall.eintr then ()
    else close_conn w c (* EOF, ECONNRESET, … *)
  end

let read_body w c =
  let r =
    if Request.is_chunked c.req then begin
      let cap = Bigstring.length c.rbuf in
      let n = Syscall.read c.fd c.rbuf c.rlen (cap - c.rlen) in
      if n > 0 then begin
        c.rlen <- c.rlen + n;
        body_progress w c n;
        if decode_chunks w c = 1 then 1 else 0
      end
      else n
    end
    else if c.body_src == c.body_store && c.body_need > 0 then begin
      let n = Syscall.read c.fd c.body_store c.body_len c.body_need in
      if n > 0 then begin
        c.body_len <- c.body_len + n;
        c.body_need <- c.body_need - n;
        body_progress w c n;
        if c.body_need = 0 then 1 else 0
      end
      else n
    end
    else begin
      let cap = Bigstring.length c.rbuf in
      let n = Syscall.read c.fd c.rbuf c.rlen (cap - c.rlen) in
      if n > 0 then begin
        c.rlen <- c.rlen + n;
        body_progress w c n;
        if c.rlen >= c.next_pos then 1 else 0
      end
      else n
    end
  in
  if r = 1 then begin
    if c.fd >= 0 && c.state = Reading_body then begin
      c.state <- Reading_head;
      c.body <- Body_ready;
      if run_handler w c then process w c
    end
  end
  else if r = 0 || r = - Syscall.eagain || r = - Syscall.eintr then ()
  else close_conn w c (* EOF in the middle of a body, or a reset *)

let drain w c =
  let n = Syscall.read c.fd c.rbuf 0 (Bigstring.length c.rbuf) in
  if n > 0 || n = - Syscall.eagain || n = - Syscall.eintr then () else close_conn w c

let on_writable w c =
  let r = flush_out w c in
  if r = w_done then begin
    if complete_write w c then process w c
  end
  else if r = w_blocked then set_timer w c Write_timer w.p.write_timeout_ms

let on_timeout w c =
  c.timer <- No_timer;
  match c.state with
  | Reading_head ->
      if c.rlen > c.rpos then
        respond_error w c Status.Request_timeout (Status.reason Status.Request_timeout)
          ~parsed:false
      else close_conn w c
  | Reading_body ->
      respond_error w c Status.Request_timeout (Status.reason Status.Request_timeout)
        ~parsed:true
  | Writing | Lingering -> close_conn w c
  | Free -> ()

(* {1 Accepting} *)

let conn w slot =
  let c = w.conns.(slot) in
  if c != w.dummy then c
  else begin
    (* A slot's buffers are allocated on its first use and kept: memory
       follows peak concurrency. That is per-connection growth, not
       per-request work, so it is counted apart (stats: setup_words). *)
    let before = words () in
    let c =
      Conn.create w.sh ~slot ~read_buffer:w.p.read_buffer ~peer:(Access_log.enabled w.log)
    in
    w.conns.(slot) <- c;
    let spent = words () - before in
    w.setup_words <- w.setup_words + spent;
    w.excluded_words <- w.excluded_words + spent;
    w.slots_created <- w.slots_created + 1;
    c
  end

let new_conn w fd =
  w.nfree <- w.nfree - 1;
  let slot = w.free.(w.nfree) in
  let c = conn w slot in
  (* TCP_NODELAY and TCP_NOTSENT_LOWAT come from the listening socket
     (Server.open_listener). *)
  c.fd <- fd;
  c.events <- 0;
  c.state <- Reading_head;
  c.rpos <- 0;
  c.rlen <- 0;
  c.served <- 0;
  c.close <- false;
  c.broken <- false;
  if Access_log.enabled w.log then begin
    let n = Extra.peer_address fd c.peer 0 in
    c.peer_len <- (if n > 0 then n else 0)
  end;
  w.active <- w.active + 1;
  set_timer w c Header_timer w.p.header_timeout_ms;
  (* With TCP_DEFER_ACCEPT the request is usually here already: answer it
     now. Otherwise this read finds nothing (EAGAIN) and costs one call. *)
  read_head w c;
  (* A blocked write has registered for EPOLLOUT already. *)
  if c.fd >= 0 && c.events = 0 then want w c Syscall.epollin

let accept_ready w =
  let budget = ref accept_batch in
  while !budget > 0 && w.listening do
    decr budget;
    if w.active >= w.p.max_connections then stop_listening w
    else begin
      let fd = Syscall.accept4 w.lfd in
      if fd >= 0 then begin
        (* Log a shortage once per episode, not at every 100 ms retry. *)
        w.accept_error_logged <- false;
        new_conn w fd
      end
      else if fd = - Syscall.eagain then budget := 0
      else if fd = - Syscall.eintr || fd = - Syscall.econnaborted || fd = - Syscall.eproto then ()
      else begin
        (* EMFILE, ENFILE, ENOBUFS, ENOMEM or worse: the pending connection
           stays queued and the socket stays readable, so keep serving the
           open connections and retry in 100 ms instead of spinning. *)
        if not w.accept_error_logged then begin
          log_msg "accept: %s (pausing accepts for 100 ms)" (Syscall.error_message fd);
          w.accept_error_logged <- true
        end;
        stop_listening w;
        w.accept_resume_ns <- w.now_ns + accept_pause_ns;
        budget := 0
      end
    end
  done

(* {1 Shutdown} *)

let begin_drain w =
  if not w.draining then begin
    w.final_words <- net_words w;
    w.final_requests <- w.requests;
    w.draining <- true;
    w.sh.draining <- true;
    w.drain_deadline_ns <- w.now_ns + (w.p.grace_ms * 1_000_000);
    stop_listening w;
    if w.lfd >= 0 then begin
      ignore (Syscall.close w.lfd : int);
      w.lfd <- -1
    end;
    for i = 0 to w.p.max_connections - 1 do
      let c = w.conns.(i) in
      if c.fd >= 0 && c.state = Reading_head && c.rpos >= c.rlen then close_conn w c
    done
  end

let read_signals w =
  let continue = ref true in
  while !continue do
    let r = Extra.signalfd_read w.sfd in
    if r > 0 then begin
      let s = -r in
      if s = Sys.sigterm || s = Sys.sigint || s = Sys.sighup then begin_drain w
    end
    else if r <> - Syscall.eintr then continue := false
  done

(* {1 The loop} *)

let handle_event w tok =
  if tok < w.p.max_connections then begin
    let c = w.conns.(tok) in
    if c.fd >= 0 then
      match c.state with
      | Reading_head -> read_head w c
      | Reading_body -> read_body w c
      | Writing -> on_writable w c
      | Lingering -> drain w c
      | Free -> ()
  end
  else if tok = w.listen_token then accept_ready w
  else if tok = w.signal_token then read_signals w

let timeout_ms w =
  if Timer_wheel.count w.wheel > 0 || w.accept_resume_ns > 0 || w.draining
     || Access_log.pending w.log
  then tick_ms - (w.now_ns / 1_000_000 mod tick_ms)
  else -1

let turn w =
  let n = Syscall.epoll_wait w.epfd w.evs events_cap (timeout_ms w) in
  update_clock w;
  if n > 0 then
    for i = 0 to n - 1 do
      handle_event w (Syscall.event_token w.evs i)
    done
  else if n < 0 && n <> - Syscall.eintr then begin
    log_msg "epoll_wait: %s" (Syscall.error_message n);
    begin_drain w;
    w.stop <- true
  end;
  let id = ref (Timer_wheel.pop_expired w.wheel ~now:w.tick) in
  while !id >= 0 do
    on_timeout w w.conns.(!id);
    id := Timer_wheel.pop_expired w.wheel ~now:w.tick
  done;
  if w.accept_resume_ns > 0 && w.now_ns >= w.accept_resume_ns then begin
    w.accept_resume_ns <- 0;
    maybe_resume_accept w
  end;
  if Access_log.pending w.log && w.sh.now <> w.log_flushed_s then begin
    Access_log.flush w.log;
    w.log_flushed_s <- w.sh.now
  end;
  if w.draining && (w.active = 0 || w.now_ns >= w.drain_deadline_ns) then w.stop <- true

let create p ~listen_fd ~signal_fd handler =
  let epfd = Syscall.epoll_create () in
  if epfd < 0 then failwith ("epoll_create: " ^ Syscall.error_message epfd);
  let sh =
    Conn.create_shared ~server_name:p.server_name ~write_buffer:p.write_buffer
      ~max_body:p.max_body
  in
  let dummy = Conn.create sh ~slot:(-1) ~read_buffer:1 ~peer:false in
  let now_ns = Syscall.clock_monotonic_ns () in
  let n = p.max_connections in
  let wheel_size =
    (* Enough buckets that no timeout wraps around the wheel. *)
    let longest =
      List.fold_left max linger_ms
        [ p.header_timeout_ms; p.idle_timeout_ms; p.body_timeout_ms; p.write_timeout_ms ]
    in
    (longest / tick_ms) + 2
  in
  let w =
    {
      p;
      handler;
      epfd;
      lfd = listen_fd;
      sfd = signal_fd;
      listen_token = n;
      signal_token = n + 1;
      evs = Syscall.events_create events_cap;
      dummy;
      conns = Array.make n dummy;
      free = Array.init n (fun i -> n - 1 - i);
      nfree = n;
      active = 0;
      wheel = Timer_wheel.create ~ids:n ~size:(min wheel_size 65536) ~now:(now_ns / tick_ns);
      sh;
      log = Access_log.create ~fd:p.log_fd;
      now_ns;
      tick = now_ns / tick_ns;
      listening = false;
      accept_resume_ns = 0;
      accept_error_logged = false;
      draining = false;
      drain_deadline_ns = 0;
      stop = false;
      log_flushed_s = 0;
      requests = 0;
      start_words = 0;
      excluded_words = 0;
      setup_words = 0;
      slots_created = 0;
      base_words = 0;
      base_requests = 0;
      final_words = 0;
      final_requests = 0;
    }
  in
  update_clock w;
  if Syscall.epoll_ctl_add epfd signal_fd Syscall.epollin w.signal_token < 0 then
    failwith "epoll_ctl_add (signalfd)";
  maybe_resume_accept w;
  if not w.listening then failwith "epoll_ctl_add (listening socket)";
  w.start_words <- words ();
  w

let words_per_request w =
  let words, requests =
    if w.base_requests > 0 && w.final_requests > w.base_requests then
      (w.final_words - w.base_words, w.final_requests - w.base_requests)
    else (w.final_words - w.start_words, w.final_requests)
  in
  if requests = 0 then 0. else float_of_int words /. float_of_int requests

let run p ~listen_fd ~signal_fd handler =
  let w = create p ~listen_fd ~signal_fd handler in
  while not w.stop do
    turn w
  done;
  begin_drain w;
  for i = 0 to p.max_connections - 1 do
    close_conn w w.conns.(i)
  done;
  Access_log.flush w.log;
  ignore (Syscall.close w.epfd : int);
  log_msg "worker %d served %d requests, minor words/request %.2f" (Syscall.getpid ())
    w.final_requests (words_per_request w);
  0
