(* Httpz.H2_client, the client role of HTTP/2: against the server role in
   memory (H2client_pair), against hand-made server transcripts for the
   rules a well-behaved server never breaks, the reuse of a state after a
   failed connection, zero allocation per warm request/response, and real
   servers over TCP (H2client_interop). *)

open Httpz
open H2client_pair
module W = H2_write
module F = H2_frame

let check = Alcotest.check
let int = Alcotest.int
let bool = Alcotest.bool
let string = Alcotest.string

let check_body what r n =
  check int (what ^ ": status") 200 r.status;
  check bool (what ^ ": ended") true r.ended;
  check int (what ^ ": body length") n (Buffer.length r.body);
  check bool (what ^ ": body bytes") true (Buffer.contents r.body = big_string n)

(* {1 Against the server role} *)

let test_handshake () =
  let p = connected () in
  check int "server's max concurrent streams" 128 (Cl.peer_settings p.cl).max_concurrent_streams;
  check bool "server acked ours" true (Sv.settings_acked p.sv)

let test_concurrent () =
  let p = connected () in
  let ids = List.init 100 (fun i -> (get p (Printf.sprintf "/%d" (i * 997 mod 70_000)), i * 997 mod 70_000)) in
  check int "100 streams open" 100 (Cl.active_streams p.cl);
  pump p;
  List.iter (fun (id, n) -> check_body (Printf.sprintf "stream %d" id) (resp p id) n) ids;
  check int "no stream left" 0 (Cl.active_streams p.cl);
  check bool "distinct odd ids" true
    (List.sort_uniq compare (List.map fst ids) = List.init 100 (fun i -> (2 * i) + 1))

(* More streams than the server allows: the client refuses the extra ones
   (Too_many_streams) rather than have them refused on the wire. *)
let test_server_max_concurrent () =
  let config = { server_config with H2_config.max_concurrent_streams = 4 } in
  let p = connected ~config () in
  check int "server says 4" 4 (Cl.peer_settings p.cl).max_concurrent_streams;
  let ids = List.init 4 (fun _ -> get p "/10") in
  check bool "fifth refused" true
    (Cl.start_request p.cl ~meth:"GET" ~scheme:"http" ~authority:"t" ~path:"/" = Cl.Too_many_streams);
  pump p;
  List.iter (fun id -> check_body "stream" (resp p id) 10) ids;
  check bool "can open again" true (Cl.can_open p.cl)

let post_body p ~path body =
  let id = get ~meth:"POST" ~end_stream:false p path in
  let b = Bigstring.of_string body in
  let sent = ref 0 and stalls = ref 0 in
  while Cl.sending p.cl ~stream:id do
    let n = Cl.send_data p.cl ~stream:id b ~off:!sent ~len:(String.length body - !sent) ~end_stream:true in
    if n < 0 then Alcotest.fail "send_data refused";
    sent := !sent + n;
    if Cl.sending p.cl ~stream:id then begin
      if Cl.send_window p.cl ~stream:id = 0 then incr stalls;
      if not (step p) then Alcotest.fail "stuck while uploading"
    end
  done;
  check int "all sent" (String.length body) !sent;
  (id, !stalls)

let test_byte_at_a_time () =
  let p = create () in
  p.chunk <- 1;
  pump p;
  let a = get p "/3000" in
  let id, _ = post_body p ~path:"/echo" "hello, byte by byte" in
  let c = get p "/0" in
  (* a response head over HEADERS + CONTINUATION, a byte at a time *)
  let h = get ~fields:[ ("x-size", "20000") ] p "/head" in
  pump p;
  check int "x-big" 20000 (String.length (List.assoc "x-big" (resp p h).fields));
  let r = resp p a in
  if not r.ended then
    Printf.printf "body %d status %d client_error %b %s; server failed %b %s; active %d; sv active %d; cin %d sin %d\n"
      (Buffer.length r.body) r.status p.client_error (Cl.failure_to_string (Cl.failure p.cl)) (Sv.failed p.sv) (Sv.reason p.sv)
      (Cl.active_streams p.cl) (Sv.active_streams p.sv) p.cin_len p.sin_len;
  check_body "GET" (resp p a) 3000;
  check string "echo" "hello, byte by byte" (Buffer.contents (resp p id).body);
  check bool "empty body ended" true ((resp p c).ended && (resp p c).status = 200)

let test_flow_control_both_ways () =
  let p = connected ~client:(fun () -> Cl.create ~initial_window_size:16384 ~connection_window:65535 ()) () in
  let id = get p "/1000000" in
  pump p;
  check_body "1 MB through a 16 KiB window" (resp p id) 1_000_000;
  let body = big_string 300_000 in
  let id, stalls = post_body p ~path:"/echo" body in
  pump p;
  check bool "upload waited for the server's window" true (stalls > 0);
  check bool "echo intact" true (Buffer.contents (resp p id).body = body);
  check bool "connection receive window whole again" true (Cl.connection_recv_window p.cl > 30_000)

(* A reader that does not consume stops the server: no more than its
   window arrives until it gives credit back. *)
let test_slow_reader_backpressure () =
  let p = connected ~client:(fun () -> Cl.create ~initial_window_size:16384 ()) () in
  p.auto_consume <- false;
  let id = get p "/200000" in
  pump p;
  let r = resp p id in
  check int "one window's worth" 16384 (Buffer.length r.body);
  check bool "not ended" false r.ended;
  check int "receive window shut" 0 (Cl.stream_recv_window p.cl ~stream:id);
  let consumed = ref 16384 in
  Cl.consumed p.cl ~stream:id 16384;
  while not r.ended do
    pump p;
    let got = Buffer.length r.body in
    if got = !consumed && not r.ended then Alcotest.fail "no progress after credit";
    Cl.consumed p.cl ~stream:id (got - !consumed);
    consumed := got
  done;
  check_body "slow reader" r 200_000

