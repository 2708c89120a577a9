(* The steady path of an HTTP/2 connection, for the zero-allocation cases:
   per run a new stream's request head, two 16 KiB DATA frames and an empty
   END_STREAM one, a connection WINDOW_UPDATE and a PING in; the response
   HEADERS and DATA, the PING ACK and the stream's WINDOW_UPDATE out. *)

open Httpz
open H2conn_client
module C = H2_connection

(* {1 Zero allocation: one request, body in, response out, per run} *)

let steady () =
  let s = start () in
  let req = request ~end_stream:false 1 (get ~extra:[ ("user-agent", "curl/8"); ("accept", "*/*") ] ()) in
  let body = data 1 (String.make 16384 'a') ^ data 1 (String.make 16384 'b') ^ data ~end_stream:true 1 "" in
  let wu = window_update 0 11 (* the response body back *) in
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
    (* every run ends its stream: nothing piles up behind a dry window *)
    if C.active_streams s.c <> 0 then failwith "stream left open";
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



(* {1 The longer way: CONTINUATION, trailers, a reset stream} Per run
   stream [n]: HEADERS without END_HEADERS, CONTINUATION, DATA, trailers;
   stream [n + 2]: HEADERS then the client's RST_STREAM (counted as a
   rapid reset: the clock moves a window per run); a WINDOW_UPDATE giving
   back the response's 4 bytes. *)
let long_way () =
  let s = start () in
  let b = block (post ~extra:[ ("content-type", "text/plain") ] ()) in
  let split = String.length b / 2 in
  let frames =
    [
      (headers ~end_stream:false ~end_headers:false 1 (String.sub b 0 split), 0);
      (continuation 1 (String.sub b split (String.length b - split)), 0);
      (data 1 "payload", 0);
      (headers 1 (block [ ("x-checksum", "42") ]), 0);
      (request ~end_stream:false 3 (get ()), 2);
      (rst 3 H2_error.Cancel, 2);
      (* the 4 bytes of the response back, or the send window runs dry *)
      (window_update 0 4, -1);
    ]
  in
  let all = String.concat "" (List.map fst frames) in
  let inbuf = Bigstring.of_string all and len = String.length all in
  let starts =
    let off = ref 0 in
    Array.of_list
      (List.map
         (fun (f, delta) ->
           let o = !off in
           off := !off + String.length f;
           (o, delta))
         frames)
  in
  let resp = Bigstring.of_string "done" in
  let out = Bigstring.create 65536 in
  let sid = ref 1 and now = ref 0 and trailers = ref 0 and resets = ref 0 in
  let run () =
    for i = 0 to Array.length starts - 1 do
      let off, delta = starts.(i) in
      let id = if delta < 0 then 0 else !sid + delta in
      Bigstring.unsafe_set inbuf (off + 5) (Char.unsafe_chr ((id lsr 24) land 0x7f));
      Bigstring.unsafe_set inbuf (off + 6) (Char.unsafe_chr ((id lsr 16) land 0xff));
      Bigstring.unsafe_set inbuf (off + 7) (Char.unsafe_chr ((id lsr 8) land 0xff));
      Bigstring.unsafe_set inbuf (off + 8) (Char.unsafe_chr (id land 0xff))
    done;
    now := !now + 1000;
    let pos = ref 0 and go = ref true in
    while !go do
      match C.received s.c inbuf ~off:!pos ~len:(len - !pos) ~now:!now with
      | C.Need_more -> go := false
      | Connection_error -> failwith (C.reason s.c)
      | ev ->
          (match ev with
          | C.Data -> C.consumed s.c ~stream:!sid (C.event_data_len s.c)
          | Trailers -> incr trailers
          | Reset -> incr resets
          | _ -> ());
          pos := !pos + C.consumed_bytes s.c
    done;
    C.start_response s.c ~stream:!sid ~status:201;
    ignore (C.send_headers s.c ~end_stream:false);
    ignore (C.send_data s.c ~stream:!sid resp ~off:0 ~len:4 ~end_stream:true);
    while C.next_output s.c out ~off:0 ~len:65536 > 0 do () done;
    if C.active_streams s.c <> 0 then failwith "stream left open";
    sid := !sid + 4
  in
  run ();
  if !trailers <> 1 || !resets <> 1 || C.active_streams s.c <> 0 then failwith "not the expected exchange";
  run
