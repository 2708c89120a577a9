(* An HTTP/2 connection, sans I/O: the connection slot's events (see the
   .mli) run through the connection's H2_connection; each request stream
   is an exchange (H2_exchange). *)

open Httpz
open Slot
module C = H2_connection
module X = H2_exchange


(* A read buffer must hold a whole frame (16384 + 9 bytes, our
   SETTINGS_MAX_FRAME_SIZE being the default) and the preface. *)
let min_read_buffer = 16384 + 9 + 24 + 1024

(* Sessions kept for reuse, per worker: each holds a few KiB (its
   H2_connection.t: HPACK tables, a few stream slots). *)
let spare_sessions = 32

(* The worker's decoded-head table, response-head buffer and buffer pools,
   shared by its connections: a worker is a process running one loop,
   which handles one connection's event at a time (H2_workspace's rule). *)
let workspace = lazy (H2_workspace.create ())

let session c = match c.h2 with Some s -> s | None -> invalid_arg "H2_session: not an HTTP/2 connection"

let start c =
  let sh = c.sh in
  let s =
    if Stack.is_empty sh.h2_free then
      { h2c = C.create ~workspace:(Lazy.force workspace) (); conn = c; streams = [||]; nstreams = 0; ended = false;
        whole_bodies = 0; whole_pass = 0 }
    else begin
      let s = Stack.pop sh.h2_free in
      C.reset s.h2c;
      s.conn <- c;
      s.ended <- false;
      s.whole_bodies <- 0;
      s.whole_pass <- 0;
      s
    end
  in
  c.h2 <- Some s;
  c.mode <- H2_conn;
  c.state <- Reading_head;
  (* No write is "the last before the close" (Output.last, which would
     send it with MSG_MORE while draining): the connection ends by
     lingering, whose shutdown sends what is left. *)
  c.after <- Then_resume

(* ALPN's answer is the transport's report at the handshake's end
   ([Slot.tls_established]). *)
let takes_over c =
  c.served = 0 && c.rlen = 0 && c.tls = Tls_h2 && c.sh.http2
  && begin
    start c;
    true
  end

(* {1 Input} *)

let data s c ~stream ~off ~len ~fin =
  let i = X.find s stream in
  if i >= 0 then X.data s.streams.(i) c.rbuf ~off ~len ~fin
  else begin
    (* Its response is complete and the exchange gone: the client may
       stop sending (RFC 9113 §8.1). *)
    C.consumed s.h2c ~stream len;
    if (not fin) && C.stream_state s.h2c ~stream <> 0 then C.reset_stream s.h2c ~stream H2_error.No_error
  end

(* Every whole frame in [rbuf\[rpos, rlen)], each event handled as it
   comes (a handler runs within). *)
let input c =
  let s = session c in
  let h2c = s.h2c in
  let now = c.sh.tick * tick_ms in
  let go = ref (not s.ended) in
  while !go && c.rpos < c.rlen do
    let ev = C.received h2c c.rbuf ~off:c.rpos ~len:(c.rlen - c.rpos) ~now in
    c.rpos <- c.rpos + C.consumed_bytes h2c;
    match ev with
    | C.Need_more -> go := false
    | Headers -> X.opened s c ~stream:(C.event_stream h2c) ~fin:(C.event_end_stream h2c)
    | Data ->
        data s c ~stream:(C.event_stream h2c) ~off:(C.event_data_off h2c) ~len:(C.event_data_len h2c)
          ~fin:(C.event_end_stream h2c)
    | Trailers -> data s c ~stream:(C.event_stream h2c) ~off:0 ~len:0 ~fin:true
    | Reset -> X.cancel s (C.event_stream h2c) ~sent:(C.event_sent h2c)
    | Goaway -> () (* the client opens no more streams; ours finish *)
    | Connection_error ->
        s.ended <- true;
        go := false
  done;
  if s.ended || c.rpos >= c.rlen then begin
    c.rpos <- 0;
    c.rlen <- 0
  end

(* {1 Output} *)

(* The largest TLS record's payload: what one SSL_write turns into one
   record. *)
let tls_record = 16384

(* A record filled to within this of its size counts as full: with more
   frames ready behind it, it is held for them ([fill]). *)
let min_inline = 1024

(* TLS (made in user space, or by kTLS): frames in [out], up to one record,
   stable payloads copied behind their DATA frames' headers, so each DATA
   frame goes out in one record with whatever else is due, not as a record
   for its header and another for its bytes. A file's payload ends the
   record: it is [ext], which the transport reads in behind the frame's
   header ([Output.file_absorbable]: the room is there) or kTLS sends. *)