let test_goaway_midflight () =
  let p = connected () in
  let a = get p "/hold" and b = get p "/hold" in
  pump p;
  check int "server holds both" 2 (List.length p.held);
  Sv.shutdown p.sv;
  (* sent before the client sees the GOAWAY *)
  let c = get p "/10" and d = get p "/10" in
  pump p;
  check int "one GOAWAY" 1 p.goaways;
  check bool "goaway received" true (Cl.goaway_received p.cl);
  check int "last stream id" b (Cl.goaway_last_stream p.cl);
  check (Alcotest.list int) "unprocessed, to retry" [ c; d ]
    (List.sort compare (List.init (Cl.unprocessed_count p.cl) (Cl.unprocessed_stream p.cl)));
  check bool "no new request" true
    (Cl.start_request p.cl ~meth:"GET" ~scheme:"http" ~authority:"t" ~path:"/" = Cl.Going_away);
  List.iter (fun sid -> respond_n p sid 5000) p.held;
  pump p;
  check_body "a" (resp p a) 5000;
  check_body "b" (resp p b) 5000;
  check bool "c untouched" true ((resp p c).status = -1);
  check bool "finished" true (Cl.finished p.cl)

let test_rst_both_ways () =
  let p = connected () in
  let a = get p "/rst" in
  let b = get p "/hold" in
  pump p;
  check bool "server's reset" true ((resp p a).reset = Some H2_error.Internal_error);
  Cl.cancel p.cl ~stream:b H2_error.Cancel;
  pump p;
  check bool "server saw CANCEL" true (List.mem (b, H2_error.Cancel) p.server_resets);
  check int "none active" 0 (Cl.active_streams p.cl);
  let c = get p "/100" in
  pump p;
  check_body "after resets" (resp p c) 100

