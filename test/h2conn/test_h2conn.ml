(* Transcript tests for Httpz.H2_connection: client frames in, events and
   our frames out (decoded with our own frame reader), one RFC 9113 /
   RFC 9218 rule or abuse limit per case; zero-allocation cases for the
   steady path; and a cross-check against Python's h2 client. *)

open Httpz
open H2conn_client
module C = H2_connection
module T = Httpz_test_support

let strings = Alcotest.(list string)
let repeat n f = String.concat "" (List.init n f)
let check_events s expected = Alcotest.check strings "events" expected (events s)
let check_output s expected = Alcotest.check strings "output" expected (output s)

let respond ?(body = "hello") s sid =
  C.start_response s.c ~stream:sid ~status:200;
  C.header_int s.c Header_name.Content_length (String.length body);
  if body = "" then ignore (C.send_headers s.c ~end_stream:true)
  else begin
    ignore (C.send_headers s.c ~end_stream:false);
    let b = Bigstring.of_string body in
    ignore (C.send_data s.c ~stream:sid b ~off:0 ~len:(String.length body) ~end_stream:true)
  end

let conn_error ?config ?client_settings bytes code () =
  let s = start ?config ?client_settings () in
  feed s bytes;
  let evs = events s in
  Alcotest.check Alcotest.string "last event" ("conn_error " ^ code) (List.nth evs (List.length evs - 1));
  let out = output s in
  Alcotest.check Alcotest.bool ("GOAWAY " ^ code ^ " sent") true
    (List.exists (fun f -> String.length f > 7 && String.sub f 0 6 = "GOAWAY" && T.find_sub f code > 0) out);
  Alcotest.check Alcotest.bool "failed" true (C.failed s.c)

let stream_reset bytes sid code () =
  let s = start () in
  feed s bytes;
  let out = output s in
  Alcotest.check Alcotest.bool
    (Printf.sprintf "RST_STREAM %d %s in [%s]" sid code (String.concat "; " out))
    true
    (List.mem (Printf.sprintf "RST_STREAM %d %s" sid code) out);
  Alcotest.check Alcotest.bool "connection alive" false (C.failed s.c)

(* {1 Preface and SETTINGS} *)

let test_preamble () =
  let s = create () in
  feed s F.preface;
  check_events s [];
  feed s (settings [ (4, 100_000) ]);
  check_events s [];
  check_output s [ "SETTINGS 5"; "WINDOW_UPDATE 0 983041"; "SETTINGS ACK" ];
  Alcotest.(check int) "peer initial window" 100_000 (C.peer_settings s.c).initial_window_size;
  Alcotest.(check bool) "our settings not acked" false (C.settings_acked s.c);
  feed s settings_ack;
  Alcotest.(check bool) "our settings acked" true (C.settings_acked s.c)

let test_preface_bytewise () =
  let s = create () in
  String.iter (fun ch -> feed s (String.make 1 ch)) (F.preface ^ settings [] ^ request 1 (get ()));
  check_events s [ "headers 1 end" ]

let test_ping () =
  let s = start () in
  feed s (ping 0x0102030405060708);
  check_output s [ "PING ACK \001\002\003\004\005\006\007\b" ]

(* {1 Requests} *)

let test_get () =
  let s = start () in
  feed s (request 1 (get ~extra:[ ("user-agent", "t"); ("x-a", "b"); ("te", "trailers") ] ()));
  check_events s [ "headers 1 end" ];
  let h = C.head s.c and b = C.head_buffer s.c in
  let str = Span.to_string b in
  Alcotest.(check string) ":method" "GET" (str (H2_head.method_span h));
  Alcotest.(check bool) "meth" true (H2_head.meth h = Meth.Get);
  Alcotest.(check string) ":path" "/" (str (H2_head.path h));
  Alcotest.(check string) ":scheme" "https" (str (H2_head.scheme h));
  Alcotest.(check string) ":authority" "example.com" (str (H2_head.authority h));
  Alcotest.(check int) "fields" 3 (H2_head.field_count h);
  Alcotest.(check bool) "user-agent id" true (H2_head.field_name h 0 = Header_name.User_agent);
  Alcotest.(check string) "x-a" "b" (str (H2_head.field_value h 1));
  Alcotest.(check int) "half-closed (remote)" H2_stream.half_closed_remote (C.stream_state s.c ~stream:1);
  respond s 1;
  check_output s [ "HEADERS 1 200 content-length=5"; "DATA 1 5 ES" ];
  Alcotest.(check int) "closed" 0 (C.stream_state s.c ~stream:1);
  Alcotest.(check int) "no stream" 0 (C.active_streams s.c)

let test_empty_response () =
  let s = start () in
  feed s (request 1 (get ()));
  respond ~body:"" s 1;
  check_output s [ "HEADERS 1 ES 200 content-length=0" ]

let test_continuation () =
  let s = start () in
  let b = block (get ~extra:[ ("x-long", String.make 300 'v') ] ()) in
  let a = String.sub b 0 100 and m = String.sub b 100 100 and z = String.sub b 200 (String.length b - 200) in
  feed s (headers ~end_headers:false 1 a ^ continuation ~end_headers:false 1 m);
  check_events s [];
  feed s (continuation 1 z);
  check_events s [ "headers 1 end" ];
  Alcotest.(check int) "x-long" 300 (Span.len (H2_head.field_value (C.head s.c) 0))

let test_large_response_head () =
  let s = start ~config:{ C.default_config with response_header_block_size = 32768 } () in
  feed s (request 1 (get ()));
  C.start_response s.c ~stream:1 ~status:200;
  for _ = 1 to 6 do
    C.header_s s.c "x-big" (String.make 4000 '~')
  done;
  ignore (C.send_headers s.c ~end_stream:true);
  match output s with
  | [ h; c ] ->
      Alcotest.(check string) "HEADERS first" "HEADERS 1 ES (continued)" h;
      Alcotest.(check string) "then CONTINUATION" "CONTINUATION 1 EH" c
  | l -> Alcotest.failf "frames: %s" (String.concat "; " l)

let test_post_body () =
  let s = start () in
  feed s
    (request ~end_stream:false 1 (post ~extra:[ ("content-length", "5") ] ())
    ^ data 1 "he" ^ data ~end_stream:true 1 "llo");
  check_events s [ "headers 1"; "data 1 \"he\""; "data 1 \"llo\" end" ];
  Alcotest.(check int) "content-length" 5 (H2_head.content_length (C.head s.c))

let test_trailers () =
  let s = start () in
  feed s (request ~end_stream:false 1 (post ()) ^ data 1 "x" ^ headers 1 (block [ ("x-checksum", "1") ]));
  check_events s [ "headers 1"; "data 1 \"x\""; "trailers 1" ];
  Alcotest.(check int) "half-closed" H2_stream.half_closed_remote (C.stream_state s.c ~stream:1)

let test_priority_header () =
  let s = start () in
  feed s (request 1 (get ~extra:[ ("priority", "u=1, i") ] ()));
  let p = C.stream_priority s.c ~stream:1 in
  Alcotest.(check int) "urgency" 1 (H2_priority.urgency p);
  Alcotest.(check bool) "incremental" true (H2_priority.incremental p);
  feed s (priority_update 1 "u=6");
  Alcotest.(check int) "updated" 6 (H2_priority.urgency (C.stream_priority s.c ~stream:1));
  feed s (priority 1 ~dep:0);
  check_events s [ "headers 1 end" ]

(* Malformed heads: RST_STREAM PROTOCOL_ERROR, no event, connection lives. *)
let malformed =
  [
    ("upper-case name", get ~extra:[ ("X-A", "b") ] ());
    ("missing :method", List.tl (get ()));
    ("missing :path", [ (":method", "GET"); (":scheme", "https") ]);
    ("missing :scheme", [ (":method", "GET"); (":path", "/") ]);
    ("empty :path", [ (":method", "GET"); (":scheme", "https"); (":path", "") ]);
    ("repeated :path", get () @ [ (":path", "/x") ]);
    ("repeated :method", (":method", "GET") :: get ());
    ("pseudo after regular", [ (":method", "GET"); ("x", "y"); (":scheme", "https"); (":path", "/") ]);
    ("unknown pseudo", get () @ [ (":foo", "x") ]);
    (":status in request", get () @ [ (":status", "200") ]);
    (":protocol", get () @ [ (":protocol", "websocket") ]);
    ("connection", get ~extra:[ ("connection", "close") ] ());
    ("keep-alive", get ~extra:[ ("keep-alive", "1") ] ());
    ("proxy-connection", get ~extra:[ ("proxy-connection", "x") ] ());
    ("transfer-encoding", get ~extra:[ ("transfer-encoding", "chunked") ] ());
    ("upgrade", get ~extra:[ ("upgrade", "h2c") ] ());
    ("te gzip", get ~extra:[ ("te", "gzip") ] ());
    ("content-length not a number", get ~extra:[ ("content-length", "1x") ] ());
    ("content-length values differ", get ~extra:[ ("content-length", "1"); ("content-length", "2") ] ());
    ("value with leading space", get ~extra:[ ("x", " y") ] ());
    ("value with LF", get ~extra:[ ("x", "a\nb") ] ());
    ("name with space", get ~extra:[ ("x y", "z") ] ());
    ("CONNECT without :authority", [ (":method", "CONNECT") ]);
    ("CONNECT with :path", [ (":method", "CONNECT"); (":authority", "a:1"); (":path", "/") ]);
    ("END_STREAM with content-length 3", get ~extra:[ ("content-length", "3") ] ());
  ]

let test_malformed (name, fields) =
  Alcotest.test_case name `Quick (fun () ->
      let s = start () in
      feed s (request 1 fields);
      check_events s [];
      check_output s [ "RST_STREAM 1 PROTOCOL_ERROR" ];
      (* the HPACK context is still in step: the next request is fine *)
      feed s (request 3 (get ()));
      check_events s [ "headers 3 end" ])

let test_connect_ok () =
  let s = start () in
  feed s (request ~end_stream:false 1 [ (":method", "CONNECT"); (":authority", "a:443") ]);
  check_events s [ "headers 1" ]

let test_bad_trailers () =
  let s = start () in
  feed s (request ~end_stream:false 1 (post ()) ^ headers ~end_stream:false 1 (block [ ("x", "1") ]));
  check_events s [ "headers 1"; "reset 1 PROTOCOL_ERROR" ];
  feed s (request ~end_stream:false 3 (post ()) ^ headers 3 (block [ (":path", "/") ]));
  check_events s [ "headers 3"; "reset 3 PROTOCOL_ERROR" ];
  check_output s [ "RST_STREAM 1 PROTOCOL_ERROR"; "RST_STREAM 3 PROTOCOL_ERROR" ]

let test_content_length_mismatch () =
  let s = start () in
  feed s (request ~end_stream:false 1 (post ~extra:[ ("content-length", "5") ] ()) ^ data ~end_stream:true 1 "abc");
  check_events s [ "headers 1"; "reset 1 PROTOCOL_ERROR" ];
  feed s (request ~end_stream:false 3 (post ~extra:[ ("content-length", "2") ] ()) ^ data 3 "abc");
  check_events s [ "headers 3"; "reset 3 PROTOCOL_ERROR" ];
  feed s
    (request ~end_stream:false 5 (post ~extra:[ ("content-length", "2") ] ()) ^ data 5 "a"
    ^ headers 5 (block [ ("x", "1") ]));
  check_events s [ "headers 5"; "data 5 \"a\""; "reset 5 PROTOCOL_ERROR" ]

(* {1 HPACK} *)

let hpack_bad_index = headers 1 "\xff\x80\x01"

let test_hpack_bomb () =
  let config = { C.default_config with max_header_list_size = 1024 } in
  let fields = List.init 40 (fun i -> (Printf.sprintf "x-%d" i, String.make 20 'a')) in
  let s = start ~config () in
  feed s (request 1 (get ~extra:fields ()));
  check_events s [ "conn_error COMPRESSION_ERROR" ]

(* {1 Stream states} *)

let test_data_closed_stream () =
  let s = start () in
  feed s (request 1 (get ()));
  respond s 1;
  ignore (output s);
  feed s (data 1 "late");
  check_events s [ "headers 1 end" ];
  check_output s [ "RST_STREAM 1 STREAM_CLOSED" ]

let test_data_half_closed_remote () =
  let s = start () in
  feed s (request 1 (get ()) ^ data 1 "x");
  check_events s [ "headers 1 end"; "reset 1 STREAM_CLOSED" ];
  check_output s [ "RST_STREAM 1 STREAM_CLOSED" ]

let test_peer_reset () =
  let s = start () in
  feed s (request ~end_stream:false 1 (post ()) ^ rst 1 H2_error.Cancel);
  check_events s [ "headers 1"; "reset 1 CANCEL" ];
  Alcotest.(check int) "slot freed" 0 (C.active_streams s.c);
  feed s (window_update 1 10 ^ rst 1 H2_error.Cancel ^ priority 1 ~dep:0);
  check_events s [];
  check_output s []

let test_max_concurrent () =
  let config = { C.default_config with max_concurrent_streams = 2 } in
  let s = start ~config () in
  feed s (request 1 (get ()) ^ request 3 (get ()) ^ request 5 (get ()));
  check_events s [ "headers 1 end"; "headers 3 end" ];
  check_output s [ "RST_STREAM 5 REFUSED_STREAM" ];
  respond s 1;
  ignore (output s);
  feed s (request 7 (get ()));
  check_events s [ "headers 7 end" ]

let test_shutdown () =
  let s = start () in
  feed s (request 1 (get ()) ^ request 3 (get ()));
  C.shutdown s.c;
  (* frames on streams above the GOAWAY's last id are ignored, even DATA *)
  feed s (request ~end_stream:false 5 (post ()) ^ data 5 "ignored" ^ window_update 5 1);
  check_events s [ "headers 1 end"; "headers 3 end" ];
  Alcotest.(check bool) "wants output" true (C.wants_output s.c);
  Alcotest.(check bool) "not finished" false (C.finished s.c);
  respond s 1;
  respond s 3;
  check_output s
    [ "GOAWAY 3 NO_ERROR"; "HEADERS 1 200 content-length=5"; "HEADERS 3 200 content-length=5"; "DATA 1 5 ES"; "DATA 3 5 ES" ];
  Alcotest.(check bool) "finished" true (C.finished s.c);
  Alcotest.(check bool) "nothing to send" false (C.wants_output s.c);
  (* a later connection error keeps the GOAWAY's last stream id *)
  feed s (ping 1 ^ raw ~typ:6 ~flags:0 ~sid:0 "short");
  check_output s [ "PING ACK \000\000\000\000\000\000\000\001"; "GOAWAY 3 FRAME_SIZE_ERROR" ]

let big_response s sid n =
  C.start_response s.c ~stream:sid ~status:200;
  ignore (C.send_headers s.c ~end_stream:false);
  let b = Bigstring.of_string (String.make n 'b') in
  ignore (C.send_data s.c ~stream:sid b ~off:0 ~len:n ~end_stream:true)

let test_no_stream_zero () =
  let s = start () in
  C.reset_stream s.c ~stream:0 H2_error.Cancel;
  C.consumed s.c ~stream:0 10;
  C.start_response s.c ~stream:0 ~status:200;
  Alcotest.(check bool) "headers on stream 0" true (C.send_headers s.c ~end_stream:true = C.Stream_closed);
  Alcotest.(check int) "state" 0 (C.stream_state s.c ~stream:0);
  check_output s []

let test_window_blocked_wants_output () =
  let s = start ~client_settings:[ (4, 0) ] () in
  feed s (request 1 (get ()));
  big_response s 1 10;
  check_output s [ "HEADERS 1 200" ];
  Alcotest.(check bool) "a zero window waits" false (C.wants_output s.c);
  feed s (window_update 1 4);
  Alcotest.(check bool) "opened" true (C.wants_output s.c);
  check_output s [ "DATA 1 4" ]

(* {1 Flow control} *)

let test_initial_window_change () =
  let s = start () in
  feed s (request 1 (get ()));
  feed s (settings [ (4, 1000) ]);
  Alcotest.(check int) "send window" 1000 (C.stream_send_window s.c ~stream:1);
  feed s (window_update 1 (H2_settings.max_window_size - 1000));
  Alcotest.(check int) "at the max" H2_settings.max_window_size (C.stream_send_window s.c ~stream:1);
  feed s (settings [ (4, 1001) ]);
  check_events s [ "headers 1 end"; "conn_error FLOW_CONTROL_ERROR" ]

let test_window_overflow_stream () =
  let s = start () in
  feed s (request 1 (get ()) ^ window_update 1 H2_settings.max_window_size);
  check_events s [ "headers 1 end"; "reset 1 FLOW_CONTROL_ERROR" ]

let test_send_window () =
  let s = start () in
  feed s (request 1 (get ()));
  big_response s 1 100_000;
  check_output s
    [ "HEADERS 1 200"; "DATA 1 16384"; "DATA 1 16384"; "DATA 1 16384"; "DATA 1 16383" ];
  Alcotest.(check int) "window empty" 0 (C.connection_send_window s.c);
  check_output s [];
  feed s (window_update 0 40_000);
  check_output s [];
  feed s (window_update 1 40_000);
  check_output s [ "DATA 1 16384"; "DATA 1 16384"; "DATA 1 1697 ES" ]

let test_max_frame_size () =
  let s = start ~client_settings:[ (5, 20_000); (4, 1_000_000) ] () in
  feed s (request 1 (get ()) ^ window_update 0 1_000_000);
  big_response s 1 50_000;
  check_output s [ "HEADERS 1 200"; "DATA 1 20000"; "DATA 1 20000"; "DATA 1 10000 ES" ]

let test_recv_window () =
  let s = start () in
  s.auto_consume <- false;
  feed s (request ~end_stream:false 1 (post ()));
  feed s (data 1 (String.make 16384 'a') ^ data 1 (String.make 16384 'a'));
  ignore (events s);
  check_output s [];
  C.consumed s.c ~stream:1 32768;
  check_output s [ "WINDOW_UPDATE 1 32768" ];
  (* 65535 + 32768 allowed in all: one byte more is a stream error *)
  feed s (String.concat "" (List.init 4 (fun _ -> data 1 (String.make 16384 'a'))) ^ data 1 (String.make 1 'a'));
  let evs = events s in
  Alcotest.(check string) "overflow" "reset 1 FLOW_CONTROL_ERROR" (List.nth evs (List.length evs - 1))

let test_connection_window () =
  let config = { C.default_config with connection_window = 65535; initial_window_size = 1 lsl 20 } in
  let s = start ~config () in
  s.auto_consume <- false;
  let chunk = String.make 16384 'a' in
  feed s (request ~end_stream:false 1 (post ()) ^ data 1 chunk ^ data 1 chunk ^ data 1 chunk);
  feed s (request ~end_stream:false 3 (post ()) ^ data 3 chunk);
  let evs = events s in
  Alcotest.(check string) "beyond the connection window" "conn_error FLOW_CONTROL_ERROR"
    (List.nth evs (List.length evs - 1))

let test_auto_window_update () =
  let s = start () in
  feed s (request ~end_stream:false 1 (post ()));
  feed s (data 1 (String.make 16384 'a') ^ data 1 (String.make 16384 'a'));
  check_output s [ "WINDOW_UPDATE 1 32768" ]

let test_padding_credited () =
  let s = start () in
  s.auto_consume <- false;
  feed s (request ~end_stream:false 1 (post ()));
  (* PADDED DATA: 255 bytes of padding and 1 data byte per frame; the
     padding and its length byte come back without the application *)
  let frame = raw ~typ:0 ~flags:8 ~sid:1 ("\xff" ^ "z" ^ String.make 255 '\000') in
  feed s (repeat 127 (fun _ -> frame));
  Alcotest.(check int) "events" 128 (List.length (events s));
  check_output s [];
  feed s frame;
  check_output s [ "WINDOW_UPDATE 1 32768" ]

(* {1 The scheduler} *)

let test_urgency () =
  let s = start () in
  feed s (request 1 (get ~extra:[ ("priority", "u=5") ] ()) ^ request 3 (get ~extra:[ ("priority", "u=1") ] ()));
  big_response s 1 20_000;
  big_response s 3 20_000;
  check_output s
    [ "HEADERS 1 200"; "HEADERS 3 200"; "DATA 3 16384"; "DATA 3 3616 ES"; "DATA 1 16384"; "DATA 1 3616 ES" ]

let test_incremental_round_robin () =
  let s = start () in
  let inc = [ ("priority", "i") ] in
  feed s (request 1 (get ~extra:inc ()) ^ request 3 (get ~extra:inc ()) ^ request 5 (get ()));
  big_response s 1 20_000;
  big_response s 3 20_000;
  big_response s 5 20_000;
  check_output s
    [
      "HEADERS 1 200"; "HEADERS 3 200"; "HEADERS 5 200"; "DATA 5 16384"; "DATA 5 3616 ES"; "DATA 1 16384";
      "DATA 3 16384"; "DATA 1 3616 ES"; "DATA 3 3616 ES";
    ]

let test_external_body () =
  let s = start () in
  feed s (request 1 (get ()));
  C.start_response s.c ~stream:1 ~status:200;
  ignore (C.send_headers s.c ~end_stream:false);
  Alcotest.(check bool) "queued" true (C.send_data_external s.c ~stream:1 ~offset:0 ~len:20_000 ~end_stream:true = C.Queued);
  let n = C.next_output s.c s.outbuf ~off:0 ~len:65536 in
  Alcotest.(check int) "stops after the DATA header" (9 + 9 + (n - 18)) n;
  Alcotest.(check int) "external stream" 1 (C.output_external_stream s.c);
  Alcotest.(check int) "external len" 16384 (C.output_external_len s.c);
  Alcotest.(check int) "external offset" 0 (C.output_external_offset s.c);
  ignore (C.next_output s.c s.outbuf ~off:0 ~len:65536);
  Alcotest.(check int) "rest" 3616 (C.output_external_len s.c);
  Alcotest.(check int) "rest offset" 16384 (C.output_external_offset s.c)

(* {1 Abuse limits} *)

let small = { C.default_config with max_resets = 5; max_settings = 5; max_pings = 5; max_empty_data = 5;
                                    max_window_updates = 5; max_refused = 5 }


let test_rapid_reset () =
  let s = start ~config:small () in
  feed s (repeat 6 (fun i -> request ~end_stream:false ((2 * i) + 1) (post ()) ^ rst ((2 * i) + 1) H2_error.Cancel));
  let evs = events s in
  Alcotest.(check string) "GOAWAY" "conn_error ENHANCE_YOUR_CALM" (List.nth evs (List.length evs - 1))

let test_rapid_reset_decays () =
  let s = start ~config:small () in
  for i = 0 to 19 do
    s.now <- i * 300;
    feed s (request ~end_stream:false ((2 * i) + 1) (post ()) ^ rst ((2 * i) + 1) H2_error.Cancel)
  done;
  Alcotest.(check bool) "alive" false (C.failed s.c)

let flood name bytes () =
  let s = start ~config:small () in
  feed s (request ~end_stream:false 1 (post ()));
  feed s bytes;
  let evs = events s in
  Alcotest.(check string) name "conn_error ENHANCE_YOUR_CALM" (List.nth evs (List.length evs - 1))

let test_ping_queue_full () =
  let config = { C.default_config with pending_size = 4096; max_pings = 1_000_000 } in
  let s = start ~config () in
  feed s (repeat 300 ping);
  let evs = events s in
  Alcotest.(check string) "queue full" "conn_error ENHANCE_YOUR_CALM" (List.nth evs (List.length evs - 1));
  let out = output s in
  Alcotest.(check string) "GOAWAY last" "GOAWAY 0 ENHANCE_YOUR_CALM" (List.nth out (List.length out - 1))

let big_block = block (get ~extra:[ ("x", String.make 20_000 'a') ] ())

let conn_errors =
  [
    ("bad preface", "GET / HTTP/1.1\r\n\r\n", "PROTOCOL_ERROR", `Raw);
    ("no SETTINGS first", F.preface ^ ping 1, "PROTOCOL_ERROR", `Raw);
    ("HEADERS on an even stream", request 2 (get ()), "PROTOCOL_ERROR", `Started);
    ("HEADERS on a closed stream", request 3 (get ()) ^ rst 3 H2_error.Cancel ^ request 1 (get ()), "STREAM_CLOSED", `Started);
    ("DATA on an idle stream", data 1 "x", "PROTOCOL_ERROR", `Started);
    ("WINDOW_UPDATE on an idle stream", window_update 1 1, "PROTOCOL_ERROR", `Started);
    ("RST_STREAM on an idle stream", rst 5 H2_error.Cancel, "PROTOCOL_ERROR", `Started);
    ("frame inside a header block", headers ~end_headers:false 1 "" ^ ping 1, "PROTOCOL_ERROR", `Started);
    ("CONTINUATION without HEADERS", continuation 1 "", "PROTOCOL_ERROR", `Started);
    ("CONTINUATION on another stream", headers ~end_headers:false 1 "" ^ continuation 3 "", "PROTOCOL_ERROR", `Started);
    ("PUSH_PROMISE", raw ~typ:5 ~flags:4 ~sid:1 "\000\000\000\002", "PROTOCOL_ERROR", `Started);
    ("HPACK bad index", hpack_bad_index, "COMPRESSION_ERROR", `Started);
    ("connection window overflow", window_update 0 H2_settings.max_window_size, "FLOW_CONTROL_ERROR", `Started);
    ("CONTINUATION flood", headers ~end_headers:false 1 "" ^ repeat 17 (fun _ -> continuation ~end_headers:false 1 ""),
     "ENHANCE_YOUR_CALM", `Started);
    ("header block too large",
     headers ~end_headers:false 1 (String.sub big_block 0 10_000)
     ^ continuation 1 (String.sub big_block 10_000 (String.length big_block - 10_000)),
     "ENHANCE_YOUR_CALM", `Started);
    ("refused streams flood", repeat 8 (fun i -> request ~end_stream:false ((2 * i) + 1) (post ())), "ENHANCE_YOUR_CALM", `Tiny);
    ("oversized frame", data 1 (String.make 16385 'a'), "FRAME_SIZE_ERROR", `Started);
  ]

