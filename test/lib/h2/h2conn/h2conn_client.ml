(* The test's side of a connection: frames a client would send, built with
   our writers (and a hand-rolled HPACK literal encoder, so a test can send
   fields our encoder refuses), and a session that feeds them to
   H2_connection and decodes what it answers with our own frame reader. *)

open Httpz
module C = H2_connection
module F = H2_frame
module W = H2_write

let frame f =
  let buf = Bigstring.create 70000 in
  let o = f buf in
  Bigstring.sub_string buf ~off:0 ~len:o

let raw ~typ ~flags ~sid payload =
  frame (fun buf ->
      let o = W.frame_header buf ~off:0 ~length:(String.length payload) ~type_code:typ ~flags ~stream_id:sid in
      Bigstring.blit_from_string payload ~src_off:0 buf ~dst_off:o ~len:(String.length payload);
      o + String.length payload)

let settings entries =
  frame (fun buf ->
      W.settings buf ~off:0 ~ids:(Array.of_list (List.map fst entries))
        ~values:(Array.of_list (List.map snd entries)))

let settings_ack = frame (fun buf -> W.settings_ack buf ~off:0)
let ping n = frame (fun buf -> W.ping_int buf ~off:0 ~ack:false n)
let window_update sid inc = frame (fun buf -> W.window_update buf ~off:0 ~stream_id:sid ~increment:inc)
let rst sid code = frame (fun buf -> W.rst_stream buf ~off:0 ~stream_id:sid ~code)
let priority_update sid v = frame (fun buf -> W.priority_update buf ~off:0 ~prioritized_stream_id:sid v)

let priority sid ~dep =
  frame (fun buf -> W.priority buf ~off:0 ~stream_id:sid ~exclusive:false ~dependency:dep ~weight:16)

let data ?(end_stream = false) sid payload =
  raw ~typ:0 ~flags:(if end_stream then 1 else 0) ~sid payload

(* HPACK literal without indexing, new name, no Huffman (RFC 7541 §6.2.2). *)
let block fields =
  let buf = Bigstring.create 100_000 in
  let o = ref 0 in
  let str s =
    o := Hpack_encoder.encode_integer buf ~off:!o ~prefix:7 ~first:0 (String.length s);
    Bigstring.blit_from_string s ~src_off:0 buf ~dst_off:!o ~len:(String.length s);
    o := !o + String.length s
  in
  List.iter
    (fun (n, v) ->
      Bigstring.unsafe_set buf !o '\000';
      incr o;
      str n;
      str v)
    fields;
  Bigstring.sub_string buf ~off:0 ~len:!o

let headers ?(end_stream = true) ?(end_headers = true) sid block =
  raw ~typ:1 ~flags:((if end_stream then 1 else 0) lor if end_headers then 4 else 0) ~sid block

let continuation ?(end_headers = true) sid block = raw ~typ:9 ~flags:(if end_headers then 4 else 0) ~sid block

let get ?(path = "/") ?(extra = []) () =
  [ (":method", "GET"); (":scheme", "https"); (":path", path); (":authority", "example.com") ] @ extra

let post ?(extra = []) () =
  [ (":method", "POST"); (":scheme", "https"); (":path", "/up"); (":authority", "example.com") ] @ extra

let request ?end_stream sid fields = headers ?end_stream sid (block fields)

(* {1 The session} *)

type session = {
  c : C.t;
  inbuf : Bigstring.t;
  mutable inlen : int;
  mutable now : int;
  mutable events : string list;  (* newest first *)
  mutable auto_consume : bool;
  mutable on_headers : session -> int -> unit;
  mutable on_data : session -> int -> string -> bool -> unit;
  outbuf : Bigstring.t;
  decoder : Hpack_decoder.t;
  reader : F.t;
  mutable out_pending : string;  (* output bytes not yet a whole frame *)
}

let code e = H2_error.to_string e

let describe_event s ev =
  let c = s.c in
  let sid = C.event_stream c in
  let es = if C.event_end_stream c then " end" else "" in
  match ev with
  | C.Need_more -> "need_more"
  | Headers -> Printf.sprintf "headers %d%s" sid es
  | Trailers -> Printf.sprintf "trailers %d" sid
  | Data ->
      Printf.sprintf "data %d %S%s" sid
        (Bigstring.sub_string s.inbuf ~off:(C.event_data_off c) ~len:(C.event_data_len c))
        es
  | Reset -> Printf.sprintf "reset %d %s" sid (code (C.event_error c))
  | Goaway -> Printf.sprintf "goaway %d %s" (C.goaway_last_stream c) (code (C.event_error c))
  | Connection_error -> Printf.sprintf "conn_error %s" (code (C.event_error c))

let create ?config ?workspace () =
  {
    c = C.create ?config ?workspace ();
    inbuf = Bigstring.create (1 lsl 20);
    inlen = 0;
    now = 0;
    events = [];
    auto_consume = true;
    on_headers = (fun _ _ -> ());
    on_data = (fun _ _ _ _ -> ());
    outbuf = Bigstring.create (1 lsl 20);
    decoder = Hpack_decoder.create ();
    reader = F.create ~max_frame_size:H2_settings.max_max_frame_size ();
    out_pending = "";
  }

(* Appends [bytes] to the unconsumed input and runs [received] until
   [Need_more] or [Connection_error]. *)