let test_large_headers_continuation () =
  let p =
    connected ~client:(fun () -> Cl.create ~request_head_size:65536 ~output_size:(1 lsl 18) ()) ()
  in
  (* 40 KB of fields; the server takes values up to 16 KiB *)
  let pads = List.init 5 (fun i -> (Printf.sprintf "x-pad-%d" i, String.make 8000 'p')) in
  let id = get ~fields:(("x-size", "30000") :: pads) p "/head" in
  (* the request head went out as HEADERS + CONTINUATION (server's frames are 16 KiB) *)
  pump p;
  let r = resp p id in
  if r.status <> 200 then
    Printf.printf "client_error %b %s %s; server failed %b %s; resets %d; reset %s\n" p.client_error
      (Cl.failure_to_string (Cl.failure p.cl)) (Cl.reason p.cl) (Sv.failed p.sv) (Sv.reason p.sv)
      (List.length p.server_resets) (match r.reset with Some e -> H2_error.to_string e | None -> "-");
  check int "status" 200 r.status;
  check int "x-big, 30000 bytes over CONTINUATION" 30000
    (String.length (List.assoc "x-big" r.fields))

(* {1 Against transcripts} *)

let frame f =
  let buf = Bigstring.create 200_000 in
  let o = f buf in
  Bigstring.sub_string buf ~off:0 ~len:o

let raw ~typ ~flags ~sid payload =
  frame (fun buf ->
      let o = W.frame_header buf ~off:0 ~length:(String.length payload) ~type_code:typ ~flags ~stream_id:sid in
      Bigstring.blit_from_string payload ~src_off:0 buf ~dst_off:o ~len:(String.length payload);
      o + String.length payload)

let settings l =
  frame (fun buf -> W.settings buf ~off:0 ~ids:(Array.of_list (List.map fst l)) ~values:(Array.of_list (List.map snd l)))

(* HPACK: literal, new name, without indexing (0x00) or with (0x40). *)
let block ?(indexing = false) fields =
  let buf = Bigstring.create 200_000 in
  let o = ref 0 in
  let str s =
    o := Hpack_encoder.encode_integer buf ~off:!o ~prefix:7 ~first:0 (String.length s);
    Bigstring.blit_from_string s ~src_off:0 buf ~dst_off:!o ~len:(String.length s);
    o := !o + String.length s
  in
  List.iter
    (fun (n, v) ->
      Bigstring.unsafe_set buf !o (if indexing then '\x40' else '\x00');
      incr o;
      str n;
      str v)
    fields;
  Bigstring.sub_string buf ~off:0 ~len:!o

let headers ?(end_stream = false) ?(end_headers = true) sid b =
  raw ~typ:1 ~flags:((if end_stream then 1 else 0) lor if end_headers then 4 else 0) ~sid b

let data ?(end_stream = false) sid s = raw ~typ:0 ~flags:(if end_stream then 1 else 0) ~sid s
let continuation ?(end_headers = false) sid b = raw ~typ:9 ~flags:(if end_headers then 4 else 0) ~sid b

type tr = { c : Cl.t; inb : Bigstring.t; head : Bigstring.t; mutable events : string list }

let tr_create ?(client = fun () -> Cl.create ()) () =
  { c = client (); inb = Bigstring.create 2_000_000; head = Bigstring.create 65536; events = [] }

let describe t ev =
  let c = t.c in
  let sid = Cl.event_stream c in
  match ev with
  | Cl.Need_more -> "need_more"
  | Settings -> "settings"
  | Response -> Printf.sprintf "response %d %d%s" sid (Cl.status c) (if Cl.event_end_stream c then " end" else "")
  | Interim -> Printf.sprintf "interim %d %d" sid (Cl.status c)
  | Trailers -> Printf.sprintf "trailers %d" sid
  | Data -> Printf.sprintf "data %d %d%s" sid (Cl.event_data_len c) (if Cl.event_end_stream c then " end" else "")
  | Reset ->
      Printf.sprintf "reset %d %s %s" sid (H2_error.to_string (Cl.event_error c))
        (Cl.failure_to_string (Cl.event_failure c))
  | Window_update -> Printf.sprintf "window %d" sid
  | Ping_ack -> Printf.sprintf "ping_ack %d" (Cl.event_ping c)
  | Goaway -> Printf.sprintf "goaway %d" (Cl.goaway_last_stream c)
  | Connection_error ->
      Printf.sprintf "conn_error %s %s" (H2_error.to_string (Cl.event_error c))
        (Cl.failure_to_string (Cl.event_failure c))

(* Feeds [bytes] whole and returns the events, [Need_more] left out. *)
let feed t bytes =
  let len = String.length bytes in
  Bigstring.blit_from_string bytes ~src_off:0 t.inb ~dst_off:0 ~len;
  let pos = ref 0 and evs = ref [] and go = ref true in
  while !go do
    let ev = Cl.received t.c t.inb ~off:!pos ~len:(len - !pos) ~head:t.head in
    (match ev with
    | Cl.Need_more -> go := false
    | Connection_error ->
        evs := describe t ev :: !evs;
        go := false
    | _ -> evs := describe t ev :: !evs);
    pos := !pos + Cl.consumed_bytes t.c
  done;
  List.rev !evs

(* The client's output, as frame names. *)
let output t =
  let buf = Bigstring.create 400_000 in
  let n = Cl.next_output t.c buf ~off:0 ~len:400_000 in
  let r = F.create ~max_frame_size:H2_settings.max_max_frame_size () in
  let pos = ref (if n >= 24 && Bigstring.sub_string buf ~off:0 ~len:24 = F.preface then 24 else 0) in
  let l = ref [] in
  while !pos < n do
    (match F.read r buf ~off:!pos ~len:(n - !pos) with
    | F.Frame ->
        let name = F.frame_type_to_string (F.frame_type r) in
        let extra =
          match F.frame_type r with
          | F.Goaway | Rst_stream -> " " ^ H2_error.to_string (H2_error.of_int (F.error_code_raw r))
          | Window_update -> Printf.sprintf " %d %d" (F.stream_id r) (F.window_increment r)
          | Settings | Ping -> if F.has_flag r F.flag_ack then " ACK" else ""
          | Headers | Continuation | Data -> Printf.sprintf " %d" (F.stream_id r)
          | _ -> ""
        in
        l := (name ^ extra) :: !l;
        pos := !pos + F.consumed r
    | _ -> Alcotest.fail "client wrote a bad frame");
    ()
  done;
  List.rev !l

let strings = Alcotest.(list string)
let started ?client ?(server_settings = []) () =
  let t = tr_create ?client () in
  ignore (output t);
  check strings "settings" [ "settings" ] (feed t (settings server_settings));
  ignore (output t);
  t

let open_get t =
  ignore (Cl.start_request t.c ~meth:"GET" ~scheme:"http" ~authority:"a" ~path:"/");
  ignore (Cl.send_request t.c ~end_stream:true);
  Cl.request_stream t.c

let status_block ?(extra = []) st = block ((":status", string_of_int st) :: extra)

let test_preamble () =
  let t = tr_create () in
  check strings "preface, SETTINGS, WINDOW_UPDATE" [ "SETTINGS"; "WINDOW_UPDATE 0 983041" ] (output t);
  check strings "server SETTINGS acked" [ "settings" ] (feed t (settings [ (3, 10) ]));
  check strings "ack" [ "SETTINGS ACK" ] (output t);
  check int "max concurrent" 10 (Cl.peer_settings t.c).max_concurrent_streams

let conn_error ?client ?server_settings ?(before = fun _ -> ()) bytes expected failure () =
  let t = started ?client ?server_settings () in
  before t;
  ignore (output t);
  let evs = feed t bytes in
  check string "last event" expected (List.nth evs (List.length evs - 1));
  check bool "failed" true (Cl.failed t.c);
  check string "failure" failure (Cl.failure_to_string (Cl.failure t.c));
  let out = output t in
  check bool "GOAWAY sent" true (List.exists (fun s -> String.length s >= 6 && String.sub s 0 6 = "GOAWAY") out);
  check bool "again" true (feed t "" = [ expected ])

let test_settings_first () =
  let t = tr_create () in
  ignore (output t);
  check strings "PING first" [ "conn_error PROTOCOL_ERROR settings_expected" ]
    (feed t (frame (fun b -> W.ping_int b ~off:0 ~ack:false 1)))

let open1 t = ignore (open_get t)

let test_ping () =
  let t = started () in
  check strings "no event" [] (feed t (frame (fun b -> W.ping_int b ~off:0 ~ack:false 7)));
  check strings "answered" [ "PING ACK" ] (output t);
  check bool "ping queued" true (Cl.ping t.c 42);
  ignore (output t);
  check strings "pong" [ "ping_ack 42" ] (feed t (frame (fun b -> W.ping_int b ~off:0 ~ack:true 42)))

let test_interim_and_trailers () =
  let t = started () in
  let id = open_get t in
  let evs =
    feed t
      (headers id (status_block 100) ^ headers id (status_block 103 ~extra:[ ("link", "</a>") ])
     ^ headers id (status_block 200 ~extra:[ ("content-length", "3") ])
     ^ data id "abc"
      ^ headers ~end_stream:true id (block [ ("x-checksum", "1") ]))
  in
  check strings "events"
    [ "interim 1 100"; "interim 1 103"; "response 1 200"; "data 1 3"; "trailers 1" ]
    evs;
  check int "trailer field" 1 (Cl.field_count t.c);
  check string "trailer value" "1" (Span.to_string t.head (Cl.field_value t.c 0));
  check int "closed" 0 (Cl.stream_state t.c ~stream:id)

let stream_error ?client bytes expected () =
  let t = started ?client () in
  let id = open_get t in
  ignore (output t);
  let evs = feed t (bytes id) in
  check string "reset" expected (List.nth evs (List.length evs - 1));
  check bool "connection lives" false (Cl.failed t.c);
  check strings "RST_STREAM" [ "RST_STREAM PROTOCOL_ERROR" ] (output t)

let test_endless_1xx =
  stream_error (fun id -> String.concat "" (List.init 9 (fun _ -> headers id (status_block 103))))
    "reset 1 PROTOCOL_ERROR too_many_interim"

let test_content_length_short =
  stream_error
    (fun id -> headers id (status_block 200 ~extra:[ ("content-length", "5") ]) ^ data ~end_stream:true id "abc")
    "reset 1 PROTOCOL_ERROR content_length"

let test_content_length_long =
  stream_error
    (fun id -> headers id (status_block 200 ~extra:[ ("content-length", "2") ]) ^ data id "abc")
    "reset 1 PROTOCOL_ERROR content_length"

let test_conflicting_content_length =
  stream_error
    (fun id -> headers id (status_block 200 ~extra:[ ("content-length", "2"); ("content-length", "3") ]))
    "reset 1 PROTOCOL_ERROR malformed_response"

let test_upper_case_name =
  stream_error (fun id -> headers id (status_block 200 ~extra:[ ("X-Up", "1") ])) "reset 1 PROTOCOL_ERROR malformed_response"

let test_no_status =
  stream_error (fun id -> headers id (block [ ("x-a", "1") ])) "reset 1 PROTOCOL_ERROR malformed_response"

let test_101 = stream_error (fun id -> headers id (status_block 101)) "reset 1 PROTOCOL_ERROR malformed_response"

let test_connection_field =
  stream_error
    (fun id -> headers id (status_block 200 ~extra:[ ("connection", "close") ]))
    "reset 1 PROTOCOL_ERROR malformed_response"

let test_data_before_head = stream_error (fun id -> data id "x") "reset 1 PROTOCOL_ERROR malformed_response"

let test_push_promise =
  conn_error ~before:open1
    (raw ~typ:5 ~flags:4 ~sid:1 ("\000\000\000\002" ^ status_block 200))
    "conn_error PROTOCOL_ERROR push_promise" "push_promise"

let test_enable_push =
  conn_error (settings [ (2, 1) ]) "conn_error PROTOCOL_ERROR push_enabled" "push_enabled"

let test_priority_update =
  conn_error ~before:open1
    (frame (fun b -> W.priority_update b ~off:0 ~prioritized_stream_id:1 "u=1"))
    "conn_error PROTOCOL_ERROR priority_update" "priority_update"

let test_even_stream =
  conn_error (headers 2 (status_block 200)) "conn_error PROTOCOL_ERROR bad_stream_id" "bad_stream_id"

let test_unopened_stream =
  conn_error ~before:open1 (data 3 "x") "conn_error PROTOCOL_ERROR bad_stream_id" "bad_stream_id"

let test_continuation_flood =
  conn_error ~before:open1
    (headers 1 ~end_headers:false (String.sub (status_block 200) 0 1)
    ^ String.concat "" (List.init 17 (fun _ -> continuation 1 "")))
    "conn_error ENHANCE_YOUR_CALM continuation_flood" "continuation_flood"

let test_header_block_too_large =
  conn_error
    ~client:(fun () -> Cl.create ~max_header_list_size:4096 ())
    ~before:open1
    (headers 1 ~end_headers:false (String.make 3000 '\000') ^ continuation 1 (String.make 3000 '\000'))
    "conn_error ENHANCE_YOUR_CALM header_block_too_large" "header_block_too_large"

let test_hpack_bomb =
  conn_error
    ~client:(fun () -> Cl.create ~max_header_list_size:4096 ())
    ~before:open1
    (headers 1 (status_block 200 ~extra:(List.init 10 (fun i -> (Printf.sprintf "x-%d" i, String.make 500 'v')))))
    "conn_error COMPRESSION_ERROR hpack" "hpack"

let test_interrupted_block =
  conn_error ~before:open1
    (headers 1 ~end_headers:false (status_block 200) ^ frame (fun b -> W.ping_int b ~off:0 ~ack:false 1))
    "conn_error PROTOCOL_ERROR continuation_expected" "continuation_expected"

let test_connection_window_overrun =
  conn_error
    ~client:(fun () -> Cl.create ~initial_window_size:(1 lsl 20) ~connection_window:65535 ())
    ~before:open1
    (headers 1 (status_block 200)
    ^ String.concat "" (List.init 5 (fun _ -> data 1 (String.make 16000 'd'))))
    "conn_error FLOW_CONTROL_ERROR flow_control" "flow_control"

let test_stream_window_overrun () =
  let t = started ~client:(fun () -> Cl.create ~initial_window_size:1000 ()) () in
  let id = open_get t in
  ignore (output t);
  let evs = feed t (headers id (status_block 200) ^ data id (String.make 1001 'd')) in
  check strings "reset" [ "response 1 200"; "reset 1 FLOW_CONTROL_ERROR flow_control" ] evs;
  check strings "RST and connection credit" [ "RST_STREAM FLOW_CONTROL_ERROR" ]
    (List.filter (fun s -> String.sub s 0 3 = "RST") (output t))

let test_window_update_zero () =
  let t = started () in
  let id = open_get t in
  ignore (output t);
  check strings "stream error" [ "reset 1 PROTOCOL_ERROR frame_rule" ]
    (feed t (raw ~typ:8 ~flags:0 ~sid:id "\000\000\000\000"));
  check bool "connection lives" false (Cl.failed t.c)

let test_send_window_overflow () =
  let t = started () in
  let id = open_get t in
  ignore (output t);
  check strings "stream error" [ "reset 1 FLOW_CONTROL_ERROR flow_control" ]
    (feed t (frame (fun b -> W.window_update b ~off:0 ~stream_id:id ~increment:H2_settings.max_window_size)));
  check strings "connection error" [ "conn_error FLOW_CONTROL_ERROR flow_control" ]
    (feed t (frame (fun b -> W.window_update b ~off:0 ~stream_id:0 ~increment:H2_settings.max_window_size)))

(* A server that never opens its window: the caller sees 0 and can time
   out; a WINDOW_UPDATE lets bytes go. *)
let test_window_stall () =
  let t = started ~server_settings:[ (4, 0) ] () in
  ignore (Cl.start_request t.c ~meth:"POST" ~scheme:"http" ~authority:"a" ~path:"/");
  ignore (Cl.send_request t.c ~end_stream:false);
  let id = Cl.request_stream t.c in
  let body = Bigstring.of_string "0123456789abcdef" in
  check int "window 0" 0 (Cl.send_window t.c ~stream:id);
  check int "nothing taken" 0 (Cl.send_data t.c ~stream:id body ~off:0 ~len:16 ~end_stream:true);
  check bool "still sending" true (Cl.sending t.c ~stream:id);
  ignore (output t);
  check strings "update" [ "window 1" ] (feed t (frame (fun b -> W.window_update b ~off:0 ~stream_id:id ~increment:10)));
  check int "window 10" 10 (Cl.send_window t.c ~stream:id);
  check int "10 taken" 10 (Cl.send_data t.c ~stream:id body ~off:0 ~len:16 ~end_stream:true);
  check strings "one DATA" [ "DATA 1" ] (output t);
  check bool "not ended" true (Cl.sending t.c ~stream:id)

let test_goaway_transcript () =
  let t = started () in
  let a = open_get t in
  let b = open_get t in
  let c = open_get t in
  ignore (output t);
  check strings "goaway" [ "goaway 1" ]
    (feed t (frame (fun buf -> W.goaway buf ~off:0 ~last_stream_id:a ~code:H2_error.No_error ~debug:"bye")));
  check (Alcotest.list int) "unprocessed" [ b; c ]
    (List.sort compare (List.init (Cl.unprocessed_count t.c) (Cl.unprocessed_stream t.c)));
  check int "a still open" 1 (Cl.active_streams t.c);
  check strings "a completes" [ "response 1 204 end" ] (feed t (headers ~end_stream:true a (status_block 204)));
  check bool "finished" true (Cl.finished t.c)

(* DATA still in flight for a stream we cancelled: no error, and its bytes
   go back to the connection window. *)
let test_data_after_cancel () =
  let t = started () in
  let id = open_get t in
  ignore (feed t (headers id (status_block 200)));
  Cl.cancel t.c ~stream:id H2_error.Cancel;
  check strings "RST sent" [ "RST_STREAM CANCEL" ] (List.filter (fun s -> s <> "HEADERS 1") (output t));
  let before = Cl.connection_recv_window t.c in
  let chunk = data id (String.make 16000 'd') in
  check strings "ignored" [] (feed t (String.concat "" (List.init 40 (fun _ -> chunk))));
  check bool "not failed" false (Cl.failed t.c);
  check bool "connection credit given back" true
    (List.exists (fun s -> String.length s > 15 && String.sub s 0 15 = "WINDOW_UPDATE 0") (output t));
  (* 640 000 bytes arrived; without credit the window would be 1 MiB less that *)
  check bool "window replenished" true (Cl.connection_recv_window t.c > before - 200_000)

(* The output queue is bounded: a request that does not fit is refused
   with No_space (nothing queued) until the caller drains it. *)
let test_output_full () =
  let t = started ~client:(fun () -> Cl.create ~output_size:(16384 + 2048 + 1024) ()) () in
  let id = open_get t in
  ignore (Cl.start_request t.c ~meth:"POST" ~scheme:"http" ~authority:"a" ~path:"/");
  ignore (Cl.send_request t.c ~end_stream:false);
  let post = Cl.request_stream t.c in
  ignore id;
  let body = Bigstring.create 60000 in
  let n = Cl.send_data t.c ~stream:post body ~off:0 ~len:60000 ~end_stream:true in
  check bool "partly taken" true (n > 0 && n < 60000);
  check bool "next head refused" true
    (Cl.start_request t.c ~meth:"GET" ~scheme:"http" ~authority:"a" ~path:"/" = Cl.No_space);
  ignore (output t);
  check bool "accepted after draining" true
    (Cl.start_request t.c ~meth:"GET" ~scheme:"http" ~authority:"a" ~path:"/" = Cl.Submitted)

(* {1 Reuse after a failed connection} *)

let test_reset_reuse () =
  let t = started ~server_settings:[ (4, 0); (3, 1) ] () in
  let id = open_get t in
  (* the first connection: a field inserted into the HPACK table, a stream
     left open, a shut window, then a violation *)
  let evs =
    feed t
      (headers id (block ~indexing:true ((":status", "200") :: List.init 40 (fun i -> (Printf.sprintf "x-old-%d" i, "1"))))
      ^ data 2 "x")
  in
  check string "failed" "conn_error PROTOCOL_ERROR bad_stream_id" (List.nth evs (List.length evs - 1));
  check int "stream open" 1 (Cl.active_streams t.c);
  Cl.reset t.c;
  check bool "not failed" false (Cl.failed t.c);
  check int "no stream" 0 (Cl.active_streams t.c);
  check bool "no goaway" false (Cl.goaway_received t.c);
  check strings "preamble again" [ "SETTINGS"; "WINDOW_UPDATE 0 983041" ] (output t);
  check strings "settings" [ "settings" ] (feed t (settings []));
  ignore (output t);
  check int "peer settings fresh" max_int (Cl.peer_settings t.c).max_concurrent_streams;
  let id = open_get t in
  check int "ids from 1" 1 id;
  check int "send window fresh" 65535 (Cl.send_window t.c ~stream:id);
  check int "receive window fresh" (1 lsl 20) (Cl.connection_recv_window t.c);
  (* an index into the old table must not resolve *)
  check strings "old table gone" [ "conn_error COMPRESSION_ERROR hpack" ] (feed t (headers id "\xbe"));
  Cl.reset t.c;
  ignore (output t);
  ignore (feed t (settings []));
  let id = open_get t in
  check strings "new response" [ "response 1 200" ] (feed t (headers id (status_block 200 ~extra:[ ("x-new", "2") ])));
  check (Alcotest.list (Alcotest.pair string string)) "exactly its fields" [ ("x-new", "2") ]
    (List.init (Cl.field_count t.c) (fun i ->
         (Span.to_string t.head (Cl.field_name t.c i), Span.to_string t.head (Cl.field_value t.c i))))

(* The same state serves a second in-memory connection after the first
   ended mid-flight. *)
let test_reset_reuse_with_server () =
  let p = connected () in
  ignore (get p "/hold");
  ignore (get p "/hold");
  pump p;
  Cl.reset p.cl;
  let p2 = { (create ~client:(fun () -> p.cl) ()) with cl = p.cl } in
  pump p2;
  let id = get p2 "/5000" in
  check int "ids restart" 1 id;
  pump p2;
  check_body "second connection" (resp p2 id) 5000

(* {1 Allocation} *)

(* {1 What a request head may hold (RFC 9113 §8.2.2, §8.3.1)} *)

(* The fields of the one HEADERS frame [f] makes the client queue, decoded
   by the library's HPACK decoder; [None] if no HEADERS went out. *)
let sent_head f =
  let c = Cl.create () in
  let sink = Bigstring.create 65536 in
  while Cl.next_output c sink ~off:0 ~len:65536 > 0 do () done;
  f c;
  let n = Cl.next_output c sink ~off:0 ~len:65536 in
  let byte i = Char.code (Bigstring.unsafe_get sink i) in
  let rec find pos =
    if pos + 9 > n then None
    else
      let len = (byte pos lsl 16) lor (byte (pos + 1) lsl 8) lor byte (pos + 2) in
      if byte (pos + 3) = 1 then begin
        check int "END_HEADERS, no padding or priority" 0x4 (byte (pos + 4) land 0x2c);
        let d = Hpack_decoder.create () and out = Bigstring.create 65536 in
        Hpack_decoder.start_block d ~off:(pos + 9) ~len;
        let rec fields acc =
          match Hpack_decoder.next_field d sink ~out with
          | Field ->
              fields ((Span.to_string out (Hpack_decoder.name d), Span.to_string out (Hpack_decoder.value d)) :: acc)
          | End -> List.rev acc
          | Error -> Alcotest.failf "HPACK: %s" (Hpack_decoder.error_to_string (Hpack_decoder.error d))
        in
        Some (fields [])
      end
      else find (pos + 9 + len)
  in
  find 0

let pairs = Alcotest.(option (list (pair string string)))

let request ?(meth = "GET") ?(scheme = "https") ?(authority = "a.example") ?(path = "/public") fields c =
  (match Cl.start_request c ~meth ~scheme ~authority ~path with
   | Cl.Submitted -> ()
   | _ -> Alcotest.fail "start_request refused");
  fields c;
  ignore (Cl.send_request c ~end_stream:true)

let test_head_exact () =
  let src = Bigstring.of_string "xxTrailersxx" in
  check pairs "exactly the fields given"
    (Some
       [ (":method", "POST"); (":scheme", "https"); (":authority", "[::1]:8443"); (":path", "/a/b?c=d%20e");
         ("user-agent", "httpz"); ("x-trace", "abc"); ("te", "trailers"); ("te", "Trailers");
         ("accept", "*/*"); ("x-span", "Trailers") ])
    (sent_head
       (request ~meth:"POST" ~authority:"[::1]:8443" ~path:"/a/b?c=d%20e" (fun c ->
            Cl.header c Header_name.User_agent "httpz";
            Cl.header_s c "x-trace" "abc";
            Cl.header_s c "te" "trailers";
            Cl.header_span c Header_name.Te src (Span.make ~off:2 ~len:8);
            Cl.header_s c "accept" "*/*";
            Cl.header_s_span c "x-span" src (Span.make ~off:2 ~len:8))));
  check pairs "OPTIONS *"
    (Some [ (":method", "OPTIONS"); (":scheme", "http"); (":authority", "h:80"); (":path", "*") ])
    (sent_head (request ~meth:"OPTIONS" ~scheme:"http" ~authority:"h:80" ~path:"*" ignore))

(* Each refusal raises Invalid_field, abandons the head (send_request then
   raises Invalid_argument) and sends nothing. Before the fix, a forwarded
   ":path" after start_request went out as a second :path. *)
let refused name f =
  let raised = ref "" in
  let heads =
    sent_head (fun c ->
        (try f c; raised := "nothing" with
         | Hpack_encoder.Invalid_field -> raised := "Invalid_field"
         | e -> raised := Printexc.to_string e);
        match Cl.send_request c ~end_stream:true with
        | _ -> raised := !raised ^ ", then sent"
        | exception Invalid_argument _ -> ())
  in
  check string (name ^ ": refused") "Invalid_field" !raised;
  check pairs (name ^ ": nothing sent") None heads

let start ?(meth = "GET") ?(scheme = "https") ?(authority = "a.example") ?(path = "/public") c =
  ignore (Cl.start_request c ~meth ~scheme ~authority ~path : Cl.submit)

let test_head_refusals () =
  let then_ f c = start c; f c in
  List.iter
    (fun (n, v) -> refused ("header_s " ^ n ^ ": " ^ v) (then_ (fun c -> Cl.header_s c n v)))
    [ (":path", "/admin"); (":authority", "internal.example"); (":method", "DELETE"); (":scheme", "http");
      (":status", "200"); (":protocol", "websocket"); (":", "x"); ("connection", "keep-alive"); ("keep-alive", "5");
      ("proxy-connection", "keep-alive"); ("transfer-encoding", "chunked"); ("upgrade", "h2c"); ("te", "gzip");
      ("te", "trailers, gzip"); ("te", ""); ("te", "trailer") ];
  let src = Bigstring.of_string ":pathchunkedgzip" in
  refused "header_s_span :path" (then_ (fun c -> Cl.header_s_span c ":path" src (Span.make ~off:0 ~len:5)));
  refused "header_s_span transfer-encoding"
    (then_ (fun c -> Cl.header_s_span c "transfer-encoding" src (Span.make ~off:5 ~len:7)));
  refused "header_s_span te gzip" (then_ (fun c -> Cl.header_s_span c "te" src (Span.make ~off:12 ~len:4)));
  refused "header_span te gzip" (then_ (fun c -> Cl.header_span c Header_name.Te src (Span.make ~off:12 ~len:4)));
  refused "header_span te out of range"
    (then_ (fun c -> Cl.header_span c Header_name.Te src (Span.make ~off:12 ~len:8)));
  List.iter
    (fun (n, name) -> refused ("header " ^ name) (then_ (fun c -> Cl.header c n "x")))
    Header_name.
      [ (Connection, "connection"); (Keep_alive, "keep-alive"); (Transfer_encoding, "transfer-encoding");
        (Upgrade, "upgrade") ];
  refused "header te deflate" (then_ (fun c -> Cl.header c Header_name.Te "deflate"));
  refused "header_span connection"
    (then_ (fun c -> Cl.header_span c Header_name.Connection src (Span.make ~off:0 ~len:3)));
  (* a refused field mid-head drops the fields before it too *)
  refused "after good fields" (then_ (fun c -> Cl.header_s c "accept" "*/*"; Cl.header_s c ":path" "/admin"));
  refused "encoder's own refusal abandons too" (then_ (fun c -> Cl.header_s c "x-a" "a\r\nb"));
  List.iter (fun m -> refused ("method " ^ String.escaped m) (fun c -> start ~meth:m c))
    [ ""; "GET /admin"; "GE T"; "GET\t"; "G(T"; "CONNECT"; "GET\r\n" ];
  List.iter (fun p -> refused ("path " ^ String.escaped p) (fun c -> start ~path:p c))
    [ ""; "/a b"; "/a\tb"; "admin"; "http://x/"; "/a#frag"; "/\127"; "/\200"; "*"; "/a\r\nb" ];
  List.iter (fun a -> refused ("authority " ^ String.escaped a) (fun c -> start ~authority:a c))
    [ ""; "user@host"; "a b"; "host/path"; "host:8x"; "[::1"; "a\r\nb" ];
  List.iter (fun sc -> refused ("scheme " ^ String.escaped sc) (fun c -> start ~scheme:sc c))
    [ ""; "1http"; "ht tp"; "http:"; "h\r\n" ];
  (* the state is fine afterwards: the next head goes out whole *)
  check pairs "good head after a refusal"
    (Some [ (":method", "GET"); (":scheme", "https"); (":authority", "a.example"); (":path", "/public") ])
    (sent_head (fun c ->
         (try start c; Cl.header_s c ":path" "/admin" with Hpack_encoder.Invalid_field -> ());
         request ignore c))

let test_zero_alloc () =
  let c = Cl.create () in
  let inb = Bigstring.create 65536 and head = Bigstring.create 65536 and sink = Bigstring.create 65536 in
  let drain () = while Cl.next_output c sink ~off:0 ~len:65536 > 0 do () done in
  let prime = settings [ (3, 100) ] in
  Bigstring.blit_from_string prime ~src_off:0 inb ~dst_off:0 ~len:(String.length prime);
  ignore (Cl.received c inb ~off:0 ~len:(String.length prime) ~head);
  drain ();
  (* the response, and the connection credit for the request's 4 bytes *)
  let resp =
    headers 1 (block [ (":status", "200"); ("content-length", "4"); ("content-type", "text/plain") ])
    ^ data ~end_stream:true 1 "done"
    ^ frame (fun b -> W.window_update b ~off:0 ~stream_id:0 ~increment:4)
  in
  let req_body = Bigstring.of_string "ping" in
  let len = String.length resp in
  Bigstring.blit_from_string resp ~src_off:0 inb ~dst_off:0 ~len;
  let hlen = String.length resp - (9 + 4) - (9 + 4) in
  let patch_at off id =
    Bigstring.unsafe_set inb (off + 5) (Char.unsafe_chr ((id lsr 24) land 0x7f));
    Bigstring.unsafe_set inb (off + 6) (Char.unsafe_chr ((id lsr 16) land 0xff));
    Bigstring.unsafe_set inb (off + 7) (Char.unsafe_chr ((id lsr 8) land 0xff));
    Bigstring.unsafe_set inb (off + 8) (Char.unsafe_chr (id land 0xff))
  in
  let patch id =
    patch_at 0 id;
    patch_at hlen id
  in
  let bytes = ref 0 in
  let one () =
    (match Cl.start_request c ~meth:"GET" ~scheme:"https" ~authority:"example.com" ~path:"/index.html" with
    | Cl.Submitted -> ()
    | _ -> failwith "refused");
    Cl.header c Header_name.User_agent "httpz";
    Cl.header_s c "x-trace" "abc";
    Cl.header_s c "te" "trailers";
    Cl.header_s_span c "x-span" req_body (Span.make ~off:0 ~len:4);
    ignore (Cl.send_request c ~end_stream:false);
    let id = Cl.request_stream c in
    if Cl.send_window c ~stream:id < 4 then failwith "window";
    if Cl.send_data c ~stream:id req_body ~off:0 ~len:4 ~end_stream:true <> 4 then failwith "send_data";
    drain ();
    patch id;
    let pos = ref 0 and go = ref true in
    while !go do
      (match Cl.received c inb ~off:!pos ~len:(len - !pos) ~head with
      | Cl.Need_more -> go := false
      | Data ->
          bytes := !bytes + Cl.event_data_len c;
          Cl.consumed c ~stream:id (Cl.event_data_len c)
      | Response -> if Cl.find_field c Header_name.Content_type < 0 then failwith "field"
      | Connection_error -> failwith "conn error"
      | _ -> ());
      pos := !pos + Cl.consumed_bytes c
    done;
    drain ()
  in
  for _ = 1 to 1000 do one () done;
  let before = Gc.minor_words () in
  for _ = 1 to 1000 do one () done;
  let words = Gc.minor_words () -. before in
  check int "all bodies" 8000 !bytes;
  check int "no stream left" 0 (Cl.active_streams c);
  check (Alcotest.float 0.) "0 minor words per warm request/response" 0. (words /. 1000.)

let () =
  let tc name f = Alcotest.test_case name `Quick f in
  Alcotest.run "h2client"
    [
      ( "server-role",
        [
          tc "handshake" test_handshake;
          tc "100 concurrent streams" test_concurrent;
          tc "server max concurrent streams" test_server_max_concurrent;
          tc "byte at a time" test_byte_at_a_time;
          tc "flow control both ways, small windows" test_flow_control_both_ways;
          tc "slow reader backpressure" test_slow_reader_backpressure;
          tc "GOAWAY mid-flight" test_goaway_midflight;
          tc "RST_STREAM both ways" test_rst_both_ways;
          tc "large headers over CONTINUATION" test_large_headers_continuation;
          tc "reset and reuse with a server" test_reset_reuse_with_server;
        ] );
      ( "transcripts",
        [
          tc "preamble" test_preamble;
          tc "SETTINGS first" test_settings_first;
          tc "PING" test_ping;
          tc "1xx and trailers" test_interim_and_trailers;
          tc "endless 1xx" test_endless_1xx;
          tc "body shorter than content-length" test_content_length_short;
          tc "body longer than content-length" test_content_length_long;
          tc "conflicting content-length" test_conflicting_content_length;
          tc "upper-case name" test_upper_case_name;
          tc "no :status" test_no_status;
          tc "101" test_101;
          tc "connection field" test_connection_field;
          tc "DATA before head" test_data_before_head;
          tc "PUSH_PROMISE" test_push_promise;
          tc "ENABLE_PUSH 1" test_enable_push;
          tc "PRIORITY_UPDATE from a server" test_priority_update;
          tc "even stream" test_even_stream;
          tc "unopened stream" test_unopened_stream;
          tc "CONTINUATION flood" test_continuation_flood;
          tc "header block too large" test_header_block_too_large;
          tc "HPACK bomb" test_hpack_bomb;
          tc "interrupted header block" test_interrupted_block;
          tc "connection window overrun" test_connection_window_overrun;
          tc "stream window overrun" test_stream_window_overrun;
          tc "WINDOW_UPDATE of 0 on a stream" test_window_update_zero;
          tc "send window overflow" test_send_window_overflow;
          tc "window stall" test_window_stall;
          tc "GOAWAY" test_goaway_transcript;
          tc "DATA after cancel" test_data_after_cancel;
          tc "output queue full" test_output_full;
          tc "reset and reuse" test_reset_reuse;
        ] );
      ( "request head",
        [ tc "decoded head holds exactly the fields given" test_head_exact; tc "refusals" test_head_refusals ] );
      ("allocation", [ tc "0 words per warm request/response" test_zero_alloc ]);
      ("interop", H2client_interop.tests);
    ]
