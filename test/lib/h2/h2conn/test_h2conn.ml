(* Transcript tests for Httpz.H2_connection: client frames in, events and
   our frames out (decoded with our own frame reader), one RFC 9113 /
   RFC 9218 rule or abuse limit per case; zero-allocation cases for the
   steady path; and a cross-check against Python's h2 client. *)

open Httpz
open H2conn_client
module C = H2_connection
module T = Httpz_test_support

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

(* A transcript split in two at every position gives the same events and
   output as the whole: the caller-kept partial frame is all the state. *)
let test_every_split () =
  let transcript =
    F.preface ^ settings [ (4, 70_000) ] ^ request ~end_stream:false 1 (post ())
    ^ headers ~end_headers:false 3 (String.sub (block (get ())) 0 5)
    ^ continuation 3 (let b = block (get ()) in String.sub b 5 (String.length b - 5))
    ^ data 1 "body" ^ ping 42 ^ data ~end_stream:true 1 "" ^ window_update 0 100
  in
  let run pieces =
    let s = create () in
    List.iter (feed s) pieces;
    (events s, output s)
  in
  let whole = run [ transcript ] in
  for i = 1 to String.length transcript - 1 do
    let split =
      run [ String.sub transcript 0 i; String.sub transcript i (String.length transcript - i) ]
    in
    if split <> whole then Alcotest.failf "split at %d differs" i
  done;
  Alcotest.(check strings) "events" [ "headers 1"; "headers 3 end"; "data 1 \"body\""; "data 1 \"\" end" ] (fst whole)

let test_reset_for_reuse () =
  let s = start () in
  feed s (request 1 (get ()) ^ data 7 "x");
  ignore (events s);
  ignore (output s);
  Alcotest.(check bool) "failed" true (C.failed s.c);
  C.reset s.c;
  s.inlen <- 0;
  feed s (F.preface ^ settings [] ^ request 1 (get ()));
  check_events s [ "headers 1 end" ];
  check_output s [ "SETTINGS 5"; "WINDOW_UPDATE 0 983041"; "SETTINGS ACK" ]

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
  let s = start ~config:{ H2_config.default with response_header_block_size = 32768 } () in
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
    ("repeated :scheme", get () @ [ (":scheme", "http") ]);
    ("repeated :authority", get () @ [ (":authority", "example.org") ]);
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
    ("value with CR", get ~extra:[ ("x", "abcdefghij\rk") ] ());
    ("value with NUL", get ~extra:[ ("x", "a\000b") ] ());
    ("value with trailing tab", get ~extra:[ ("x", "y\t") ] ());
    ("value with an inner tab, then LF", get ~extra:[ ("x", "a\tbcdefghijkl\n") ] ());
    ("name with space", get ~extra:[ ("x y", "z") ] ());
    ("name not a token", get ~extra:[ ("x(y)", "z") ] ());
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

(* Inner controls other than NUL, CR and LF pass here (RFC 9113 §8.2.1);
   the server's HTTP/1.1 re-parse is what refuses them. *)
let test_inner_tab_ok () =
  let s = start () in
  feed s (request 1 (get ~extra:[ ("x", "a\tb c\x01d") ] ()));
  check_events s [ "headers 1 end" ]

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


let test_hpack_bomb () =
  let config = { H2_config.default with max_header_list_size = 1024 } in
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
  let config = { H2_config.default with max_concurrent_streams = 2 } in
  let s = start ~config () in
  feed s (request 1 (get ()) ^ request 3 (get ()) ^ request 5 (get ()));
  check_events s [ "headers 1 end"; "headers 3 end" ];
  check_output s [ "RST_STREAM 5 REFUSED_STREAM" ];
  respond s 1;
  ignore (output s);
  feed s (request 7 (get ()));
  check_events s [ "headers 7 end" ]

(* Refused and malformed heads are still decoded: a client whose encoder
   indexes fields (here our own, with a dynamic table) stays in step. *)
let test_hpack_in_step () =
  let config = { H2_config.default with max_concurrent_streams = 1 } in
  let s = start ~config () in
  let e = Hpack_encoder.create ~table_size:4096 () in
  let buf = Bigstring.create 4096 in
  let enc path =
    let o = Hpack_encoder.start_block e buf ~off:0 in
    let o = Hpack_encoder.field_s e buf ~off:o ":method" "GET" in
    let o = Hpack_encoder.field_s e buf ~off:o ":scheme" "https" in
    let o = Hpack_encoder.field_s e buf ~off:o ":path" path in
    let o = Hpack_encoder.field_s e buf ~off:o "x-token" ("secret-" ^ path) in
    Bigstring.sub_string buf ~off:0 ~len:o
  in
  let b1 = enc "/one" in
  let b3 = enc "/three" in
  let b5 = enc "/three" in
  Alcotest.(check bool) "the third block refers to the table" true (String.length b5 < String.length b3);
  feed s (headers ~end_stream:false 1 b1 ^ headers 3 b3);
  check_events s [ "headers 1" ];
  check_output s [ "RST_STREAM 3 REFUSED_STREAM" ];
  feed s (rst 1 H2_error.Cancel ^ headers 5 b5);
  check_events s [ "reset 1 CANCEL"; "headers 5 end" ];
  Alcotest.(check string) "path from the table" "/three"
    (Span.to_string (C.head_buffer s.c) (H2_head.path (C.head s.c)))

let test_self_dependency () =
  let s = start () in
  (* HEADERS with PRIORITY depending on itself: stream error, block decoded *)
  feed s (raw ~typ:1 ~flags:0x25 ~sid:1 ("\000\000\000\001\016" ^ block (get ())) ^ request 3 (get ()));
  check_events s [ "headers 3 end" ];
  check_output s [ "RST_STREAM 1 PROTOCOL_ERROR" ]

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
  let config = { H2_config.default with connection_window = 65535; initial_window_size = 1 lsl 20 } in
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

let () =
  let q name f = Alcotest.test_case name `Quick f in
  Alcotest.run "h2conn"
    [
      ("settings", [ q "preamble, SETTINGS ACK, peer values" test_preamble; q "byte at a time" test_preface_bytewise;
                     q "split anywhere" test_every_split; q "reset for the next connection" test_reset_for_reuse;
                     q "PING ACK" test_ping ]);
      ( "requests",
        [
          q "GET, head table, response" test_get; q "empty response" test_empty_response;
          q "HEADERS + CONTINUATION" test_continuation; q "large response head split" test_large_response_head;
          q "POST body" test_post_body; q "trailers" test_trailers; q "priority header and frames" test_priority_header;
          q "CONNECT" test_connect_ok; q "inner tab and control kept" test_inner_tab_ok; q "bad trailers" test_bad_trailers;
          q "content-length vs DATA" test_content_length_mismatch; q "HPACK bomb" test_hpack_bomb;
        ] );
      ("malformed", List.map test_malformed malformed);
      ( "states",
        [
          q "DATA on a closed stream" test_data_closed_stream; q "DATA after END_STREAM" test_data_half_closed_remote;
          q "peer reset" test_peer_reset; q "max concurrent streams" test_max_concurrent; q "graceful shutdown" test_shutdown;
          q "stream 0 is no stream" test_no_stream_zero; q "HPACK in step after refusals" test_hpack_in_step;
          q "HEADERS depending on itself" test_self_dependency;
          q "reader stream error" (stream_reset (request 1 (get ()) ^ raw ~typ:8 ~flags:0 ~sid:1 "\000\000\000\000") 1 "PROTOCOL_ERROR");
        ] );
      ("connection errors", H2conn_abuse.connection_error_tests);
      ( "flow",
        [
          q "INITIAL_WINDOW_SIZE change" test_initial_window_change; q "stream window overflow" test_window_overflow_stream;
          q "send windows" test_send_window; q "peer MAX_FRAME_SIZE" test_max_frame_size; q "receive window" test_recv_window;
          q "connection receive window" test_connection_window; q "WINDOW_UPDATE at half" test_auto_window_update;
          q "padding credited" test_padding_credited; q "zero window waits" test_window_blocked_wants_output;
        ] );
      ( "scheduler",
        [ q "urgency" test_urgency; q "incremental round-robin" test_incremental_round_robin; q "external body" test_external_body ] );
      ("abuse", H2conn_abuse.abuse_tests);
      ("memory", H2conn_memory.tests);
      ("stream table", H2conn_table.tests);
      ( "python h2",
        List.map (fun sc -> q sc (H2conn_python.run_h2_client sc)) [ "concurrent"; "large"; "post"; "reset" ] );
      ("zero alloc", [ T.zero_alloc "request in, response out" (H2conn_steady.steady ()); T.zero_alloc "head decode" (H2conn_steady.head_decode ());
          T.zero_alloc "CONTINUATION, trailers, reset" (H2conn_steady.long_way ());
          T.zero_alloc "two connections, one workspace" (H2conn_memory.shared_steady ());
          T.zero_alloc "external body inline (TLS)" (H2conn_memory.inline_external ());
          T.zero_alloc "closed stream lookup" (H2conn_table.absent_lookup ());
          T.zero_alloc "body queued, sent (sending count)" (H2conn_table.out_kind_toggle ()) ]);
    ]
