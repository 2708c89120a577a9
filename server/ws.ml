(* WebSocket sessions on the worker's loop. After a 101 the slot stays with
   its backend and transport, in mode [Websocket]: the protocol switch
   (Connection) hands its events here, and this module answers them with
   the same actions. The
   slot's [state] is kept at [Reading_head] (waiting for frames) or
   [Writing] (output pending), which is all the backends look at. *)

open Httpz
open Slot
open Ws_session
module Reader = Ws_reader

type t = Slot.t
type kind = Ws_session.kind = Text | Binary

type origins = Ws_handshake.origins

let same_origin = Ws_handshake.same_origin
let allow_origins = Ws_handshake.allow_origins
let any_origin = Ws_handshake.any_origin

type config = Ws_session.config = {
  max_message : int;
  max_send_buffer : int;
  ping_interval_ms : int;
  idle_timeout_ms : int;
  deflate : bool;
  origins : Ws_handshake.origins;
}

type handlers = Ws_session.handlers = {
  on_message : Slot.t -> kind -> Bigstring.t -> off:int -> len:int -> unit;
  on_close : Slot.t -> int -> unit;
}

let default_config = Ws_session.default_config
let is_websocket = Ws_session.is_websocket
let buffered = Ws_session.buffered

let report c s code =
  if not s.reported then begin
    s.reported <- true;
    try s.handlers.on_close c code
    with e -> Log.error "a WebSocket on_close raised %s" (Printexc.to_string e)
  end

let release c s =
  give_q c s;
  give_msg c s;
  (match s.deflate with Some d -> Ws_deflate.release d | None -> ());
  s.q_ext <- c.sh.empty;
  s.q_ext_len <- 0;
  s.q_conts <- [];
  s.out_conts <- [];
  c.session <- No_session;
  c.mode <- H1_mode

(* Fails the connection: a Close with [code], then the end. *)
let fail c s code reason =
  if s.phase = Open || s.phase = Opening || s.phase = Closing then begin
    if s.phase <> Closing then queue_close c s code reason;
    s.phase <- Finished;
    report c s code
  end

(* {1 Receiving} *)

let deliver c s kind buf off len =
  try s.handlers.on_message c kind buf ~off ~len
  with e ->
    Log.error "a WebSocket on_message raised %s" (Printexc.to_string e);
    fail c s Ws_close.internal_error ""

let message_kind r = match Reader.message_opcode r with Ws_frame.Text -> Text | _ -> Binary

