(* The opening handshake: SHA-1, Sec-WebSocket-Accept, upgrade verdicts,
   the 101 head, permessage-deflate negotiation. *)

open Httpz

(* ---------- SHA-1 and the accept value ---------- *)

let hex = Wsproto_oracle.hex

let sha1_vectors () =
  let c name want s = Alcotest.(check string) name want (hex (Sha1.digest_string s)) in
  (* FIPS 180-2 appendix A and the NIST examples *)
  c "abc" "a9993e364706816aba3e25717850c26c9cd0d89d" "abc";
  c "empty" "da39a3ee5e6b4b0d3255bfef95601890afd80709" "";
  c "two blocks" "84983e441c3bd26ebaae4aa1f95129e5e54670f1"
    "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  c "a million a" "34aa973cd4c4daa4f61eeb2bdbad27316534016f" (String.make 1_000_000 'a');
  (* fed in pieces, the context reused *)
  let t = Sha1.create () and out = Bigstring.create 20 in
  Sha1.feed_string t "abcdbcdecdefdefgefghfghighij" ~off:0 ~len:28;
  Sha1.feed_bigstring t (Bigstring.of_string "xhijkijkljklmklmnlmnomnopnopq") ~off:1 ~len:28;
  Sha1.finish t out ~off:0;
  Alcotest.(check string) "pieces" "84983e441c3bd26ebaae4aa1f95129e5e54670f1" (hex (Bigstring.to_string out));
  Sha1.feed_string t "abc" ~off:0 ~len:3;
  Sha1.finish t out ~off:0;
  Alcotest.(check string) "reused" "a9993e364706816aba3e25717850c26c9cd0d89d" (hex (Bigstring.to_string out))

let rfc_accept () =
  Alcotest.(check string) "RFC 6455 §1.3" "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="
    (Ws_handshake.accept_of_key "dGhlIHNhbXBsZSBub25jZQ==")

(* ---------- the opening handshake ---------- *)

let parse_request s =
  let buf = Bigstring.of_string s in
  let req = Request.create () in
  (match Request.parse req buf ~off:0 ~len:(String.length s) with
   | Complete -> ()
   | _ -> failwith ("request does not parse: " ^ s));
  req, buf

let upgrade ?(meth = "GET") ?(version = "HTTP/1.1") ?(extra = "")
    ?(fields = "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n\
                Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n") () =
  Printf.sprintf "%s /chat %s\r\nHost: server.example.com\r\n%s%s\r\n" meth version fields extra

let verdicts () =
  let c name want s =
    let req, buf = parse_request s in
    Alcotest.(check string) name (Ws_handshake.verdict_to_string want)
      (Ws_handshake.verdict_to_string (Ws_handshake.check req buf))
  in
  let f u c v k = String.concat "" [ u; c; v; k ] in
  let u = "Upgrade: websocket\r\n" and cn = "Connection: Upgrade\r\n"
  and v = "Sec-WebSocket-Version: 13\r\n" and k = "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n" in
  c "RFC example" Valid (upgrade ());
  c "tokens in lists, any case" Valid
    (upgrade ~fields:(f "upgrade: foo/2, WebSocket\r\n" "connection: keep-alive, UPGRADE\r\n" v k) ());
  c "connection on two lines" Valid (upgrade ~fields:(f u "Connection: keep-alive\r\nConnection: upgrade\r\n" v k) ());
  c "POST" Not_get (upgrade ~meth:"POST" ());
  c "HTTP/1.0" Not_http_1_1 (upgrade ~version:"HTTP/1.0" ());
  c "no upgrade" No_upgrade_websocket (upgrade ~fields:(f "" cn v k) ());
  c "upgrade h2c" No_upgrade_websocket (upgrade ~fields:(f "Upgrade: h2c\r\n" cn v k) ());
  c "no connection" No_connection_upgrade (upgrade ~fields:(f u "" v k) ());
  c "connection close" No_connection_upgrade (upgrade ~fields:(f u "Connection: close\r\n" v k) ());
  c "connection upgrades" No_connection_upgrade (upgrade ~fields:(f u "Connection: upgrades\r\n" v k) ());
  c "no version" No_version (upgrade ~fields:(f u cn "" k) ());
  c "version 8" Unsupported_version (upgrade ~fields:(f u cn "Sec-WebSocket-Version: 8\r\n" k) ());
  c "version 13, 8" Unsupported_version (upgrade ~fields:(f u cn "Sec-WebSocket-Version: 13, 8\r\n" k) ());
  c "no key" No_key (upgrade ~fields:(f u cn v "") ());
  c "short key" Bad_key (upgrade ~fields:(f u cn v "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ=\r\n") ());
  c "key without padding" Bad_key (upgrade ~fields:(f u cn v "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQAA\r\n") ());
  c "key with a bad char" Bad_key (upgrade ~fields:(f u cn v "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZ!==\r\n") ());
  c "20-byte key" Bad_key
    (upgrade ~fields:(f u cn v "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==AAAA\r\n") ());
  c "two keys" Bad_key (upgrade ~fields:(f u cn v (k ^ k)) ());
  Alcotest.(check int) "426" 426 (Ws_handshake.status Unsupported_version);
  Alcotest.(check int) "101" 101 (Ws_handshake.status Valid);
  Alcotest.(check int) "400" 400 (Ws_handshake.status Bad_key)

