(* The client role of an HTTP/2 connection: see h2_client.mli. *)

module F = H2_frame
module W = H2_write
module E = H2_error
module S = H2_settings
module Enc = Hpack_encoder
module Dec = Hpack_decoder
module B = Bigstring

type event =
  | Need_more
  | Settings
  | Response
  | Interim
  | Trailers
  | Data
  | Reset
  | Window_update
  | Ping_ack
  | Goaway
  | Connection_error

type failure =
  | No_failure
  | Frame_rule
  | Hpack
  | Settings_expected
  | Bad_stream_id
  | Continuation_expected
  | Continuation_flood
  | Header_block_too_large
  | Push_promise
  | Push_enabled
  | Priority_update
  | Flow_control
  | Malformed_response
  | Too_many_fields
  | Too_many_interim
  | Content_length
  | Stream_closed
  | Peer_reset
  | Peer_goaway
  | Output_full

let failure_to_string = function
  | No_failure -> "no_failure"
  | Frame_rule -> "frame_rule"
  | Hpack -> "hpack"
  | Settings_expected -> "settings_expected"
  | Bad_stream_id -> "bad_stream_id"
  | Continuation_expected -> "continuation_expected"
  | Continuation_flood -> "continuation_flood"
  | Header_block_too_large -> "header_block_too_large"
  | Push_promise -> "push_promise"
  | Push_enabled -> "push_enabled"
  | Priority_update -> "priority_update"
  | Flow_control -> "flow_control"
  | Malformed_response -> "malformed_response"
  | Too_many_fields -> "too_many_fields"
  | Too_many_interim -> "too_many_interim"
  | Content_length -> "content_length"
  | Stream_closed -> "stream_closed"
  | Peer_reset -> "peer_reset"
  | Peer_goaway -> "peer_goaway"
  | Output_full -> "output_full"

type submit = Submitted | Too_many_streams | Going_away | No_space | Closed

(* Slot states (RFC 9113 §5.1); a free slot has id 0. *)
let st_open = 1
let st_half_closed_remote = 2
let st_half_closed_local = 3

