(* Tests for the WebSocket codec: Utf8, Sha1, Ws_frame, Ws_close,
   Ws_reader, Ws_handshake, Ws_extension. Every reader vector is fed whole,
   at an offset inside garbage, byte by byte and split in two at every
   position; all must report the same events. *)

open Httpz
module S = Httpz_test_support
module R = Ws_reader
open Ws_driver

let check_all_feedings ?role ?deflate ?max_message name input expected =
  let chk how got = Alcotest.check events_t (Printf.sprintf "%s (%s)" name how) expected got in
  chk "whole" (feed ?role ?deflate ?max_message [ input ]);
  chk "at offset 0" (feed ~off:0 ?role ?deflate ?max_message [ input ]);
  chk "byte by byte" (feed ?role ?deflate ?max_message (bytes_of input));
  for p = 0 to String.length input do
    let a = String.sub input 0 p and b = String.sub input p (String.length input - p) in
    chk (Printf.sprintf "split at %d" p) (feed ~off:3 ?role ?deflate ?max_message [ a; b ])
  done

(* ---------- RFC 6455 §5.7 examples ---------- *)

let hello_unmasked = "\x81\x05\x48\x65\x6c\x6c\x6f"
let hello_masked = "\x81\x85\x37\xfa\x21\x3d\x7f\x9f\x4d\x51\x58"
let hello_fragmented = "\x01\x03\x48\x65\x6c" ^ "\x80\x02\x6c\x6f"
let ping_unmasked = "\x89\x05\x48\x65\x6c\x6c\x6f"
let pong_masked = "\x8a\x85\x37\xfa\x21\x3d\x7f\x9f\x4d\x51\x58"
let bin256 = String.init 256 (fun i -> Char.chr (i land 0xFF))
let bin64k = String.init 65536 (fun i -> Char.chr ((i * 7) land 0xFF))

let write_server op ?(fin = true) payload =
  let len = String.length payload in
  let b = Bigstring.create (10 + len) in
  let p = Ws_frame.write_header b ~off:0 ~fin ~rsv1:false op ~len in
  Bigstring.blit_from_string payload ~src_off:0 b ~dst_off:p ~len;
  Bigstring.sub_string b ~off:0 ~len:(p + len)

let rfc_examples () =
  let c = Alcotest.(check string) in
  c "unmasked Hello written" hello_unmasked (write_server Text "Hello");
  c "masked Hello written" hello_masked (frame Text "Hello");
  c "fragmented written" hello_fragmented
    (write_server Text ~fin:false "Hel" ^ write_server Continuation "lo");
  c "ping written" ping_unmasked (write_server Ping "Hello");
  c "pong written" pong_masked (frame Pong "Hello");
  c "256 header" "\x82\x7e\x01\x00" (String.sub (write_server Binary bin256) 0 4);
  c "64k header" "\x82\x7f\x00\x00\x00\x00\x00\x01\x00\x00" (String.sub (write_server Binary bin64k) 0 10);
  let ev = Alcotest.check events_t in
  ev "unmasked Hello (client)" [ Msg ("text", "Hello") ] (feed ~role:Client [ hello_unmasked ]);
  ev "masked Hello (server)" [ Msg ("text", "Hello") ] (feed [ hello_masked ]);
  ev "fragmented (client)" [ Msg ("text", "Hello") ] (feed ~role:Client [ hello_fragmented ]);
  ev "ping (client)" [ Ctl ("ping", "Hello") ] (feed ~role:Client [ ping_unmasked ]);
  ev "pong (server)" [ Ctl ("pong", "Hello") ] (feed [ pong_masked ]);
  ev "256 bytes (client)" [ Msg ("binary", bin256) ] (feed ~role:Client [ write_server Binary bin256 ]);
  ev "64 KiB (client)" [ Msg ("binary", bin64k) ] (feed ~role:Client [ write_server Binary bin64k ]);
  ev "64 KiB masked (server), 1000-byte reads" [ Msg ("binary", bin64k) ]
    (let f = frame Binary bin64k in
     List.init ((String.length f + 999) / 1000) (fun i ->
         String.sub f (i * 1000) (min 1000 (String.length f - (i * 1000))))
     |> feed)

(* ---------- protocol rules: each with its exact error, close code, offset ---------- *)

let err e code at = Err (e, code, at)

