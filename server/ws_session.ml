(* A WebSocket connection's state (the slot's [session] in mode
   [Websocket]) and its output queue; Ws runs the protocol over it. *)

open Httpz
open Slot
module Reader = Ws_reader

type kind = Text | Binary

type config = {
  max_message : int;
  max_send_buffer : int;
  ping_interval_ms : int;
  idle_timeout_ms : int;
  deflate : bool;
  origins : Ws_handshake.origins;
}

let default_config =
  { max_message = 1 lsl 20; max_send_buffer = 4 lsl 20; ping_interval_ms = 30_000;
    idle_timeout_ms = 90_000; deflate = true; origins = Ws_handshake.same_origin }

type handlers = {
  on_message : Slot.t -> kind -> Bigstring.t -> off:int -> len:int -> unit;
  on_close : Slot.t -> int -> unit;
}

type phase =
  | Opening  (** the 101 is being written *)
  | Open
  | Closing  (** our Close is queued; the peer's is awaited (frames are read and dropped) *)
  | Finished  (** both Closes were exchanged, or the connection failed: end after the output *)
  | Dead  (** close at once: the peer is gone or took too long *)

type session = {
  reader : Reader.t;
  cfg : config;
  handlers : handlers;
  deflate : Ws_deflate.t option;
  protocol : string;
  mutable phase : phase;
  mutable busy : bool;  (* processing input: sends only queue *)
  mutable reported : bool;  (* on_close was called *)
  (* The message being received: a piece still in [rbuf] ([piece_len >= 0])
     while it may be the whole message, else the bytes in [msg]. *)
  mutable piece_off : int;
  mutable piece_len : int;
  mutable msg : Bigstring.t;
  mutable msg_len : int;
  (* Output queued behind what [out] holds: frames in [q], then at most one
     stable payload sent from where it is ([q_ext]). *)
  mutable q : Bigstring.t;
  mutable q_len : int;
  mutable q_ext : Bigstring.t;
  mutable q_ext_off : int;
  mutable q_ext_len : int;
  mutable q_conts : (Slot.t -> unit) list;  (* run once [q] has left *)
  mutable out_conts : (Slot.t -> unit) list;  (* run once [out] has left *)
  mutable last_rx : int;  (* tick of the last bytes received *)
  mutable last_ping : int;
}

type Slot.session += Session of session

let session c =
  match c.session with Session s -> s | _ -> invalid_arg "Ws: the connection is not a WebSocket"

let is_websocket c = c.mode = Websocket

(* Output pending above this stops reading until it left: a client
   flooding pings cannot make its pongs grow without bound. *)
let high_water = 256 * 1024

let close_ticks = 50 (* 5 s for the peer's Close *)

(* {1 Buffers} *)

let give_q c s =
  if Bigstring.length s.q > 0 then Buffer_pool.give c.sh.writes s.q;
  s.q <- c.sh.empty;
  s.q_len <- 0

let give_msg c s =
  if Bigstring.length s.msg > 0 then Buffer_pool.give c.sh.bodies s.msg;
  s.msg <- c.sh.empty;
  s.msg_len <- 0

(* Room for [n] more bytes at [q_len]. *)
let q_room c s n =
  if s.q_len + n > Bigstring.length s.q then s.q <- Buffer_pool.grow c.sh.writes s.q ~keep:s.q_len (s.q_len + n)

let append_msg c s buf off len =
  if s.msg_len + len > Bigstring.length s.msg then
    s.msg <- Buffer_pool.grow c.sh.bodies s.msg ~keep:s.msg_len (s.msg_len + len);
  Bigstring.blit ~src:buf ~src_off:off ~dst:s.msg ~dst_off:s.msg_len ~len;
  s.msg_len <- s.msg_len + len

(* The piece left in [rbuf] joins [msg] before [rbuf] is reused. *)
let keep_piece c s =
  if s.piece_len > 0 then append_msg c s c.rbuf s.piece_off s.piece_len;
  s.piece_len <- -1

(* {1 Output} *)

let buffered c =
  match c.session with
  | Session s -> Output.pending c + s.q_len + s.q_ext_len
  | _ -> 0

(* A stable payload waiting in [q_ext] is copied behind [q]'s frames before
   another frame is queued after it. *)
let settle_ext c s =
  if s.q_ext_len > 0 then begin
    q_room c s s.q_ext_len;
    Bigstring.blit ~src:s.q_ext ~src_off:s.q_ext_off ~dst:s.q ~dst_off:s.q_len ~len:s.q_ext_len;
    s.q_len <- s.q_len + s.q_ext_len;
    s.q_ext <- c.sh.empty;
    s.q_ext_len <- 0
  end

(* Moves the queue to [out] when [out] is written: a buffer swap, no copy
   ([out] is never written while the transport may be reading it). *)
let start_output c s =
  if c.out_sent >= c.out_len && c.ext_len = 0 && (s.q_len > 0 || s.q_ext_len > 0) then begin
    let old = c.out in
    c.out <- s.q;
    c.out_limit <- Bigstring.length s.q - reserve;
    c.out_len <- s.q_len;
    c.out_sent <- 0;
    c.sent <- 0;
    s.q <- old;
    s.q_len <- 0;
    if s.q_ext_len > 0 then begin
      c.ext <- Ext_bigstring;
      c.ext_bs <- s.q_ext;
      c.ext_stable <- true;
      c.ext_off <- s.q_ext_off;
      c.ext_len <- s.q_ext_len;
      s.q_ext <- c.sh.empty;
      s.q_ext_len <- 0
    end;
    (match s.q_conts with
     | [] -> ()
     | l ->
         s.out_conts <- List.rev_append l s.out_conts;
         s.q_conts <- [])
  end

let frame_opcode = function Text -> Ws_frame.Text | Binary -> Ws_frame.Binary

(* Queues a frame header for [len] payload bytes; [false] when the send
   buffer bound would be passed (the connection is then failed). *)
let queue_header c s op ~rsv1 ~len =
  let pending = Output.pending c + s.q_len + s.q_ext_len in
  if pending > 0 && pending + len > s.cfg.max_send_buffer then begin
    (* A peer that does not read must not hold the worker's memory. *)
    if s.phase <> Dead then begin
      Log.warn "a WebSocket peer does not read (%d bytes queued): closing it" pending;
      s.phase <- Dead;
      (* What [out] holds may be in flight; the queue is not. *)
      give_q c s;
      s.q_ext <- c.sh.empty;
      s.q_ext_len <- 0
    end;
    false
  end
  else begin
    settle_ext c s;
    q_room c s (len + 14);
    s.q_len <- Ws_frame.write_header s.q ~off:s.q_len ~fin:true ~rsv1 op ~len;
    true
  end

let queue_copy c s op ~rsv1 buf ~off ~len =
  if queue_header c s op ~rsv1 ~len then begin
    Bigstring.blit ~src:buf ~src_off:off ~dst:s.q ~dst_off:s.q_len ~len;
    s.q_len <- s.q_len + len
  end

let queue_control c s op buf ~off ~len = queue_copy c s op ~rsv1:false buf ~off ~len

let queue_close c s code reason =
  settle_ext c s;
  q_room c s 129;
  s.q_len <- Ws_close.write s.q ~off:s.q_len ~code ~reason

(* {1 The end} *)
