module B = Bigstring
module F = H2_frame
module S = H2_stream
module O = H2_output
module Err = H2_error

type event = Need_more | Headers | Trailers | Data | Reset | Goaway | Connection_error

type submit = Queued | Stream_closed | No_space

(* phases *)
let phase_preface = 0
let phase_first_settings = 1
let phase_running = 2
let phase_failed = 3

type t = {
  config : H2_config.t;
  reader : F.t;
  decoder : Hpack_decoder.t;
  ws : H2_workspace.t;
  mutable block : B.t;
  mutable block_len : int;
  mutable block_stream : int;
  mutable block_end_stream : bool;
  mutable block_bad_priority : bool;
  mutable continuations : int;
  streams : S.t;
  out : O.t;
  peer : H2_settings.t;
  mutable phase : int;
  mutable last_peer_stream : int;
  mutable goaway_sent : bool;
  mutable goaway_last : int;
  mutable settings_acked : bool;
  mutable window_start : int;
  mutable resets : int;
  mutable settings_count : int;
  mutable pings : int;
  mutable empty_data : int;
  mutable window_updates : int;
  mutable refused : int;
  mutable consumed : int;
  mutable ev_stream : int;
  mutable ev_end_stream : bool;
  mutable ev_data_off : int;
  mutable ev_data_len : int;
  mutable ev_sent : int;  (** [Reset]: the DATA payload bytes the stream had sent *)
  mutable ev_error : Err.t;
  mutable ev_last_stream : int;
  mutable reason : string;
  mutable response_stream : int;
}

let our_settings_ids =
  H2_settings.
    [|
      id_to_int Max_concurrent_streams; id_to_int Initial_window_size; id_to_int Max_header_list_size;
      id_to_int Enable_push; id_to_int No_rfc7540_priorities;
    |]

let our_settings_values (c : H2_config.t) =
  [| c.max_concurrent_streams; c.initial_window_size; c.max_header_list_size; 0; 1 |]

let queue_preamble t =
  let c = t.config in
  ignore (O.push_settings t.out ~ids:our_settings_ids ~values:(our_settings_values c));
  let extra = c.connection_window - H2_settings.default_initial_window_size in
  if extra > 0 then begin
    ignore (O.push_window_update t.out ~stream_id:0 ~increment:extra);
    t.out.conn_recv_window <- c.connection_window
  end

let release_block t =
  t.block_len <- 0;
  t.block_stream <- 0;
  t.block <- H2_workspace.give t.ws.blocks t.block

let reset t =
  release_block t;
  S.clear t.streams;
  O.reset t.out;
  Hpack_decoder.reset t.decoder;
  H2_settings.reset t.peer;
  t.block_len <- 0;
  t.block_stream <- 0;
  t.continuations <- 0;
  t.phase <- phase_preface;
  t.last_peer_stream <- 0;
  t.goaway_sent <- false;
  t.goaway_last <- max_int;
  t.settings_acked <- false;
  t.window_start <- 0;
  t.resets <- 0;
  t.settings_count <- 0;
  t.pings <- 0;
  t.empty_data <- 0;
  t.window_updates <- 0;
  t.refused <- 0;
  t.consumed <- 0;
  t.ev_stream <- 0;
  t.reason <- "";
  t.response_stream <- 0;
  queue_preamble t

let create ?(config = H2_config.default) ?workspace () =
  let (c : H2_config.t) = config in
  if c.max_concurrent_streams < 1 || c.initial_window_size < 65535
     || c.initial_window_size > H2_settings.max_window_size
     || c.connection_window < 65535 || c.connection_window > H2_settings.max_window_size
     || c.max_header_list_size < 256 || c.max_continuations < 0 || c.pending_size < 4096
     || c.window_ms < 1
  then invalid_arg "Httpz.H2_connection.create";
  let ws = match workspace with Some ws -> ws | None -> H2_workspace.create ~config:c () in
  if not (H2_workspace.fits ws c) then invalid_arg "Httpz.H2_connection.create: workspace for other sizes";
  let streams = S.create c.max_concurrent_streams in
  let t =
    {
      config = c;
      reader = F.create ();
      decoder = Hpack_decoder.create ~max_header_list_size:c.max_header_list_size ();
      ws;
      block = H2_workspace.none;
      block_len = 0;
      block_stream = 0;
      block_end_stream = false;
      block_bad_priority = false;
      continuations = 0;
      streams;
      out =
        O.create ~streams ~ws ~conn_window:c.connection_window ~stream_window:c.initial_window_size;
      peer = H2_settings.create ();
      phase = phase_preface;
      last_peer_stream = 0;
      goaway_sent = false;
      goaway_last = max_int;
      settings_acked = false;
      window_start = 0;
      resets = 0;
      settings_count = 0;
      pings = 0;
      empty_data = 0;
      window_updates = 0;
      refused = 0;
      consumed = 0;
      ev_stream = 0;
      ev_end_stream = false;
      ev_data_off = 0;
      ev_data_len = 0;
      ev_sent = 0;
      ev_error = Err.No_error;
      ev_last_stream = 0;
      reason = "";
      response_stream = 0;
    }
  in
  queue_preamble t;
  t

(* {1 Errors} *)

let fail t code why =
  if t.phase <> phase_failed then begin
    t.phase <- phase_failed;
    t.ev_error <- code;
    t.reason <- why;
    let last = if t.goaway_sent then t.goaway_last else t.last_peer_stream in
    O.push_goaway t.out ~last_stream_id:last ~code ~debug:why
  end;
  Connection_error

let calm t why = fail t Err.Enhance_your_calm why

(* A stream error on a stream the application knows: RST_STREAM, close,
   and tell the application. *)
let stream_error t slot code why =
  let id = t.streams.id.(slot) in
  if O.push_rst_stream t.out ~stream_id:id ~code then begin
    O.close_stream t.out slot;
    t.ev_stream <- id;
    t.ev_error <- code;
    t.reason <- why;
    Reset
  end
  else calm t "output queue full"

(* A stream error on a stream the application never saw. *)
let refuse t id code =
  if O.push_rst_stream t.out ~stream_id:id ~code then Need_more else calm t "output queue full"

let tick t now =
  if now - t.window_start >= t.config.window_ms || now < t.window_start then begin
    t.window_start <- now;
    t.resets <- 0;
    t.settings_count <- 0;
    t.pings <- 0;
    t.empty_data <- 0;
    t.window_updates <- 0;
    t.refused <- 0
  end

let[@inline] is_idle t id = id land 1 = 0 || id > t.last_peer_stream