let message_end c s =
  let r = s.reader in
  let kind = message_kind r in
  if Reader.message_compressed r then begin
    keep_piece c s;
    match s.deflate with
    | None -> fail c s Ws_close.protocol_error ""
    | Some d -> (
        match Ws_deflate.inflate d s.msg ~off:0 ~len:s.msg_len ~max:s.cfg.max_message with
        | Ws_deflate.Inflated ->
            let out = Ws_deflate.output_inflated d and n = Ws_deflate.inflated_length d in
            s.msg_len <- 0;
            if kind = Text && not (Utf8.is_complete (Utf8.feed Utf8.accept out ~off:0 ~len:n)) then
              fail c s Ws_close.invalid_payload ""
            else deliver c s kind out 0 n;
            Ws_deflate.trim d
        | Ws_deflate.Too_big ->
            s.msg_len <- 0;
            fail c s Ws_close.message_too_big ""
        | Ws_deflate.Corrupt ->
            s.msg_len <- 0;
            fail c s Ws_close.invalid_payload "")
  end
  else if s.msg_len = 0 then begin
    (* Whole in the read buffer: delivered where it is. *)
    let off = if s.piece_len > 0 then s.piece_off else 0 and len = if s.piece_len > 0 then s.piece_len else 0 in
    s.piece_len <- -1;
    deliver c s kind c.rbuf off len
  end
  else begin
    keep_piece c s;
    let len = s.msg_len in
    s.msg_len <- 0;
    deliver c s kind s.msg 0 len;
    (* A large message's buffer does not outlive it. *)
    if Bigstring.length s.msg > Buffer_pool.size c.sh.bodies then give_msg c s
  end

let control c s =
  let r = s.reader in
  let cb = Reader.control_buffer r and n = Reader.control_length r in
  match Reader.control_opcode r with
  | Ws_frame.Ping -> if s.phase = Open then queue_control c s Ws_frame.Pong cb ~off:0 ~len:n
  | Ws_frame.Pong -> ()
  | _ ->
      (* Close: answered with the same code (none if it had none), then
         the connection ends. *)
      let code = Reader.close_code r in
      if s.phase = Open then queue_close c s code "";
      s.phase <- Finished;
      report c s code

(* Reads the frames in [rbuf\[rpos, rlen)] until they are all used, the
   session ends, or enough output is pending to wait for the peer. *)
let process c s =
  s.busy <- true;
  let r = s.reader in
  let go = ref true in
  while !go && (s.phase = Open || s.phase = Closing) do
    let st = Reader.read r c.rbuf ~off:c.rpos ~len:(c.rlen - c.rpos) in
    c.rpos <- c.rpos + Reader.consumed r;
    (match st with
     | Reader.Data ->
         if s.phase = Open then begin
           let off = Reader.data_off r and len = Reader.data_len r in
           if s.msg_len = 0 && s.piece_len < 0 then begin
             s.piece_off <- off;
             s.piece_len <- len
           end
           else begin
             keep_piece c s;
             append_msg c s c.rbuf off len
           end
         end
     | Reader.Message_end ->
         if s.phase = Open then message_end c s
         else begin
           s.piece_len <- -1;
           s.msg_len <- 0
         end
     | Reader.Control -> control c s
     | Reader.Need_more ->
         c.rpos <- c.rlen;
         go := false
     | Reader.Closed ->
         c.rpos <- c.rlen;
         go := false
     | Reader.Error ->
         let e = Reader.error r in
         fail c s (Reader.error_close_code e) "");
    if Output.pending c + s.q_len + s.q_ext_len > high_water then go := false
  done;
  (* [rbuf] is reused from here on: a piece of a message still arriving
     moves to [msg]. *)
  if s.piece_len >= 0 then keep_piece c s;
  s.busy <- false

(* {1 What the connection does next} *)

let arm_idle c s =
  let idle = s.last_rx + ticks s.cfg.idle_timeout_ms in
  if s.phase = Closing then set_timer c Idle_timer close_ticks
  else if s.cfg.ping_interval_ms > 0 then begin
    let ping = s.last_ping + ticks s.cfg.ping_interval_ms in
    set_deadline c Idle_timer (if ping < idle then ping else idle)
  end
  else set_deadline c Idle_timer idle

(* The session is over: its last output left. *)
let finish c s =
  release c s;
  c.state <- Lingering;
  set_timer c Linger_timer 20;
  Conn_action.Linger

let rec next c s =
  if s.phase = Dead then begin
    report c s Ws_close.abnormal;
    Conn_action.Close
  end
  else begin
    start_output c s;
    if Output.pending c > 0 then begin
      c.state <- Writing;
      Conn_action.Write
    end
    else begin
      (match s.out_conts with
       | [] -> ()
       | l ->
           s.out_conts <- [];
           run_conts c s (List.rev l));
      if s.q_len > 0 || s.q_ext_len > 0 then next c s
      else if s.phase = Finished then finish c s
      else if c.rpos < c.rlen then begin
        process c s;
        next c s
      end
      else begin
        c.state <- Reading_head;
        c.rpos <- 0;
        c.rlen <- 0;
        (* Idle: no buffer from the pool. *)
        Slot.release_idle c;
        if s.msg_len = 0 then give_msg c s;
        if s.q_len = 0 then give_q c s;
        arm_idle c s;
        Conn_action.Read
      end
    end
  end

and run_conts c s = function
  | [] -> ()
  | k :: rest ->
      (try k c
       with e ->
         Log.error "a WebSocket continuation raised %s" (Printexc.to_string e);
         fail c s Ws_close.internal_error "");
      run_conts c s rest

(* {1 The connection's events in WebSocket mode} *)

(* An accepted upgrade: its session waits for the 101 to leave. *)
let accepted c = match c.session with Session _ -> true | _ -> false

(* The 101 left: the HTTP/1.1 exchange is over, frames follow (some may
   be in [rbuf] already, after the request's head). A session that failed
   meanwhile (its queue overflowed) ends now. *)
let start c =
  let s = session c in
  next_gen c;
  reset_response c;
  release_body c;
  c.rpos <- c.next_pos;
  c.mode <- Websocket;
  if s.phase = Opening then begin
    s.phase <- Open;
    s.last_rx <- c.sh.tick;
    s.last_ping <- c.sh.tick
  end;
  c.after <- Then_resume;
  clear_timer c;
  if c.rpos < c.rlen && (s.phase = Open || s.phase = Closing) then process c s;
  (* Draining began while the 101 was on its way: the session is told to
     go away at once, as the open ones were. *)
  if c.sh.draining && s.phase = Open then begin
    queue_close c s Ws_close.going_away "";
    s.phase <- Closing;
    report c s Ws_close.going_away
  end;
  next c s

let prepare_read c =
  let s = session c in
  if c.state = Writing then Conn_action.Write
  else if s.phase = Dead then Conn_action.Close
  else begin
    read_to_rbuf c;
    Conn_action.Read
  end

let received c n =
  let s = session c in
  if n <= 0 then begin
    report c s Ws_close.abnormal;
    Conn_action.Close
  end
  else begin
    c.rlen <- c.rlen + n;
    s.last_rx <- c.sh.tick;
    if c.state = Writing then Conn_action.Write
    else begin
      process c s;
      next c s
    end
  end

let written c =
  let s = session c in
  c.out_len <- 0;
  c.out_sent <- 0;
  if c.ext <> No_ext then begin
    c.ext <- No_ext;
    c.ext_bs <- c.sh.empty;
    c.ext_len <- 0
  end;
  c.after <- Then_resume;
  clear_timer c;
  if c.rpos < c.rlen && (s.phase = Open || s.phase = Closing) then process c s;
  next c s

let blocked c = set_timer c Write_timer c.sh.write_ticks

let timeout c =
  let s = session c in
  let timer = c.timer in
  clear_timer c;
  if timer = Write_timer || s.phase = Closing || s.phase = Opening then begin
    report c s Ws_close.abnormal;
    Conn_action.Close
  end
  else if c.state = Writing then Conn_action.Write
  else if c.sh.tick >= s.last_rx + ticks s.cfg.idle_timeout_ms then begin
    fail c s Ws_close.going_away "idle";
    next c s
  end
  else begin
    if s.cfg.ping_interval_ms > 0 && c.sh.tick >= s.last_ping + ticks s.cfg.ping_interval_ms then begin
      s.last_ping <- c.sh.tick;
      queue_control c s Ws_frame.Ping c.sh.empty ~off:0 ~len:0
    end;
    next c s
  end

let closed c =
  match c.session with
  | Session s ->
      report c s Ws_close.abnormal;
      release c s
  | _ -> ()

(* A send from outside the connection's own events (another connection's
   callback, a timer) asks the loop to write: [resume] is how. *)
let resume c =
  match c.session with
  | Session s when not s.busy ->
      if s.phase = Dead then begin
        report c s Ws_close.abnormal;
        Conn_action.Close
      end
      else if c.state = Reading_head then next c s
      else Conn_action.Nothing
  | _ -> Conn_action.Nothing

(* Not for a [Dead] session: closing it now would call [on_close] inside
   the caller's send (a broadcast iterating over its members); its write
   timer ends it. *)
let kick c s = if (not s.busy) && c.state = Reading_head && s.phase <> Dead then c.sh.hooks.resume c c.gen ignore

(* {1 The application's calls} *)

let id c = c.slot
let protocol c = match c.session with Session s -> s.protocol | _ -> ""
let ctx c = Ctx.of_conn c
let of_ctx ctx = let c = Ctx.to_conn ctx in match c.session with Session _ -> Some c | _ -> None

let is_open c = match c.session with Session s -> s.phase = Open | _ -> false

let send_common c kind buf ~off ~len ~stable =
  match c.session with
  | Session s when s.phase = Open || s.phase = Opening ->
      if off < 0 || len < 0 || off > Bigstring.length buf - len then invalid_arg "Ws.send: range outside the buffer";
      (match s.deflate with
       | Some d when len >= Ws_deflate.min_length ->
           Ws_deflate.deflate d buf ~off ~len;
           queue_copy c s (frame_opcode kind) ~rsv1:true (Ws_deflate.output_deflated d) ~off:0
             ~len:(Ws_deflate.deflated_length d);
           Ws_deflate.trim_deflated d
       | _ ->
           if stable && s.q_len = 0 && s.q_ext_len = 0 then begin
             (* The payload goes to the transport from where it is. *)
             if queue_header c s (frame_opcode kind) ~rsv1:false ~len then begin
               s.q_ext <- buf;
               s.q_ext_off <- off;
               s.q_ext_len <- len
             end
           end
           else queue_copy c s (frame_opcode kind) ~rsv1:false buf ~off ~len);
      kick c s
  | _ -> ()

let send c kind buf ~off ~len = send_common c kind buf ~off ~len ~stable:false
let send_shared c kind buf ~off ~len = send_common c kind buf ~off ~len ~stable:true

let send_string c kind str =
  match c.session with
  | Session s when s.phase = Open || s.phase = Opening ->
      let len = String.length str in
      (match s.deflate with
       | Some d when len >= Ws_deflate.min_length ->
           Ws_deflate.deflate_string d str;
           queue_copy c s (frame_opcode kind) ~rsv1:true (Ws_deflate.output_deflated d) ~off:0
             ~len:(Ws_deflate.deflated_length d);
           Ws_deflate.trim_deflated d
       | _ ->
           if queue_header c s (frame_opcode kind) ~rsv1:false ~len then begin
             Bigstring.blit_from_string str ~src_off:0 s.q ~dst_off:s.q_len ~len;
             s.q_len <- s.q_len + len
           end);
      kick c s
  | _ -> ()

let ping c =
  match c.session with
  | Session s when s.phase = Open ->
      queue_control c s Ws_frame.Ping c.sh.empty ~off:0 ~len:0;
      kick c s
  | _ -> ()

let flush c k =
  match c.session with
  | Session s when s.phase = Open || s.phase = Closing ->
      if s.q_len = 0 && s.q_ext_len = 0 && Output.pending c = 0 && not s.busy then k c
      else if s.q_len = 0 && s.q_ext_len = 0 then s.out_conts <- k :: s.out_conts
      else s.q_conts <- k :: s.q_conts
  | _ -> ()

let close c ~code ~reason =
  if not (Ws_close.is_valid_code code) then invalid_arg "Ws.close: not a code a Close may carry";
  match c.session with
  | Session s when s.phase = Open ->
      queue_close c s code reason;
      s.phase <- Closing;
      report c s code;
      kick c s
  | _ -> ()

let going_away c = close c ~code:Ws_close.going_away ~reason:""

(* {1 Accepting} *)

let sha = lazy (Sha1.create ())

(* The first of [ours] that the client lists in a Sec-WebSocket-Protocol
   field (RFC 6455 §4.2.2: the server picks one of the client's), or "". *)
let choose_protocol req buf ours =
  let offered = ref [] in
  let i = ref (Ws_handshake.find_field req buf "sec-websocket-protocol" ~after:(-1)) in
  while !i >= 0 do
    let v = Request.header_value req !i in
    let s = Bigstring.sub_string buf ~off:(Span.off v) ~len:(Span.len v) in
    List.iter (fun p -> offered := String.trim p :: !offered) (String.split_on_char ',' s);
    i := Ws_handshake.find_field req buf "sec-websocket-protocol" ~after:!i
  done;
  match List.find_opt (fun p -> List.mem p !offered) ours with Some p -> p | None -> ""

(* A refused upgrade is an error answer like any other: the
   application's renderer shapes it when one is set ({!Errors}). *)
let refuse_text c status text =
  let c = Ctx.of_conn c in
  if Errors.active None then Errors.answer c status ~reason:(String.trim text)
  else begin
    Ctx.start c status;
    Ctx.header c Header_name.Content_type "text/plain; charset=utf-8";
    Ctx.body_string c text
  end

let refuse c v =
  let status = Status.of_code_or ~default:Status.Bad_request (Ws_handshake.status v) in
  if Errors.active None then begin
    if v = Ws_handshake.Unsupported_version then Errors.require_s "Sec-WebSocket-Version" "13";
    Errors.answer (Ctx.of_conn c) status ~reason:(Ws_handshake.verdict_to_string v)
  end
  else begin
    let c = Ctx.of_conn c in
    Ctx.start c status;
    if v = Ws_handshake.Unsupported_version then Ctx.header_s c "Sec-WebSocket-Version" "13";
    Ctx.header c Header_name.Content_type "text/plain; charset=utf-8";
    Ctx.body_string c (Ws_handshake.verdict_to_string v ^ "\n")
  end

let needs_http_1_1 = "WebSocket needs HTTP/1.1\n"

let accept ?(config = default_config) ?(protocols = []) ctx handlers =
  let c = Ctx.to_conn ctx in
  if c.resp <> Idle then invalid_arg "Ws.accept: the response was already started";
  let req = Slot.req c in
  if c.mode <> H1_mode then begin
    (* HTTP/2 (RFC 8441's extended CONNECT is not implemented): a clean
       answer the client can act on, not a handler failure. *)
    refuse_text c Status.Bad_request needs_http_1_1;
    false
  end
  else
  match
    (match Ws_handshake.check req c.rbuf with
     | Ws_handshake.Valid -> Ws_handshake.check_origin config.origins req c.rbuf
     | v -> v)
  with
  | Ws_handshake.Valid ->
      let ext = Ws_extension.create () in
      let deflate =
        config.deflate && Ws_extension.negotiate ext req c.rbuf = Ws_extension.Accepted
      in
      let reader = Reader.create ~deflate ~max_message:config.max_message () in
      (* Before the answer is written: it may add parameters. *)
      let compression = if deflate then Some (Ws_deflate.create ext c.sh.bodies) else None in
      take_out c;
      let key = Ws_handshake.key req c.rbuf in
      let pos = Ws_handshake.write_response_head (Lazy.force sha) c.rbuf ~key c.out ~off:0 in
      let pos = if deflate then Ws_extension.write_response_field ext c.out ~off:pos else pos in
      let protocol = if protocols = [] then "" else choose_protocol req c.rbuf protocols in
      let pos = if protocol = "" then pos else Response.header_s c.out ~off:pos "Sec-WebSocket-Protocol" protocol in
      let pos = Response.write_string c.out ~off:pos c.sh.server_lines.(c.listener) in
      c.out_len <- Response.end_head c.out ~off:pos;
      c.out_sent <- 0;
      c.sent <- 0;
      c.head_len <- c.out_len;
      c.status <- Status.Switching_protocols;
      c.no_content <- true;
      c.resp <- Done;
      c.unlogged <- Unlogged_request;
      let s =
        { reader; cfg = config; handlers;
          deflate = compression;
          protocol; phase = Opening; busy = false; reported = false; piece_off = 0; piece_len = -1;
          msg = c.sh.empty; msg_len = 0; q = c.sh.empty; q_len = 0; q_ext = c.sh.empty; q_ext_off = 0;
          q_ext_len = 0; q_conts = []; out_conts = []; last_rx = c.sh.tick; last_ping = c.sh.tick }
      in
      c.session <- Session s;
      (* The switch (Connection) makes it a WebSocket once the 101 left. *)
      c.after <- Then_detach;
      true
  | v ->
      refuse c v;
      false