let test_conn_error (name, bytes, code, how) =
  Alcotest.test_case name `Quick (fun () ->
      match how with
      | `Started -> conn_error bytes code ()
      | `Tiny -> conn_error ~config:{ small with max_concurrent_streams = 1; max_refused = 5 } bytes code ()
      | `Raw ->
          let s = create () in
          feed s bytes;
          check_events s [ "conn_error " ^ code ];
          Alcotest.(check bool) "GOAWAY" true (List.mem ("GOAWAY 0 " ^ code) (output s));
          feed s (request 1 (get ()));
          check_events s [ "conn_error " ^ code ];
          Alcotest.(check bool) "finished" true (C.finished s.c))

(* {1 Zero allocation: one request, body in, response out, per run} *)

let steady () =
  let s = start () in
  let req = request ~end_stream:false 1 (get ~extra:[ ("user-agent", "curl/8"); ("accept", "*/*") ] ()) in
  let body = data 1 (String.make 16384 'a') ^ data 1 (String.make 16384 'b') ^ data ~end_stream:true 1 "" in
  let wu = window_update 0 10 in
  let pg = ping 7 in
  let all = req ^ body ^ wu ^ pg in
  let inbuf = Bigstring.of_string all in
  let len = String.length all in
  let resp = Bigstring.of_string "hello world" in
  let out = Bigstring.create 65536 in
  let sid = ref 1 and now = ref 0 in
  let set_sid off id =
    Bigstring.unsafe_set inbuf (off + 5) (Char.unsafe_chr ((id lsr 24) land 0x7f));
    Bigstring.unsafe_set inbuf (off + 6) (Char.unsafe_chr ((id lsr 16) land 0xff));
    Bigstring.unsafe_set inbuf (off + 7) (Char.unsafe_chr ((id lsr 8) land 0xff));
    Bigstring.unsafe_set inbuf (off + 8) (Char.unsafe_chr (id land 0xff))
  in
  let body_off = String.length req in
  let run () =
    set_sid 0 !sid;
    set_sid body_off !sid;
    set_sid (body_off + 16393) !sid;
    set_sid (body_off + (2 * 16393)) !sid;
    now := !now + 1000;
    let pos = ref 0 and go = ref true in
    while !go do
      match C.received s.c inbuf ~off:!pos ~len:(len - !pos) ~now:!now with
      | C.Need_more -> go := false
      | Connection_error -> failwith "connection error"
      | ev ->
          (match ev with
          | C.Data -> C.consumed s.c ~stream:!sid (C.event_data_len s.c)
          | _ -> ());
          pos := !pos + C.consumed_bytes s.c
    done;
    C.start_response s.c ~stream:!sid ~status:200;
    C.header_int s.c Header_name.Content_length 11;
    ignore (C.send_headers s.c ~end_stream:false);
    ignore (C.send_data s.c ~stream:!sid resp ~off:0 ~len:11 ~end_stream:true);
    let n = ref 0 in
    while
      let k = C.next_output s.c out ~off:0 ~len:65536 in
      n := !n + k;
      k > 0
    do () done;
    (* HEADERS, DATA, PING ACK, and the stream's WINDOW_UPDATE at least *)
    if !n < 9 + 2 + 9 + 11 + 17 + 13 then failwith "output missing";
    sid := !sid + 2
  in
  run ();
  if C.active_streams s.c <> 0 then failwith "stream left open";
  run

let head_decode () =
  let h = H2_head.create ~max_fields:64 and d = Hpack_decoder.create () in
  let b = Bigstring.of_string (block (get ~extra:[ ("user-agent", "curl/8"); ("accept-encoding", "gzip") ] ())) in
  let out = Bigstring.create 4096 in
  fun () ->
    if H2_head.decode h d b ~off:0 ~len:(Bigstring.length b) ~out ~trailers:false <> H2_head.Valid then
      failwith "invalid"


(* {1 Cross-check with Python's h2 client} *)

let python = "/usr/bin/python3"

let hex s = String.concat "" (List.init (String.length s) (fun i -> Printf.sprintf "%02x" (Char.code s.[i])))
let unhex h = String.init (String.length h / 2) (fun i -> Char.chr (int_of_string ("0x" ^ String.sub h (2 * i) 2)))

(* Our side: a tiny application answering each request, once its body is
   in, with "hello <path> <body bytes>", or 200000 patterned bytes for /big. *)
let serve s =
  let paths = Hashtbl.create 8 and got = Hashtbl.create 8 in
  let bodies = ref [] in
  let answer s sid =
    let path = Hashtbl.find paths sid in
    let body =
      if path = "/big" then String.init 200_000 (fun i -> Char.chr (i mod 251))
      else Printf.sprintf "hello %s %d" path (try Hashtbl.find got sid with Not_found -> 0)
    in
    let b = Bigstring.of_string body in
    bodies := b :: !bodies;
    C.start_response s.c ~stream:sid ~status:200;
    C.header_int s.c Header_name.Content_length (String.length body);
    ignore (C.send_headers s.c ~end_stream:false);
    ignore (C.send_data s.c ~stream:sid b ~off:0 ~len:(String.length body) ~end_stream:true)
  in
  s.on_headers <-
    (fun s sid ->
      Hashtbl.replace paths sid (Span.to_string (C.head_buffer s.c) (H2_head.path (C.head s.c)));
      if C.event_end_stream s.c then answer s sid);
  s.on_data <-
    (fun s sid data fin ->
      Hashtbl.replace got sid ((try Hashtbl.find got sid with Not_found -> 0) + String.length data);
      if fin then answer s sid)

let run_h2_client scenario () =
  let script = Filename.temp_file "httpz_h2_client" ".py" in
  Fun.protect
    ~finally:(fun () -> Sys.remove script)
    (fun () ->
      let oc = open_out_bin script in
      output_string oc H2_client_script.source;
      close_out oc;
      let from_py, to_py = Unix.open_process_args python [| python; script; scenario |] in
      let s = create () in
      serve s;
      let result = ref None in
      (try
         while !result = None do
           let line = input_line from_py in
           if String.length line >= 4 && String.sub line 0 4 = "OUT " then begin
             feed s (unhex (String.sub line 4 (String.length line - 4)));
             output_string to_py (hex (raw_output s) ^ "\n");
             flush to_py
           end
           else if String.length line >= 5 && String.sub line 0 5 = "DONE " then
             result := Some (String.sub line 5 (String.length line - 5))
           else result := Some ("unexpected line: " ^ line)
         done
       with End_of_file -> result := Some "the h2 client died (is Debian's python3-h2 installed?)");
      ignore (Unix.close_process (from_py, to_py));
      Alcotest.(check (option string)) ("h2 client, " ^ scenario) (Some "ok") !result;
      let evs = events s in
      Alcotest.(check bool) "no connection error" false (C.failed s.c);
      if scenario = "reset" then
        Alcotest.(check bool) ("saw the reset in " ^ String.concat "; " evs) true (List.mem "reset 1 CANCEL" evs))

let () =
  let q name f = Alcotest.test_case name `Quick f in
  Alcotest.run "h2conn"
    [
      ("settings", [ q "preamble, SETTINGS ACK, peer values" test_preamble; q "byte at a time" test_preface_bytewise;
                     q "PING ACK" test_ping ]);
      ( "requests",
        [
          q "GET, head table, response" test_get; q "empty response" test_empty_response;
          q "HEADERS + CONTINUATION" test_continuation; q "large response head split" test_large_response_head;
          q "POST body" test_post_body; q "trailers" test_trailers; q "priority header and frames" test_priority_header;
          q "CONNECT" test_connect_ok; q "bad trailers" test_bad_trailers;
          q "content-length vs DATA" test_content_length_mismatch; q "HPACK bomb" test_hpack_bomb;
        ] );
      ("malformed", List.map test_malformed malformed);
      ( "states",
        [
          q "DATA on a closed stream" test_data_closed_stream; q "DATA after END_STREAM" test_data_half_closed_remote;
          q "peer reset" test_peer_reset; q "max concurrent streams" test_max_concurrent; q "graceful shutdown" test_shutdown;
          q "stream 0 is no stream" test_no_stream_zero;
          q "reader stream error" (stream_reset (request 1 (get ()) ^ raw ~typ:8 ~flags:0 ~sid:1 "\000\000\000\000") 1 "PROTOCOL_ERROR");
        ] );
      ("connection errors", List.map test_conn_error conn_errors);
      ( "flow",
        [
          q "INITIAL_WINDOW_SIZE change" test_initial_window_change; q "stream window overflow" test_window_overflow_stream;
          q "send windows" test_send_window; q "peer MAX_FRAME_SIZE" test_max_frame_size; q "receive window" test_recv_window;
          q "connection receive window" test_connection_window; q "WINDOW_UPDATE at half" test_auto_window_update;
          q "padding credited" test_padding_credited; q "zero window waits" test_window_blocked_wants_output;
        ] );
      ( "scheduler",
        [ q "urgency" test_urgency; q "incremental round-robin" test_incremental_round_robin; q "external body" test_external_body ] );
      ( "abuse",
        [
          q "rapid reset" test_rapid_reset; q "resets per window decay" test_rapid_reset_decays;
          q "SETTINGS flood" (flood "settings" (repeat 6 (fun _ -> settings [])));
          q "PING flood" (flood "ping" (repeat 6 ping));
          q "empty DATA flood" (flood "empty data" (repeat 6 (fun _ -> data 1 "")));
          q "WINDOW_UPDATE flood" (flood "window update" (repeat 6 (fun _ -> window_update 0 1)));
          q "queue full" test_ping_queue_full;
        ] );
      ( "python h2",
        List.map (fun sc -> q sc (run_h2_client sc)) [ "concurrent"; "large"; "post"; "reset" ] );
      ("zero alloc", [ T.zero_alloc "request in, response out" (steady ()); T.zero_alloc "head decode" (head_decode ()) ]);
    ]
