(* Tests for the HTTP/2 frame codec: Httpz.H2_frame (reader), H2_write,
   H2_error, H2_settings and H2_priority. Frames are modelled as a variant,
   written with H2_write (or by hand where a server never writes that
   shape), read back, and compared; every RFC 9113 rule the reader enforces
   has a frame that breaks it; the reader's answer must not depend on how
   the bytes are split; and Python's hyperframe must agree with both sides. *)

open Httpz
module S = Httpz_test_support
module F = H2_frame
module W = H2_write

let fail fmt = Printf.ksprintf failwith fmt
let hex s = String.concat "" (List.map (fun c -> Printf.sprintf "%02x" (Char.code c)) (List.of_seq (String.to_seq s)))

let unhex h =
  String.init (String.length h / 2) (fun i -> Char.chr (int_of_string ("0x" ^ String.sub h (2 * i) 2)))

(* ---------- a model of frames ---------- *)

type prio = { excl : bool; dep : int; weight : int (* 1..256 *) }

type frame =
  | Data of { sid : int; end_stream : bool; data : string; pad : int option }
  | Headers of {
      sid : int; end_stream : bool; end_headers : bool; block : string; pad : int option;
      prio : prio option }
  | Priority of { sid : int; p : prio }
  | Rst of { sid : int; code : int }
  | Settings of { ack : bool; entries : (int * int) list }
  | Push of { sid : int; end_headers : bool; promised : int; block : string; pad : int option }
  | Ping of { ack : bool; data : string }
  | Goaway of { last : int; code : int; debug : string }
  | Window of { sid : int; inc : int }
  | Cont of { sid : int; end_headers : bool; block : string }
  | Prio_update of { prioritized : int; value : string }
  | Other of { typ : int; flags : int; sid : int; payload : string }

let u32 n = String.init 4 (fun i -> Char.chr ((n lsr (8 * (3 - i))) land 0xff))
let b c = if c then 1 else 0

(* A raw frame: header by H2_write.frame_header, payload as given. *)
let raw ~typ ~flags ~sid payload =
  let buf = Bigstring.create (9 + String.length payload) in
  let o = W.frame_header buf ~off:0 ~length:(String.length payload) ~type_code:typ ~flags ~stream_id:sid in
  Bigstring.blit_from_string payload ~src_off:0 buf ~dst_off:o ~len:(String.length payload);
  Bigstring.to_string buf

let prio_bytes p = u32 (p.dep lor (if p.excl then 0x8000_0000 else 0)) ^ String.make 1 (Char.chr (p.weight - 1))

let padded pad inner =
  match pad with None -> inner | Some n -> String.make 1 (Char.chr n) ^ inner ^ String.make n '\000'

(* Writes with H2_write wherever it has a writer for the shape. *)
let encode f =
  let buf = Bigstring.create 70000 in
  let out o = Bigstring.sub_string buf ~off:0 ~len:o in
  let with_payload o s =
    Bigstring.blit_from_string s ~src_off:0 buf ~dst_off:o ~len:(String.length s);
    out (o + String.length s)
  in
  match f with
  | Data { sid; end_stream; data; pad = None } ->
      with_payload (W.data_header buf ~off:0 ~stream_id:sid ~length:(String.length data) ~end_stream) data
  | Data { sid; end_stream; data; pad } ->
      raw ~typ:0 ~flags:(b end_stream lor 0x8) ~sid (padded pad data)
  | Headers { sid; end_stream; end_headers; block; pad = None; prio = None } ->
      with_payload
        (W.headers_header buf ~off:0 ~stream_id:sid ~length:(String.length block) ~end_stream ~end_headers)
        block
  | Headers { sid; end_stream; end_headers; block; pad; prio } ->
      let pb = match prio with None -> "" | Some p -> prio_bytes p in
      let flags =
        b end_stream lor (4 * b end_headers) lor (if pad <> None then 8 else 0)
        lor if prio <> None then 0x20 else 0
      in
      let payload =
        match pad with None -> pb ^ block | Some n -> String.make 1 (Char.chr n) ^ pb ^ block ^ String.make n '\000'
      in
      raw ~typ:1 ~flags ~sid payload
  | Priority { sid; p } ->
      out (W.priority buf ~off:0 ~stream_id:sid ~exclusive:p.excl ~dependency:p.dep ~weight:p.weight)
  | Rst { sid; code } when H2_error.is_known code ->
      out (W.rst_stream buf ~off:0 ~stream_id:sid ~code:(H2_error.of_int code))
  | Rst { sid; code } -> raw ~typ:3 ~flags:0 ~sid (u32 code)
  | Settings { ack = true; _ } -> out (W.settings_ack buf ~off:0)
  | Settings { ack = false; entries } ->
      out
        (W.settings buf ~off:0 ~ids:(Array.of_list (List.map fst entries))
           ~values:(Array.of_list (List.map snd entries)))
  | Push { sid; end_headers; promised; block; pad } ->
      let flags = (4 * b end_headers) lor if pad <> None then 8 else 0 in
      let payload =
        match pad with
        | None -> u32 promised ^ block
        | Some n -> String.make 1 (Char.chr n) ^ u32 promised ^ block ^ String.make n '\000'
      in
      raw ~typ:5 ~flags ~sid payload
  | Ping { ack; data } ->
      out (W.ping buf ~off:0 ~ack (Bigstring.of_string data) ~src_off:0)
  | Goaway { last; code; debug } when H2_error.is_known code ->
      out (W.goaway buf ~off:0 ~last_stream_id:last ~code:(H2_error.of_int code) ~debug)
  | Goaway { last; code; debug } -> raw ~typ:7 ~flags:0 ~sid:0 (u32 last ^ u32 code ^ debug)
  | Window { sid; inc } -> out (W.window_update buf ~off:0 ~stream_id:sid ~increment:inc)
  | Cont { sid; end_headers; block } ->
      with_payload
        (W.continuation_header buf ~off:0 ~stream_id:sid ~length:(String.length block) ~end_headers)
        block
  | Prio_update { prioritized; value } ->
      out (W.priority_update buf ~off:0 ~prioritized_stream_id:prioritized value)
  | Other { typ; flags; sid; payload } -> raw ~typ ~flags ~sid payload

(* The model of what the reader found, from its state after [Frame]. *)
let decode r buf =
  let sub off len = Bigstring.sub_string buf ~off ~len in
  let payload () = sub (F.payload_off r) (F.payload_len r) in
  let has = F.has_flag r in
  let pad () = if has F.flag_padded then Some (F.pad_length r) else None in
  let sid = F.stream_id r in
  let prio () =
    { excl = F.priority_exclusive r; dep = F.priority_dependency r; weight = F.priority_weight r }
  in
  match F.frame_type r with
  | Data -> Data { sid; end_stream = has F.flag_end_stream; data = payload (); pad = pad () }
  | Headers ->
      Headers
        { sid; end_stream = has F.flag_end_stream; end_headers = has F.flag_end_headers;
          block = payload (); pad = pad (); prio = (if has F.flag_priority then Some (prio ()) else None) }
  | Priority -> Priority { sid; p = prio () }
  | Rst_stream -> Rst { sid; code = F.error_code_raw r }
  | Settings ->
      Settings
        { ack = has F.flag_ack;
          entries = List.init (F.settings_count r) (fun i -> (F.setting_code buf r i, F.setting_value buf r i)) }
  | Push_promise ->
      Push { sid; end_headers = has F.flag_end_headers; promised = F.promised_stream_id r; block = payload (); pad = pad () }
  | Ping -> Ping { ack = has F.flag_ack; data = payload () }
  | Goaway -> Goaway { last = F.last_stream_id r; code = F.error_code_raw r; debug = payload () }
  | Window_update -> Window { sid; inc = F.window_increment r }
  | Continuation -> Cont { sid; end_headers = has F.flag_end_headers; block = payload () }
  | Priority_update -> Prio_update { prioritized = F.prioritized_stream_id r; value = payload () }
  | Unknown -> Other { typ = F.type_code r; flags = F.flags r; sid; payload = payload () }

let show_opt f = function None -> "-" | Some x -> f x
let show_prio p = Printf.sprintf "excl=%d dep=%d weight=%d" (b p.excl) p.dep p.weight

let show = function
  | Data d -> Printf.sprintf "DATA %d es=%b %S pad=%s" d.sid d.end_stream d.data (show_opt string_of_int d.pad)
  | Headers h ->
      Printf.sprintf "HEADERS %d es=%b eh=%b %S pad=%s prio=%s" h.sid h.end_stream h.end_headers h.block
        (show_opt string_of_int h.pad) (show_opt show_prio h.prio)
  | Priority p -> Printf.sprintf "PRIORITY %d %s" p.sid (show_prio p.p)
  | Rst r -> Printf.sprintf "RST %d %d" r.sid r.code
  | Settings s ->
      Printf.sprintf "SETTINGS ack=%b [%s]" s.ack
        (String.concat ";" (List.map (fun (i, v) -> Printf.sprintf "%d=%d" i v) s.entries))
  | Push p -> Printf.sprintf "PUSH %d eh=%b %d %S pad=%s" p.sid p.end_headers p.promised p.block (show_opt string_of_int p.pad)
  | Ping p -> Printf.sprintf "PING ack=%b %S" p.ack p.data
  | Goaway g -> Printf.sprintf "GOAWAY %d %d %S" g.last g.code g.debug
  | Window w -> Printf.sprintf "WINDOW %d %d" w.sid w.inc
  | Cont c -> Printf.sprintf "CONT %d eh=%b %S" c.sid c.end_headers c.block
  | Prio_update p -> Printf.sprintf "PRIO_UPDATE %d %S" p.prioritized p.value
  | Other o -> Printf.sprintf "OTHER type=%d flags=%d %d %S" o.typ o.flags o.sid o.payload

let frame_t = Alcotest.testable (fun ppf f -> Format.pp_print_string ppf (show f)) ( = )

(* ---------- a session-like driver ---------- *)

type event =
  | Got of frame
  | Stream_err of H2_error.t * int  (* code, stream *)
  | Conn_err of H2_error.t

let show_event = function
  | Got f -> show f
  | Stream_err (e, s) -> Printf.sprintf "stream error %s on %d" (H2_error.to_string e) s
  | Conn_err e -> Printf.sprintf "connection error %s" (H2_error.to_string e)

(* Reads every frame of [unread] that is complete, as a session does after
   bytes arrive, from a fresh buffer that holds [unread] at an offset
   inside garbage. Returns the events and how many bytes were used; checks
   the per-call contract on the way. *)
let read_available ?(garbage = '\r') r unread =
  let off = 5 in
  let buf = S.bigstring_at ~garbage ~off unread in
  let stop = off + String.length unread in
  let pos = ref off and events = ref [] and go = ref true and dead = ref false in
  while !go do
    let len = stop - !pos in
    match F.read r buf ~off:!pos ~len with
    | Frame ->
        let c = F.consumed r in
        if c <> F.needed r || c > len || c < 9 then fail "Frame consumed %d needed %d of %d" c (F.needed r) len;
        let po = F.payload_off r and pl = F.payload_len r in
        if po < !pos + 9 || pl < 0 || po + pl > !pos + c then fail "payload [%d,+%d) outside the frame" po pl;
        events := Got (decode r buf) :: !events;
        pos := !pos + c
    | Partial ->
        if F.needed r <= len then fail "Partial with %d needed and %d given" (F.needed r) len;
        go := false
    | Stream_error ->
        let c = F.consumed r in
        if c <> F.needed r || c > len then fail "Stream_error consumed %d of %d" c len;
        events := Stream_err (F.error r, F.stream_id r) :: !events;
        pos := !pos + c
    | Connection_error ->
        if F.consumed r <> 0 then fail "Connection_error consumed %d" (F.consumed r);
        events := Conn_err (F.error r) :: !events;
        dead := true;
        go := false
  done;
  (List.rev !events, !pos - off, !dead)

(* Feeds [chunks] in order; the outcome is every event plus the number of
   bytes never consumed (everything after a connection error). *)
let run ?(r = F.create ()) chunks =
  let pending = ref "" and events = ref [] and dead = ref false in
  List.iter
    (fun chunk ->
      pending := !pending ^ chunk;
      if not !dead then begin
        let ev, used, d = read_available r !pending in
        events := !events @ ev;
        dead := d;
        pending := String.sub !pending used (String.length !pending - used)
      end)
    chunks;
  (!events, String.length !pending)

let outcome_t =
  Alcotest.testable
    (fun ppf (ev, left) ->
      Format.fprintf ppf "[%s] left=%d" (String.concat "; " (List.map show_event ev)) left)
    ( = )

let split_at s k = [ String.sub s 0 k; String.sub s k (String.length s - k) ]
let bytewise s = List.init (String.length s) (fun i -> String.make 1 s.[i])

(* ---------- sample frames ---------- *)

let p1 = { excl = true; dep = 11; weight = 256 }
let p2 = { excl = false; dep = 0; weight = 1 }

let samples =
  [ Data { sid = 1; end_stream = false; data = "hello"; pad = None };
    Data { sid = 3; end_stream = true; data = ""; pad = None };
    Data { sid = 5; end_stream = true; data = "padded"; pad = Some 10 };
    Data { sid = 0x7FFF_FFFF; end_stream = false; data = ""; pad = Some 0 };
    Headers { sid = 1; end_stream = true; end_headers = true; block = "\x82\x86\x84"; pad = None; prio = None };
    Headers { sid = 3; end_stream = false; end_headers = false; block = "abc"; pad = Some 3; prio = None };
    Headers { sid = 5; end_stream = false; end_headers = true; block = "xyz"; pad = None; prio = Some p1 };
    Headers { sid = 7; end_stream = true; end_headers = true; block = ""; pad = Some 255; prio = Some p2 };
    Priority { sid = 9; p = p1 };
    Priority { sid = 9; p = p2 };
    Rst { sid = 1; code = 8 };
    Rst { sid = 1; code = 0xFFFF_FFFF };
    Settings { ack = false; entries = [] };
    Settings { ack = true; entries = [] };
    Settings
      { ack = false;
        entries = [ (1, 0); (2, 0); (3, 100); (4, 0x7FFF_FFFF); (5, 16384); (6, 0xFFFF_FFFF); (8, 1); (9, 1); (0xFFFF, 7) ] };
    Settings { ack = false; entries = [ (5, 0xFF_FFFF); (5, 16384); (2, 1) ] };
    Push { sid = 1; end_headers = true; promised = 2; block = "pp"; pad = None };
    Push { sid = 1; end_headers = false; promised = 0x7FFF_FFFF; block = ""; pad = Some 2 };
    Ping { ack = false; data = "12345678" };
    Ping { ack = true; data = "\000\255\000\255abcd" };
    Goaway { last = 0; code = 0; debug = "" };
    Goaway { last = 0x7FFF_FFFF; code = 11; debug = "calm down" };
    Goaway { last = 5; code = 0x1234_5678; debug = "" };
    Window { sid = 0; inc = 1 };
    Window { sid = 3; inc = 0x7FFF_FFFF };
    Cont { sid = 1; end_headers = true; block = "more" };
    Cont { sid = 1; end_headers = false; block = "" };
    Prio_update { prioritized = 1; value = "u=1, i" };
    Prio_update { prioritized = 0x7FFF_FFFF; value = "" };
    Other { typ = 0x0a; flags = 0xff; sid = 0; payload = "alt-svc" };
    Other { typ = 0xff; flags = 0; sid = 0x7FFF_FFFF; payload = "" } ]

let test_round_trip_samples () =
  List.iter
    (fun f ->
      let s = encode f in
      Alcotest.check outcome_t (show f) ([ Got f ], 0) (run [ s ]))
    samples

let test_reserved_bit () =
  (* the R bit is ignored on receipt: stream 1 with R set is stream 1 *)
  let s = Bytes.of_string (encode (Data { sid = 1; end_stream = false; data = "x"; pad = None })) in
  Bytes.set s 5 (Char.chr (Char.code (Bytes.get s 5) lor 0x80));
  Alcotest.check outcome_t "R bit" ([ Got (Data { sid = 1; end_stream = false; data = "x"; pad = None }) ], 0)
    (run [ Bytes.to_string s ])

(* Undefined flags are ignored: PRIORITY (0x20) on DATA does not make the
   reader look for priority fields, PADDED on PING means nothing. *)
let test_undefined_flags () =
  let d = raw ~typ:0 ~flags:0xf6 ~sid:1 "abc" in
  let r = F.create () in
  let buf = Bigstring.of_string d in
  Alcotest.(check bool) "DATA frame" true (F.read r buf ~off:0 ~len:(String.length d) = Frame);
  Alcotest.(check string) "payload" "abc" (Bigstring.sub_string buf ~off:(F.payload_off r) ~len:(F.payload_len r));
  Alcotest.(check int) "flags kept raw" 0xf6 (F.flags r);
  let p = raw ~typ:6 ~flags:0x08 ~sid:0 "abcdefgh" in
  Alcotest.check outcome_t "PING" ([ Got (Ping { ack = false; data = "abcdefgh" }) ], 0) (run [ p ])

(* ---------- RFC 9113 rules: code and classification ---------- *)

type expect = Conn of H2_error.t | Strm of H2_error.t | Ok_frame

let setting id v = String.init 2 (fun i -> Char.chr ((id lsr (8 * (1 - i))) land 0xff)) ^ u32 v

let rules =
  let pe = H2_error.Protocol_error and fse = H2_error.Frame_size_error in
  [ ("DATA on stream 0", raw ~typ:0 ~flags:0 ~sid:0 "x", Conn pe);
    ("HEADERS on stream 0", raw ~typ:1 ~flags:4 ~sid:0 "x", Conn pe);
    ("PRIORITY on stream 0", raw ~typ:2 ~flags:0 ~sid:0 (prio_bytes p2), Conn pe);
    ("RST_STREAM on stream 0", raw ~typ:3 ~flags:0 ~sid:0 (u32 0), Conn pe);
    ("PUSH_PROMISE on stream 0", raw ~typ:5 ~flags:4 ~sid:0 (u32 2), Conn pe);
    ("CONTINUATION on stream 0", raw ~typ:9 ~flags:4 ~sid:0 "x", Conn pe);
    ("SETTINGS on a stream", raw ~typ:4 ~flags:0 ~sid:1 "", Conn pe);
    ("SETTINGS ACK on a stream", raw ~typ:4 ~flags:1 ~sid:1 "", Conn pe);
    ("SETTINGS length 5", raw ~typ:4 ~flags:0 ~sid:0 "\000\001\000\000\000", Conn fse);
    ("SETTINGS length 7", raw ~typ:4 ~flags:0 ~sid:0 (setting 1 0 ^ "\000"), Conn fse);
    ("SETTINGS ACK with payload", raw ~typ:4 ~flags:1 ~sid:0 (setting 1 0), Conn fse);
    ("SETTINGS_ENABLE_PUSH 2", raw ~typ:4 ~flags:0 ~sid:0 (setting 2 2), Conn pe);
    ("SETTINGS_ENABLE_PUSH 1", raw ~typ:4 ~flags:0 ~sid:0 (setting 2 1), Ok_frame);
    ("SETTINGS_INITIAL_WINDOW_SIZE 2^31", raw ~typ:4 ~flags:0 ~sid:0 (setting 4 0x8000_0000),
     Conn Flow_control_error);
    ("SETTINGS_INITIAL_WINDOW_SIZE 2^31-1", raw ~typ:4 ~flags:0 ~sid:0 (setting 4 0x7FFF_FFFF), Ok_frame);
    ("SETTINGS_MAX_FRAME_SIZE 16383", raw ~typ:4 ~flags:0 ~sid:0 (setting 5 16383), Conn pe);
    ("SETTINGS_MAX_FRAME_SIZE 2^24", raw ~typ:4 ~flags:0 ~sid:0 (setting 5 0x100_0000), Conn pe);
    ("SETTINGS_MAX_FRAME_SIZE 2^24-1", raw ~typ:4 ~flags:0 ~sid:0 (setting 5 0xFF_FFFF), Ok_frame);
    ("bad value after a good entry", raw ~typ:4 ~flags:0 ~sid:0 (setting 3 10 ^ setting 5 0), Conn pe);
    ("SETTINGS_ENABLE_CONNECT_PROTOCOL 2", raw ~typ:4 ~flags:0 ~sid:0 (setting 8 2), Conn pe);
    ("SETTINGS_NO_RFC7540_PRIORITIES 2", raw ~typ:4 ~flags:0 ~sid:0 (setting 9 2), Conn pe);
    ("unknown setting, any value", raw ~typ:4 ~flags:0 ~sid:0 (setting 0x7 0xFFFF_FFFF), Ok_frame);
    ("PING length 7", raw ~typ:6 ~flags:0 ~sid:0 "1234567", Conn fse);
    ("PING length 9", raw ~typ:6 ~flags:0 ~sid:0 "123456789", Conn fse);
    ("PING on a stream", raw ~typ:6 ~flags:0 ~sid:1 "12345678", Conn pe);
    ("WINDOW_UPDATE length 3", raw ~typ:8 ~flags:0 ~sid:1 "\000\000\001", Conn fse);
    ("WINDOW_UPDATE length 5 on stream 0", raw ~typ:8 ~flags:0 ~sid:0 (u32 1 ^ "\000"), Conn fse);
    ("WINDOW_UPDATE 0 on a stream", raw ~typ:8 ~flags:0 ~sid:3 (u32 0), Strm pe);
    ("WINDOW_UPDATE 0 on the connection", raw ~typ:8 ~flags:0 ~sid:0 (u32 0), Conn pe);
    ("WINDOW_UPDATE R bit alone is 0", raw ~typ:8 ~flags:0 ~sid:3 (u32 0x8000_0000), Strm pe);
    ("RST_STREAM length 3", raw ~typ:3 ~flags:0 ~sid:1 "\000\000\000", Conn fse);
    ("RST_STREAM length 5", raw ~typ:3 ~flags:0 ~sid:1 "\000\000\000\000\000", Conn fse);
    ("PRIORITY length 4", raw ~typ:2 ~flags:0 ~sid:1 (u32 0), Strm fse);
    ("PRIORITY length 6", raw ~typ:2 ~flags:0 ~sid:1 (prio_bytes p2 ^ "x"), Strm fse);
    ("PRIORITY on itself", raw ~typ:2 ~flags:0 ~sid:7 (prio_bytes { p2 with dep = 7 }), Strm pe);
    ("GOAWAY on a stream", raw ~typ:7 ~flags:0 ~sid:1 (u32 0 ^ u32 0), Conn pe);
    ("GOAWAY length 7", raw ~typ:7 ~flags:0 ~sid:0 "1234567", Conn fse);
    ("DATA pad length = payload length", raw ~typ:0 ~flags:8 ~sid:1 "\004abc", Conn pe);
    ("DATA pad length > payload length", raw ~typ:0 ~flags:8 ~sid:1 "\255", Conn pe);
    ("DATA pad length = payload length - 1", raw ~typ:0 ~flags:8 ~sid:1 "\003abc", Ok_frame);
    ("DATA PADDED, empty", raw ~typ:0 ~flags:8 ~sid:1 "", Conn fse);
    ("HEADERS padding too long", raw ~typ:1 ~flags:0xc ~sid:1 "\003ab", Conn pe);
    ("HEADERS padding too long with PRIORITY", raw ~typ:1 ~flags:0x2c ~sid:1 ("\001" ^ prio_bytes p2), Conn pe);
    ("HEADERS PRIORITY, length 4", raw ~typ:1 ~flags:0x24 ~sid:1 "\000\000\000\000", Conn fse);
    ("HEADERS PADDED and PRIORITY, length 5", raw ~typ:1 ~flags:0x2c ~sid:1 "\000\000\000\000\000", Conn fse);
    ("HEADERS PADDED, empty", raw ~typ:1 ~flags:0xc ~sid:1 "", Conn fse);
    ("HEADERS on itself", raw ~typ:1 ~flags:0x24 ~sid:5 (prio_bytes { p1 with dep = 5 } ^ "blk"), Strm pe);
    ("PUSH_PROMISE length 3", raw ~typ:5 ~flags:4 ~sid:1 "\000\000\002", Conn fse);
    ("PUSH_PROMISE PADDED, length 4", raw ~typ:5 ~flags:0xc ~sid:1 (u32 0), Conn fse);
    ("PUSH_PROMISE padding too long", raw ~typ:5 ~flags:0xc ~sid:1 ("\002" ^ u32 2 ^ "x"), Conn pe);
    ("PRIORITY_UPDATE on a stream", raw ~typ:0x10 ~flags:0 ~sid:1 (u32 1), Conn pe);
    ("PRIORITY_UPDATE length 3", raw ~typ:0x10 ~flags:0 ~sid:0 "\000\000\001", Conn fse);
    ("PRIORITY_UPDATE for stream 0", raw ~typ:0x10 ~flags:0 ~sid:0 (u32 0 ^ "u=1"), Conn pe);
    ("unknown type on stream 0", raw ~typ:0xbb ~flags:0xff ~sid:0 "anything", Ok_frame);
    ("frame over SETTINGS_MAX_FRAME_SIZE", raw ~typ:0 ~flags:0 ~sid:1 (String.make 16385 'a'), Conn fse);
    ("SETTINGS over SETTINGS_MAX_FRAME_SIZE", raw ~typ:4 ~flags:0 ~sid:0 (String.concat "" (List.init 2731 (fun _ -> setting 3 1))), Conn fse) ]

let classify r buf len =
  match F.read r buf ~off:0 ~len with
  | Frame -> Ok_frame
  | Stream_error -> Strm (F.error r)
  | Connection_error -> Conn (F.error r)
  | Partial -> fail "Partial on a whole frame"

let show_expect = function
  | Ok_frame -> "frame"
  | Strm e -> "stream error " ^ H2_error.to_string e
  | Conn e -> "connection error " ^ H2_error.to_string e

let expect_t = Alcotest.testable (fun ppf e -> Format.pp_print_string ppf (show_expect e)) ( = )

(* PARTIAL is fine for a rule that needs the payload; any answer given from
   the header alone must be the final one. *)
let classify_header_only r buf =
  match F.read r buf ~off:0 ~len:9 with
  | Partial -> None
  | Frame -> Some Ok_frame
  | Stream_error -> Some (Strm (F.error r))
  | Connection_error -> Some (Conn (F.error r))

let test_rules () =
  List.iter
    (fun (name, bytes, want) ->
      let r = F.create () in
      let buf = Bigstring.of_string bytes in
      Alcotest.check expect_t name want (classify r buf (String.length bytes));
      if want <> Ok_frame && F.reason r = "" then fail "%s: no reason" name;
      (* a refused setting is named in the reason (GOAWAY debug data) *)
      (match String.index_opt name ' ' with
       | Some sp when want <> Ok_frame && String.length name > 9 && String.sub name 0 9 = "SETTINGS_" ->
           let setting = String.sub name 0 sp in
           if S.find_sub (F.reason r) setting < 0 then fail "%s: reason %S" name (F.reason r)
       | _ -> ());
      (* a connection error that the header settles is known from its 9 bytes *)
      match want with
      | Conn _ when String.length bytes > 9 ->
          let header_only = classify_header_only r buf in
          if header_only <> Some want && header_only <> None then
            fail "%s: header alone gives %s" name (match header_only with Some e -> show_expect e | None -> "")
      | _ -> ())
    rules


let test_max_frame_size () =
  let big = raw ~typ:0 ~flags:0 ~sid:1 (String.make 20000 'a') in
  let r = F.create () in
  let buf = Bigstring.of_string big in
  (* refused from the 9 header bytes: no need to buffer the payload *)
  Alcotest.check expect_t "header alone" (Conn Frame_size_error) (classify r buf 9);
  Alcotest.(check int) "nothing consumed" 0 (F.consumed r);
  F.set_max_frame_size r 20000;
  Alcotest.check expect_t "after raising the limit" Ok_frame (classify r buf (String.length big));
  Alcotest.(check int) "payload" 20000 (F.payload_len r);
  F.set_max_frame_size r 19999;
  Alcotest.check expect_t "one below" (Conn Frame_size_error) (classify r buf (String.length big));
  let r = F.create ~max_frame_size:0xFF_FFFF () in
  Alcotest.(check int) "max" 0xFF_FFFF (F.max_frame_size r);
  List.iter
    (fun n ->
      Alcotest.check_raises (Printf.sprintf "limit %d" n) (Invalid_argument "Httpz.H2_frame.set_max_frame_size")
        (fun () -> F.set_max_frame_size r n))
    [ 16383; 0x100_0000; 0; -1 ]

let test_partial () =
  let f = encode (Data { sid = 1; end_stream = false; data = "0123456789"; pad = None }) in
  let r = F.create () in
  let buf = Bigstring.of_string f in
  for len = 0 to String.length f - 1 do
    (match F.read r buf ~off:0 ~len with
     | Partial -> ()
     | _ -> fail "len %d: not Partial" len);
    Alcotest.(check int) (Printf.sprintf "needed at %d" len) (if len < 9 then 9 else 19) (F.needed r);
    Alcotest.(check int) "consumed" 0 (F.consumed r)
  done;
  Alcotest.check_raises "range" (Invalid_argument "Httpz.H2_frame.read") (fun () ->
      ignore (F.read r buf ~off:1 ~len:(String.length f)))

(* ---------- writers: all or nothing ---------- *)

let test_writer_refusals () =
  let buf = Bigstring.create 64 in
  let untouched name f =
    Bigarray.Array1.fill buf '#';
    (match f () with
     | (_ : int) -> fail "%s: accepted" name
     | exception W.No_space -> ()
     | exception W.Invalid_frame -> ());
    for i = 0 to 63 do if Bigstring.unsafe_get buf i <> '#' then fail "%s: wrote byte %d" name i done
  in
  let invalid name f =
    Alcotest.check_raises name W.Invalid_frame (fun () -> ignore (f ()));
    untouched name f
  in
  let no_space name f =
    Alcotest.check_raises name W.No_space (fun () -> ignore (f ()));
    untouched name f
  in
  invalid "DATA on stream 0" (fun () -> W.data_header buf ~off:0 ~stream_id:0 ~length:1 ~end_stream:false);
  invalid "stream 2^31" (fun () -> W.data_header buf ~off:0 ~stream_id:0x8000_0000 ~length:1 ~end_stream:false);
  invalid "length 2^24" (fun () ->
      W.headers_header buf ~off:0 ~stream_id:1 ~length:0x100_0000 ~end_stream:false ~end_headers:true);
  invalid "negative length" (fun () -> W.continuation_header buf ~off:0 ~stream_id:1 ~length:(-1) ~end_headers:true);
  invalid "type 256" (fun () -> W.frame_header buf ~off:0 ~length:0 ~type_code:256 ~flags:0 ~stream_id:0);
  invalid "WINDOW_UPDATE 0" (fun () -> W.window_update buf ~off:0 ~stream_id:1 ~increment:0);
  invalid "WINDOW_UPDATE 2^31" (fun () -> W.window_update buf ~off:0 ~stream_id:1 ~increment:0x8000_0000);
  invalid "RST_STREAM on 0" (fun () -> W.rst_stream buf ~off:0 ~stream_id:0 ~code:Cancel);
  invalid "SETTINGS arrays differ" (fun () -> W.settings buf ~off:0 ~ids:[| 1; 2 |] ~values:[| 1 |]);
  invalid "SETTINGS value 2^32" (fun () -> W.settings buf ~off:0 ~ids:[| 1 |] ~values:[| 0x1_0000_0000 |]);
  invalid "SETTINGS id 2^16" (fun () -> W.settings buf ~off:0 ~ids:[| 0x10000 |] ~values:[| 1 |]);
  invalid "weight 0" (fun () -> W.priority buf ~off:0 ~stream_id:1 ~exclusive:false ~dependency:0 ~weight:0);
  invalid "PRIORITY_UPDATE for 0" (fun () -> W.priority_update buf ~off:0 ~prioritized_stream_id:0 "u=1");
  no_space "DATA header at 56" (fun () -> W.data_header buf ~off:56 ~stream_id:1 ~length:1 ~end_stream:false);
  no_space "negative offset" (fun () -> W.settings_ack buf ~off:(-1));
  no_space "RST_STREAM at 52" (fun () -> W.rst_stream buf ~off:52 ~stream_id:1 ~code:Cancel);
  no_space "WINDOW_UPDATE at 52" (fun () -> W.window_update buf ~off:52 ~stream_id:1 ~increment:1);
  no_space "PING at 48" (fun () -> W.ping_int buf ~off:48 ~ack:false 1);
  no_space "GOAWAY debug" (fun () -> W.goaway buf ~off:0 ~last_stream_id:1 ~code:No_error ~debug:(String.make 48 'd'));
  no_space "SETTINGS" (fun () -> W.settings buf ~off:0 ~ids:(Array.make 10 1) ~values:(Array.make 10 1));
  (* the exact fit is accepted *)
  Alcotest.(check int) "GOAWAY filling the buffer" 64
    (W.goaway buf ~off:0 ~last_stream_id:1 ~code:No_error ~debug:(String.make 47 'd'));
  Alcotest.(check int) "header size" 9 F.header_size;
  ignore (W.ping_int buf ~off:0 ~ack:true 0x010203);
  Alcotest.(check string) "PING opaque int" "\000\000\000\000\000\001\002\003"
    (Bigstring.sub_string buf ~off:9 ~len:8);
  Alcotest.(check int) "PING ACK flag" 1 (Char.code (Bigstring.unsafe_get buf 4))

(* ---------- enumerations, preface ---------- *)

let test_error_codes () =
  for n = 0 to 13 do
    Alcotest.(check int) "to_int (of_int n)" n (H2_error.to_int (H2_error.of_int n));
    Alcotest.(check bool) "known" true (H2_error.is_known n)
  done;
  List.iter
    (fun n ->
      Alcotest.(check bool) "unknown" false (H2_error.is_known n);
      Alcotest.(check string) "unknown is INTERNAL_ERROR" "INTERNAL_ERROR" (H2_error.to_string (H2_error.of_int n)))
    [ -1; 14; 0xFFFF_FFFF ];
  let names = List.init 14 (fun n -> H2_error.to_string (H2_error.of_int n)) in
  Alcotest.(check (list string)) "names in wire order"
    [ "NO_ERROR"; "PROTOCOL_ERROR"; "INTERNAL_ERROR"; "FLOW_CONTROL_ERROR"; "SETTINGS_TIMEOUT";
      "STREAM_CLOSED"; "FRAME_SIZE_ERROR"; "REFUSED_STREAM"; "CANCEL"; "COMPRESSION_ERROR";
      "CONNECT_ERROR"; "ENHANCE_YOUR_CALM"; "INADEQUATE_SECURITY"; "HTTP_1_1_REQUIRED" ]
    names

let test_enums () =
  for n = 0 to 0xff do
    let t = F.frame_type_of_int n in
    if t <> Unknown then Alcotest.(check int) "frame type" n (F.frame_type_to_int t);
    Alcotest.(check bool) (Printf.sprintf "type %d known" n) (n <= 9 || n = 0x10) (t <> Unknown)
  done;
  Alcotest.(check string) "name" "PRIORITY_UPDATE" (F.frame_type_to_string (F.frame_type_of_int 0x10));
  for n = 0 to 0xffff do
    let id = H2_settings.id_of_int n in
    if id <> Unknown then Alcotest.(check int) "setting id" n (H2_settings.id_to_int id);
    Alcotest.(check bool) (Printf.sprintf "id %d known" n) ((n >= 1 && n <= 6) || n = 8 || n = 9) (id <> Unknown)
  done;
  Alcotest.(check string) "setting name" "SETTINGS_MAX_FRAME_SIZE" (H2_settings.id_to_string Max_frame_size);
  let s = H2_settings.create () in
  Alcotest.(check int) "default window" 65535 s.initial_window_size;
  H2_settings.apply s Initial_window_size 1_000_000;
  H2_settings.apply s Enable_push 0;
  H2_settings.apply s Unknown 5;
  Alcotest.(check int) "applied window" 1_000_000 s.initial_window_size;
  Alcotest.(check bool) "push off" false s.enable_push;
  H2_settings.reset s;
  Alcotest.(check bool) "push back on" true s.enable_push

let preface_t =
  Alcotest.testable
    (fun ppf p ->
      Format.pp_print_string ppf
        (match p with F.Preface -> "Preface" | Not_preface -> "Not_preface" | Need_more -> "Need_more"))
    ( = )

let test_preface () =
  let check name want s =
    let buf = S.bigstring_at ~garbage:'P' ~off:3 s in
    Alcotest.check preface_t name want (F.check_preface buf ~off:3 ~len:(String.length s))
  in
  Alcotest.(check int) "24 bytes" 24 (String.length F.preface);
  for k = 0 to 23 do check (Printf.sprintf "prefix %d" k) Need_more (String.sub F.preface 0 k) done;
  check "whole" Preface F.preface;
  check "with a frame after" Preface (F.preface ^ encode (Settings { ack = false; entries = [] }));
  check "GET after 1 byte" Not_preface "G";
  check "POST after 2 bytes" Not_preface "PO";
  check "PUT after 2 bytes" Not_preface "PU";
  check "PRI with HTTP/1.1" Not_preface "PRI * HTTP/1.1\r\n";
  check "one byte off at the end" Not_preface (String.sub F.preface 0 23 ^ "\r")

(* ---------- incremental reading ---------- *)

(* Every sample, a stream error in the middle, and a connection error at
   the end followed by bytes that must never be read. *)
let sequence =
  String.concat "" (List.map encode samples)
  ^ raw ~typ:8 ~flags:0 ~sid:3 (u32 0)
  ^ encode (Ping { ack = false; data = "after it" })
  ^ raw ~typ:6 ~flags:0 ~sid:0 "short"
  ^ encode (Ping { ack = false; data = "unread!!" })

let test_split_everywhere () =
  let whole = run [ sequence ] in
  let events, _ = whole in
  Alcotest.(check int) "events" (List.length samples + 3) (List.length events);
  (match List.rev events with
   | Conn_err Frame_size_error :: _ -> ()
   | _ -> fail "the sequence does not end in a FRAME_SIZE_ERROR");
  for k = 0 to String.length sequence do
    Alcotest.check outcome_t (Printf.sprintf "split at %d" k) whole (run (split_at sequence k))
  done;
  Alcotest.check outcome_t "byte by byte" whole (run (bytewise sequence))

(* ---------- properties ---------- *)

let gen_sid = QCheck2.Gen.(oneof [ int_range 1 9; int_range 1 0x7FFF_FFFF; pure 0x7FFF_FFFF ])
let gen_u31 = QCheck2.Gen.(oneof [ pure 0; int_range 0 0x7FFF_FFFF ])
let gen_u32 = QCheck2.Gen.(oneof [ int_range 0 13; int_range 0 0xFFFF_FFFF ])
let gen_bytes n = QCheck2.Gen.(string_size ~gen:char (int_range 0 n))
let gen_pad = QCheck2.Gen.(opt (int_range 0 255))

let gen_prio sid =
  QCheck2.Gen.(
    map3 (fun excl dep weight -> { excl; dep = (if dep = sid then 0 else dep); weight }) bool gen_u31 (int_range 1 256))

let gen_setting =
  QCheck2.Gen.(
    oneof
      [ map (fun v -> (1, v)) gen_u32;
        map (fun v -> (2, v)) (int_range 0 1);
        map (fun v -> (3, v)) gen_u32;
        map (fun v -> (4, v)) (int_range 0 0x7FFF_FFFF);
        map (fun v -> (5, v)) (int_range 16384 0xFF_FFFF);
        map (fun v -> (6, v)) gen_u32;
        map (fun v -> (8, v)) (int_range 0 1);
        map (fun v -> (9, v)) (int_range 0 1);
        map2 (fun id v -> (id, v)) (oneofl [ 0; 7; 10; 0xFFFF ]) gen_u32 ])

let gen_frame =
  let open QCheck2.Gen in
  oneof
    [ map (fun (sid, end_stream, data, pad) -> Data { sid; end_stream; data; pad })
        (quad gen_sid bool (gen_bytes 64) gen_pad);
      gen_sid >>= (fun sid ->
        map (fun ((end_stream, end_headers), block, pad, prio) ->
            Headers { sid; end_stream; end_headers; block; pad; prio })
          (quad (pair bool bool) (gen_bytes 64) gen_pad (opt (gen_prio sid))));
      gen_sid >>= (fun sid -> map (fun p -> Priority { sid; p }) (gen_prio sid));
      map2 (fun sid code -> Rst { sid; code }) gen_sid gen_u32;
      map (fun entries -> Settings { ack = false; entries }) (list_size (int_range 0 8) gen_setting);
      pure (Settings { ack = true; entries = [] });
      map (fun (sid, end_headers, promised, (block, pad)) -> Push { sid; end_headers; promised; block; pad })
        (quad gen_sid bool gen_u31 (pair (gen_bytes 32) gen_pad));
      map2 (fun ack data -> Ping { ack; data }) bool (string_size ~gen:char (pure 8));
      map3 (fun last code debug -> Goaway { last; code; debug }) gen_u31 gen_u32 (gen_bytes 32);
      map2 (fun sid inc -> Window { sid; inc }) (oneof [ pure 0; gen_sid ]) (int_range 1 0x7FFF_FFFF);
      map3 (fun sid end_headers block -> Cont { sid; end_headers; block }) gen_sid bool (gen_bytes 64);
      map2 (fun prioritized value -> Prio_update { prioritized; value }) gen_sid
        (oneof [ oneofl [ ""; "u=1"; "u=7, i"; "i" ]; gen_bytes 16 ]);
      map (fun (typ, flags, sid, payload) -> Other { typ; flags; sid; payload })
        (quad (oneof [ int_range 0x0a 0x0f; int_range 0x11 0xff ]) (int_range 0 255) gen_u31 (gen_bytes 32)) ]

let prop_round_trip =
  QCheck2.Test.make ~count:2000 ~name:"random frames: write then read gives the frame back" ~print:show gen_frame
    (fun f ->
      let got = run [ encode f ] in
      got = ([ Got f ], 0)
      || QCheck2.Test.fail_reportf "got %s" (Format.asprintf "%a" (Alcotest.pp outcome_t) got))

let prop_split =
  QCheck2.Test.make ~count:300 ~name:"random frame sequences: any split reads as the whole"
    ~print:(fun (fs, cuts) -> Printf.sprintf "%s / cuts %s" (String.concat "; " (List.map show fs))
                                (String.concat "," (List.map string_of_int cuts)))
    QCheck2.Gen.(pair (list_size (int_range 1 6) gen_frame) (list_size (int_range 0 6) nat))
    (fun (fs, cuts) ->
      let s = String.concat "" (List.map encode fs) in
      let n = String.length s in
      let cuts = List.sort_uniq compare (List.map (fun c -> c mod (n + 1)) cuts) in
      let rec chunks prev = function
        | [] -> [ String.sub s prev (n - prev) ]
        | c :: rest -> String.sub s prev (c - prev) :: chunks c rest
      in
      let whole = run [ s ] in
      fst whole = List.map (fun f -> Got f) fs && run (chunks 0 cuts) = whole)

(* Frame-shaped garbage: a header with a small length, then random bytes. *)
let gen_garbage =
  QCheck2.Gen.(
    oneof
      [ gen_bytes 80;
        map3
          (fun (len, typ) (flags, sid) body ->
            String.init 3 (fun i -> Char.chr ((len lsr (8 * (2 - i))) land 0xff))
            ^ String.make 1 (Char.chr typ) ^ String.make 1 (Char.chr flags) ^ u32 sid ^ body)
          (pair (int_range 0 40) (oneof [ int_range 0 10; pure 0x10; int_range 0 255 ]))
          (pair (oneofl [ 0; 1; 8; 0x20; 0x28; 0x2d; 255 ]) (oneofl [ 0; 1; 3; 0x8000_0001 ]))
          (gen_bytes 48) ])

let prop_garbage =
  QCheck2.Test.make ~count:5000 ~name:"garbage: never raises, never reads outside its slice" ~print:hex
    QCheck2.Gen.(map (String.concat "") (list_size (int_range 1 4) gen_garbage))
    (fun s ->
      (* the driver checks every span; the garbage around the slice differs
         between the two runs, so a read outside it would show *)
      let a = read_available ~garbage:'\000' (F.create ()) s in
      let b = read_available ~garbage:'\255' (F.create ()) s in
      a = b)

(* ---------- RFC 9218 Priority field ---------- *)

let priority_cases =
  [ ("", 3, false); ("u=5", 5, false); ("i", 3, true); ("u=0, i", 0, true); ("u=7", 7, false);
    ("u=8", 3, false); ("u=-1", 3, false); ("u=1.0", 3, false); ("u=\"1\"", 3, false);
    ("u=007", 7, false); ("u=-0", 0, false); ("i=?0", 3, false); ("i=?1, u=2", 2, true);
    ("i=1", 3, false); ("u=2, u=6", 6, false); ("u=2, u=9", 3, false); ("i, i=?0", 3, false);
    ("u=3;foo=bar, i;x", 3, true); ("u;x=1", 3, false); ("u=(1 2), i", 3, true); ("a=(1 2 3);p, u=1", 1, false);
    ("u=1, foo=\"str\\\"ing\", bar=:aGVsbG8=:, baz=?1, t=tok/en:x, d=-12.345, *k", 1, false);
    ("  u=4  ", 4, false); ("u=4,\ti", 4, true); ("u=1,i", 1, true); ("u=4 , i", 4, true);
    (* not a Dictionary: the whole field is ignored *)
    ("u=1,", 3, false); ("u=1 u=2", 3, false); ("U=1", 3, false); ("u= 1", 3, false); (",u=1", 3, false);
    ("u=1, i=", 3, false); ("u=1, x=\"open", 3, false); ("u=1, x=1.2345", 3, false);
    ("u=1, x=1234567890123456", 3, false); ("u=1, x=?2", 3, false); ("i, u=(1", 3, false);
    ("u=1, x=:abc", 3, false); ("u=1, x=\"\\n\"", 3, false); ("u=2\x00", 3, false) ]

let test_priority_field () =
  List.iter
    (fun (s, u, i) ->
      let buf = S.bigstring_at ~garbage:',' ~off:4 s in
      let p = H2_priority.parse buf ~off:4 ~len:(String.length s) in
      Alcotest.(check (pair int bool)) (Printf.sprintf "%S" s) (u, i) (H2_priority.urgency p, H2_priority.incremental p))
    priority_cases;
  let p = H2_priority.make ~urgency:6 ~incremental:true in
  Alcotest.(check (pair int bool)) "make" (6, true) (H2_priority.urgency p, H2_priority.incremental p);
  Alcotest.(check (pair int bool)) "default" (3, false)
    (H2_priority.urgency H2_priority.default, H2_priority.incremental H2_priority.default);
  Alcotest.check_raises "make 8" (Invalid_argument "Httpz.H2_priority.make") (fun () ->
      ignore (H2_priority.make ~urgency:8 ~incremental:false))

let prop_priority_garbage =
  QCheck2.Test.make ~count:3000 ~name:"Priority field: any bytes, no exception, same answer whatever is around"
    ~print:(Printf.sprintf "%S")
    QCheck2.Gen.(string_size ~gen:(oneofl [ 'u'; 'i'; '='; ','; ' '; ';'; '?'; '1'; '7'; '9'; '('; ')'; '"'; ':'; 'a'; '-'; '.' ])
                   (int_range 0 20))
    (fun s ->
      let at g = H2_priority.parse (S.bigstring_at ~garbage:g ~off:2 s) ~off:2 ~len:(String.length s) in
      let a = at '1' and b = at ' ' in
      a = b && H2_priority.urgency a >= 0 && H2_priority.urgency a <= 7)

(* ---------- zero allocation ---------- *)

let zero_alloc_cases =
  let r = F.create () in
  let at s = S.bigstring_at ~off:3 s in
  let reads name s =
    let buf = at s and len = String.length s in
    (match F.read r buf ~off:3 ~len with Frame -> () | _ -> fail "%s: not a frame" name);
    S.zero_alloc ("read " ^ name) (fun () -> ignore (F.read r buf ~off:3 ~len))
  in
  let settings_frame =
    at (encode (Settings { ack = false; entries = [ (1, 4096); (3, 100); (4, 1 lsl 20); (5, 16384); (9, 1) ] }))
  in
  let settings_len = 9 + 30 in
  let sum = ref 0 in
  let out = Bigstring.create 4096 in
  let ids = [| 3; 4; 5; 9 |] and values = [| 100; 1 lsl 20; 16384; 1 |] in
  let prio = at "u=2, i;x=1, foo=\"bar\"" in
  [ reads "HEADERS" (encode (Headers { sid = 1; end_stream = true; end_headers = true; block = String.make 40 'h';
                                       pad = Some 4; prio = Some p1 }));
    reads "DATA" (encode (Data { sid = 1; end_stream = false; data = String.make 1000 'd'; pad = None }));
    reads "WINDOW_UPDATE" (encode (Window { sid = 3; inc = 65535 }));
    (let buf = at (String.sub (encode (Data { sid = 1; end_stream = false; data = "abc"; pad = None })) 0 10) in
     S.zero_alloc "read a partial frame" (fun () ->
         match F.read r buf ~off:3 ~len:10 with Partial -> () | _ -> assert false));
    S.zero_alloc "read SETTINGS and iterate its entries" (fun () ->
        (match F.read r settings_frame ~off:3 ~len:settings_len with Frame -> () | _ -> assert false);
        for i = 0 to F.settings_count r - 1 do
          (match F.setting_id settings_frame r i with
           | Max_frame_size -> sum := !sum + 1
           | _ -> ());
          sum := !sum + F.setting_value settings_frame r i
        done);
    (let buf = at (raw ~typ:4 ~flags:0 ~sid:0 (setting 3 1 ^ setting 5 1)) in
     S.zero_alloc "read a SETTINGS connection error" (fun () ->
         match F.read r buf ~off:3 ~len:21 with Connection_error -> () | _ -> assert false));
    (let buf = at (raw ~typ:8 ~flags:0 ~sid:3 (u32 0)) in
     S.zero_alloc "read a stream error" (fun () ->
         match F.read r buf ~off:3 ~len:13 with Stream_error -> () | _ -> assert false));
    S.zero_alloc "write DATA header" (fun () ->
        ignore (W.data_header out ~off:0 ~stream_id:1 ~length:16384 ~end_stream:true));
    S.zero_alloc "write HEADERS header" (fun () ->
        ignore (W.headers_header out ~off:0 ~stream_id:1 ~length:100 ~end_stream:false ~end_headers:true));
    S.zero_alloc "write HEADERS header unchecked" (fun () ->
        ignore (W.headers_header_unchecked out ~off:0 ~stream_id:1 ~length:100 ~end_stream:true));
    S.zero_alloc "write CONTINUATION header" (fun () ->
        ignore (W.continuation_header out ~off:0 ~stream_id:1 ~length:100 ~end_headers:true));
    S.zero_alloc "write SETTINGS" (fun () -> ignore (W.settings out ~off:0 ~ids ~values));
    S.zero_alloc "write SETTINGS ACK" (fun () -> ignore (W.settings_ack out ~off:0));
    S.zero_alloc "write WINDOW_UPDATE" (fun () ->
        ignore (W.window_update out ~off:0 ~stream_id:0 ~increment:1_000_000));
    S.zero_alloc "write PING ACK" (fun () -> ignore (W.ping out ~off:0 ~ack:true settings_frame ~src_off:12));
    S.zero_alloc "write PING" (fun () -> ignore (W.ping_int out ~off:0 ~ack:false 42));
    S.zero_alloc "write GOAWAY" (fun () ->
        ignore (W.goaway out ~off:0 ~last_stream_id:7 ~code:Enhance_your_calm ~debug:"too many resets"));
    S.zero_alloc "write RST_STREAM" (fun () -> ignore (W.rst_stream out ~off:0 ~stream_id:5 ~code:Cancel));
    S.zero_alloc "write refused for lack of space" (fun () ->
        try ignore (W.window_update out ~off:4090 ~stream_id:0 ~increment:1) with W.No_space -> ());
    S.zero_alloc "Priority field" (fun () -> ignore (H2_priority.parse prio ~off:3 ~len:21));
    S.zero_alloc "Priority field, invalid" (fun () -> ignore (H2_priority.parse prio ~off:3 ~len:20));
    S.zero_alloc "preface" (fun () -> ignore (F.check_preface prio ~off:3 ~len:20)) ]

(* ---------- cross-check with Python's hyperframe ---------- *)

(* hyperframe's view of a frame, printed the way hyperframe_peer.py prints
   it: only the flags a type defines, SETTINGS as a map (sorted, the last
   entry for an identifier wins), PRIORITY_UPDATE and unknown types as
   extension frames with their raw body. *)
let describe r buf ~off =
  let sub o l = hex (Bigstring.sub_string buf ~off:o ~len:l) in
  let payload () = sub (F.payload_off r) (F.payload_len r) in
  let flag_names defined =
    String.concat "|"
      (List.filter_map
         (fun (n, bit) -> if List.mem n defined && F.has_flag r bit then Some n else None)
         [ ("END_STREAM", 1); ("ACK", 1); ("END_HEADERS", 4); ("PADDED", 8); ("PRIORITY", 0x20) ])
  in
  let head defined = Printf.sprintf "stream=%d flags=%s" (F.stream_id r) (flag_names defined) in
  let pad () = if F.has_flag r F.flag_padded then F.pad_length r else 0 in
  let prio () =
    Printf.sprintf "excl=%d dep=%d weight=%d" (b (F.priority_exclusive r)) (F.priority_dependency r)
      (F.priority_weight r)
  in
  match F.frame_type r with
  | Data -> Printf.sprintf "DATA %s data=%s pad=%d" (head [ "END_STREAM"; "PADDED" ]) (payload ()) (pad ())
  | Headers ->
      Printf.sprintf "HEADERS %s block=%s pad=%d%s"
        (head [ "END_STREAM"; "END_HEADERS"; "PADDED"; "PRIORITY" ])
        (payload ()) (pad ()) (if F.has_flag r F.flag_priority then " " ^ prio () else "")
  | Priority -> Printf.sprintf "PRIORITY %s %s" (head []) (prio ())
  | Rst_stream -> Printf.sprintf "RST_STREAM %s code=%d" (head []) (F.error_code_raw r)
  | Settings ->
      let m = Hashtbl.create 8 in
      for i = 0 to F.settings_count r - 1 do Hashtbl.replace m (F.setting_code buf r i) (F.setting_value buf r i) done;
      let es = List.sort compare (Hashtbl.fold (fun k v acc -> (k, v) :: acc) m []) in
      Printf.sprintf "SETTINGS %s entries=%s" (head [ "ACK" ])
        (String.concat "," (List.map (fun (k, v) -> Printf.sprintf "%d:%d" k v) es))
  | Push_promise ->
      Printf.sprintf "PUSH_PROMISE %s promised=%d block=%s pad=%d" (head [ "END_HEADERS"; "PADDED" ])
        (F.promised_stream_id r) (payload ()) (pad ())
  | Ping -> Printf.sprintf "PING %s data=%s" (head [ "ACK" ]) (payload ())
  | Goaway ->
      Printf.sprintf "GOAWAY %s last=%d code=%d debug=%s" (head []) (F.last_stream_id r) (F.error_code_raw r)
        (payload ())
  | Window_update -> Printf.sprintf "WINDOW_UPDATE %s inc=%d" (head []) (F.window_increment r)
  | Continuation -> Printf.sprintf "CONTINUATION %s block=%s" (head [ "END_HEADERS" ]) (payload ())
  | Priority_update | Unknown ->
      Printf.sprintf "EXT type=%d stream=%d flags=%d body=%s" (F.type_code r) (F.stream_id r) (F.flags r)
        (sub (off + 9) (F.length r))

let python = "/usr/bin/python3"

let run_peer input n_generated =
  let script = Filename.temp_file "httpz_hyperframe" ".py" in
  let inp = Filename.temp_file "httpz_hyperframe" ".in" in
  let outp = Filename.temp_file "httpz_hyperframe" ".out" in
  Fun.protect
    ~finally:(fun () -> List.iter Sys.remove [ script; inp; outp ])
    (fun () ->
      let write path s = let oc = open_out_bin path in output_string oc s; close_out oc in
      write script Hyperframe_script.source;
      write inp (String.concat "\n" input ^ "\n");
      let cmd =
        Printf.sprintf "%s %s %d < %s > %s" python (Filename.quote script) n_generated (Filename.quote inp)
          (Filename.quote outp)
      in
      if Sys.command cmd <> 0 then
        fail "the hyperframe peer failed: is Debian's python3-hyperframe installed (scripts/deps.sh test)?";
      String.split_on_char '\n' (S.read_file outp) |> List.filter (fun l -> l <> ""))

(* Frames hyperframe can describe as we do: no type 0xa, which it parses
   as ALTSVC. *)
let hyperframe_can_show = function
  | Other { typ = 0x0a; _ } -> false
  (* hyperframe also checks that a promised stream is even (server-initiated)
     and not 0: the session's rule (RFC 9113 §5.1.1), not the codec's *)
  | Push { promised; _ } -> promised > 0 && promised land 1 = 0
  (* hyperframe refuses a HEADERS frame whose padding leaves an empty field
     block fragment (pad length = what follows the pad length byte); RFC
     9113 §6.2 refuses only padding that "exceeds" it, as httpz does *)
  | Headers { pad = Some n; block = ""; prio = None; _ } -> n = 0
  | _ -> true

let test_hyperframe () =
  let rand = Random.State.make [| 9113 |] in
  let ours =
    samples @ List.init 400 (fun _ -> QCheck2.Gen.generate1 ~rand gen_frame)
    |> List.filter hyperframe_can_show
  in
  let n_generated = 400 in
  let lines = run_peer (List.map (fun f -> hex (encode f)) ours) n_generated in
  let n = List.length ours in
  Alcotest.(check int) "lines from the peer" (n + n_generated) (List.length lines);
  let r = F.create ~max_frame_size:0xFF_FFFF () in
  let ours_read s =
    let buf = S.bigstring_at ~off:1 s in
    match F.read r buf ~off:1 ~len:(String.length s) with
    | Frame when F.consumed r = String.length s -> describe r buf ~off:1
    | _ -> fail "httpz does not read %s as one frame (%s)" (hex s) (F.reason r)
  in
  List.iteri
    (fun i line ->
      if i < n then begin
        let f = List.nth ours i in
        Alcotest.(check string) ("hyperframe reads " ^ show f) (ours_read (encode f)) line
      end
      else
        match String.split_on_char '\t' line with
        | [ "G"; h; desc ] -> Alcotest.(check string) ("httpz reads hyperframe's " ^ h) desc (ours_read (unhex h))
        | _ -> fail "peer line %S" line)
    lines

(* The header is stored as one word and a byte: the nine bytes are the
   fields in network order, written at any offset, and nothing around them
   changes. *)
let prop_header_bytes =
  QCheck2.Test.make ~count:2000 ~name:"frame header: nine big-endian bytes, nothing else written"
    ~print:QCheck2.Print.(quad int int int int)
    QCheck2.Gen.(quad (oneof [ int_range 0 20; int_range 0 0xFF_FFFF; pure 0xFF_FFFF ]) (int_range 0 0xff)
                   (int_range 0 0xff) gen_sid)
    (fun (length, type_code, flags, stream_id) ->
      let size = 32 in
      let buf = Bigstring.of_string (String.make size '\xAA') in
      let off = stream_id land 15 in
      let stop = W.frame_header buf ~off ~length ~type_code ~flags ~stream_id in
      let byte k = Char.code (Bigstring.unsafe_get buf k) in
      let expected =
        [ length lsr 16; (length lsr 8) land 0xff; length land 0xff; type_code; flags;
          stream_id lsr 24; (stream_id lsr 16) land 0xff; (stream_id lsr 8) land 0xff; stream_id land 0xff ]
      in
      stop = off + 9
      && List.for_all2 (fun k e -> byte (off + k) = e) (List.init 9 Fun.id) expected
      && List.for_all (fun k -> k >= off && k < off + 9 || byte k = 0xAA) (List.init size Fun.id))

(* The unchecked HEADERS header (the server's one frame per response)
   writes exactly what the checked one does, and nothing else. *)
let prop_headers_unchecked =
  QCheck2.Test.make ~count:2000 ~name:"HEADERS header unchecked: the checked one's bytes"
    ~print:QCheck2.Print.(triple int int bool)
    QCheck2.Gen.(triple (oneof [ int_range 0 20; int_range 0 0xFF_FFFF; pure 0xFF_FFFF ]) (int_range 1 0x7FFF_FFFF) bool)
    (fun (length, stream_id, end_stream) ->
      let a = Bigstring.of_string (String.make 32 '\xAA') and b = Bigstring.of_string (String.make 32 '\xAA') in
      let off = stream_id land 15 in
      let sa = W.headers_header a ~off ~stream_id ~length ~end_stream ~end_headers:true in
      let sb = W.headers_header_unchecked b ~off ~stream_id ~length ~end_stream in
      sa = sb && Bigstring.to_string a = Bigstring.to_string b)

let () =
  Alcotest.run "h2frame"
    [ ( "round trip",
        [ Alcotest.test_case "every frame type" `Quick test_round_trip_samples;
          Alcotest.test_case "reserved bit ignored" `Quick test_reserved_bit;
          Alcotest.test_case "undefined flags ignored" `Quick test_undefined_flags;
          S.qcheck prop_round_trip ] );
      ( "rules",
        [ Alcotest.test_case "RFC 9113 codes and classification" `Quick test_rules;
          Alcotest.test_case "SETTINGS_MAX_FRAME_SIZE" `Quick test_max_frame_size;
          Alcotest.test_case "partial frames" `Quick test_partial;
          Alcotest.test_case "writers refuse whole" `Quick test_writer_refusals ] );
      ( "enumerations",
        [ Alcotest.test_case "error codes" `Quick test_error_codes;
          Alcotest.test_case "types and settings" `Quick test_enums;
          Alcotest.test_case "preface" `Quick test_preface ] );
      ( "incremental",
        [ Alcotest.test_case "split at every byte" `Quick test_split_everywhere;
          S.qcheck prop_split;
          S.qcheck prop_header_bytes;
          S.qcheck prop_headers_unchecked;
          S.qcheck prop_garbage ] );
      ( "priority field",
        [ Alcotest.test_case "RFC 9218 values" `Quick test_priority_field; S.qcheck prop_priority_garbage ] );
      ("zero alloc", zero_alloc_cases);
      ("hyperframe", [ Alcotest.test_case "both directions" `Quick test_hyperframe ]) ]
