open H2_conn_state
module B = Bigstring
module F = H2_frame
module S = H2_stream
module O = H2_output
module Err = H2_error

(* {1 Header blocks} *)

let open_stream t id ~end_stream =
  let h = t.ws.head in
  if t.streams.active >= t.config.max_concurrent_streams then begin
    t.refused <- t.refused + 1;
    (* Before it acknowledged our SETTINGS the client could not know the
       limit (the default is none): a browser's first flight of a few
       hundred requests gets REFUSED_STREAM for the excess (it retries
       them), not a GOAWAY; the allowance is bounded all the same. *)
    let allowed =
      if t.settings_acked then t.config.max_refused
      else t.config.max_refused + (2 * t.config.max_concurrent_streams)
    in
    if t.refused > allowed then calm t "too many refused streams"
    else refuse t id Err.Refused_stream
  end
  else if end_stream && H2_head.content_length h > 0 then refuse t id Err.Protocol_error
  else begin
    let slot =
      S.open_slot t.streams ~id ~recv_window:t.config.initial_window_size
        ~send_window:t.peer.initial_window_size
    in
    let s = t.streams in
    s.priority.(slot) <- (H2_head.priority h :> int);
    s.content_length.(slot) <- H2_head.content_length h;
    if end_stream then s.state.(slot) <- S.half_closed_remote;
    t.ev_stream <- id;
    t.ev_end_stream <- end_stream;
    Headers
  end

let trailers t slot ~end_stream =
  let s = t.streams in
  if not end_stream then stream_error t slot Err.Protocol_error "trailers without END_STREAM"
  else if s.content_length.(slot) >= 0 && s.content_length.(slot) <> s.data_received.(slot) then
    stream_error t slot Err.Protocol_error "content-length does not match the DATA"
  else begin
    let id = s.id.(slot) in
    if s.state.(slot) = S.half_closed_local then O.close_stream t.out slot
    else s.state.(slot) <- S.half_closed_remote;
    t.ev_stream <- id;
    t.ev_end_stream <- true;
    Trailers
  end

