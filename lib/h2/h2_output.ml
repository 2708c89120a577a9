module B = Bigstring
module S = H2_stream
module E = Hpack_encoder
module W = H2_write

type t = {
  streams : S.t;
  ws : H2_workspace.t;
  mutable pending : B.t;
  mutable p_start : int;
  mutable p_end : int;
  encoder : E.t;
  mirror : Hpack_mirror.t;  (** the peer's table, as prepared sets filled it *)
  block : B.t;
  mutable block_len : int;
  mutable peer_max_frame : int;
  mutable conn_send_window : int;
  mutable conn_recv_window : int;
  mutable conn_recv_unacked : int;
  conn_window_target : int;
  stream_window : int;
  cursor : int array;
  mutable order : int array;
      (** the ready non-incremental streams of the most urgent level, by
          stream id, found by one scan and served in turn within one {!next} *)
  mutable order_len : int;
  mutable order_pos : int;
  mutable ext_stream : int;
  mutable ext_len : int;
  mutable ext_off : int;
  mutable ext_buf : B.t;
}

let goaway_reserve = 256

let create ~streams ~ws ~conn_window ~stream_window =
  {
    streams;
    ws;
    pending = H2_workspace.none;
    p_start = 0;
    p_end = 0;
    (* Raw literals, no Huffman: a server's response fields are short
       ASCII, where Huffman saves about a fifth of the head's bytes at a
       cost of about 12,000 instructions per response (a third of a small
       file's whole cost over h2c, measured with callgrind); RFC 7541 §5.2
       lets the encoder choose. *)
    encoder = E.create ~huffman:false ();
    mirror = Hpack_mirror.create ();
    block = ws.H2_workspace.response_block;
    block_len = 0;
    peer_max_frame = H2_settings.default_max_frame_size;
    conn_send_window = H2_settings.default_initial_window_size;
    conn_recv_window = H2_settings.default_initial_window_size;
    conn_recv_unacked = 0;
    conn_window_target = conn_window;
    stream_window;
    cursor = Array.make 8 (-1);
    order = [||];
    order_len = 0;
    order_pos = 0;
    ext_stream = 0;
    ext_len = 0;
    ext_off = 0;
    ext_buf = H2_workspace.none;
  }

(* The queue's buffer goes back to the pool once it is empty. *)
let release t =
  t.p_start <- 0;
  t.p_end <- 0;
  t.pending <- H2_workspace.give t.ws.queues t.pending

let reset t =
  release t;
  Hpack_mirror.reset t.mirror;
  t.block_len <- 0;
  t.peer_max_frame <- H2_settings.default_max_frame_size;
  t.conn_send_window <- H2_settings.default_initial_window_size;
  t.conn_recv_window <- H2_settings.default_initial_window_size;
  t.conn_recv_unacked <- 0;
  Array.fill t.cursor 0 8 (-1);
  t.ext_stream <- 0;
  t.ext_len <- 0;
  t.ext_off <- 0

let pending_length t = t.p_end - t.p_start

(* Room for [n] more bytes at the end of the queue, keeping [reserve] free
   so a GOAWAY always fits; compacts the queue when that makes room. *)
let room t n ~reserve =
  if B.length t.pending = 0 then t.pending <- H2_workspace.take t.ws.queues;
  let size = B.length t.pending in
  if t.p_end + n + reserve <= size then true
  else if t.p_end - t.p_start + n + reserve <= size then begin
    let len = t.p_end - t.p_start in
    B.blit ~src:t.pending ~src_off:t.p_start ~dst:t.pending ~dst_off:0 ~len;
    t.p_start <- 0;
    t.p_end <- len;
    true
  end
  else false

(* Room for a frame that is not the GOAWAY. *)
let[@inline] queued t n = room t n ~reserve:goaway_reserve

let push_settings t ~ids ~values =
  if queued t (9 + (6 * Array.length ids)) then begin
    t.p_end <- W.settings t.pending ~off:t.p_end ~ids ~values;
    true
  end
  else false

let push_settings_ack t = queued t 9 && (t.p_end <- W.settings_ack t.pending ~off:t.p_end; true)

let push_ping_ack t src ~src_off =
  queued t 17 && (t.p_end <- W.ping t.pending ~off:t.p_end ~ack:true src ~src_off; true)

let push_window_update t ~stream_id ~increment =
  queued t 13 && (t.p_end <- W.window_update t.pending ~off:t.p_end ~stream_id ~increment; true)

let push_rst_stream t ~stream_id ~code =
  queued t 13 && (t.p_end <- W.rst_stream t.pending ~off:t.p_end ~stream_id ~code; true)

let push_goaway t ~last_stream_id ~code ~debug =
  let debug = if String.length debug > goaway_reserve - 17 then "" else debug in
  if room t (17 + String.length debug) ~reserve:0 then
    t.p_end <- W.goaway t.pending ~off:t.p_end ~last_stream_id ~code ~debug

(* Connection receive window: credit bytes the application consumed (or
   that never reached it) and return them by WINDOW_UPDATE once half the
   window is used, so a fast sender never stalls on a round trip. *)
let credit_connection t n =
  t.conn_recv_unacked <- t.conn_recv_unacked + n;
  if t.conn_recv_unacked >= t.conn_window_target / 2 then begin
    let inc = t.conn_recv_unacked in
    if push_window_update t ~stream_id:0 ~increment:inc then begin
      t.conn_recv_window <- t.conn_recv_window + inc;
      t.conn_recv_unacked <- 0
    end
  end

let credit_stream t slot n =
  let s = t.streams in
  s.recv_unacked.(slot) <- s.recv_unacked.(slot) + n;
  let st = s.state.(slot) in
  if (st = S.open_ || st = S.half_closed_local) && s.recv_unacked.(slot) >= t.stream_window / 2 then begin
    let inc = s.recv_unacked.(slot) in
    if push_window_update t ~stream_id:s.id.(slot) ~increment:inc then begin
      s.recv_window.(slot) <- s.recv_window.(slot) + inc;
      s.recv_unacked.(slot) <- 0
    end
  end

(* Closing gives back to the connection window what the application was
   handed but will never report consumed. *)
let close_stream t slot =
  let held = t.streams.recv_held.(slot) in
  S.free t.streams slot;
  if held > 0 then credit_connection t held

(* {1 Response heads} *)

let start_headers t ~status =
  let o = E.start_block t.encoder t.block ~off:0 in
  let o = Hpack_mirror.start_block t.mirror t.block ~off:o in
  t.block_len <- E.status t.encoder t.block ~off:o status

let header t name value = t.block_len <- E.field t.encoder t.block ~off:t.block_len name value
let header_int t name n = t.block_len <- E.field_int t.encoder t.block ~off:t.block_len name n
let header_s t name value = t.block_len <- E.field_s t.encoder t.block ~off:t.block_len name value

let header_s_span t name src s = t.block_len <- E.field_s_span t.encoder t.block ~off:t.block_len name src s

let header_span t name src s =
  t.block_len <- E.field_span t.encoder t.block ~off:t.block_len name src s

let header_checked t name src ~off ~len =
  t.block_len <- E.field_checked t.encoder t.block ~off:t.block_len name src ~voff:off ~vlen:len

let header_prepared t p = t.block_len <- Hpack_mirror.block t.mirror t.block ~off:t.block_len p

let header_encoded t src ~off ~len =
  if len > B.length t.block - t.block_len then raise_notrace E.No_space;
  B.blit ~src ~src_off:off ~dst:t.block ~dst_off:t.block_len ~len;
  t.block_len <- t.block_len + len

(* The block's [len] bytes to [dst] in the queue, whole words when both
   buffers have room for the last one: the bytes written past the frame
   are free queue space, the next frame's to cover. *)
let copy_block t ~dst len =
  let words = (len + 7) land lnot 7 in
  if words <= B.length t.block && dst + words <= B.length t.pending then begin
    let i = ref 0 in
    while !i < len do
      B.unsafe_set64 t.pending (dst + !i) (B.unsafe_get64 t.block !i);
      i := !i + 8
    done
  end
  else B.blit ~src:t.block ~src_off:0 ~dst:t.pending ~dst_off:dst ~len

(* HEADERS then CONTINUATIONs, each at most the peer's SETTINGS_MAX_FRAME_SIZE. *)
let frame_headers t ~stream_id ~end_stream =
  let len = t.block_len and max = t.peer_max_frame in
  if len <= max then
    (* One HEADERS frame, the usual case. [queued] made the room, [len]
       is at most the peer's frame size (a valid one), and [stream_id]
       is a stream's. *)
    queued t (len + 9)
    && begin
      let o = W.headers_header_unchecked t.pending ~off:t.p_end ~stream_id ~length:len ~end_stream in
      copy_block t ~dst:o len;
      t.p_end <- o + len;
      true
    end
  else
  let frames = (len + max - 1) / max in
  if not (queued t (len + (9 * frames))) then false
  else begin
    let pos = ref 0 and first = ref true in
    while !first || !pos < len do
      let n = if len - !pos > max then max else len - !pos in
      let last = !pos + n = len in
      t.p_end <-
        (if !first then W.headers_header t.pending ~off:t.p_end ~stream_id ~length:n ~end_stream ~end_headers:last
         else W.continuation_header t.pending ~off:t.p_end ~stream_id ~length:n ~end_headers:last);
      B.blit ~src:t.block ~src_off:!pos ~dst:t.pending ~dst_off:t.p_end ~len:n;
      t.p_end <- t.p_end + n;
      pos := !pos + n;
      first := false
    done;
    true
  end

(* {1 The scheduler} *)

(* Slots here come from {!S.find} or the scheduler: below [capacity], the
   length of every per-slot array. *)
let[@inline] get (a : int array) slot = Array.unsafe_get a slot
let[@inline] set (a : int array) slot (v : int) = Array.unsafe_set a slot v
let[@inline] get_flag (a : bool array) slot = Array.unsafe_get a slot

let ready t slot =
  S.wants_to_send t.streams slot && (get t.streams.out_len slot = 0 || t.conn_send_window > 0)

(* RFC 9218 §4: the most urgent level first; within a level, non-incremental
   responses one at a time in stream-id order, then incremental ones in
   turn, one frame each, from after the last one served. One scan finds the
   level and its non-incremental streams, kept in id order ([order]) and
   served one after the other until none is ready ([scan]: their count);
   a level of incremental streams alone gives one of them, [-2 - slot],
   and is scanned again for the next frame. Within one
   {!next} no stream becomes ready that was not (no input is read), so the
   order stays right until it is used up. *)
let scan t =
  let s = t.streams in
  if s.sending = 0 then begin
    (* Nothing queued on any stream: none is ready. *)
    t.order_len <- 0;
    t.order_pos <- 0;
    -1
  end
  else
  let cap = s.capacity in
  if Array.length t.order < cap then t.order <- Array.make cap 0;
  let order = t.order in
  let level = ref 8 and n = ref 0 and incremental = ref false in
  for slot = 0 to cap - 1 do
    if ready t slot then begin
      let p = Array.unsafe_get s.priority slot in
      let u = p land 7 in
      if u < !level then begin
        level := u;
        n := 0;
        incremental := false
      end;
      if u = !level then
        if p land 8 <> 0 then incremental := true
        else begin
          (* Insertion by stream id: slots mostly come in id order. *)
          let id = Array.unsafe_get s.id slot in
          let j = ref !n in
          while !j > 0 && Array.unsafe_get s.id (Array.unsafe_get order (!j - 1)) > id do
            Array.unsafe_set order !j (Array.unsafe_get order (!j - 1));
            decr j
          done;
          Array.unsafe_set order !j slot;
          incr n
        end
    end
  done;
  t.order_len <- !n;
  t.order_pos <- 0;
  if !n > 0 then !n
  else if not !incremental then -1
  else begin
    let u = !level in
    let start = t.cursor.(u) + 1 in
    let best = ref (-1) and k = ref 0 in
    while !best < 0 && !k < cap do
      let slot = (start + !k) mod cap in
      let p = s.priority.(slot) in
      if p land 7 = u && p land 8 <> 0 && ready t slot then best := slot;
      incr k
    done;
    t.cursor.(u) <- !best;
    (* One frame of it, then a scan again. *)
    if !best >= 0 then -2 - !best else -1
  end

let rec pick t =
  if t.order_pos < t.order_len then begin
    let slot = Array.unsafe_get t.order t.order_pos in
    if ready t slot then slot
    else begin
      t.order_pos <- t.order_pos + 1;
      pick t
    end
  end
  else
    let r = scan t in
    if r > 0 then pick t else if r = -1 then -1 else -2 - r

let end_stream_sent t slot =
  let s = t.streams in
  s.response.(slot) <- 2;
  if get s.state slot = S.half_closed_remote then close_stream t slot
  else set s.state slot S.half_closed_local

let[@inline] min (a : int) (b : int) = if a < b then a else b

(* Stable pieces from this size on leave from where they are (a second
   iovec) rather than through a copy: a connection's buffer holds one such
   frame at most anyway. *)
let external_min = 8192

let next t out ~off ~len ~inline =
  t.ext_len <- 0;
  t.ext_stream <- 0;
  if t.ext_buf != H2_workspace.none then t.ext_buf <- H2_workspace.none;
  t.order_len <- 0;
  t.order_pos <- 0;
  let pos = ref off and stop = off + len in
  let p = min (t.p_end - t.p_start) len in
  if p > 0 then begin
    B.blit ~src:t.pending ~src_off:t.p_start ~dst:out ~dst_off:off ~len:p;
    t.p_start <- t.p_start + p;
    if t.p_start = t.p_end then release t;
    pos := off + p
  end;
  let s = t.streams in
  let go = ref (t.p_end = t.p_start) in
  while !go do
    let slot = if stop - !pos < 10 then -1 else pick t in
    if slot < 0 then go := false
    else begin
      let kind = get s.out_kind slot and left = get s.out_len slot in
      (* Past the frame header: a file's bytes, and a large piece of
         stable ones, the caller sends from where they are. *)
      let by_caller = kind = S.out_external || (kind = S.out_stable && (not inline) && left >= external_min) in
      let space = if by_caller && not inline then max_int else stop - !pos - 9 in
      let window = get s.send_window slot in
      let n = min (min left window) (min t.conn_send_window (min t.peer_max_frame space)) in
      let n = if n < 0 then 0 else n in
      let last = n = left && get_flag s.out_end slot in
      let stream_id = get s.id slot in
      let from = get s.out_off slot in
      pos := W.data_header out ~off:!pos ~stream_id ~length:n ~end_stream:last;
      if not by_caller then begin
        B.blit ~src:(Array.unsafe_get s.out_buf slot) ~src_off:from ~dst:out ~dst_off:!pos ~len:n;
        pos := !pos + n
      end
      else begin
        t.ext_stream <- stream_id;
        t.ext_len <- n;
        t.ext_off <- from;
        if kind = S.out_stable then t.ext_buf <- Array.unsafe_get s.out_buf slot;
        go := false
      end;
      set s.out_off slot (from + n);
      set s.out_len slot (left - n);
      set s.data_sent slot (get s.data_sent slot + n);
      set s.send_window slot (window - n);
      t.conn_send_window <- t.conn_send_window - n;
      if left = n then begin
        S.set_out_kind s slot S.out_none;
        if last then end_stream_sent t slot
      end
    end
  done;
  !pos - off
