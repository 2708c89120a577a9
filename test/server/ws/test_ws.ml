(* The WebSocket session (Ws) driven from memory through the protocol
   switch's entry points (Connection),
   as the backends drive it: handshake, echo, fragments, control frames,
   close codes for bad input, permessage-deflate (with a deflate bomb),
   buffers held while idle, and 0 words per message received. *)

open Httpz
open Httpz_server
module S = Httpz_test_support

(* {1 The application} *)

let received = ref []  (* (kind, payload), newest first *)
let closes = ref []
let echo = ref true
let raise_on = ref ""
let count = ref 0

let conn = ref None

let echo_only = ref false
let twice = ref false

let on_message c kind buf ~off ~len =
  if !echo_only then Ws.send c kind buf ~off ~len
  else if !echo then begin
    conn := Some c;
    let s = Bigstring.sub_string buf ~off ~len in
    received := (kind, s) :: !received;
    if s = !raise_on then failwith "app";
    Ws.send c kind buf ~off ~len;
    (* The span stays valid for the whole callback, across sends. *)
    if !twice then Ws.send c kind buf ~off ~len
  end
  else incr count

let on_close _ code = closes := code :: !closes
let handlers = { Ws.on_message; on_close }
let config = ref { Ws.default_config with max_message = 100_000; ping_interval_ms = 0 }
let protocols = [ "chat.v2"; "chat" ]
let hook_ran = ref 0
let hook_before_accept = ref false