let fill_inline c s =
  let cap = if Bigstring.length c.out < tls_record then Bigstring.length c.out else tls_record in
  c.out_len <- C.next_output_inline s.h2c c.out ~off:0 ~len:cap;
  let ext = C.output_external_len s.h2c in
  if ext > 0 then begin
    let i = X.find s (C.output_external_stream s.h2c) in
    if i >= 0 then begin
      c.ext <- Ext_file;
      c.file_fd <- s.streams.(i).file_fd;
      c.ext_off <- C.output_external_offset s.h2c;
      c.ext_len <- ext
    end
    else begin
      (* Cannot happen (an exchange ends only once its file left); were
         it to, the frame's promised bytes cannot follow: drop its header
         and end the connection. *)
      Log.error "HTTP/2: a file body without its exchange (closing the connection)";
      c.out_len <- c.out_len - 9;
      s.ended <- true
    end
  end

(* Over plain TCP, stable payloads are gathered between the frames of
   [out] while more frames are ready, up to this many bytes: one sendmsg
   then carries several DATA frames (h2o writes about five 16 KiB
   responses per writev), not one each. *)
let gather_bytes = 256 * 1024

(* Plain TCP: frames in [out]; stable payloads (a cached file's bytes)
   sent from where they are, gathered between the frames; a file's bytes
   (sendfile) as [ext], after the rest. *)
let fill_external c s =
  let cap = Bigstring.length c.out in
  c.out_len <- C.next_output s.h2c c.out ~off:0 ~len:cap;
  if c.gather == Gather.none then c.gather <- Gather.create ();
  let g = c.gather in
  let go = ref true in
  while !go do
    let ext = C.output_external_len s.h2c in
    let stable = C.output_external_buffer s.h2c in
    if ext = 0 then go := false
    else if Bigstring.length stable > 0 then begin
      let off = C.output_external_offset s.h2c in
      Gather.add g ~pos:c.out_len stable ~off ~len:ext;
      if Gather.full g || g.bytes >= gather_bytes || not (C.wants_output s.h2c) then go := false
      else c.out_len <- c.out_len + C.next_output s.h2c c.out ~off:c.out_len ~len:(cap - c.out_len)
    end
    else begin
      go := false;
      let i = X.find s (C.output_external_stream s.h2c) in
      if i < 0 then begin
        (* Cannot happen (an exchange ends only once its file left); were
           it to, the frame's promised bytes cannot follow: end. *)
        Log.error "HTTP/2: a file body without its exchange (closing the connection)";
        c.out_len <- 0;
        Gather.reset g;
        s.ended <- true
      end
      else begin
        c.ext <- Ext_file;
        c.file_fd <- s.streams.(i).file_fd;
        c.ext_off <- C.output_external_offset s.h2c;
        c.ext_len <- ext
      end
    end
  done

(* The connection's output has all left: frames for [out], and file bytes
   after them. *)
let fill c s =
  c.more_output <- false;
  c.ext <- No_ext;
  c.ext_len <- 0;
  if c.ext_bs != c.sh.empty then c.ext_bs <- c.sh.empty;
  c.file_fd <- -1;
  c.file_close <- false;
  c.out_len <- 0;
  c.out_sent <- 0;
  Gather.reset c.gather;
  X.settle s;
  (* Draining, or the connection carried its [keepalive_requests]
     streams ([last_request]: -1 while draining): GOAWAY, the open
     streams finish. *)
  if c.served > c.sh.last_request then C.shutdown s.h2c;
  if C.wants_output s.h2c then begin
    take_out c;
    if c.tls <> No_tls then begin
      fill_inline c s;
      (* A full record (or one a file's payload ends) with more behind it:
         it is held (Tls: Openssl.set_more) and leaves with the records
         that follow, in one sendmsg. *)
      if (c.ext_len > 0 || c.out_len >= tls_record - min_inline) && C.wants_output s.h2c then
        c.more_output <- true
    end
    else begin
      fill_external c s;
      (* A DATA frame's payload rides along: when more frames are ready
         behind it, the kernel may pack them into larger segments. *)
      if (c.ext_len > 0 || c.gather.bytes > 0) && C.wants_output s.h2c then c.more_output <- true
    end;
    X.emitted s ~ext_fd:(if c.ext = Ext_file then c.file_fd else -1)
  end

(* What the connection needs now. *)
let next c =
  if Output.pending c > 0 then begin
    c.state <- Writing;
    Conn_action.Write
  end
  else begin
    let s = session c in
    let announced = c.more_output in
    fill c s;
    if Output.pending c > 0 then begin
      c.state <- Writing;
      Write
    end
    else begin
      if Bigstring.length c.out > 0 then release_idle c;
      (* Draining (a reload or a stop): once no exchange is in progress
         the GOAWAY has said all; streams the client left open with their
         answers sent hold nothing of ours, so they do not keep a retired
         worker alive. *)
      if s.ended || C.finished s.h2c || (c.sh.draining && s.nstreams = 0) then begin
        (* The GOAWAY left: shut the write side, drain what the client
           still sends, then close (a close with unread input would reset
           the connection and could destroy the GOAWAY). *)
        s.ended <- true;
        c.state <- Lingering;
        set_timer c Linger_timer 20;
        Linger
      end
      else begin
        c.state <- Reading_head;
        if c.rlen = 0 then release_idle c;
        if s.nstreams = 0 then begin
          (* No exchange in progress (a stream the lib still counts has
             none to wait for either: see H2_exchange.finish), so the
             connection's own timer runs. No request yet: the header
             timeout, as over HTTP/1.1. *)
          if c.served = 0 then (if c.timer <> Header_timer then set_timer c Header_timer c.sh.header_ticks)
          else if c.timer <> Idle_timer then set_timer c Idle_timer c.sh.idle_ticks
        end
        else begin
          (* Streams are open: each must make progress within its
             timeout; the connection's timer is the earliest of theirs. *)
          let d = X.next_deadline s in
          if d < 0 then clear_timer c else set_deadline c Handler_timer d
        end;
        (* The frames the last write announced did not come (a stream was
           reset meanwhile): what the kernel holds must leave now, before
           the wait (a lingering close's shutdown sends it anyway). *)
        if announced && not c.broken then Conn_action.Push else Read
      end
    end
  end

(* {1 Events} *)

let begin_h2c c =
  start c;
  input c;
  next c

let received_more c =
  (* TLS: records OpenSSL holds already are read before answering, so that
     frames sent together are handled together (a WINDOW_UPDATE after a
     request, a reset). *)
  if c.tls <> No_tls then Conn_action.Read_buffered else next c

let prepare_read c =
  match c.state with
  | Writing -> Conn_action.Write
  | Lingering ->
      read_scratch c;
      Read
  | Free -> Close
  | Reading_head | Reading_body | Handling ->
      read_to_rbuf c;
      Read

let received c n =
  if n <= 0 then Conn_action.Close
  else
    match c.state with
    | Lingering -> Read
    | Writing -> Write
    | Free -> Close
    | Reading_head | Reading_body | Handling ->
        c.rlen <- c.rlen + n;
        input c;
        received_more c

let written c = next c
let blocked c = set_timer c Write_timer c.sh.write_ticks

let timeout c =
  clear_timer c;
  let s = session c in
  match c.state with
  | (Reading_head | Reading_body | Handling) when s.nstreams > 0 ->
      X.expire s;
      next c
  | Reading_head | Reading_body | Handling ->
      (* Idle: say goodbye (GOAWAY NO_ERROR) and close. *)
      C.shutdown s.h2c;
      s.ended <- true;
      next c
  | Writing | Lingering | Free -> Close

let resume x ~gen k =
  let c = carrier x in
  if X.resume x ~gen k && c.state <> Writing && c.state <> Lingering && c.fd >= 0 then next c else Nothing

let closed c =
  match c.h2 with
  | None -> ()
  | Some s ->
      X.cancel_all s;
      C.reset s.h2c;
      s.conn <- c;
      (* A few are kept for the next connections; the rest (after a burst
         of clients) go to the GC, their buffers with them. *)
      if Stack.length c.sh.h2_free < spare_sessions then Stack.push s c.sh.h2_free;
      c.h2 <- None;
      c.mode <- H1_mode;
      c.ext <- No_ext;
      c.file_fd <- -1;
      c.file_close <- false

let drain c =
  match c.h2 with
  | Some s when c.mode = H2_conn ->
      C.shutdown s.h2c;
      if c.state = Reading_head && c.fd >= 0 then next c else Nothing
  | _ -> Nothing

let idle c =
  c.state = Reading_head && c.rpos >= c.rlen
  && match c.h2 with Some s -> s.nstreams = 0 | None -> true
