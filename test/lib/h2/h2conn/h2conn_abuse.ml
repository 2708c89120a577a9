(* Connection errors (GOAWAY with the code RFC 9113 asks for) and the abuse
   limits (ENHANCE_YOUR_CALM). *)

open Httpz
open H2conn_client
module C = H2_connection

(* {1 Abuse limits} *)

let small = { H2_config.default with max_resets = 5; max_settings = 5; max_pings = 5; max_empty_data = 5;
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
  let config = { H2_config.default with pending_size = 4096; max_pings = 1_000_000 } in
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
    ("HPACK bad index", headers 1 "\xff\x80\x01", "COMPRESSION_ERROR", `Started);
    ("connection window overflow", window_update 0 H2_settings.max_window_size, "FLOW_CONTROL_ERROR", `Started);
    ("CONTINUATION flood", headers ~end_headers:false 1 "" ^ repeat 17 (fun _ -> continuation ~end_headers:false 1 ""),
     "ENHANCE_YOUR_CALM", `Started);
    ("header block too large",
     headers ~end_headers:false 1 (String.sub big_block 0 10_000)
     ^ continuation 1 (String.sub big_block 10_000 (String.length big_block - 10_000)),
     "ENHANCE_YOUR_CALM", `Started);
    (* Before the client acknowledged our SETTINGS it could not know the
       limit: twice max_concurrent_streams more refusals are allowed. *)
    ("refused streams flood before the SETTINGS ack",
     repeat 9 (fun i -> request ~end_stream:false ((2 * i) + 1) (post ())), "ENHANCE_YOUR_CALM", `Tiny);
    ("refused streams flood after the SETTINGS ack",
     settings_ack ^ repeat 7 (fun i -> request ~end_stream:false ((2 * i) + 1) (post ())), "ENHANCE_YOUR_CALM", `Tiny);
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


let q name f = Alcotest.test_case name `Quick f

let abuse_tests =
  [
    q "rapid reset" test_rapid_reset; q "resets per window decay" test_rapid_reset_decays;
    q "SETTINGS flood" (flood "settings" (repeat 6 (fun _ -> settings [])));
    q "PING flood" (flood "ping" (repeat 6 ping));
    q "empty DATA flood" (flood "empty data" (repeat 6 (fun _ -> data 1 "")));
    q "WINDOW_UPDATE flood" (flood "window update" (repeat 6 (fun _ -> window_update 0 1)));
    q "queue full" test_ping_queue_full;
  ]

let connection_error_tests = List.map test_conn_error conn_errors
