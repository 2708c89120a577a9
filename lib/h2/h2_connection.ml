include H2_conn_state
module B = Bigstring
module S = H2_stream
module O = H2_output
module Err = H2_error

let received = H2_receive.received

(* {1 Events} *)

let consumed_bytes t = t.consumed
let event_stream t = t.ev_stream
let event_end_stream t = t.ev_end_stream
let event_data_off t = t.ev_data_off
let event_data_len t = t.ev_data_len
let event_sent t = t.ev_sent
let event_error t = t.ev_error
let goaway_last_stream t = t.ev_last_stream
let reason t = t.reason
let head t = t.ws.head
let head_buffer t = t.ws.decoded
let head_length t = Hpack_decoder.output_length t.decoder

(* {1 The application's side} *)

let consumed t ~stream n =
  let slot = S.find t.streams stream in
  if slot >= 0 && n > 0 then begin
    let s = t.streams in
    let n = if n > s.recv_held.(slot) then s.recv_held.(slot) else n in
    s.recv_held.(slot) <- s.recv_held.(slot) - n;
    O.credit_stream t.out slot n;
    O.credit_connection t.out n
  end

let start_response t ~stream ~status =
  t.response_stream <- stream;
  O.start_headers t.out ~status

let header t name value = O.header t.out name value
let header_int t name n = O.header_int t.out name n
let header_s t name value = O.header_s t.out name value
let header_span t name src s = O.header_span t.out name src s
let header_s_span t name src s = O.header_s_span t.out name src s
let header_checked t name src ~off ~len = O.header_checked t.out name src ~off ~len
let header_encoded t src ~off ~len = O.header_encoded t.out src ~off ~len
let header_prepared t p = O.header_prepared t.out p

(* A slot {!S.find} gave is below [capacity], the length of every
   per-slot array. *)
let[@inline] get (a : int array) slot = Array.unsafe_get a slot
let[@inline] set (a : int array) slot (v : int) = Array.unsafe_set a slot v
let[@inline] set_flag (a : bool array) slot (v : bool) = Array.unsafe_set a slot v

(* A block that inserted into the peer's table and is not sent leaves
   the mirror ahead of the peer: no more indexing on this connection. *)
let unsent t = if Hpack_mirror.inserted_since_start t.out.mirror then Hpack_mirror.disable t.out.mirror

let send_headers t ~end_stream =
  let slot = S.find t.streams t.response_stream in
  if slot < 0 || get t.streams.response slot <> 0 then (unsent t; Stream_closed)
  else if not (O.frame_headers t.out ~stream_id:t.response_stream ~end_stream) then (unsent t; No_space)
  else begin
    if end_stream then O.end_stream_sent t.out slot else set t.streams.response slot 1;
    Hpack_mirror.sent t.out.mirror;
    Queued
  end

let queue_body t ~stream kind buf ~off ~len ~end_stream =
  let slot = S.find t.streams stream in
  let s = t.streams in
  if slot < 0 || get s.response slot <> 1 then Stream_closed
  else if get s.out_kind slot <> S.out_none then No_space
  else if len = 0 && not end_stream then Queued
  else begin
    S.set_out_kind s slot kind;
    if Array.unsafe_get s.out_buf slot != buf then Array.unsafe_set s.out_buf slot buf;
    set s.out_off slot off;
    set s.out_len slot len;
    set_flag s.out_end slot end_stream;
    Queued
  end

let send_data t ~stream buf ~off ~len ~end_stream =
  Bigstring.check_range "Httpz.H2_connection.send_data" buf ~off ~len;
  queue_body t ~stream S.out_buffer buf ~off ~len ~end_stream

let send_data_stable t ~stream buf ~off ~len ~end_stream =
  Bigstring.check_range "Httpz.H2_connection.send_data_stable" buf ~off ~len;
  queue_body t ~stream S.out_stable buf ~off ~len ~end_stream

let send_data_external t ~stream ~offset ~len ~end_stream =
  if len < 0 || offset < 0 then invalid_arg "Httpz.H2_connection.send_data_external";
  queue_body t ~stream S.out_external H2_workspace.none ~off:offset ~len ~end_stream

let body_pending t ~stream =
  let slot = S.find t.streams stream in
  if slot < 0 then 0 else if get t.streams.out_kind slot = S.out_none then 0 else get t.streams.out_len slot

let data_sent t ~stream =
  let slot = S.find t.streams stream in
  if slot < 0 then -1 else get t.streams.data_sent slot

let reset_stream t ~stream code =
  let slot = S.find t.streams stream in
  if slot >= 0 then
    if O.push_rst_stream t.out ~stream_id:stream ~code then O.close_stream t.out slot
    else ignore (calm t "output queue full")

let shutdown t =
  if (not t.goaway_sent) && t.phase <> phase_failed then begin
    t.goaway_sent <- true;
    t.goaway_last <- t.last_peer_stream;
    O.push_goaway t.out ~last_stream_id:t.last_peer_stream ~code:Err.No_error ~debug:""
  end

let output t buf ~off ~len ~inline =
  if t.phase = phase_failed then begin
    (* only the queue, which ends with the GOAWAY *)
    let n = O.pending_length t.out in
    let n = if n > len then len else n in
    B.blit ~src:t.out.pending ~src_off:t.out.p_start ~dst:buf ~dst_off:off ~len:n;
    t.out.p_start <- t.out.p_start + n;
    if t.out.p_start = t.out.p_end then O.release t.out;
    n
  end
  else O.next t.out buf ~off ~len ~inline

let next_output t buf ~off ~len =
  Bigstring.check_range "Httpz.H2_connection.next_output" buf ~off ~len;
  output t buf ~off ~len ~inline:false

let next_output_inline t buf ~off ~len =
  Bigstring.check_range "Httpz.H2_connection.next_output_inline" buf ~off ~len;
  output t buf ~off ~len ~inline:true

let output_external_stream t = t.out.ext_stream
let output_external_len t = t.out.ext_len
let output_external_offset t = t.out.ext_off
let output_external_buffer t = t.out.ext_buf
let has_output t = O.pending_length t.out > 0

(* The slots are scanned only while some stream has a body queued. *)
let any_ready t =
  let slot = ref 0 and cap = t.streams.capacity in
  while !slot < cap && not (O.ready t.out !slot) do incr slot done;
  !slot < cap

let wants_output t = O.pending_length t.out > 0 || (t.streams.sending > 0 && any_ready t)

let active_streams t = t.streams.active
let last_peer_stream t = t.last_peer_stream
let settings_acked t = t.settings_acked
let failed t = t.phase = phase_failed
let finished t = (t.phase = phase_failed || (t.goaway_sent && t.streams.active = 0)) && O.pending_length t.out = 0
let peer_settings t = t.peer

let stream_state t ~stream =
  let slot = S.find t.streams stream in
  if slot < 0 then 0 else t.streams.state.(slot)

let stream_send_window t ~stream =
  let slot = S.find t.streams stream in
  if slot < 0 then 0 else t.streams.send_window.(slot)

let stream_priority t ~stream =
  let slot = S.find t.streams stream in
  if slot < 0 then H2_priority.default else let p = t.streams.priority.(slot) in
    H2_priority.make ~urgency:(p land 7) ~incremental:(p land 8 <> 0)

let connection_send_window t = t.out.conn_send_window
let connection_recv_window t = t.out.conn_recv_window