let vectors =
  let ok = [ Msg ("text", "ok") ] in
  let okf = frame Text "ok" in
  [ (* name, role, deflate, max_message, input, events *)
    "valid sequence", R.Server, false, None,
    frame Text "a" ^ frame Ping "p" ^ frame ~fin:false Binary "xy" ^ frame Pong ""
    ^ frame Continuation "z" ^ frame Close (be16 1000 ^ "bye") ^ frame Text "after close",
    [ Msg ("text", "a"); Ctl ("ping", "p"); Ctl ("pong", ""); Msg ("binary", "xyz"); Close (1000, "bye") ];
    "empty messages", R.Server, false, None,
    frame Text "" ^ frame ~fin:false Binary "" ^ frame ~fin:false Continuation "" ^ frame Continuation "",
    [ Msg ("text", ""); Msg ("binary", "") ];
    "empty close", R.Server, false, None, frame Close "", [ Close (1005, "") ];
    "unmasked to server", R.Server, false, None, okf ^ raw ~masked:false 0x81 "hi",
    ok @ [ err "unmasked_frame" 1002 9 ];
    "masked to client", R.Client, false, None, raw 0x81 "hi", [ err "masked_frame" 1002 1 ];
    "rsv1", R.Server, false, None, raw 0xC1 "hi", [ err "reserved_bits" 1002 0 ];
    "rsv2", R.Server, false, None, raw 0xA1 "hi", [ err "reserved_bits" 1002 0 ];
    "rsv3", R.Server, false, None, raw 0x91 "hi", [ err "reserved_bits" 1002 0 ];
    "rsv2 with deflate", R.Server, true, None, raw 0xA1 "hi", [ err "reserved_bits" 1002 0 ];
    "rsv1 on continuation with deflate", R.Server, true, None,
    raw 0x41 "h" ^ raw 0xC0 "i", [ err "reserved_bits" 1002 7 ];
    "rsv1 on ping with deflate", R.Server, true, None, raw 0xC9 "", [ err "reserved_bits" 1002 0 ];
    "rsv1 compressed message with deflate", R.Server, true, None,
    raw 0xC1 "\xff\x00", [ Msg ("text", "\xff\x00") ];
    "reserved opcode 3", R.Server, false, None, okf ^ raw 0x83 "", ok @ [ err "reserved_opcode" 1002 8 ];
    "reserved opcode 7", R.Server, false, None, raw 0x87 "", [ err "reserved_opcode" 1002 0 ];
    "reserved opcode 0xB", R.Server, false, None, raw 0x8B "", [ err "reserved_opcode" 1002 0 ];
    "reserved opcode 0xF", R.Server, false, None, raw 0x8F "", [ err "reserved_opcode" 1002 0 ];
    "ping of 126 bytes", R.Server, false, None, raw ~l7:126 ~ext:(be16 126) 0x89 (String.make 126 'p'),
    [ err "control_too_long" 1002 1 ];
    "ping of 125 bytes", R.Server, false, None, frame Ping (String.make 125 'p'),
    [ Ctl ("ping", String.make 125 'p') ];
    "fragmented ping", R.Server, false, None, raw 0x09 "p", [ err "control_fragmented" 1002 0 ];
    "fragmented close", R.Server, false, None, raw 0x08 "", [ err "control_fragmented" 1002 0 ];
    "continuation first", R.Server, false, None, raw 0x80 "x", [ err "unexpected_continuation" 1002 0 ];
    "continuation after a message", R.Server, false, None, okf ^ raw 0x80 "x",
    ok @ [ err "unexpected_continuation" 1002 8 ];
    "text inside fragmented", R.Server, false, None, raw 0x01 "a" ^ raw 0x81 "b",
    [ err "expected_continuation" 1002 7 ];
    "binary inside fragmented", R.Server, false, None, raw 0x02 "a" ^ frame Ping "" ^ raw 0x02 "b",
    [ Ctl ("ping", ""); err "expected_continuation" 1002 13 ];
    "16-bit length 125", R.Server, false, None, raw ~l7:126 ~ext:(be16 125) 0x82 (String.make 125 'x'),
    [ err "non_minimal_length" 1002 3 ];
    "64-bit length 65535", R.Server, false, None, raw ~l7:127 ~ext:(be64 65535) 0x82 "",
    [ err "non_minimal_length" 1002 9 ];
    "64-bit length top bit", R.Server, false, None, raw ~l7:127 ~ext:("\x80" ^ String.make 7 '\x00') 0x82 "",
    [ err "length_top_bit" 1002 2 ];
    "64-bit length 2^62", R.Server, false, None, raw ~l7:127 ~ext:("\x40" ^ String.make 7 '\x00') 0x82 "",
    [ err "message_too_big" 1009 2 ];
    "message over the limit", R.Server, false, Some 10, frame Binary (String.make 11 'x'),
    [ err "message_too_big" 1009 1 ];
    "message at the limit", R.Server, false, Some 10, frame Binary (String.make 10 'x'),
    [ Msg ("binary", String.make 10 'x') ];
    "fragments over the limit", R.Server, false, Some 10,
    frame ~fin:false Text "hello" ^ frame Ping "" ^ frame Continuation "world!",
    [ Ctl ("ping", ""); err "message_too_big" 1009 18 ];
    "limit per message", R.Server, false, Some 10,
    frame Binary (String.make 10 'x') ^ frame Binary (String.make 10 'y'),
    [ Msg ("binary", String.make 10 'x'); Msg ("binary", String.make 10 'y') ];
    "close with one byte", R.Server, false, None, frame Close "\x03", [ err "bad_close_length" 1002 6 ];
    "close 1004", R.Server, false, None, frame Close (be16 1004), [ err "bad_close_code" 1002 7 ];
    "close 1005", R.Server, false, None, frame Close (be16 1005), [ err "bad_close_code" 1002 7 ];
    "close 1006", R.Server, false, None, frame Close (be16 1006), [ err "bad_close_code" 1002 7 ];
    "close 1015", R.Server, false, None, frame Close (be16 1015), [ err "bad_close_code" 1002 7 ];
    "close 999", R.Server, false, None, frame Close (be16 999), [ err "bad_close_code" 1002 7 ];
    "close 2999", R.Server, false, None, frame Close (be16 2999), [ err "bad_close_code" 1002 7 ];
    "close 5000", R.Server, false, None, frame Close (be16 5000), [ err "bad_close_code" 1002 7 ];
    "close 1014", R.Server, false, None, frame Close (be16 1014), [ Close (1014, "") ];
    "close 3000", R.Server, false, None, frame Close (be16 3000), [ Close (3000, "") ];
    "close 4999 reason", R.Server, false, None, frame Close (be16 4999 ^ "\xce\xba"), [ Close (4999, "\xce\xba") ];
    "close bad reason", R.Server, false, None, frame Close (be16 1000 ^ "a\xff"), [ err "bad_close_reason" 1007 9 ];
    "close truncated reason", R.Server, false, None, frame Close (be16 1000 ^ "\xce"),
    [ err "bad_close_reason" 1007 8 ];
    "invalid utf-8", R.Server, false, None, frame Text "ab\xffcd", [ err "invalid_utf8" 1007 8 ];
    "surrogate", R.Server, false, None, frame Text "\xed\xa0\x80", [ err "invalid_utf8" 1007 7 ];
    "above U+10FFFF", R.Server, false, None, frame Text "\xf4\x90\x80\x80", [ err "invalid_utf8" 1007 7 ];
    "overlong", R.Server, false, None, frame Text "\xc0\xaf", [ err "invalid_utf8" 1007 6 ];
    "truncated at message end", R.Server, false, None, frame Text "ab\xe2\x82", [ err "invalid_utf8" 1007 9 ];
    "truncated at empty final frame", R.Server, false, None,
    frame ~fin:false Text "\xe2\x82" ^ frame Continuation "", [ err "invalid_utf8" 1007 13 ];
    "character across fragments", R.Server, false, None,
    frame ~fin:false Text "\xe2" ^ frame Ping "" ^ frame ~fin:false Continuation "\x82" ^ frame Continuation "\xac",
    [ Ctl ("ping", ""); Msg ("text", "\xe2\x82\xac") ];
    "fail fast within a fragment", R.Server, false, None,
    frame ~fin:false Text "\xce\xba\xe1\xbd\xb9" ^ frame ~fin:false Continuation "\xcf\x83\xce\xbc\xce\xb5\xf4\x90\x80\x80"
    ^ "\x80\x85",
    [ err "invalid_utf8" 1007 24 ];
    "binary is not utf-8 checked", R.Server, false, None, frame Binary "\xff", [ Msg ("binary", "\xff") ];
    "client reads unmasked", R.Client, false, None, write_server Text "hi" ^ write_server Close (be16 1001),
    [ Msg ("text", "hi"); Close (1001, "") ];
    "partial message", R.Server, false, None, frame ~fin:false Binary "abc" ^ String.sub (frame Continuation "de") 0 7,
    [ Partial "abcd" ] ]

