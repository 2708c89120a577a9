(* What an HTTP/2 connection holds while idle: buffers come from the
   worker's workspace only while they hold bytes, the stream table grows
   with the streams open. *)

open Httpz
open H2conn_client
module C = H2_connection
module WS = H2_workspace

let serve s sid body =
  C.start_response s.c ~stream:sid ~status:200;
  C.header_int s.c Header_name.Content_length (String.length body);
  ignore (C.send_headers s.c ~end_stream:false);
  ignore (C.send_data s.c ~stream:sid (Bigstring.of_string body) ~off:0 ~len:(String.length body) ~end_stream:true)

(* Two connections share one workspace: each takes a frame queue while it
   has frames to send and gives it back once they left. *)
let test_queue_pooled () =
  let ws = WS.create () in
  let a = start ~workspace:ws () and b = start ~workspace:ws () in
  Alcotest.(check int) "both queues back after the preamble" 1 (WS.spares ws.queues);
  feed a (request 1 (get ()));
  feed b (request 1 (get ~path:"/b" ()));
  Alcotest.(check string) "b's head is the last decoded" "/b"
    (Span.to_string (C.head_buffer b.c) (H2_head.path (C.head b.c)));
  serve a 1 "hello";
  serve b 1 "world";
  Alcotest.(check int) "two queues out" 0 (WS.spares ws.queues);
  Alcotest.(check bool) "a has output" true (C.has_output a.c);
  ignore (output a);
  ignore (output b);
  Alcotest.(check int) "both back once sent" 2 (WS.spares ws.queues);
  Alcotest.(check bool) "idle: no output" false (C.has_output a.c || C.has_output b.c);
  Alcotest.(check int) "no stream open" 0 (C.active_streams a.c + C.active_streams b.c)

(* A header block split over CONTINUATION frames read apart takes an
   assembly buffer until its last fragment. *)
let test_block_pooled () =
  let ws = WS.create () in
  let s = start ~workspace:ws () in
  let blk = block (get ~extra:[ ("x-a", String.make 100 'a') ] ()) in
  let half = String.length blk / 2 in
  feed s (headers ~end_headers:false 1 (String.sub blk 0 half));
  Alcotest.(check int) "held while the block is open" 0 (WS.spares ws.blocks);
  feed s (continuation 1 (String.sub blk half (String.length blk - half)));
  Alcotest.(check int) "back once decoded" 1 (WS.spares ws.blocks);
  Alcotest.(check (list string)) "the request" [ "headers 1 end" ] (events s)