(* [slot]: stream [id]'s, as {!S.find} gives it. *)
let header_block t src ~off ~len ~id ~slot ~end_stream ~bad_priority =
  t.block_stream <- 0;
  let is_trailers = slot >= 0 in
  match H2_head.decode t.ws.head t.decoder src ~off ~len ~out:t.ws.decoded ~trailers:is_trailers with
  | Compression_error -> fail t Err.Compression_error (H2_head.reason t.ws.head)
  | result ->
      if is_trailers then begin
        if t.streams.state.(slot) <> S.open_ && t.streams.state.(slot) <> S.half_closed_local then
          stream_error t slot Err.Stream_closed "HEADERS after END_STREAM"
        else if result <> H2_head.Valid then stream_error t slot Err.Protocol_error (H2_head.reason t.ws.head)
        else trailers t slot ~end_stream
      end
      else if id > t.goaway_last then Need_more (* §6.8: streams after our GOAWAY are ignored *)
      else if bad_priority then refuse t id Err.Protocol_error
      else if result <> H2_head.Valid then refuse t id Err.Protocol_error
      else open_stream t id ~end_stream

let on_headers t buf ~bad_priority =
  let r = t.reader in
  let id = F.stream_id r in
  if id land 1 = 0 then fail t Err.Protocol_error "HEADERS on a server stream id"
  else
  (* A stream above the last one opened has no slot: no look. *)
  let slot = if id > t.last_peer_stream then -1 else S.find t.streams id in
  if id <= t.last_peer_stream && slot < 0 then fail t Err.Stream_closed "HEADERS on a closed stream"
  else begin
    if id > t.last_peer_stream then t.last_peer_stream <- id;
    let end_stream = F.has_flag r F.flag_end_stream in
    let off = F.payload_off r and len = F.payload_len r in
    if F.has_flag r F.flag_end_headers then header_block t buf ~off ~len ~id ~slot ~end_stream ~bad_priority
    else if len > t.config.max_header_list_size then calm t "header block too large"
    else begin
      if B.length t.block = 0 then t.block <- H2_workspace.take t.ws.blocks;
      B.blit ~src:buf ~src_off:off ~dst:t.block ~dst_off:0 ~len;
      t.block_len <- len;
      t.block_stream <- id;
      t.block_end_stream <- end_stream;
      t.block_bad_priority <- bad_priority;
      t.continuations <- 0;
      Need_more
    end
  end

let on_continuation t buf =
  let r = t.reader in
  let len = F.payload_len r in
  if t.block_stream = 0 || F.stream_id r <> t.block_stream then
    fail t Err.Protocol_error "CONTINUATION without its HEADERS"
  else if t.continuations >= t.config.max_continuations then calm t "too many CONTINUATION frames"
  else if t.block_len + len > B.length t.block then calm t "header block too large"
  else begin
    B.blit ~src:buf ~src_off:(F.payload_off r) ~dst:t.block ~dst_off:t.block_len ~len;
    t.block_len <- t.block_len + len;
    t.continuations <- t.continuations + 1;
    if F.has_flag r F.flag_end_headers then begin
      let ev =
        header_block t t.block ~off:0 ~len:t.block_len ~id:t.block_stream
          ~slot:(S.find t.streams t.block_stream) ~end_stream:t.block_end_stream
          ~bad_priority:t.block_bad_priority
      in
      release_block t;
      ev
    end
    else Need_more
  end

(* {1 DATA} *)

let on_data t =
  let r = t.reader in
  let id = F.stream_id r and flow = F.length r and n = F.payload_len r in
  let end_stream = F.has_flag r F.flag_end_stream in
  let o = t.out in
  if is_idle t id then fail t Err.Protocol_error "DATA on an idle stream"
  else if flow > o.conn_recv_window then fail t Err.Flow_control_error "DATA beyond the connection window"
  else begin
    o.conn_recv_window <- o.conn_recv_window - flow;
    let slot = S.find t.streams id in
    let s = t.streams in
    if slot < 0 then begin
      O.credit_connection o flow;
      if id > t.goaway_last then Need_more else refuse t id Err.Stream_closed
    end
    else if s.state.(slot) <> S.open_ && s.state.(slot) <> S.half_closed_local then begin
      O.credit_connection o flow;
      stream_error t slot Err.Stream_closed "DATA after END_STREAM"
    end
    else if flow > s.recv_window.(slot) then begin
      O.credit_connection o flow;
      stream_error t slot Err.Flow_control_error "DATA beyond the stream window"
    end
    else begin
      s.recv_window.(slot) <- s.recv_window.(slot) - flow;
      if flow > n then begin
        O.credit_connection o (flow - n);
        O.credit_stream o slot (flow - n)
      end;
      let total = s.data_received.(slot) + n in
      s.data_received.(slot) <- total;
      let cl = s.content_length.(slot) in
      if cl >= 0 && (total > cl || (end_stream && total <> cl)) then begin
        O.credit_connection o n;
        stream_error t slot Err.Protocol_error "content-length does not match the DATA"
      end
      else if n = 0 && not end_stream then begin
        t.empty_data <- t.empty_data + 1;
        if t.empty_data > t.config.max_empty_data then calm t "too many empty DATA frames" else Need_more
      end
      else begin
        s.recv_held.(slot) <- s.recv_held.(slot) + n;
        t.ev_stream <- id;
        t.ev_end_stream <- end_stream;
        t.ev_data_off <- F.payload_off r;
        t.ev_data_len <- n;
        if end_stream then begin
          if s.state.(slot) = S.half_closed_local then O.close_stream o slot
          else s.state.(slot) <- S.half_closed_remote
        end;
        Data
      end
    end
  end

(* {1 Control frames} *)

let on_settings t buf =
  let r = t.reader in
  if F.has_flag r F.flag_ack then begin
    t.settings_acked <- true;
    Need_more
  end
  else begin
    t.settings_count <- t.settings_count + 1;
    if t.settings_count > t.config.max_settings then calm t "SETTINGS flood"
    else begin
      let result = ref Need_more and i = ref 0 and count = F.settings_count r in
      while !result = Need_more && !i < count do
        let id = F.setting_id buf r !i and v = F.setting_value buf r !i in
        (match id with
        | H2_settings.Initial_window_size ->
            let delta = v - t.peer.initial_window_size in
            let s = t.streams in
            for slot = 0 to s.capacity - 1 do
              if s.id.(slot) <> 0 then begin
                let w = s.send_window.(slot) + delta in
                if w > H2_settings.max_window_size then
                  result := fail t Err.Flow_control_error "SETTINGS_INITIAL_WINDOW_SIZE overflows a window"
                else s.send_window.(slot) <- w
              end
            done
        | Max_frame_size -> t.out.peer_max_frame <- v
        | Header_table_size ->
            (* The encoder keeps no table of its own (it would announce
               a size of 0, which would empty the peer's): what the peer's
               table holds is the mirror's business. *)
            Hpack_mirror.set_peer_max t.out.mirror v
        | _ -> ());
        if !result = Need_more then H2_settings.apply t.peer id v;
        incr i
      done;
      if !result = Need_more && not (O.push_settings_ack t.out) then calm t "output queue full" else !result
    end
  end

let on_ping t buf =
  let r = t.reader in
  if F.has_flag r F.flag_ack then Need_more
  else begin
    t.pings <- t.pings + 1;
    if t.pings > t.config.max_pings then calm t "PING flood"
    else if O.push_ping_ack t.out buf ~src_off:(F.payload_off r) then Need_more
    else calm t "output queue full"
  end

let on_window_update t =
  let r = t.reader in
  let id = F.stream_id r and inc = F.window_increment r in
  t.window_updates <- t.window_updates + 1;
  if t.window_updates > t.config.max_window_updates then calm t "WINDOW_UPDATE flood"
  else if id = 0 then begin
    let w = t.out.conn_send_window + inc in
    if w > H2_settings.max_window_size then fail t Err.Flow_control_error "connection window above 2^31-1"
    else begin
      t.out.conn_send_window <- w;
      Need_more
    end
  end
  else if is_idle t id then fail t Err.Protocol_error "WINDOW_UPDATE on an idle stream"
  else begin
    let slot = S.find t.streams id in
    if slot < 0 then Need_more
    else begin
      let w = t.streams.send_window.(slot) + inc in
      if w > H2_settings.max_window_size then
        stream_error t slot Err.Flow_control_error "stream window above 2^31-1"
      else begin
        t.streams.send_window.(slot) <- w;
        Need_more
      end
    end
  end

let on_rst_stream t =
  let r = t.reader in
  let id = F.stream_id r in
  if is_idle t id then fail t Err.Protocol_error "RST_STREAM on an idle stream"
  else begin
    let slot = S.find t.streams id in
    if slot < 0 then Need_more
    else begin
      t.ev_sent <- t.streams.data_sent.(slot);
      O.close_stream t.out slot;
      t.resets <- t.resets + 1;
      if t.resets > t.config.max_resets then calm t "rapid reset"
      else begin
        t.ev_stream <- id;
        t.ev_error <- Err.of_int (F.error_code_raw r);
        t.reason <- "reset by the peer";
        Reset
      end
    end
  end

let on_priority_update t buf =
  let r = t.reader in
  let id = F.prioritized_stream_id r in
  if id land 1 = 0 then fail t Err.Protocol_error "PRIORITY_UPDATE for a server stream"
  else begin
    let slot = S.find t.streams id in
    if slot >= 0 then
      t.streams.priority.(slot) <-
        (H2_priority.parse buf ~off:(F.payload_off r) ~len:(F.payload_len r) :> int);
    Need_more
  end

let on_goaway t =
  let r = t.reader in
  t.ev_error <- Err.of_int (F.error_code_raw r);
  t.ev_last_stream <- F.last_stream_id r;
  t.reason <- "GOAWAY from the peer";
  Goaway

let dispatch t buf =
  let r = t.reader in
  let ty = F.frame_type r in
  if t.block_stream <> 0 && ty <> F.Continuation then fail t Err.Protocol_error "frame inside a header block"
  else if t.phase = phase_first_settings && (ty <> F.Settings || F.has_flag r F.flag_ack) then
    fail t Err.Protocol_error "preface not followed by SETTINGS"
  else begin
    if t.phase = phase_first_settings then t.phase <- phase_running;
    match ty with
    | F.Data -> on_data t
    | Headers -> on_headers t buf ~bad_priority:false
    | Continuation -> on_continuation t buf
    | Settings -> on_settings t buf
    | Ping -> on_ping t buf
    | Window_update -> on_window_update t
    | Rst_stream -> on_rst_stream t
    | Priority_update -> on_priority_update t buf
    | Goaway -> on_goaway t
    | Push_promise -> fail t Err.Protocol_error "PUSH_PROMISE from a client"
    | Priority | Unknown -> Need_more
  end

(* A frame the reader found whole but breaking a stream-level rule. *)
let reader_stream_error t buf =
  let r = t.reader in
  if F.frame_type r = F.Headers then on_headers t buf ~bad_priority:true
  else begin
    let id = F.stream_id r in
    let slot = S.find t.streams id in
    if slot >= 0 then stream_error t slot (F.error r) (F.reason r) else refuse t id (F.error r)
  end

let received t buf ~off ~len ~now =
  Bigstring.check_range "Httpz.H2_connection.received" buf ~off ~len;
  t.consumed <- 0;
  if t.phase = phase_failed then Connection_error
  else begin
    tick t now;
    let result = ref Need_more and go = ref true in
    if t.phase = phase_preface then begin
      match F.check_preface buf ~off ~len with
      | F.Need_more -> go := false
      | Not_preface ->
          go := false;
          result := fail t Err.Protocol_error "not the HTTP/2 connection preface"
      | Preface ->
          t.consumed <- String.length F.preface;
          t.phase <- phase_first_settings
    end;
    while !go do
      let at = off + t.consumed in
      match F.read t.reader buf ~off:at ~len:(len - t.consumed) with
      | F.Partial -> go := false
      | Connection_error ->
          go := false;
          result := fail t (F.error t.reader) (F.reason t.reader)
      | (Frame | Stream_error) as kind ->
          let e = if kind = F.Frame then dispatch t buf else reader_stream_error t buf in
          if e <> Connection_error then t.consumed <- t.consumed + F.consumed t.reader;
          if e <> Need_more then begin
            go := false;
            result := e
          end
    done;
    !result
  end