(* What the handover test sees: the events of the 101, in order, and the
   slot's mode once accept returned. *)
let events = ref []
let complete_hook = ref false
let mode_after_accept = ref Slot.H1_mode

let drain_on_accept = ref false

let handler c =
  if !drain_on_accept then (Ctx.to_conn c).Slot.sh.Slot.draining <- true;
  if !hook_before_accept then Ctx.on_cancel c (fun () -> incr hook_ran);
  if !complete_hook then Ctx.on_complete c (fun _ -> events := "on_complete" :: !events);
  ignore (Ws.accept ~config:!config ~protocols c handlers : bool);
  mode_after_accept := (Ctx.to_conn c).Slot.mode

let shared () =
  let sh =
    Slot.create_shared ~server_name:"t" ~read_buffer:4096 ~write_buffer:1024 ~max_body:(1 lsl 20)
      ~header_ms:1000 ~idle_ms:2000 ~body_ms:1000 ~write_ms:1000 ~handler_ms:3000 ~headers:""
      ~listener_headers:[| "" |] ~keep:4
  in
  let app c = handler (Ctx.of_conn c) in
  sh.hooks.handler <- app;
  sh.hooks.app <- app;
  sh

(* {1 The in-memory peer} Httpz_server.Testing's runtime, one action at a
   time (Testing.Conn): Output's walk over a client that takes every byte,
   as the backends drive the connection. *)

module Conn = Testing.Conn

let current = ref None

(* A free slot of [sh], whose client is the test's. *)
let new_slot sh =
  let p = Conn.create sh in
  current := Some p;
  Conn.slot p

let peer () = match !current with Some p -> p | None -> Alcotest.fail "no connection"

type outcome = Waiting | Closed | Lingering | Other

let drive c a =
  let p = peer () in
  if Conn.slot p != c then Alcotest.fail "not the test's connection";
  match Conn.drive p a with
  | Waiting -> Waiting
  | Closed -> Closed
  | Lingering -> Lingering
  | Suspended | Detached | Idle -> Other

let send s = Conn.send (peer ()) s

let outcome =
  Alcotest.testable
    (fun f o ->
      Format.pp_print_string f
        (match o with Waiting -> "waiting" | Closed -> "closed" | Lingering -> "lingering" | Other -> "other"))
    ( = )

let contents () = Conn.take (peer ())

let upgrade_request ?(extra = "") () =
  "GET /chat HTTP/1.1\r\nHost: t\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
   Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n" ^ extra ^ "\r\n"

let last_head = ref ""

(* A connection upgraded, its 101 taken. *)
let opened ?extra () =
  received := [];
  closes := [];
  echo := true;
  raise_on := "";
  let c = new_slot (shared ()) in
  send (upgrade_request ?extra ());
  ignore (Connection.opened c ~fd:3 ~listener:0 ~peer_len:0 : Conn_action.t);
  Alcotest.check outcome "waits for frames" Waiting (drive c Read);
  let head = contents () in
  last_head := head;
  Alcotest.(check bool) "101" true (S.find_sub head "101 Switching Protocols" = 0 || S.find_sub head "HTTP/1.1 101" = 0);
  Alcotest.(check bool) "accept" true (S.find_sub head "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=" > 0);
  c

(* {1 Frames} *)

let key = 0x37fa213d

let client_frame ?(fin = true) ?(rsv = 0) ?(masked = true) op payload =
  let n = String.length payload in
  let b = Bigstring.create (n + 14) in
  let pos =
    if masked then begin
      let pos = Ws_frame.write_masked_header b ~off:0 ~fin ~rsv1:false Ws_frame.Continuation ~len:n ~key in
      Bigstring.blit_from_string payload ~src_off:0 b ~dst_off:pos ~len:n;
      Ws_frame.unmask b ~off:pos ~len:n ~key ~phase:0;
      pos + n
    end
    else begin
      let pos = Ws_frame.write_header b ~off:0 ~fin ~rsv1:false Ws_frame.Continuation ~len:n in
      Bigstring.blit_from_string payload ~src_off:0 b ~dst_off:pos ~len:n;
      pos + n
    end
  in
  let s = Bytes.of_string (Bigstring.sub_string b ~off:0 ~len:pos) in
  (* The opcode and RSV bits are set here: the writers refuse what tests need. *)
  Bytes.set s 0 (Char.chr ((if fin then 0x80 else 0) lor (rsv lsl 4) lor op));
  Bytes.to_string s

let text = 1
let binary = 2

(* Server frames in [s]: (opcode, payload) list. *)
let frames s =
  let rec go i acc =
    if i >= String.length s then List.rev acc
    else begin
      let op = Char.code s.[i] land 0x0f in
      let l = Char.code s.[i + 1] land 0x7f in
      let hl, len =
        if l = 126 then (4, (Char.code s.[i + 2] lsl 8) lor Char.code s.[i + 3])
        else if l = 127 then (10, int_of_string ("0x" ^ String.concat "" (List.init 8 (fun k -> Printf.sprintf "%02x" (Char.code s.[i + 2 + k])))))
        else (2, l)
      in
      go (i + hl + len) ((op, String.sub s (i + hl) len) :: acc)
    end
  in
  go 0 []

let close_code payload = (Char.code payload.[0] lsl 8) lor Char.code payload.[1]

let exchange c s =
  send s;
  drive c Read

(* {1 Cases} *)

let echo_text () =
  let c = opened () in
  Alcotest.check outcome "waits" Waiting (exchange c (client_frame text "héllo"));
  Alcotest.(check (list (pair int string))) "echo" [ (1, "héllo") ] (frames (contents ()));
  Alcotest.check outcome "waits" Waiting (exchange c (client_frame binary "\x00\xff\x01"));
  Alcotest.(check (list (pair int string))) "binary echo" [ (2, "\x00\xff\x01") ] (frames (contents ()))

let fragmented () =
  let c = opened () in
  let big = String.init 10_000 (fun i -> Char.chr (97 + (i mod 26))) in
  let msg =
    client_frame ~fin:false text "ab" ^ client_frame 9 "p" ^ client_frame ~fin:false 0 "cd"
    ^ client_frame 0 big
  in
  ignore (exchange c msg : outcome);
  Alcotest.(check (list (pair int string))) "pong, then the whole message" [ (10, "p"); (1, "abcd" ^ big) ]
    (frames (contents ()))

let byte_at_a_time () =
  let c = opened () in
  let f = client_frame text "split at every byte" ^ client_frame 9 "x" in
  String.iter (fun ch -> ignore (exchange c (String.make 1 ch) : outcome)) f;
  Alcotest.(check (list (pair int string))) "echo and pong" [ (1, "split at every byte"); (10, "x") ]
    (frames (contents ()))

let closes_with name frame code =
  let c = opened () in
  Alcotest.check outcome name Lingering (exchange c frame);
  match frames (contents ()) with
  | [ (8, p) ] ->
      Alcotest.(check int) (name ^ ": close code") code (close_code p);
      Alcotest.(check (list int)) (name ^ ": on_close") [ code ] !closes;
      Alcotest.(check bool) (name ^ ": back to HTTP/1.1 lingering") false (Ws.is_websocket c)
  | _ -> Alcotest.fail (name ^ ": expected one Close frame")

let bad_input () =
  closes_with "unmasked" (client_frame ~masked:false text "x") 1002;
  closes_with "reserved bits" (client_frame ~rsv:2 text "x") 1002;
  closes_with "control over 125" (client_frame 9 (String.make 126 'x')) 1002;
  closes_with "invalid UTF-8" (client_frame text "\xc3\x28") 1007;
  closes_with "over the limit" (client_frame binary (String.make 100_001 'x')) 1009;
  closes_with "reserved opcode" (client_frame 3 "") 1002;
  raise_on := "";
  let c = opened () in
  raise_on := "boom";
  Alcotest.check outcome "a callback raising" Lingering (exchange c (client_frame text "boom"));
  Alcotest.(check (list (pair int string))) "1011" [ (8, "\x03\xf3") ] (frames (contents ()))

let close_handshake () =
  let c = opened () in
  Alcotest.check outcome "answered, then lingering" Lingering (exchange c (client_frame 8 "\x03\xe8bye"));
  Alcotest.(check (list (pair int string))) "close echoed" [ (8, "\x03\xe8") ] (frames (contents ()));
  Alcotest.(check (list int)) "on_close" [ 1000 ] !closes;
  (* Server-initiated: the peer's Close is awaited, then lingering. *)
  let c = opened () in
  ignore (exchange c (client_frame text "x") : outcome);
  ignore (contents ());
  (match !conn with Some w -> Ws.close w ~code:4000 ~reason:"done" | None -> Alcotest.fail "no message");
  Alcotest.check outcome "sent" Waiting (drive c (Connection.resume c ~gen:c.Slot.gen ignore));
  Alcotest.(check (list (pair int string))) "our close" [ (8, "\x0f\xa0done") ] (frames (contents ()));
  Alcotest.check outcome "data after our Close is dropped" Waiting (exchange c (client_frame text "late"));
  Alcotest.(check string) "nothing sent" "" (contents ());
  Alcotest.check outcome "peer's Close ends it" Lingering (exchange c (client_frame 8 "\x0f\xa0"));
  Alcotest.(check string) "no second Close" "" (contents ())

let refused () =
  let c = new_slot (shared ()) in
  send "GET / HTTP/1.1\r\nHost: t\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 8\r\n\r\n";
  ignore (Connection.opened c ~fd:3 ~listener:0 ~peer_len:0 : Conn_action.t);
  ignore (drive c Read : outcome);
  let out = contents () in
  Alcotest.(check bool) "426" true (S.find_sub out "HTTP/1.1 426" = 0);
  Alcotest.(check bool) "version 13" true (S.find_sub out "Sec-WebSocket-Version: 13" > 0);
  Alcotest.(check bool) "still HTTP/1.1" false (Ws.is_websocket c)

(* {1 Origins} Cross-site WebSocket hijacking: a page of another site
   must not open a socket that the user's cookies authenticate. *)

(* The head answering an upgrade with [fields], under [origins]. *)
let answer_with ?(origins = Ws.same_origin) fields =
  let saved = !config in
  config := { saved with origins };
  let c = new_slot (shared ()) in
  send (upgrade_request ~extra:fields ());
  ignore (Connection.opened c ~fd:3 ~listener:0 ~peer_len:0 : Conn_action.t);
  ignore (drive c Read : outcome);
  config := saved;
  let out = contents () in
  let line = try String.sub out 0 (String.index out '\r') with Not_found -> out in
  (line, Ws.is_websocket c)

let check_answer name want ?origins fields =
  let line, ws = answer_with ?origins fields in
  Alcotest.(check string) name want line;
  Alcotest.(check bool) (name ^ ": a WebSocket") (want = "HTTP/1.1 101 Switching Protocols") ws

let ok = "HTTP/1.1 101 Switching Protocols"
let forbidden = "HTTP/1.1 403 Forbidden"

let origins () =
  (* upgrade_request's Host is "t". *)
  check_answer "no Origin (not a browser)" ok "";
  check_answer "same origin" ok "Origin: http://t\r\n";
  check_answer "same origin, other case and scheme" ok "Origin: HTTPS://T\r\n";
  check_answer "same origin, same-origin fetch" ok "Origin: http://t\r\nSec-Fetch-Site: same-origin\r\n";
  check_answer "another site" forbidden "Origin: http://evil.example\r\n";
  check_answer "another site, marked cross-site" forbidden
    "Origin: http://evil.example\r\nSec-Fetch-Site: cross-site\r\n";
  check_answer "a port of its own" forbidden "Origin: http://t:8080\r\n";
  check_answer "a host that only starts alike" forbidden "Origin: http://tt\r\n";
  check_answer "null" forbidden "Origin: null\r\n";
  check_answer "cross-site, whatever the Origin says" forbidden
    "Origin: http://t\r\nSec-Fetch-Site: cross-site\r\n";
  check_answer "cross-site without Origin" forbidden "Sec-Fetch-Site: cross-site\r\n";
  check_answer "two Origins" forbidden "Origin: http://t\r\nOrigin: http://evil.example\r\n";
  let listed = Ws.allow_origins [ "https://app.example"; "http://localhost:3000" ] in
  check_answer "listed" ok ~origins:listed "Origin: https://app.example\r\nSec-Fetch-Site: cross-site\r\n";
  check_answer "listed, other case" ok ~origins:listed "Origin: HTTP://LOCALHOST:3000\r\n";
  check_answer "listed: same origin still" ok ~origins:listed "Origin: http://t\r\n";
  check_answer "not listed" forbidden ~origins:listed "Origin: https://evil.example\r\n";
  check_answer "listed host, another scheme" forbidden ~origins:listed "Origin: http://app.example\r\n";
  check_answer "any origin" ok ~origins:Ws.any_origin
    "Origin: http://evil.example\r\nSec-Fetch-Site: cross-site\r\n";
  (* A refused upgrade is a complete answer: the connection goes on. *)
  let line, _ = answer_with "Origin: http://evil.example\r\n" in
  Alcotest.(check string) "403 again" forbidden line

let check_origin_no_alloc () =
  let s =
    "GET /chat HTTP/1.1\r\nHost: t\r\nOrigin: https://other.example\r\nSec-Fetch-Site: same-site\r\n\r\n"
  in
  let buf = Bigstring.of_string s in
  let req = Request.create () in
  (match Request.parse req buf ~off:0 ~len:(String.length s) with
   | Complete -> ()
   | _ -> Alcotest.fail "does not parse");
  let listed = Ws.allow_origins [ "https://a.example"; "https://b.example" ] in
  let v = ref Ws_handshake.Valid in
  let once () = v := Ws_handshake.check_origin listed req buf in
  once ();
  Alcotest.(check string) "refused" "cross_origin" (Ws_handshake.verdict_to_string !v);
  Alcotest.(check (float 0.0)) "words per check" 0.0 (S.minor_words_per_op ~iters:10_000 once)

(* A hook registered before the upgrade: the 101 is a complete answer, so
   it never runs (it ran when the 101 left), not even when the WebSocket
   later drops. *)
let hook_after_upgrade () =
  hook_ran := 0;
  hook_before_accept := true;
  let c = opened () in
  hook_before_accept := false;
  Alcotest.(check int) "not when the 101 left" 0 !hook_ran;
  Connection.closed c;
  Alcotest.(check int) "not when the connection drops" 0 !hook_ran

(* The 101 is an HTTP/1.1 response like any other: the connection stays
   HTTP/1.1's until it left, then the switch (Connection) makes it a
   WebSocket. Its completion hook runs once, before its access-log line
   (Ctx.on_complete); it used to run after, the WebSocket logging the 101
   itself. *)
let handover_after_101 () =
  events := [];
  received := [];
  closes := [];
  echo := true;
  raise_on := "";
  complete_hook := true;
  let sh = shared () in
  sh.hooks.log <- (fun c _ complete -> events := Printf.sprintf "log %d %b" (Status.code c.Slot.status) complete :: !events);
  let c = new_slot sh in
  send (upgrade_request ());
  ignore (Connection.opened c ~fd:3 ~listener:0 ~peer_len:0 : Conn_action.t);
  Alcotest.check outcome "waits for frames" Waiting (drive c Read);
  complete_hook := false;
  Alcotest.(check bool) "HTTP/1.1 while the 101 was on its way" true (!mode_after_accept = Slot.H1_mode);
  Alcotest.(check bool) "a WebSocket once it left" true (c.Slot.mode = Slot.Websocket);
  Alcotest.(check (list string)) "the 101's hook, then its log line" [ "on_complete"; "log 101 true" ]
    (List.rev !events);
  Alcotest.check outcome "echo" Waiting (exchange c (client_frame text "hi"));
  Alcotest.(check (list string)) "received" [ "hi" ] (List.map snd !received);
  Connection.closed c;
  Alcotest.(check bool) "HTTP/1.1 again once closed" true (c.Slot.mode = Slot.H1_mode)

let idle_holds_no_buffer () =
  let c = opened () in
  ignore (exchange c (client_frame text (String.make 3000 'a')) : outcome);
  ignore (contents ());
  Alcotest.(check int) "no read buffer" 0 (Bigstring.length c.Slot.rbuf);
  Alcotest.(check int) "no write buffer" 0 (Bigstring.length c.Slot.out);
  (* Half a frame: the reader keeps the header, the buffer goes back. *)
  let f = client_frame text "hello there" in
  ignore (exchange c (String.sub f 0 4) : outcome);
  Alcotest.(check int) "partial header: no read buffer" 0 (Bigstring.length c.Slot.rbuf);
  ignore (exchange c (String.sub f 4 (String.length f - 4)) : outcome);
  Alcotest.(check (list (pair int string))) "completed" [ (1, "hello there") ] (frames (contents ()))

(* Pings every second; a peer silent for 3 s is closed (1001). *)
let pings_and_idle () =
  let saved = !config in
  config := { !config with ping_interval_ms = 1000; idle_timeout_ms = 3000 };
  let c = opened () in
  config := saved;
  Alcotest.(check bool) "idle timer armed" true (c.Slot.timer = Slot.Idle_timer);
  let fire () =
    c.Slot.sh.tick <- c.Slot.deadline;
    drive c (Connection.timeout c)
  in
  Alcotest.check outcome "ping sent" Waiting (fire ());
  Alcotest.(check (list (pair int string))) "a ping" [ (9, "") ] (frames (contents ()));
  (* The pong (any bytes) keeps it alive. *)
  ignore (exchange c (client_frame 10 "") : outcome);
  Alcotest.check outcome "second ping" Waiting (fire ());
  Alcotest.(check (list (pair int string))) "another ping" [ (9, "") ] (frames (contents ()));
  let rec until_closed n =
    if n = 0 then Alcotest.fail "never closed"
    else match fire () with Lingering -> () | _ -> ignore (contents ()); until_closed (n - 1)
  in
  until_closed 5;
  Alcotest.(check (list (pair int string))) "going away" [ (8, "\x03\xe9idle") ] (frames (contents ()));
  Alcotest.(check (list int)) "on_close" [ 1001 ] !closes

(* A broadcast from outside the connection: the loop is asked to write
   (hooks.resume), and the payload goes out from the caller's buffer. *)
let shared_payload () =
  let c = opened () in
  ignore (exchange c (client_frame text "hi") : outcome);
  ignore (contents ());
  let w = match !conn with Some w -> w | None -> Alcotest.fail "no connection" in
  let woken = ref 0 in
  c.Slot.sh.hooks.resume <- (fun _ _ _ -> incr woken);
  let payload = Bigstring.of_string "to everyone" in
  Ws.send_shared w Ws.Text payload ~off:0 ~len:11;
  Alcotest.(check int) "the loop is asked to write" 1 !woken;
  (match Connection.resume c ~gen:c.Slot.gen ignore with
   | Write -> ()
   | _ -> Alcotest.fail "expected Write");
  Alcotest.(check bool) "payload sent from the caller's buffer" true (c.Slot.ext_bs == payload);
  Alcotest.(check int) "only the frame header in out" 2 (c.Slot.out_len - c.Slot.out_sent);
  Ws.send_string w Ws.Text "queued behind";
  Alcotest.(check int) "no second wake-up while writing" 1 !woken;
  Alcotest.check outcome "written" Waiting (drive c Write);
  Alcotest.(check (list (pair int string))) "both, in order" [ (1, "to everyone"); (1, "queued behind") ]
    (frames (contents ()))

let subprotocol () =
  let _ = opened ~extra:"Sec-WebSocket-Protocol: superchat, chat\r\nSec-WebSocket-Protocol: x\r\n" () in
  Alcotest.(check bool) "ours that the client offers" true
    (S.find_sub !last_head "\r\nSec-WebSocket-Protocol: chat\r\n" > 0);
  let _ = opened ~extra:"Sec-WebSocket-Protocol: other\r\n" () in
  Alcotest.(check bool) "none in common: none answered" true (S.find_sub !last_head "Sec-WebSocket-Protocol" < 0)

(* {1 permessage-deflate} *)

let deflate_raw s =
  let z = Httpz_sys.Zstream.deflater ~wbits:15 ~level:6 in
  let src = Bigstring.of_string s in
  let dst = Bigstring.create (String.length s + 1024) in
  let r = Httpz_sys.Zstream.step z src ~off:0 ~len:(String.length s) dst ~dst_off:0 ~dst_len:(Bigstring.length dst) ~flush:Httpz_sys.Zstream.sync_flush in
  Httpz_sys.Zstream.free z;
  let n = Httpz_sys.Zstream.written r in
  Bigstring.sub_string dst ~off:0 ~len:(n - 4)

let inflate_raw s =
  let z = Httpz_sys.Zstream.inflater ~wbits:15 in
  let s = s ^ "\x00\x00\xff\xff" in
  let src = Bigstring.of_string s in
  let dst = Bigstring.create 1_000_000 in
  let r = Httpz_sys.Zstream.step z src ~off:0 ~len:(String.length s) dst ~dst_off:0 ~dst_len:1_000_000 ~flush:Httpz_sys.Zstream.sync_flush in
  Httpz_sys.Zstream.free z;
  Bigstring.sub_string dst ~off:0 ~len:(Httpz_sys.Zstream.written r)

let deflate_ext = "Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits\r\n"

let deflated () =
  let c = opened ~extra:deflate_ext () in
  Alcotest.(check bool) "answer: permessage-deflate, server context not kept" true
    (S.find_sub !last_head "Sec-WebSocket-Extensions: permessage-deflate; server_no_context_takeover\r\n" > 0);
  let msg = String.concat " " (List.init 200 (fun i -> "word" ^ string_of_int (i mod 7))) in
  ignore (exchange c (client_frame ~rsv:4 text (deflate_raw msg)) : outcome);
  Alcotest.(check (list (pair int string))) "inflated" [ (1, msg) ]
    (List.rev_map (fun (k, m) -> ((if k = Ws.Text then 1 else 2), m)) !received);
  let out = contents () in
  Alcotest.(check bool) "answer compressed (RSV1)" true (Char.code out.[0] land 0x40 <> 0);
  (match frames out with
   | [ (1, p) ] -> Alcotest.(check string) "inflates back" msg (inflate_raw p)
   | _ -> Alcotest.fail "one frame");
  Alcotest.(check int) "idle: no read buffer" 0 (Bigstring.length c.Slot.rbuf);
  Alcotest.(check int) "idle: no write buffer" 0 (Bigstring.length c.Slot.out);
  (* Every message is compressed alone: the same message twice gives the
     same bytes (with context takeover the second would be shorter). *)
  ignore (exchange c (client_frame ~rsv:4 text (deflate_raw msg)) : outcome);
  Alcotest.(check string) "no server context" out (contents ());
  twice := true;
  ignore (exchange c (client_frame ~rsv:4 text (deflate_raw msg)) : outcome);
  twice := false;
  Alcotest.(check string) "sent twice from one callback" (out ^ out) (contents ());
  (* A bomb: 10 MB of zeros in a few KB, against a 100 kB limit. *)
  let bomb = deflate_raw (String.make 10_000_000 '\000') in
  Alcotest.(check bool) "small" true (String.length bomb < 20_000);
  Alcotest.check outcome "closed" Lingering (exchange c (client_frame ~rsv:4 binary bomb));
  Alcotest.(check (list (pair int string))) "1009" [ (8, "\x03\xf1") ] (frames (contents ()))

(* {1 Allocation} *)

(* [delivery c f ()] puts the bytes of [f] where the connection reads, as a
   backend does, and is what [Connection.received] answers. *)
let delivery c f =
  let frame = Bigstring.of_string f in
  let n = String.length f in
  fun () ->
    (match Connection.prepare_read c with Read -> () | _ -> assert false);
    Bigstring.blit ~src:frame ~src_off:0 ~dst:c.Slot.in_buf ~dst_off:c.Slot.in_off ~len:n;
    Connection.received c n

let recv_no_alloc () =
  let c = opened () in
  echo := false;
  let f = client_frame text "a message of a few words" ^ client_frame binary (String.make 300 'b') in
  let deliver = delivery c f in
  let once () = match deliver () with Read -> () | _ -> assert false in
  count := 0;
  once ();
  Alcotest.(check int) "two messages" 2 !count;
  Alcotest.(check (float 0.0)) "words per receive" 0.0 (S.minor_words_per_op ~iters:10_000 once)

(* A message in three frames: reassembled in a pool buffer, still 0 words. *)
let fragmented_no_alloc () =
  let c = opened () in
  echo := false;
  let f = client_frame ~fin:false text "part one, " ^ client_frame ~fin:false 0 "part two, " ^ client_frame 0 "end" in
  let deliver = delivery c f in
  let once () = match deliver () with Read -> () | _ -> assert false in
  count := 0;
  once ();
  Alcotest.(check int) "one message" 1 !count;
  Alcotest.(check (float 0.0)) "words per message" 0.0 (S.minor_words_per_op ~iters:10_000 once)

(* Echo: receive, queue the answer, write it (as a transport would:
   Output.advance), back to reading. *)
let echo_no_alloc () =
  let c = opened () in
  echo_only := true;
  let f = client_frame binary (String.make 200 'e') in
  let deliver = delivery c f in
  let once () =
    match deliver () with
    | Write -> (
        Output.advance c (Output.pending c);
        match Connection.written c with Read -> () | _ -> assert false)
    | _ -> assert false
  in
  once ();
  let words = S.minor_words_per_op ~iters:10_000 once in
  echo_only := false;
  Alcotest.(check (float 0.0)) "words per echo" 0.0 words

(* A compressed message (inflated into a pool buffer): 0 words. *)
let deflated_no_alloc () =
  let c = opened ~extra:deflate_ext () in
  echo := false;
  let f = client_frame ~rsv:4 text (deflate_raw (String.concat "," (List.init 100 string_of_int))) in
  let deliver = delivery c f in
  let once () = match deliver () with Read -> () | _ -> assert false in
  count := 0;
  once ();
  Alcotest.(check int) "one message" 1 !count;
  Alcotest.(check (float 0.0)) "words per message" 0.0 (S.minor_words_per_op ~iters:10_000 once)

(* Draining began while the 101 was on its way (the handler accepted,
   then the server started its graceful shutdown): once the 101 left, the
   session is told to go away (Close 1001) like the sessions already
   open, instead of waiting for the idle timeout. *)
let draining_handover () =
  drain_on_accept := true;
  Fun.protect ~finally:(fun () -> drain_on_accept := false) (fun () ->
      received := [];
      closes := [];
      let c = new_slot (shared ()) in
      send (upgrade_request ());
      ignore (Connection.opened c ~fd:3 ~listener:0 ~peer_len:0 : Conn_action.t);
      ignore (drive c Read : outcome);
      let out = contents () in
      let eoh = S.find_sub out "\r\n\r\n" in
      Alcotest.(check bool) "101" true (S.find_sub out "101 Switching Protocols" >= 0 && eoh > 0);
      let after = String.sub out (eoh + 4) (String.length out - eoh - 4) in
      match frames after with
      | [ (8, payload) ] -> Alcotest.(check int) "Close 1001" 1001 (close_code payload)
      | fs -> Alcotest.failf "expected one Close frame after the 101, got %d frames" (List.length fs))

let () =
  Alcotest.run "ws"
    [ ( "session",
        [ Alcotest.test_case "echo" `Quick echo_text;
          Alcotest.test_case "fragmented, with a ping inside" `Quick fragmented;
          Alcotest.test_case "a byte at a time" `Quick byte_at_a_time;
          Alcotest.test_case "bad input closes with its code" `Quick bad_input;
          Alcotest.test_case "close handshake both ways" `Quick close_handshake;
          Alcotest.test_case "refused upgrade" `Quick refused;
          Alcotest.test_case "cross-origin upgrades refused (403)" `Quick origins;
          Alcotest.test_case "an on_cancel hook does not run after the 101" `Quick hook_after_upgrade;
          Alcotest.test_case "WebSocket once the 101 left; its hook before its log" `Quick handover_after_101;
          Alcotest.test_case "draining began before the 101 left: Close 1001" `Quick draining_handover;
          Alcotest.test_case "idle holds no buffer" `Quick idle_holds_no_buffer;
          Alcotest.test_case "pings, then the idle timeout" `Quick pings_and_idle;
          Alcotest.test_case "a shared payload is not copied" `Quick shared_payload;
          Alcotest.test_case "subprotocol" `Quick subprotocol;
          Alcotest.test_case "permessage-deflate and a bomb" `Quick deflated ] );
      ( "zero_alloc",
        [ Alcotest.test_case "check_origin: 0 words" `Quick check_origin_no_alloc;
          Alcotest.test_case "receive two messages: 0 words" `Quick recv_no_alloc;
          Alcotest.test_case "receive a fragmented message: 0 words" `Quick fragmented_no_alloc;
          Alcotest.test_case "echo a message: 0 words" `Quick echo_no_alloc;
          Alcotest.test_case "receive a compressed message: 0 words" `Quick deflated_no_alloc ] ) ]
