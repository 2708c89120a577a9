(* The protocol switch (see the .mli): each event goes to the state
   machine of the slot's [mode], and the handovers between protocols are
   decided here, on what H1 answers. The common case is one match and a
   tail call, so HTTP/1.1 pays nothing for the others. *)

open Slot

type action = Conn_action.t = Read | Write | Close | Linger | Wait | Detach | Nothing | Read_buffered | Push

let linger_ticks = H1.linger_ticks
let opened = H1.opened
let hold = H1.hold
let arm_write_timer = H1.arm_write_timer
let shutting_down = H1.shutting_down
let detach = H1.detach

(* {1 Handovers} *)

(* A connection's first read: a TLS one whose handshake chose "h2" (ALPN)
   is HTTP/2's before any byte is read. *)
let[@inline never] first_read c =
  if H2_session.takes_over c then H2_session.prepare_read c else H1.prepare_read c

(* The first bytes of a connection: H1 answers [Detach] when they are
   HTTP/2's preface (its only [Detach] to a read). *)
let[@inline never] first_bytes c n =
  match H1.received c n with
  | Detach -> H2_session.begin_h2c c
  | a -> a

(* A 101 is leaving: once it left, H1 answers [Detach], and the connection
   is a WebSocket's if the handler accepted one, else the handler's. *)
let[@inline never] switching c =
  match H1.written c with
  | Detach when Ws.accepted c -> Ws.start c
  | a -> a

(* {1 Events} *)

let prepare_read c =
  match c.mode with
  | H1_mode -> if c.served <> 0 then H1.prepare_read c else first_read c
  | H2_conn | H2_stream -> H2_session.prepare_read c
  | Websocket -> Ws.prepare_read c

let received c n =
  match c.mode with
  | H1_mode -> if c.served <> 0 then H1.later_received c n else first_bytes c n
  | H2_conn | H2_stream -> H2_session.received c n
  | Websocket -> Ws.received c n

let written c =
  match c.mode with
  | H1_mode -> if c.after <> Then_detach then H1.written c else switching c
  | H2_conn | H2_stream -> H2_session.written c
  | Websocket -> Ws.written c

let blocked c =
  match c.mode with
  | H1_mode -> H1.blocked c
  | H2_conn | H2_stream -> H2_session.blocked c
  | Websocket -> Ws.blocked c

let timeout c =
  match c.mode with
  | H1_mode -> H1.timeout c
  | H2_conn | H2_stream -> H2_session.timeout c
  | Websocket -> Ws.timeout c

let resume c ~gen k =
  match c.mode with
  | H1_mode -> H1.resume c ~gen k
  | H2_stream -> H2_session.resume c ~gen k
  (* An HTTP/2 connection's own slot runs no handler. *)
  | H2_conn -> Nothing
  | Websocket -> Ws.resume c

(* Once per connection: kept out of the backends' write paths. *)
let[@inline never] closed c =
  (match c.mode with
   | H2_conn | H2_stream -> H2_session.closed c
   (* A WebSocket's, or one accepted whose 101 had not left. *)
   | Websocket | H1_mode -> Ws.closed c);
  H1.closed c

let idle c =
  match c.mode with
  | H1_mode -> H1.idle c
  | H2_conn | H2_stream -> H2_session.idle c
  | Websocket -> false

let drain c = match c.mode with H2_conn -> H2_session.drain c | H1_mode | H2_stream | Websocket -> Nothing
let going_away c = match c.mode with Websocket -> Ws.going_away c | H1_mode | H2_conn | H2_stream -> ()