type t = {
  (* limits, fixed at create *)
  max_streams : int;
  initial_window : int;
  connection_window : int;
  max_frame_size : int;
  max_header_list_size : int;
  max_continuations : int;
  max_interim : int;
  max_fields : int;
  reader : F.t;
  enc : Enc.t;
  dec : Dec.t;
  peer : S.t;
  (* output queue: bytes [out_head, out_tail) of [out] *)
  out : B.t;
  mutable out_head : int;
  mutable out_tail : int;
  (* the request head being encoded *)
  block : B.t;
  mutable block_len : int;
  mutable building : bool;
  mutable building_head_request : bool;
  mutable request_stream : int;
  (* a received header block split over CONTINUATION frames *)
  asm : B.t;
  mutable asm_len : int;
  mutable asm_stream : int;
  mutable asm_end_stream : bool;
  mutable asm_count : int;
  (* streams: parallel arrays indexed by slot *)
  sid : int array;
  state : int array;
  send_win : int array;
  recv_win : int array;
  recv_owed : int array;
  final_head : bool array;
  interim : int array;
  clen : int array;  (* the response's content-length, -1 when absent or not binding *)
  data_len : int array;
  head_request : bool array;
  free : int array;  (* a stack of free slots *)
  mutable nfree : int;
  hint : int array;  (* by [id lsr 1] masked: the slot that stream was opened in *)
  hint_mask : int;
  mutable active : int;
  (* connection *)
  mutable next_id : int;
  mutable conn_send : int;
  mutable conn_recv : int;
  mutable conn_owed : int;
  mutable credit_pending : bool;
  mutable settings_received : bool;
  mutable settings_acked : bool;
  mutable goaway : bool;
  mutable goaway_last : int;
  unprocessed : int array;
  mutable nunprocessed : int;
  mutable failed : bool;
  mutable error : E.t;
  mutable failure : failure;
  mutable reason : string;
  (* the last event *)
  mutable consumed : int;
  mutable ev_stream : int;
  mutable ev_end : bool;
  mutable ev_off : int;
  mutable ev_len : int;
  mutable ev_error : E.t;
  mutable ev_failure : failure;
  mutable ev_reason : string;
  mutable ev_ping : int;
  (* the last decoded head *)
  mutable status : int;
  mutable nfields : int;
  mutable head_clen : int;
  mutable block_bad : failure;
  fname : int array;
  fvalue : int array;
  fheader : Header_name.t array;
}

let pow2_at_least n =
  let r = ref 1 in
  while !r < n do r := !r * 2 done;
  !r

(* Everything a connection starts with: the preface, our SETTINGS (push
   off), and the connection window raised to ours. *)
let queue_preamble t =
  let o = t.out in
  B.blit_from_string F.preface ~src_off:0 o ~dst_off:0 ~len:(String.length F.preface);
  let p = String.length F.preface in
  let p =
    W.settings o ~off:p
      ~ids:[| S.id_to_int Enable_push; S.id_to_int Initial_window_size; S.id_to_int Max_frame_size;
              S.id_to_int Max_header_list_size |]
      ~values:[| 0; t.initial_window; t.max_frame_size; t.max_header_list_size |]
  in
  let p =
    if t.connection_window > S.default_initial_window_size then
      W.window_update o ~off:p ~stream_id:0 ~increment:(t.connection_window - S.default_initial_window_size)
    else p
  in
  t.out_head <- 0;
  t.out_tail <- p

let create ?(max_concurrent_streams = 100) ?(initial_window_size = 65535) ?(connection_window = 1 lsl 20)
    ?(max_frame_size = 16384) ?(max_header_list_size = 65536) ?(max_continuations = 16)
    ?(max_interim = 8) ?(max_fields = 256) ?(request_head_size = 16384) ?(output_size = 1 lsl 18) () =
  if max_concurrent_streams < 1 || initial_window_size < 1 || initial_window_size > S.max_window_size
     || connection_window < S.default_initial_window_size || connection_window > S.max_window_size
     || max_header_list_size < 256 || max_continuations < 0 || max_interim < 0 || max_fields < 1
     || request_head_size < 256
     || output_size < request_head_size + (request_head_size / 16384 + 2) * F.header_size + 1024
  then invalid_arg "H2_client.create";
  let n = max_concurrent_streams in
  let hint_size = pow2_at_least (4 * n) in
  let t =
    {
      max_streams = n;
      initial_window = initial_window_size;
      connection_window;
      max_frame_size;
      max_header_list_size;
      max_continuations;
      max_interim;
      max_fields;
      reader = F.create ~max_frame_size ();
      (* No dynamic table: a head abandoned half-encoded (too large, bad
         field) would leave its insertions in our table and not the
         server's. *)
      enc = Enc.create ~huffman:true ~table_size:0 ();
      dec = Dec.create ~max_table_size:Dec.default_max_table_size ~max_header_list_size
          ~max_string_length:max_header_list_size ();
      peer = S.create ();
      out = B.create output_size;
      out_head = 0;
      out_tail = 0;
      block = B.create request_head_size;
      block_len = 0;
      building = false;
      building_head_request = false;
      request_stream = 0;
      asm = B.create max_header_list_size;
      asm_len = 0;
      asm_stream = 0;
      asm_end_stream = false;
      asm_count = 0;
      sid = Array.make n 0;
      state = Array.make n 0;
      send_win = Array.make n 0;
      recv_win = Array.make n 0;
      recv_owed = Array.make n 0;
      final_head = Array.make n false;
      interim = Array.make n 0;
      clen = Array.make n (-1);
      data_len = Array.make n 0;
      head_request = Array.make n false;
      free = Array.init n (fun i -> n - 1 - i);
      nfree = n;
      hint = Array.make hint_size 0;
      hint_mask = hint_size - 1;
      active = 0;
      next_id = 1;
      conn_send = S.default_initial_window_size;
      conn_recv = connection_window;
      conn_owed = 0;
      credit_pending = false;
      settings_received = false;
      settings_acked = false;
      goaway = false;
      goaway_last = -1;
      unprocessed = Array.make n 0;
      nunprocessed = 0;
      failed = false;
      error = E.No_error;
      failure = No_failure;
      reason = "";
      consumed = 0;
      ev_stream = 0;
      ev_end = false;
      ev_off = 0;
      ev_len = 0;
      ev_error = E.No_error;
      ev_failure = No_failure;
      ev_reason = "";
      ev_ping = 0;
      status = -1;
      nfields = 0;
      head_clen = -1;
      block_bad = No_failure;
      fname = Array.make max_fields 0;
      fvalue = Array.make max_fields 0;
      fheader = Array.make max_fields Header_name.Other;
    }
  in
  queue_preamble t;
  t

let reset t =
  F.set_max_frame_size t.reader t.max_frame_size;
  Dec.reset t.dec;
  S.reset t.peer;
  Enc.set_peer_max_table_size t.enc S.default_header_table_size;
  t.block_len <- 0;
  t.building <- false;
  t.building_head_request <- false;
  t.request_stream <- 0;
  t.asm_len <- 0;
  t.asm_stream <- 0;
  t.asm_end_stream <- false;
  t.asm_count <- 0;
  Array.fill t.sid 0 t.max_streams 0;
  Array.fill t.state 0 t.max_streams 0;
  Array.fill t.send_win 0 t.max_streams 0;
  Array.fill t.recv_win 0 t.max_streams 0;
  Array.fill t.recv_owed 0 t.max_streams 0;
  Array.fill t.final_head 0 t.max_streams false;
  Array.fill t.interim 0 t.max_streams 0;
  Array.fill t.clen 0 t.max_streams (-1);
  Array.fill t.data_len 0 t.max_streams 0;
  Array.fill t.head_request 0 t.max_streams false;
  for i = 0 to t.max_streams - 1 do t.free.(i) <- t.max_streams - 1 - i done;
  t.nfree <- t.max_streams;
  Array.fill t.hint 0 (Array.length t.hint) 0;
  t.active <- 0;
  t.next_id <- 1;
  t.conn_send <- S.default_initial_window_size;
  t.conn_recv <- t.connection_window;
  t.conn_owed <- 0;
  t.credit_pending <- false;
  t.settings_received <- false;
  t.settings_acked <- false;
  t.goaway <- false;
  t.goaway_last <- -1;
  t.nunprocessed <- 0;
  t.failed <- false;
  t.error <- E.No_error;
  t.failure <- No_failure;
  t.reason <- "";
  t.consumed <- 0;
  t.ev_stream <- 0;
  t.ev_end <- false;
  t.ev_off <- 0;
  t.ev_len <- 0;
  t.ev_error <- E.No_error;
  t.ev_failure <- No_failure;
  t.ev_reason <- "";
  t.ev_ping <- 0;
  t.status <- -1;
  t.nfields <- 0;
  t.head_clen <- -1;
  queue_preamble t

(* {1 Output queue} *)

(* Room for [n] more bytes, moving the queued bytes to the front if that
   makes it. *)
let reserve t n =
  if t.out_tail + n <= B.length t.out then true
  else begin
    let q = t.out_tail - t.out_head in
    if q + n > B.length t.out then false
    else begin
      if q > 0 then B.blit ~src:t.out ~src_off:t.out_head ~dst:t.out ~dst_off:0 ~len:q;
      t.out_head <- 0;
      t.out_tail <- q;
      true
    end
  end

let room t = B.length t.out - (t.out_tail - t.out_head)

(* {1 Streams} *)

let find t id =
  if id <= 0 then -1
  else begin
    let h = t.hint.((id lsr 1) land t.hint_mask) in
    if t.sid.(h) = id then h
    else begin
      let r = ref (-1) and i = ref 0 in
      while !r < 0 && !i < t.max_streams do
        if t.sid.(!i) = id then r := !i;
        incr i
      done;
      !r
    end
  end

let free_slot t slot =
  if t.sid.(slot) <> 0 then begin
    t.sid.(slot) <- 0;
    t.state.(slot) <- 0;
    t.free.(t.nfree) <- slot;
    t.nfree <- t.nfree + 1;
    t.active <- t.active - 1
  end

(* A stream id we never opened (even: the server cannot open streams with
   push off; odd: not yet used). *)
let is_idle t id = id land 1 = 0 || id >= t.next_id

(* {1 Failing} *)

let fail t code failure reason =
  if not t.failed then begin
    t.failed <- true;
    t.error <- code;
    t.failure <- failure;
    t.reason <- reason;
    (* The last stream the server may have initiated: none (push is off). *)
    let n = F.header_size + 8 + String.length reason in
    if reserve t n then t.out_tail <- W.goaway t.out ~off:t.out_tail ~last_stream_id:0 ~code ~debug:reason
  end;
  t.ev_error <- t.error;
  t.ev_failure <- t.failure;
  t.ev_reason <- t.reason;
  Connection_error

let queue_rst t id code =
  if reserve t (F.header_size + 4) then t.out_tail <- W.rst_stream t.out ~off:t.out_tail ~stream_id:id ~code

(* A stream error: RST_STREAM, the slot freed, [Reset] for the caller. *)
let stream_error t slot id code failure reason =
  queue_rst t id code;
  if slot >= 0 then free_slot t slot;
  t.ev_stream <- id;
  t.ev_error <- code;
  t.ev_failure <- failure;
  t.ev_reason <- reason;
  Reset

(* {1 Receive windows} *)

let queue_credit t slot =
  (* Stream credit first: connection credit alone cannot unblock it. *)
  if slot >= 0 && t.recv_owed.(slot) > 0 && t.recv_owed.(slot) >= t.initial_window / 2 then begin
    if reserve t (F.header_size + 4) then begin
      t.out_tail <- W.window_update t.out ~off:t.out_tail ~stream_id:t.sid.(slot) ~increment:t.recv_owed.(slot);
      t.recv_win.(slot) <- t.recv_win.(slot) + t.recv_owed.(slot);
      t.recv_owed.(slot) <- 0
    end
    else t.credit_pending <- true
  end;
  if t.conn_owed > 0 && t.conn_owed >= t.connection_window / 2 then begin
    if reserve t (F.header_size + 4) then begin
      t.out_tail <- W.window_update t.out ~off:t.out_tail ~stream_id:0 ~increment:t.conn_owed;
      t.conn_recv <- t.conn_recv + t.conn_owed;
      t.conn_owed <- 0
    end
    else t.credit_pending <- true
  end

let consumed t ~stream n =
  if n < 0 then invalid_arg "H2_client.consumed";
  if n > 0 then begin
    t.conn_owed <- t.conn_owed + n;
    let slot = find t stream in
    (* A stream the server has finished sending on needs no more credit. *)
    let slot = if slot >= 0 && t.state.(slot) <> st_half_closed_remote then slot else -1 in
    if slot >= 0 then t.recv_owed.(slot) <- t.recv_owed.(slot) + n;
    if not t.failed then queue_credit t slot
  end

(* Bytes the connection window lost to a frame nobody will consume (padding,
   a closed stream's DATA). *)
let credit_connection t n =
  if n > 0 then begin
    t.conn_owed <- t.conn_owed + n;
    queue_credit t (-1)
  end

(* {1 Response heads} *)

let is_upper c = c >= 'A' && c <= 'Z'

let name_ok head s =
  let o = Span.off s and l = Span.len s in
  let ok = ref (l > 0) in
  for i = o to o + l - 1 do
    if is_upper (B.unsafe_get head i) then ok := false
  done;
  !ok

let connection_specific = function
  | Header_name.Connection | Keep_alive | Transfer_encoding | Upgrade -> true
  | _ -> false

let three_digits head s =
  if Span.len s <> 3 then -1
  else begin
    let v = Span.parse_decimal head s in
    if v < 100 then -1 else v
  end

(* Decodes a whole header block into [head]; [t.status], the fields and
   [t.head_clen] describe it. Answers [No_failure], [Malformed_response],
   [Too_many_fields] (the block was decoded to its end all the same, so the
   HPACK table stays in step), or [Hpack] (the connection is lost). *)
(* The first rule the block broke is the one reported. *)
let set_bad t f = if t.block_bad = No_failure then t.block_bad <- f

let decode_block t src ~off ~len ~head =
  Dec.start_block t.dec ~off ~len;
  t.status <- -1;
  t.nfields <- 0;
  t.head_clen <- -1;
  t.block_bad <- No_failure;
  let regular = ref false and go = ref true and first = ref true in
  while !go do
    let st =
      if !first then (first := false; Dec.next_field t.dec src ~out:head)
      else Dec.next_field_unchecked t.dec src ~out:head
    in
    match st with
    | Dec.End -> go := false
    | Dec.Error ->
        t.block_bad <- Hpack;
        go := false
    | Dec.Field -> (
        match Dec.pseudo t.dec with
        | Hpack_static.Status ->
            let v = three_digits head (Dec.value t.dec) in
            if !regular || t.status >= 0 || v < 0 then set_bad t Malformed_response else t.status <- v
        | Regular ->
            regular := true;
            let hn = Dec.header_name t.dec in
            if (not (Dec.static_name t.dec)) && not (name_ok head (Dec.name t.dec)) then set_bad t Malformed_response
            else if connection_specific hn then set_bad t Malformed_response
            else begin
              if hn = Header_name.Content_length then begin
                let v = Span.parse_decimal head (Dec.value t.dec) in
                if v < 0 || (t.head_clen >= 0 && t.head_clen <> v) then set_bad t Malformed_response
                else t.head_clen <- v
              end;
              if t.nfields < t.max_fields then begin
                t.fname.(t.nfields) <- (Dec.name t.dec :> int);
                t.fvalue.(t.nfields) <- (Dec.value t.dec :> int);
                t.fheader.(t.nfields) <- hn;
                t.nfields <- t.nfields + 1
              end
              else set_bad t Too_many_fields
            end
        | _ -> set_bad t Malformed_response)
  done;
  t.block_bad

let remote_closed t slot =
  if t.state.(slot) = st_half_closed_local then free_slot t slot
  else t.state.(slot) <- st_half_closed_remote

(* A complete header block for stream [id]. *)
let header_block t src ~off ~len ~head ~id ~end_stream =
  let bad = decode_block t src ~off ~len ~head in
  let slot = find t id in
  t.ev_stream <- id;
  t.ev_end <- end_stream;
  if bad = Hpack then fail t E.Compression_error Hpack (Dec.describe (Dec.error t.dec))
  else if slot < 0 then Need_more (* a stream we reset: decoded for HPACK's sake *)
  else if t.state.(slot) = st_half_closed_remote then
    stream_error t slot id E.Stream_closed Stream_closed "HEADERS after END_STREAM"
  else if bad <> No_failure then
    stream_error t slot id E.Protocol_error bad
      (if bad = Too_many_fields then "too many response fields" else "malformed response head")
  else if not t.final_head.(slot) then begin
    if t.status < 0 then stream_error t slot id E.Protocol_error Malformed_response "response without :status"
    else if t.status < 200 then begin
      if end_stream then stream_error t slot id E.Protocol_error Malformed_response "1xx response with END_STREAM"
      else if t.status = 101 then stream_error t slot id E.Protocol_error Malformed_response "101 in HTTP/2"
      else if t.interim.(slot) >= t.max_interim then
        stream_error t slot id E.Protocol_error Too_many_interim "too many 1xx responses"
      else begin
        t.interim.(slot) <- t.interim.(slot) + 1;
        Interim
      end
    end
    else begin
      t.final_head.(slot) <- true;
      (* RFC 9110 §8.6: no body after HEAD, 204 or 304 whatever it says. *)
      let binding = not (t.head_request.(slot) || t.status = 204 || t.status = 304) in
      t.clen.(slot) <- (if binding then t.head_clen else -1);
      if end_stream && t.clen.(slot) > 0 then
        stream_error t slot id E.Protocol_error Content_length "content-length with no body"
      else begin
        if end_stream then remote_closed t slot;
        Response
      end
    end
  end
  else if not end_stream then
    stream_error t slot id E.Protocol_error Malformed_response "trailers without END_STREAM"
  else if t.status >= 0 then stream_error t slot id E.Protocol_error Malformed_response "pseudo-header in trailers"
  else if t.clen.(slot) >= 0 && t.data_len.(slot) <> t.clen.(slot) then
    stream_error t slot id E.Protocol_error Content_length "body shorter than content-length"
  else begin
    remote_closed t slot;
    Trailers
  end

(* {1 Frames} *)

let on_headers t src ~head =
  let r = t.reader in
  let id = F.stream_id r in
  if is_idle t id then fail t E.Protocol_error Bad_stream_id "HEADERS on a stream the client did not open"
  else begin
    let end_stream = F.has_flag r F.flag_end_stream in
    if F.has_flag r F.flag_end_headers then
      header_block t src ~off:(F.payload_off r) ~len:(F.payload_len r) ~head ~id ~end_stream
    else begin
      let len = F.payload_len r in
      if len > B.length t.asm then fail t E.Enhance_your_calm Header_block_too_large "header block too large"
      else begin
        B.blit ~src ~src_off:(F.payload_off r) ~dst:t.asm ~dst_off:0 ~len;
        t.asm_len <- len;
        t.asm_stream <- id;
        t.asm_end_stream <- end_stream;
        t.asm_count <- 0;
        Need_more
      end
    end
  end

let on_continuation t src ~head =
  let r = t.reader in
  let len = F.payload_len r in
  if t.asm_stream = 0 || F.stream_id r <> t.asm_stream then
    fail t E.Protocol_error Continuation_expected "CONTINUATION without its HEADERS"
  else if t.asm_count >= t.max_continuations then
    fail t E.Enhance_your_calm Continuation_flood "too many CONTINUATION frames"
  else if t.asm_len + len > B.length t.asm then
    fail t E.Enhance_your_calm Header_block_too_large "header block too large"
  else begin
    B.blit ~src ~src_off:(F.payload_off r) ~dst:t.asm ~dst_off:t.asm_len ~len;
    t.asm_len <- t.asm_len + len;
    t.asm_count <- t.asm_count + 1;
    if F.has_flag r F.flag_end_headers then begin
      let id = t.asm_stream in
      t.asm_stream <- 0;
      header_block t t.asm ~off:0 ~len:t.asm_len ~head ~id ~end_stream:t.asm_end_stream
    end
    else Need_more
  end

let on_data t =
  let r = t.reader in
  let id = F.stream_id r and flow = F.length r and n = F.payload_len r in
  let end_stream = F.has_flag r F.flag_end_stream in
  if is_idle t id then fail t E.Protocol_error Bad_stream_id "DATA on a stream the client did not open"
  else if flow > t.conn_recv then fail t E.Flow_control_error Flow_control "DATA beyond the connection window"
  else begin
    t.conn_recv <- t.conn_recv - flow;
    let slot = find t id in
    if slot < 0 then begin
      (* A stream we closed: in flight when we reset it (§5.1). *)
      credit_connection t flow;
      Need_more
    end
    else if t.state.(slot) = st_half_closed_remote then begin
      credit_connection t flow;
      stream_error t slot id E.Stream_closed Stream_closed "DATA after END_STREAM"
    end
    else if not t.final_head.(slot) then begin
      credit_connection t flow;
      stream_error t slot id E.Protocol_error Malformed_response "DATA before the response head"
    end
    else if flow > t.recv_win.(slot) then begin
      credit_connection t flow;
      stream_error t slot id E.Flow_control_error Flow_control "DATA beyond the stream window"
    end
    else begin
      t.recv_win.(slot) <- t.recv_win.(slot) - flow;
      let total = t.data_len.(slot) + n in
      t.data_len.(slot) <- total;
      let cl = t.clen.(slot) in
      if cl >= 0 && (total > cl || (end_stream && total <> cl)) then begin
        credit_connection t flow;
        stream_error t slot id E.Protocol_error Content_length
          (if total > cl then "body longer than content-length" else "body shorter than content-length")
      end
      else begin
        (* Padding is nobody's to consume: credited now. *)
        if flow > n then begin
          t.recv_owed.(slot) <- t.recv_owed.(slot) + (flow - n);
          t.conn_owed <- t.conn_owed + (flow - n);
          queue_credit t slot
        end;
        t.ev_stream <- id;
        t.ev_end <- end_stream;
        t.ev_off <- F.payload_off r;
        t.ev_len <- n;
        if end_stream then remote_closed t slot;
        Data
      end
    end
  end

let on_settings t src =
  let r = t.reader in
  if F.has_flag r F.flag_ack then begin
    t.settings_acked <- true;
    Need_more
  end
  else begin
    let bad = ref No_failure in
    for i = 0 to F.settings_count r - 1 do
      let id = F.setting_id src r i and v = F.setting_value src r i in
      match id with
      | S.Initial_window_size ->
          let delta = v - t.peer.initial_window_size in
          for s = 0 to t.max_streams - 1 do
            if t.sid.(s) <> 0 then begin
              t.send_win.(s) <- t.send_win.(s) + delta;
              if t.send_win.(s) > S.max_window_size then bad := Flow_control
            end
          done;
          S.apply t.peer id v
      | Enable_push -> if v <> 0 then bad := Push_enabled
      | Header_table_size ->
          S.apply t.peer id v;
          Enc.set_peer_max_table_size t.enc v
      | _ -> S.apply t.peer id v
    done;
    if !bad = Flow_control then fail t E.Flow_control_error Flow_control "INITIAL_WINDOW_SIZE overflows a window"
    else if !bad = Push_enabled then fail t E.Protocol_error Push_enabled "server sent SETTINGS_ENABLE_PUSH 1"
    else if not (reserve t F.header_size) then fail t E.Internal_error Output_full "output queue full"
    else begin
      t.out_tail <- W.settings_ack t.out ~off:t.out_tail;
      t.settings_received <- true;
      Settings
    end
  end

let on_rst t =
  let r = t.reader in
  let id = F.stream_id r in
  if is_idle t id then fail t E.Protocol_error Bad_stream_id "RST_STREAM on a stream the client did not open"
  else begin
    let slot = find t id in
    if slot < 0 then Need_more
    else begin
      free_slot t slot;
      t.ev_stream <- id;
      t.ev_error <- E.of_int (F.error_code_raw r);
      t.ev_failure <- Peer_reset;
      t.ev_reason <- "RST_STREAM from the server";
      Reset
    end
  end

let on_window_update t =
  let r = t.reader in
  let id = F.stream_id r and inc = F.window_increment r in
  if id = 0 then begin
    if t.conn_send + inc > S.max_window_size then
      fail t E.Flow_control_error Flow_control "connection send window above 2^31-1"
    else begin
      t.conn_send <- t.conn_send + inc;
      t.ev_stream <- 0;
      Window_update
    end
  end
  else if is_idle t id then fail t E.Protocol_error Bad_stream_id "WINDOW_UPDATE on a stream the client did not open"
  else begin
    let slot = find t id in
    if slot < 0 then Need_more
    else if t.send_win.(slot) + inc > S.max_window_size then
      stream_error t slot id E.Flow_control_error Flow_control "stream send window above 2^31-1"
    else begin
      t.send_win.(slot) <- t.send_win.(slot) + inc;
      t.ev_stream <- id;
      Window_update
    end
  end

let on_ping t src =
  let r = t.reader in
  if F.has_flag r F.flag_ack then begin
    let p = F.payload_off r in
    t.ev_ping <- (F.get_u32 src p lsl 32) lor F.get_u32 src (p + 4);
    Ping_ack
  end
  else if not (reserve t (F.header_size + 8)) then fail t E.Internal_error Output_full "output queue full"
  else begin
    t.out_tail <- W.ping t.out ~off:t.out_tail ~ack:true src ~src_off:(F.payload_off r);
    Need_more
  end

let on_goaway t =
  let r = t.reader in
  let last = F.last_stream_id r in
  t.goaway <- true;
  t.goaway_last <- (if t.goaway_last >= 0 then min t.goaway_last last else last);
  t.nunprocessed <- 0;
  for s = 0 to t.max_streams - 1 do
    if t.sid.(s) > last then begin
      t.unprocessed.(t.nunprocessed) <- t.sid.(s);
      t.nunprocessed <- t.nunprocessed + 1;
      free_slot t s
    end
  done;
  t.ev_stream <- 0;
  t.ev_error <- E.of_int (F.error_code_raw r);
  t.ev_failure <- Peer_goaway;
  t.ev_reason <- "GOAWAY from the server";
  Goaway

let on_frame t src ~head =
  let r = t.reader in
  let typ = F.frame_type r in
  if not t.settings_received && (typ <> F.Settings || F.has_flag r F.flag_ack) then
    fail t E.Protocol_error Settings_expected "the server's first frame is not SETTINGS"
  else if t.asm_stream <> 0 && typ <> F.Continuation then
    fail t E.Protocol_error Continuation_expected "a frame inside a header block"
  else
    match typ with
    | F.Data -> on_data t
    | Headers -> on_headers t src ~head
    | Continuation -> on_continuation t src ~head
    | Settings -> on_settings t src
    | Rst_stream -> on_rst t
    | Window_update -> on_window_update t
    | Ping -> on_ping t src
    | Goaway -> on_goaway t
    | Push_promise -> fail t E.Protocol_error Push_promise "PUSH_PROMISE with push disabled"
    | Priority_update ->
        (* RFC 9218 §7.1: the client sends it, never receives it. *)
        fail t E.Protocol_error Priority_update "PRIORITY_UPDATE from a server"
    | Priority | Unknown -> Need_more

let received t src ~off ~len ~head =
  if off < 0 || len < 0 || off + len > B.length src then invalid_arg "H2_client.received";
  if B.length head < t.max_header_list_size then invalid_arg "H2_client.received: head buffer too small";
  t.consumed <- 0;
  if t.failed then fail t t.error t.failure t.reason
  else begin
    let pos = ref 0 and ev = ref Need_more and go = ref true in
    while !go do
      if !pos >= len then go := false
      else
        match F.read t.reader src ~off:(off + !pos) ~len:(len - !pos) with
        | F.Partial -> go := false
        | F.Connection_error ->
            ev := fail t (F.error t.reader) Frame_rule (F.reason t.reader);
            go := false
        | F.Stream_error ->
            let r = t.reader in
            let id = F.stream_id r in
            pos := !pos + F.consumed r;
            if F.frame_type r = F.Headers || t.asm_stream <> 0 || is_idle t id then begin
              (* A header block we cannot decode would leave HPACK out of step. *)
              ev := fail t (F.error r) Frame_rule (F.reason r);
              go := false
            end
            else begin
              let slot = find t id in
              if slot >= 0 then begin
                ev := stream_error t slot id (F.error r) Frame_rule (F.reason r);
                go := false
              end
            end
        | F.Frame ->
            pos := !pos + F.consumed t.reader;
            let e = on_frame t src ~head in
            if e <> Need_more then begin
              ev := e;
              go := false
            end
    done;
    t.consumed <- !pos;
    !ev
  end

(* {1 Requests} *)

let can_open t =
  (not t.failed) && (not t.goaway) && t.nfree > 0
  && t.active < t.peer.max_concurrent_streams
  && t.next_id <= S.max_window_size

let frames_overhead t len = (len / t.peer.max_frame_size + 1) * F.header_size

(* {2 What a request head may hold (RFC 9113 §8.2-§8.3)}

   The encoder checks names and values for the wire (lower case, no NUL,
   CR, LF) and lets pseudo-headers through for the server's [:status]; a
   client forwarding untrusted fields (a proxy) needs more: no second
   pseudo-header, no connection-specific field (§8.2.2), and pseudo-header
   values a server will not read as another request (§8.3.1). Every
   refusal abandons the head, so a caller that catches the exception
   cannot send the rest as if the field had been left out. *)

let refuse t =
  t.building <- false;
  raise_notrace Enc.Invalid_field

let token_ok s =
  let n = String.length s in
  let i = ref 0 in
  while !i < n && Charset.is_tchar (String.unsafe_get s !i) do incr i done;
  n > 0 && !i = n

(* scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ) (RFC 3986 §3.1). *)
let scheme_ok s =
  let n = String.length s in
  let alpha c = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') in
  let i = ref 1 in
  while
    !i < n
    && (let c = String.unsafe_get s !i in
        alpha c || (c >= '0' && c <= '9') || c = '+' || c = '-' || c = '.')
  do incr i done;
  n > 0 && alpha (String.unsafe_get s 0) && !i = n

(* origin-form (a '/' then visible ASCII, no '#': a fragment is not
   sent), or asterisk-form for OPTIONS (RFC 9113 §8.3.1). *)
let path_ok ~meth s =
  let n = String.length s in
  if n = 1 && String.unsafe_get s 0 = '*' then String.equal meth "OPTIONS"
  else begin
    let i = ref 0 in
    while
      !i < n
      && (let c = String.unsafe_get s !i in c > ' ' && c < '\127' && c <> '#')
    do incr i done;
    n > 0 && String.unsafe_get s 0 = '/' && !i = n
  end

(* uri-host [ ":" port ] without userinfo (RFC 9113 §8.3.1), by
   {!Authority.valid_host} over a copy in the head buffer, which the
   encoder then overwrites: no allocation. *)
let authority_ok t s =
  let n = String.length s in
  if n > B.length t.block then raise_notrace Enc.No_space;
  B.unsafe_blit_from_string s ~src_off:0 t.block ~dst_off:0 ~len:n;
  n > 0 && Authority.valid_host ~simd:false t.block ~off:0 ~len:n

(* "trailers", in any case: the one TE value HTTP/2 allows (§8.2.2). *)
let trailers = "trailers"

let te_ok_string v =
  let n = String.length v in
  let i = ref 0 in
  while !i < n && Char.lowercase_ascii (String.unsafe_get v !i) = String.unsafe_get trailers !i do incr i done;
  n = 8 && !i = n

let te_ok_span src sp =
  let off = Span.off sp and n = Span.len sp in
  let i = ref 0 in
  while n = 8 && off >= 0 && off + 8 <= B.length src && !i < 8 && Char.lowercase_ascii (B.unsafe_get src (off + !i)) = String.unsafe_get trailers !i do
    incr i
  done;
  n = 8 && !i = n

(* Connection-specific fields (RFC 9113 §8.2.2); the encoder has already
   refused upper case, so names compare as they are. *)
let connection_specific_s name =
  String.equal name "connection" || String.equal name "keep-alive" || String.equal name "proxy-connection"
  || String.equal name "transfer-encoding" || String.equal name "upgrade"

let connection_specific (n : Header_name.t) =
  match n with Connection | Keep_alive | Transfer_encoding | Upgrade -> true | _ -> false

let start_request t ~meth ~scheme ~authority ~path =
  t.building <- false;
  if t.failed then Closed
  else if t.goaway || t.next_id > S.max_window_size then Going_away
  else if t.nfree = 0 || t.active >= t.peer.max_concurrent_streams then Too_many_streams
  else if room t < B.length t.block + frames_overhead t (B.length t.block) then No_space
  else if
    (not (token_ok meth)) || String.equal meth "CONNECT" || (not (scheme_ok scheme))
    || (not (path_ok ~meth path)) || not (authority_ok t authority)
  then refuse t
  else begin
    let b = t.block in
    let o = Enc.start_block t.enc b ~off:0 in
    let o = Enc.field_s t.enc b ~off:o ":method" meth in
    let o = Enc.field_s t.enc b ~off:o ":scheme" scheme in
    let o = Enc.field_s t.enc b ~off:o ":authority" authority in
    let o = Enc.field_s t.enc b ~off:o ":path" path in
    t.block_len <- o;
    t.building <- true;
    t.building_head_request <- String.equal meth "HEAD";
    Submitted
  end

let check_building t = if not t.building then invalid_arg "H2_client: no request head started"

(* [building] is off while the encoder runs, so one of its exceptions
   abandons the head too. *)
let[@inline] added t o =
  t.block_len <- o;
  t.building <- true

let header t (name : Header_name.t) value =
  check_building t;
  if connection_specific name || (name = Te && not (te_ok_string value)) then refuse t;
  t.building <- false;
  added t (Enc.field t.enc t.block ~off:t.block_len name value)

let name_ok_s name = String.length name = 0 || (String.unsafe_get name 0 <> ':' && not (connection_specific_s name))

let header_s t name value =
  check_building t;
  if not (name_ok_s name) || (String.equal name "te" && not (te_ok_string value)) then refuse t;
  t.building <- false;
  added t (Enc.field_s t.enc t.block ~off:t.block_len name value)

let header_span t (name : Header_name.t) src s =
  check_building t;
  if connection_specific name || (name = Te && not (te_ok_span src s)) then refuse t;
  t.building <- false;
  added t (Enc.field_span t.enc t.block ~off:t.block_len name src s)

let header_s_span t name src s =
  check_building t;
  if not (name_ok_s name) || (String.equal name "te" && not (te_ok_span src s)) then refuse t;
  t.building <- false;
  added t (Enc.field_s_span t.enc t.block ~off:t.block_len name src s)

let local_closed t slot =
  if t.state.(slot) = st_half_closed_remote then free_slot t slot
  else t.state.(slot) <- st_half_closed_local

let send_request t ~end_stream =
  check_building t;
  if t.failed then (t.building <- false; Closed)
  else if t.goaway then (t.building <- false; Going_away)
  else if t.nfree = 0 || t.active >= t.peer.max_concurrent_streams then (t.building <- false; Too_many_streams)
  else if room t < t.block_len + frames_overhead t t.block_len then No_space
  else begin
    ignore (reserve t (t.block_len + frames_overhead t t.block_len));
    t.building <- false;
    let id = t.next_id in
    t.next_id <- id + 2;
    let max = t.peer.max_frame_size in
    let len = t.block_len in
    let first = min len max in
    let o =
      W.headers_header t.out ~off:t.out_tail ~stream_id:id ~length:first ~end_stream ~end_headers:(first = len)
    in
    B.blit ~src:t.block ~src_off:0 ~dst:t.out ~dst_off:o ~len:first;
    let o = ref (o + first) and sent = ref first in
    while !sent < len do
      let n = min (len - !sent) max in
      let p = W.continuation_header t.out ~off:!o ~stream_id:id ~length:n ~end_headers:(!sent + n = len) in
      B.blit ~src:t.block ~src_off:!sent ~dst:t.out ~dst_off:p ~len:n;
      o := p + n;
      sent := !sent + n
    done;
    t.out_tail <- !o;
    t.nfree <- t.nfree - 1;
    let slot = t.free.(t.nfree) in
    t.active <- t.active + 1;
    t.sid.(slot) <- id;
    t.state.(slot) <- (if end_stream then st_half_closed_local else st_open);
    t.send_win.(slot) <- t.peer.initial_window_size;
    t.recv_win.(slot) <- t.initial_window;
    t.recv_owed.(slot) <- 0;
    t.final_head.(slot) <- false;
    t.interim.(slot) <- 0;
    t.clen.(slot) <- -1;
    t.data_len.(slot) <- 0;
    t.head_request.(slot) <- t.building_head_request;
    t.hint.((id lsr 1) land t.hint_mask) <- slot;
    t.request_stream <- id;
    Submitted
  end

let request_stream t = t.request_stream

let send_window t ~stream =
  let slot = find t stream in
  if slot < 0 then -1 else max 0 (min t.conn_send t.send_win.(slot))

let send_data t ~stream src ~off ~len ~end_stream =
  if off < 0 || len < 0 || off + len > B.length src then invalid_arg "H2_client.send_data";
  let slot = find t stream in
  if t.failed || slot < 0 || (t.state.(slot) <> st_open && t.state.(slot) <> st_half_closed_remote) then -1
  else begin
    let taken = ref 0 and go = ref true in
    while !go do
      let left = len - !taken in
      let win = min t.conn_send t.send_win.(slot) in
      let n = min left (min win t.peer.max_frame_size) in
      let n = min n (room t - F.header_size) in
      if n > 0 || (left = 0 && end_stream && room t >= F.header_size) then begin
        ignore (reserve t (F.header_size + n));
        let last = !taken + n = len in
        let o = W.data_header t.out ~off:t.out_tail ~stream_id:stream ~length:n ~end_stream:(last && end_stream) in
        B.blit ~src ~src_off:(off + !taken) ~dst:t.out ~dst_off:o ~len:n;
        t.out_tail <- o + n;
        t.conn_send <- t.conn_send - n;
        t.send_win.(slot) <- t.send_win.(slot) - n;
        taken := !taken + n;
        if last then begin
          go := false;
          if end_stream then local_closed t slot
        end
      end
      else go := false
    done;
    !taken
  end

let sending t ~stream =
  let slot = find t stream in
  slot >= 0 && (t.state.(slot) = st_open || t.state.(slot) = st_half_closed_remote)

let cancel t ~stream code =
  let slot = find t stream in
  if slot >= 0 then begin
    queue_rst t stream code;
    free_slot t slot
  end

let ping t n =
  if reserve t (F.header_size + 8) then begin
    t.out_tail <- W.ping_int t.out ~off:t.out_tail ~ack:false n;
    true
  end
  else false

let shutdown t =
  if (not t.goaway) && not t.failed && reserve t (F.header_size + 8) then
    t.out_tail <- W.goaway t.out ~off:t.out_tail ~last_stream_id:0 ~code:E.No_error ~debug:"";
  t.goaway <- true

(* {1 Output} *)

let flush_credit t =
  t.credit_pending <- false;
  for s = 0 to t.max_streams - 1 do
    if t.sid.(s) <> 0 && t.recv_owed.(s) > 0 then queue_credit t s
  done;
  queue_credit t (-1)

let next_output t buf ~off ~len =
  if off < 0 || len < 0 || off + len > B.length buf then invalid_arg "H2_client.next_output";
  let n = min len (t.out_tail - t.out_head) in
  B.blit ~src:t.out ~src_off:t.out_head ~dst:buf ~dst_off:off ~len:n;
  t.out_head <- t.out_head + n;
  if t.out_head = t.out_tail then begin
    t.out_head <- 0;
    t.out_tail <- 0
  end;
  if t.credit_pending && not t.failed then flush_credit t;
  n

let has_output t = t.out_tail > t.out_head

(* {1 Accessors} *)

let consumed_bytes t = t.consumed
let event_stream t = t.ev_stream
let event_end_stream t = t.ev_end
let event_data_off t = t.ev_off
let event_data_len t = t.ev_len
let event_error t = t.ev_error
let event_failure t = t.ev_failure
let event_ping t = t.ev_ping
let reason t = t.ev_reason
let status t = t.status
let field_count t = t.nfields
let field_name t i = Span.unsafe_of_int t.fname.(i)
let field_value t i = Span.unsafe_of_int t.fvalue.(i)
let field_header_name t i = t.fheader.(i)
let content_length t = t.head_clen

let find_field t name =
  let r = ref (-1) and i = ref 0 in
  while !r < 0 && !i < t.nfields do
    if t.fheader.(!i) = name then r := !i;
    incr i
  done;
  !r

let goaway_received t = t.goaway_last >= 0
let goaway_last_stream t = t.goaway_last
let unprocessed_count t = t.nunprocessed
let unprocessed_stream t i = t.unprocessed.(i)
let active_streams t = t.active
let failed t = t.failed
let error t = t.error
let failure t = t.failure
let settings_received t = t.settings_received
let settings_acked t = t.settings_acked
let peer_settings t = t.peer
let connection_send_window t = t.conn_send
let connection_recv_window t = t.conn_recv
let finished t = (t.failed || t.goaway) && t.active = 0 && not (has_output t)

let stream_state t ~stream =
  let slot = find t stream in
  if slot < 0 then 0 else t.state.(slot)

let stream_recv_window t ~stream =
  let slot = find t stream in
  if slot < 0 then -1 else t.recv_win.(slot)