(* The stream table starts small and grows to the streams open at once,
   keeping every open stream's state. *)
let test_streams_grow () =
  let s = start () in
  let n = 3 * H2_stream.initial_capacity in
  for i = 0 to n - 1 do
    feed s (request ~end_stream:false ((2 * i) + 1) (post ()))
  done;
  Alcotest.(check int) "all open" n (C.active_streams s.c);
  for i = 0 to n - 1 do
    Alcotest.(check int) "state" H2_stream.open_ (C.stream_state s.c ~stream:((2 * i) + 1))
  done;
  feed s (data ~end_stream:true 1 "x");
  Alcotest.(check int) "the first one half-closed" H2_stream.half_closed_remote (C.stream_state s.c ~stream:1)

let test_workspace_sizes () =
  let ws = WS.create () in
  let config = { H2_config.default with max_header_list_size = 4096 } in
  Alcotest.check_raises "other sizes" (Invalid_argument "Httpz.H2_connection.create: workspace for other sizes")
    (fun () -> ignore (C.create ~config ~workspace:ws ()))

(* Zero allocation with the pools in play: two connections sharing a
   workspace, each serving a request per run; their queues go to the pool
   and come back every run. *)
let shared_steady () =
  let ws = WS.create () in
  let a = start ~workspace:ws () and b = start ~workspace:ws () in
  let resp = Bigstring.of_string "hello" and out = Bigstring.create 65536 in
  let reqs = Array.init 2 (fun _ -> Bigstring.create 4096) in
  let sid = ref 1 and now = ref 0 in
  let one inbuf =
    (* the request, and the connection window back for its response *)
    let r = request !sid (get ()) ^ window_update 0 5 in
    Bigstring.blit_from_string r ~src_off:0 inbuf ~dst_off:0 ~len:(String.length r);
    String.length r
  in
  let lens = [| one reqs.(0); one reqs.(1) |] in
  let set_sid buf id =
    Bigstring.unsafe_set buf 5 (Char.unsafe_chr ((id lsr 24) land 0x7f));
    Bigstring.unsafe_set buf 6 (Char.unsafe_chr ((id lsr 16) land 0xff));
    Bigstring.unsafe_set buf 7 (Char.unsafe_chr ((id lsr 8) land 0xff));
    Bigstring.unsafe_set buf 8 (Char.unsafe_chr (id land 0xff))
  in
  let serve_one c i =
    set_sid reqs.(i) !sid;
    (match C.received c reqs.(i) ~off:0 ~len:lens.(i) ~now:!now with C.Headers -> () | _ -> failwith "no head");
    let k = C.consumed_bytes c in
    if C.received c reqs.(i) ~off:k ~len:(lens.(i) - k) ~now:!now <> C.Need_more then failwith "window";
    C.start_response c ~stream:!sid ~status:200;
    C.header_int c Header_name.Content_length 5;
    ignore (C.send_headers c ~end_stream:false);
    ignore (C.send_data c ~stream:!sid resp ~off:0 ~len:5 ~end_stream:true);
    while C.next_output c out ~off:0 ~len:65536 > 0 do () done;
    if C.active_streams c <> 0 || C.has_output c then failwith "not idle"
  in
  let run () =
    now := !now + 1000 (* a new abuse-counting window *);
    serve_one a.c 0;
    serve_one b.c 1;
    sid := !sid + 2
  in
  run ();
  run

(* Zero allocation over TLS's output path: a 20000-byte external body per
   run, its DATA frames sized to the room left in a 16 KiB buffer, the
   bytes "read" right after each header. *)
let inline_external () =
  let s = start () in
  let r = request 1 (get ()) ^ window_update 0 20000 in
  let inbuf = Bigstring.of_string r and len = String.length r in
  let out = Bigstring.create 16384 in
  let sid = ref 1 and now = ref 0 in
  let run () =
    now := !now + 1000;
    Bigstring.unsafe_set inbuf 6 (Char.unsafe_chr ((!sid lsr 16) land 0xff));
    Bigstring.unsafe_set inbuf 7 (Char.unsafe_chr ((!sid lsr 8) land 0xff));
    Bigstring.unsafe_set inbuf 8 (Char.unsafe_chr (!sid land 0xff));
    (match C.received s.c inbuf ~off:0 ~len ~now:!now with C.Headers -> () | _ -> failwith "no head");
    let k = C.consumed_bytes s.c in
    if C.received s.c inbuf ~off:k ~len:(len - k) ~now:!now <> C.Need_more then failwith "window";
    C.start_response s.c ~stream:!sid ~status:200;
    ignore (C.send_headers s.c ~end_stream:false);
    ignore (C.send_data_external s.c ~stream:!sid ~offset:0 ~len:20000 ~end_stream:true);
    let body = ref 0 and go = ref true in
    while !go do
      let pos = ref 0 and more = ref true in
      while !more do
        pos := !pos + C.next_output_inline s.c out ~off:!pos ~len:(16384 - !pos);
        let ext = C.output_external_len s.c in
        if ext = 0 then more := false
        else begin
          if !pos + ext > 16384 then failwith "frame beyond the room";
          body := !body + ext;
          pos := !pos + ext
        end
      done;
      if !pos = 0 then go := false
    done;
    if !body <> 20000 || C.active_streams s.c <> 0 then failwith "body";
    sid := !sid + 2
  in
  run ();
  run

let tests =
  let q name f = Alcotest.test_case name `Quick f in
  [
    q "frame queue pooled" test_queue_pooled; q "CONTINUATION buffer pooled" test_block_pooled;
    q "stream table grows" test_streams_grow; q "workspace sizes checked" test_workspace_sizes;
  ]