let vector_cases =
  List.map
    (fun (name, role, deflate, max_message, input, expected) ->
      Alcotest.test_case name `Quick (fun () -> check_all_feedings ~role ~deflate ?max_message name input expected))
    vectors

(* ---------- unmasking ---------- *)

let naive_unmask s ~off ~len ~key ~phase =
  String.mapi
    (fun i c ->
      if i < off || i >= off + len then c
      else Char.chr (Char.code c lxor ((key lsr (24 - (8 * ((phase + i - off) land 3)))) land 0xFF)))
    s

let unmask_prop =
  QCheck2.Test.make ~count:2000 ~name:"unmask = byte-wise unmask (any length, offset, key, phase)"
    QCheck2.Gen.(
      quad (string_size (int_range 0 100)) (int_range 0 20) (int_bound 0xFFFF_FFFF) (int_range 0 3))
    (fun (s, pre, key, phase) ->
      let data = String.make pre '#' ^ s in
      let b = Bigstring.of_string data in
      Ws_frame.unmask b ~off:pre ~len:(String.length s) ~key ~phase;
      Bigstring.to_string b = naive_unmask data ~off:pre ~len:(String.length s) ~key ~phase)

(* A payload unmasked in pieces, the phase carried along, equals the whole. *)
let unmask_pieces_prop =
  QCheck2.Test.make ~count:500 ~name:"unmask in pieces = unmask whole"
    QCheck2.Gen.(triple (string_size (int_range 0 64)) (int_bound 0xFFFF_FFFF) (list_size (int_range 0 6) (int_range 0 20)))
    (fun (s, key, cuts) ->
      let n = String.length s in
      let b = Bigstring.of_string s in
      let pos = ref 0 in
      List.iter
        (fun c ->
          let l = min c (n - !pos) in
          Ws_frame.unmask b ~off:!pos ~len:l ~key ~phase:(!pos land 3);
          pos := !pos + l)
        cuts;
      Ws_frame.unmask b ~off:!pos ~len:(n - !pos) ~key ~phase:(!pos land 3);
      Bigstring.to_string b = naive_unmask s ~off:0 ~len:n ~key ~phase:0)

(* Random splits of random valid frame sequences give the same events. *)
let split_prop =
  let gen_frame =
    QCheck2.Gen.(
      map3
        (fun kind payload k ->
          match kind with
          | 0 -> frame ~k Text payload, Msg ("text", payload)
          | 1 -> frame ~k Binary payload, Msg ("binary", payload)
          | _ -> let p = String.sub payload 0 (min 125 (String.length payload)) in
                 frame ~k Ping p, Ctl ("ping", p))
        (int_bound 2)
        (oneof [ string_size ~gen:(char_range 'a' 'z') (int_range 0 20);
                 string_size ~gen:(char_range 'a' 'z') (int_range 120 300) ])
        (int_bound 0xFFFF_FFFF))
  in
  QCheck2.Test.make ~count:300 ~name:"random frames, random splits: same events"
    QCheck2.Gen.(pair (list_size (int_range 1 5) gen_frame) (list_size (int_range 0 8) (int_range 0 40)))
    (fun (frames, cuts) ->
      let input = String.concat "" (List.map fst frames) in
      let slices = ref [] and pos = ref 0 in
      List.iter (fun c -> let l = min c (String.length input - !pos) in
                  slices := String.sub input !pos l :: !slices; pos := !pos + l) cuts;
      slices := String.sub input !pos (String.length input - !pos) :: !slices;
      feed (List.rev !slices) = List.map snd frames)

(* ---------- UTF-8 ---------- *)

let utf8_state_of s = Utf8.feed Utf8.accept (Bigstring.of_string s) ~off:0 ~len:(String.length s)

let utf8_agrees s =
  let b = Bigstring.of_string s and n = String.length s in
  let st = Utf8.feed Utf8.accept b ~off:0 ~len:n in
  let fi = Utf8.first_invalid Utf8.accept b ~off:0 ~len:n in
  let r = reference_first_invalid s in
  let complete = decode s = Valid in
  fi = r && Utf8.is_rejected st = (r >= 0) && Utf8.is_complete st = complete
  && (let by_step = ref Utf8.accept in String.iter (fun c -> by_step := Utf8.step !by_step c) s;
      !by_step = st)
  && (* fed in two pieces, the state carried along *)
  (let m = n / 3 in
   Utf8.feed (Utf8.feed Utf8.accept b ~off:0 ~len:m) b ~off:m ~len:(n - m) = st)

let utf8_gen =
  QCheck2.Gen.(
    let byte =
      frequency
        [ 3, char_range '\x00' '\x7f'; 3, char_range '\x80' '\xbf'; 2, char_range '\xc0' '\xdf';
          2, oneofl [ '\xe0'; '\xed'; '\xe1'; '\xef' ]; 2, oneofl [ '\xf0'; '\xf4'; '\xf1'; '\xf5'; '\xff' ] ]
    in
    let valid_char =
      map (fun cp -> let b = Buffer.create 4 in Buffer.add_utf_8_uchar b (Uchar.of_int cp); Buffer.contents b)
        (oneof [ int_range 0 0x7f; int_range 0x80 0x7ff; int_range 0x800 0xd7ff; int_range 0xe000 0xffff;
                 int_range 0x10000 0x10ffff ])
    in
    oneof
      [ string_size ~gen:byte (int_range 0 24);
        map (String.concat "") (list_size (int_range 0 12) valid_char);
        map2 (fun a b -> String.concat "" a ^ String.make 1 b) (list_size (int_range 0 12) valid_char) byte;
        string_size ~gen:(char_range '\x20' '\x7e') (int_range 0 40) ])

let utf8_prop =
  QCheck2.Test.make ~count:3000 ~name:"Utf8 = reference decoder (validity, first invalid byte, pieces)"
    utf8_gen utf8_agrees

let adversarial =
  [ ""; "a"; "\x7f"; "\x80"; "\xbf"; "\xc0\x80"; "\xc1\xbf"; "\xc2\x80"; "\xdf\xbf"; "\xe0\x80\x80";
    "\xe0\x9f\xbf"; "\xe0\xa0\x80"; "\xed\x9f\xbf"; "\xed\xa0\x80"; "\xed\xbf\xbf"; "\xee\x80\x80";
    "\xef\xbf\xbf"; "\xf0\x80\x80\x80"; "\xf0\x8f\xbf\xbf"; "\xf0\x90\x80\x80"; "\xf4\x8f\xbf\xbf";
    "\xf4\x90\x80\x80"; "\xf5\x80\x80\x80"; "\xf8\x88\x80\x80\x80"; "\xfe"; "\xff"; "\xe2\x82";
    "\xe2\x82\xac"; "\xe2\x28\xa1"; "abcdefgh\xc3"; "abcdefghijklmnop\xed\xa0\x80xyz";
    "\xce\xba\xe1\xbd\xb9\xcf\x83\xce\xbc\xce\xb5"; "\xce\xba\xe1\xbd\xb9\xcf\x83\xce\xbc\xce\xb5\xed\xa0\x80edited" ]

(* Autobahn 6.x style: the failure is at the exact first byte that cannot
   continue, not later. *)
let autobahn_6 () =
  let kosme = "\xce\xba\xe1\xbd\xb9\xcf\x83\xce\xbc\xce\xb5" in
  let at s = Utf8.first_invalid Utf8.accept (Bigstring.of_string s) ~off:0 ~len:(String.length s) in
  let c = Alcotest.(check int) in
  c "6.3.1 surrogate inside" (String.length kosme + 1) (at (kosme ^ "\xed\xa0\x80edited"));
  c "6.4.1 F4 90 fails at 90" (String.length kosme + 1) (at (kosme ^ "\xf4\x90\x80\x80edited"));
  c "6.4.2 F4 90 without the rest" (String.length kosme + 1) (at (kosme ^ "\xf4\x90"));
  c "6.4.3 lone continuation" 1 (at "a\x80");
  c "6.4.4 F5 at once" 0 (at "\xf5\x80\x80\x80");
  c "valid prefix is not a failure" (-1) (at (kosme ^ "\xf4\x8f"));
  Alcotest.(check bool) "truncated: not rejected, not complete" true
    (let s = utf8_state_of (kosme ^ "\xf4\x8f") in not (Utf8.is_rejected s) && not (Utf8.is_complete s));
  (* byte by byte: rejected on exactly the byte the reference names *)
  List.iter
    (fun s ->
      let st = ref Utf8.accept and first = ref (-1) in
      String.iteri (fun i ch -> let n = Utf8.step !st ch in
                     if Utf8.is_rejected n && !first < 0 then first := i; st := n) s;
      c (Printf.sprintf "step %S" s) (reference_first_invalid s) !first)
    adversarial

let utf8_adversarial () =
  List.iter (fun s -> Alcotest.(check bool) (Printf.sprintf "%S" s) true (utf8_agrees s)) adversarial

(* ---------- close codes ---------- *)

let close_codes () =
  let valid = [ 1000; 1001; 1002; 1003; 1007; 1008; 1009; 1010; 1011; 1012; 1013; 1014; 3000; 3999; 4000; 4999 ] in
  let invalid = [ 0; 999; 1004; 1005; 1006; 1015; 1016; 1100; 2000; 2999; 5000; 65535 ] in
  List.iter (fun c -> Alcotest.(check bool) (string_of_int c) true (Ws_close.is_valid_code c)) valid;
  List.iter (fun c -> Alcotest.(check bool) (string_of_int c) false (Ws_close.is_valid_code c)) invalid;
  let b = Bigstring.create 200 in
  let n = Ws_close.write b ~off:3 ~code:1001 ~reason:"bye" in
  Alcotest.(check string) "close written" "\x88\x05\x03\xe9bye" (Bigstring.sub_string b ~off:3 ~len:(n - 3));
  let n = Ws_close.write b ~off:0 ~code:Ws_close.no_status ~reason:"" in
  Alcotest.(check string) "empty close" "\x88\x00" (Bigstring.sub_string b ~off:0 ~len:n);
  let raises f = match f () with _ -> false | exception Invalid_argument _ -> true in
  Alcotest.(check bool) "1005 with a reason" true (raises (fun () -> Ws_close.write b ~off:0 ~code:1005 ~reason:"x"));
  Alcotest.(check bool) "1006" true (raises (fun () -> Ws_close.write b ~off:0 ~code:1006 ~reason:""));
  Alcotest.(check bool) "124-byte reason" true
    (raises (fun () -> Ws_close.write b ~off:0 ~code:1000 ~reason:(String.make 124 'r')));
  Alcotest.(check bool) "bad UTF-8 reason" true (raises (fun () -> Ws_close.write b ~off:0 ~code:1000 ~reason:"\xff"));
  Alcotest.(check bool) "does not fit" true (raises (fun () -> Ws_close.write b ~off:195 ~code:1000 ~reason:"abc"))

let writers () =
  let b = Bigstring.create 32 in
  let hdr ~fin op len = let n = Ws_frame.write_header b ~off:1 ~fin ~rsv1:false op ~len in
    Bigstring.sub_string b ~off:1 ~len:(n - 1) in
  let c = Alcotest.(check string) in
  c "125" "\x82\x7d" (hdr ~fin:true Binary 125);
  c "126" "\x82\x7e\x00\x7e" (hdr ~fin:true Binary 126);
  c "65535" "\x02\x7e\xff\xff" (hdr ~fin:false Binary 65535);
  c "65536" "\x81\x7f\x00\x00\x00\x00\x00\x01\x00\x00" (hdr ~fin:true Text 65536);
  c "rsv1" "\xc1\x00" (let n = Ws_frame.write_header b ~off:0 ~fin:true ~rsv1:true Text ~len:0 in
                       Bigstring.sub_string b ~off:0 ~len:n);
  c "masked 300" "\x82\xfe\x01\x2c\x01\x02\x03\x04"
    (let n = Ws_frame.write_masked_header b ~off:0 ~fin:true ~rsv1:false Binary ~len:300 ~key:0x01020304 in
     Bigstring.sub_string b ~off:0 ~len:n);
  List.iter (fun (len, masked, want) -> Alcotest.(check int) "header_length" want (Ws_frame.header_length ~len ~masked))
    [ 0, false, 2; 125, true, 6; 126, false, 4; 65535, true, 8; 65536, false, 10; 65536, true, 14 ];
  let raises f = match f () with _ -> false | exception Invalid_argument _ -> true in
  Alcotest.(check bool) "ping of 126" true (raises (fun () -> hdr ~fin:true Ping 126));
  Alcotest.(check bool) "fragmented pong" true (raises (fun () -> hdr ~fin:false Pong 1));
  Alcotest.(check bool) "no room" true
    (raises (fun () -> Ws_frame.write_header b ~off:25 ~fin:true ~rsv1:false Binary ~len:70000));
  Alcotest.(check bool) "opcode_of_int 3" true (raises (fun () -> Ws_frame.opcode_of_int 3));
  List.iter (fun op -> Alcotest.(check bool) "opcode round trip" true
                (Ws_frame.opcode_of_int (Ws_frame.opcode_to_int op) = op))
    [ Continuation; Text; Binary; Close; Ping; Pong ]

open Handshake_cases

(* ---------- cross-check with Python's wsproto and hashlib ---------- *)

let our_events_as_wsproto events =
  let one = function
    | Msg (op, p) -> Printf.sprintf "%s:%s" op (hex p)
    | Ctl (op, p) -> Printf.sprintf "%s:%s" op (hex p)
    | Close (c, r) -> Printf.sprintf "close:%d:%s" c (hex r)
    | Err (_, c, _) -> Printf.sprintf "error:%d" c
    | Partial _ -> "partial"
  in
  match events with [] -> "-" | l -> String.concat " " (List.map one l)

let cross_check () =
  (* frames we write, read by wsproto; the protocol vectors (wsproto has
     no size limit and does not know 1014, so those are left out) *)
  let ours =
    [ "masked hello", hello_masked; "fragments", frame ~fin:false Text "\xce\xba" ^ frame Ping "x"
      ^ frame Continuation "\xe1\xbd\xb9"; "64k", frame Binary bin64k; "256", frame Text (String.make 256 'a');
      "close", frame Close (be16 3000 ^ "reason") ]
    @ List.filter_map
        (fun (name, role, deflate, max_message, input, _) ->
          if deflate || max_message <> None || role <> R.Server || name = "close 1014"
             || name = "partial message" || name = "64-bit length 2^62"
          then None
          else Some (name, input))
        vectors
  in
  let sha_inputs = List.init 70 (fun n -> String.init (n * 3) (fun i -> Char.chr ((i * 31 + n) land 0xFF))) in
  let keys = [ "dGhlIHNhbXBsZSBub25jZQ=="; "x3JJHMbDL1EzLkh9GBhXDw=="; "AQIDBAUGBwgJCgsMDQ4PEC==" ] in
  let gens =
    [ "T:" ^ hex "Hello" ^ ":1", [ Msg ("text", "Hello") ];
      "B:" ^ hex bin256 ^ ":0;B:" ^ hex "tail" ^ ":1", [ Msg ("binary", bin256 ^ "tail") ];
      "P:" ^ hex "ping!" ^ ":1;T:" ^ hex "\xe2\x82\xac" ^ ":1", [ Ctl ("ping", "ping!"); Msg ("text", "\xe2\x82\xac") ];
      "B:" ^ hex bin64k ^ ":1", [ Msg ("binary", bin64k) ];
      "O::1;C:" ^ hex (be16 1001 ^ "away") ^ ":1", [ Ctl ("pong", ""); Close (1001, "away") ] ]
  in
  let commands =
    List.map (fun (_, input) -> "parse_server " ^ hex input) ours
    @ List.map (fun s -> "sha1 " ^ hex s) sha_inputs
    @ List.map (fun k -> "accept " ^ hex k) keys
    @ List.map (fun (g, _) -> "gen " ^ g) gens
  in
  let answers = Array.of_list (Wsproto_oracle.run commands) in
  let i = ref 0 in
  let next () = let a = answers.(!i) in incr i; a in
  List.iter
    (fun (name, input) ->
      Alcotest.(check string) ("wsproto reads " ^ name) (next ()) (our_events_as_wsproto (feed [ input ])))
    ours;
  List.iter (fun s -> Alcotest.(check string) "hashlib sha1" (next ()) (hex (Sha1.digest_string s))) sha_inputs;
  List.iter (fun k -> Alcotest.(check string) ("accept " ^ k) (next ()) (Ws_handshake.accept_of_key k)) keys;
  List.iter
    (fun (g, want) ->
      Alcotest.check events_t ("we read wsproto's " ^ g) want (feed [ Wsproto_oracle.unhex (next ()) ]))
    gens

(* ---------- zero allocation ---------- *)

(* A buffer holding one masked frame; each run reads it (unmasking it in
   place) and masks the payload again. *)
let masked_frame_buffer op payload =
  let f = frame op payload in
  let b = S.bigstring_at ~off:5 f in
  let hlen = String.length f - String.length payload in
  b, 5, String.length f, 5 + hlen

(* Reads [len] bytes [step] at a time; the number of messages and
   control frames completed. *)
let read_all ?(step = max_int) r b off len =
  let pos = ref off and stop = off + len and go = ref true and complete = ref 0 in
  while !go do
    let n = min step (stop - !pos) in
    match R.read r b ~off:!pos ~len:n with
    | Data -> pos := !pos + R.consumed r
    | Message_end | Control -> incr complete; pos := !pos + R.consumed r
    | Need_more -> pos := !pos + n; if !pos >= stop then go := false
    | Closed | Error -> go := false
  done;
  !complete

let zero_alloc_cases =
  let text = String.concat "" (List.init 20 (fun _ -> "hello, world \xce\xba\xe1\xbd\xb9\xcf\x83\xce\xbc\xce\xb5 ")) in
  let r = R.create () in
  let read_frame ?step op payload =
    let b, off, len, p = masked_frame_buffer op payload in
    let plen = String.length payload in
    fun () ->
      R.reset r;
      let complete = read_all ?step r b off len in
      Ws_frame.unmask b ~off:p ~len:plen ~key ~phase:0;
      if complete <> 1 then failwith "frame not read"
  in
  let text_frame = read_frame Text text in
  let binary_frame = read_frame Binary bin256 in
  let close_frame = read_frame Close (be16 1000 ^ "bye") in
  let unmask_buf = Bigstring.create 1100 in
  let hdr = Bigstring.create 64 in
  let sha = Sha1.create () in
  let req, rbuf = parse_request (upgrade ~extra:"Sec-WebSocket-Extensions: permessage-deflate; \
                                                client_max_window_bits\r\n" ()) in
  let ext = Ws_extension.create () in
  let dst = Bigstring.create 512 in
  let utf8_buf = Bigstring.of_string text in
  [ S.zero_alloc "read a masked text frame (header, unmask, UTF-8)" text_frame;
    S.zero_alloc "read a masked binary frame" binary_frame;
    S.zero_alloc "read a close frame" close_frame;
    S.zero_alloc "read a text frame byte by byte" (read_frame ~step:1 Text "bytewise \xce\xba");
    S.zero_alloc "unmask 1000 bytes at an odd offset, phase 3" (fun () ->
        Ws_frame.unmask unmask_buf ~off:3 ~len:1000 ~key:0x12345678 ~phase:3);
    S.zero_alloc "utf-8 feed" (fun () ->
        if Utf8.is_rejected (Utf8.feed Utf8.accept utf8_buf ~off:0 ~len:(Bigstring.length utf8_buf)) then
          failwith "rejected");
    S.zero_alloc "write frame headers and a close frame" (fun () ->
        let p = Ws_frame.write_header hdr ~off:0 ~fin:true ~rsv1:false Text ~len:100 in
        let p = Ws_frame.write_header hdr ~off:p ~fin:false ~rsv1:true Binary ~len:1000 in
        let p = Ws_frame.write_header hdr ~off:p ~fin:true ~rsv1:false Continuation ~len:100_000 in
        let p = Ws_frame.write_masked_header hdr ~off:p ~fin:true ~rsv1:false Ping ~len:5 ~key:1 in
        ignore (Ws_close.write hdr ~off:p ~code:1000 ~reason:"bye" : int));
    S.zero_alloc "handshake check and 101 head" (fun () ->
        if Ws_handshake.check req rbuf <> Valid then failwith "invalid";
        ignore (Ws_handshake.write_response_head sha rbuf ~key:(Ws_handshake.key req rbuf) dst ~off:0 : int));
    S.zero_alloc "extension negotiation and field" (fun () ->
        if Ws_extension.negotiate ext req rbuf <> Accepted then failwith "declined";
        ignore (Ws_extension.write_response_field ext dst ~off:0 : int)) ]

let () =
  Alcotest.run "websocket"
    [ "rfc 6455 §5.7", [ Alcotest.test_case "examples" `Quick rfc_examples ];
      "protocol rules", vector_cases;
      "properties", List.map S.qcheck [ unmask_prop; unmask_pieces_prop; split_prop; utf8_prop ];
      "utf-8", [ Alcotest.test_case "adversarial" `Quick utf8_adversarial;
                 Alcotest.test_case "autobahn 6.x fail fast" `Quick autobahn_6 ];
      "frames", [ Alcotest.test_case "close codes" `Quick close_codes;
                  Alcotest.test_case "writers" `Quick writers ];
      "handshake", Handshake_cases.cases;
      "wsproto", [ Alcotest.test_case "cross-check" `Quick cross_check ];
      "zero alloc", zero_alloc_cases ]