let response_head () =
  let req, buf = parse_request (upgrade ()) in
  let dst = Bigstring.create 256 in
  let sha = Sha1.create () in
  let n = Ws_handshake.write_response_head sha buf ~key:(Ws_handshake.key req buf) dst ~off:5 in
  Alcotest.(check string) "101 head"
    "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
     Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n"
    (Bigstring.sub_string dst ~off:5 ~len:(n - 5))

(* ---------- permessage-deflate negotiation ---------- *)

let negotiation () =
  let t = Ws_extension.create () in
  let c name offers want_result want_field =
    let extra = String.concat "" (List.map (fun o -> "Sec-WebSocket-Extensions: " ^ o ^ "\r\n") offers) in
    let req, buf = parse_request (upgrade ~extra ()) in
    let r = Ws_extension.negotiate t req buf in
    let name_of = function
      | Ws_extension.Accepted -> "accepted" | Not_offered -> "not_offered" | Declined -> "declined"
      | Malformed -> "malformed" in
    Alcotest.(check string) (name ^ ": result") (name_of want_result) (name_of r);
    let dst = Bigstring.create 200 in
    let n = Ws_extension.write_response_field t dst ~off:0 in
    Alcotest.(check string) (name ^ ": field") want_field (Bigstring.sub_string dst ~off:0 ~len:n)
  in
  let pmd p = "Sec-WebSocket-Extensions: permessage-deflate" ^ p ^ "\r\n" in
  c "none" [] Not_offered "";
  c "other extension" [ "x-webkit-deflate-frame" ] Not_offered "";
  c "plain" [ "permessage-deflate" ] Accepted (pmd "");
  c "browser offer" [ "permessage-deflate; client_max_window_bits" ] Accepted (pmd "");
  c "all parameters" [ "permessage-deflate; server_no_context_takeover; client_no_context_takeover; \
                        server_max_window_bits=10; client_max_window_bits=\"12\"" ] Accepted
    (pmd "; server_no_context_takeover; client_no_context_takeover; server_max_window_bits=10; \
          client_max_window_bits=12");
  c "first acceptable" [ "permessage-deflate; server_max_window_bits=7, permessage-deflate; \
                          server_max_window_bits=9"; "permessage-deflate" ] Accepted
    (pmd "; server_max_window_bits=9");
  c "second line" [ "foo; bar=1"; "permessage-deflate; client_no_context_takeover" ] Accepted
    (pmd "; client_no_context_takeover");
  c "unknown parameter" [ "permessage-deflate; foo" ] Declined "";
  c "duplicate parameter" [ "permessage-deflate; server_no_context_takeover; server_no_context_takeover" ]
    Declined "";
  c "server bits without value" [ "permessage-deflate; server_max_window_bits" ] Declined "";
  c "server bits 16" [ "permessage-deflate; server_max_window_bits=16" ] Declined "";
  c "server bits 08" [ "permessage-deflate; server_max_window_bits=08" ] Declined "";
  c "client bits 7" [ "permessage-deflate; client_max_window_bits=7" ] Declined "";
  c "takeover with value" [ "permessage-deflate; client_no_context_takeover=1" ] Declined "";
  c "escaped value" [ "permessage-deflate; client_max_window_bits=\"1\\5\"" ] Declined "";
  c "malformed" [ "permessage-deflate; =5" ] Malformed "";
  c "unterminated quote" [ "permessage-deflate; client_max_window_bits=\"10" ] Malformed "";
  c "garbage after" [ "permessage-deflate x" ] Malformed "";
  let req, buf = parse_request (upgrade ~extra:"Sec-WebSocket-Extensions: permessage-deflate; \
                                               server_max_window_bits=11; client_max_window_bits\r\n" ()) in
  ignore (Ws_extension.negotiate t req buf : Ws_extension.result);
  Alcotest.(check (list int)) "parameters" [ 11; 15 ]
    [ Ws_extension.server_max_window_bits t; Ws_extension.client_max_window_bits t ]

let cases =
  [ Alcotest.test_case "sha-1 vectors" `Quick sha1_vectors;
    Alcotest.test_case "accept of the RFC key" `Quick rfc_accept;
    Alcotest.test_case "upgrade verdicts" `Quick verdicts;
    Alcotest.test_case "101 head" `Quick response_head;
    Alcotest.test_case "permessage-deflate" `Quick negotiation ]