let feed s bytes =
  Bigstring.blit_from_string bytes ~src_off:0 s.inbuf ~dst_off:s.inlen ~len:(String.length bytes);
  s.inlen <- s.inlen + String.length bytes;
  let pos = ref 0 and go = ref true in
  while !go do
    let ev = C.received s.c s.inbuf ~off:!pos ~len:(s.inlen - !pos) ~now:s.now in
    let n = C.consumed_bytes s.c in
    if n < 0 || n > s.inlen - !pos then Alcotest.failf "consumed %d of %d" n (s.inlen - !pos);
    (match ev with
    | C.Need_more -> go := false
    | Connection_error ->
        s.events <- describe_event s ev :: s.events;
        go := false
    | _ -> s.events <- describe_event s ev :: s.events);
    (match ev with
    | C.Headers -> s.on_headers s (C.event_stream s.c)
    | Data ->
        let sid = C.event_stream s.c and len = C.event_data_len s.c in
        s.on_data s sid (Bigstring.sub_string s.inbuf ~off:(C.event_data_off s.c) ~len) (C.event_end_stream s.c);
        if s.auto_consume then C.consumed s.c ~stream:sid len
    | _ -> ());
    pos := !pos + n
  done;
  Bigstring.blit ~src:s.inbuf ~src_off:!pos ~dst:s.inbuf ~dst_off:0 ~len:(s.inlen - !pos);
  s.inlen <- s.inlen - !pos

let events s =
  let e = List.rev s.events in
  s.events <- [];
  e

let flags_string r names =
  String.concat ""
    (List.filter_map (fun (bit, n) -> if F.has_flag r bit then Some (" " ^ n) else None) names)

let status_of s buf off len =
  Hpack_decoder.start_block s.decoder ~off ~len;
  let st = ref "" and fields = ref [] in
  let out = Bigstring.create 70000 in
  let go = ref true in
  while !go do
    match Hpack_decoder.next_field s.decoder buf ~out with
    | Field ->
        let n = Span.to_string out (Hpack_decoder.name s.decoder)
        and v = Span.to_string out (Hpack_decoder.value s.decoder) in
        if n = ":status" then st := v else fields := (n ^ "=" ^ v) :: !fields
    | End -> go := false
    | Error -> st := "hpack-error"; go := false
  done;
  String.concat " " (!st :: List.rev !fields)

let describe_frame s buf off =
  let r = s.reader in
  let p = F.payload_off r and pl = F.payload_len r and sid = F.stream_id r in
  ignore off;
  match F.frame_type r with
  | F.Settings -> if F.has_flag r F.flag_ack then "SETTINGS ACK" else Printf.sprintf "SETTINGS %d" (F.settings_count r)
  | Ping -> Printf.sprintf "PING%s %s" (flags_string r [ (F.flag_ack, "ACK") ]) (Bigstring.sub_string buf ~off:p ~len:8)
  | Window_update -> Printf.sprintf "WINDOW_UPDATE %d %d" sid (F.window_increment r)
  | Rst_stream -> Printf.sprintf "RST_STREAM %d %s" sid (code (H2_error.of_int (F.error_code_raw r)))
  | Goaway -> Printf.sprintf "GOAWAY %d %s" (F.last_stream_id r) (code (H2_error.of_int (F.error_code_raw r)))
  | Headers ->
      Printf.sprintf "HEADERS %d%s%s" sid
        (flags_string r [ (F.flag_end_stream, "ES") ])
        (if F.has_flag r F.flag_end_headers then " " ^ status_of s buf p pl else " (continued)")
  | Continuation -> Printf.sprintf "CONTINUATION %d%s" sid (flags_string r [ (F.flag_end_headers, "EH") ])
  | Data -> Printf.sprintf "DATA %d %d%s" sid pl (flags_string r [ (F.flag_end_stream, "ES") ])
  | t -> F.frame_type_to_string t

(* Everything the connection wants to send now, as frame descriptions.
   External bodies are filled with 'x'. [limit] stops after that many bytes
   (a slow reader). *)
let output ?(limit = max_int) s =
  let bytes = Buffer.create 1024 in
  Buffer.add_string bytes s.out_pending;
  let total = ref 0 and go = ref true in
  while !go && !total < limit do
    let room = min (Bigstring.length s.outbuf) (limit - !total) in
    let n = C.next_output s.c s.outbuf ~off:0 ~len:room in
    Buffer.add_string bytes (Bigstring.sub_string s.outbuf ~off:0 ~len:n);
    let ext = C.output_external_len s.c in
    Buffer.add_string bytes (String.make ext 'x');
    total := !total + n + ext;
    if n = 0 then go := false
  done;
  let all = Buffer.contents bytes in
  let buf = Bigstring.of_string all in
  let frames = ref [] and pos = ref 0 and go = ref true in
  while !go do
    match F.read s.reader buf ~off:!pos ~len:(String.length all - !pos) with
    | F.Frame ->
        frames := describe_frame s buf !pos :: !frames;
        pos := !pos + F.consumed s.reader
    | Partial -> go := false
    | _ -> Alcotest.failf "our output holds a bad frame: %s" (F.reason s.reader)
  done;
  s.out_pending <- String.sub all !pos (String.length all - !pos);
  List.rev !frames

(* Preface + empty SETTINGS, our preamble read and dropped. *)
let start ?config ?workspace ?(client_settings = []) () =
  let s = create ?config ?workspace () in
  feed s (F.preface ^ settings client_settings);
  ignore (output s);
  s

(* Everything the connection wants to send now, as raw bytes. *)
let raw_output s =
  let b = Buffer.create 4096 in
  let go = ref true in
  while !go do
    let n = C.next_output s.c s.outbuf ~off:0 ~len:(Bigstring.length s.outbuf) in
    Buffer.add_string b (Bigstring.sub_string s.outbuf ~off:0 ~len:n);
    Buffer.add_string b (String.make (C.output_external_len s.c) 'x');
    if n = 0 then go := false
  done;
  Buffer.contents b

(* {1 Checks} *)

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

