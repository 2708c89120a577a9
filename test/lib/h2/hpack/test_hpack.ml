(* Tests for Httpz.Hpack and Httpz.Huffman (RFC 7541): the Appendix C
   examples, fuzzing, limits, and allocation. The differential run against
   Python's hpack is Hpack_differential; the encoder/decoder table
   agreement is Hpack_table_sync. *)

open Httpz
module S = Httpz_test_support
module D = Hpack.Decoder
module E = Hpack.Encoder
open Hpack_common

(* ---------- RFC 7541 Appendix C ---------- *)

let c1_integers () =
  let check name ~prefix v bytes =
    let b = Bigstring.create 8 in
    let o = E.encode_integer b ~off:0 ~prefix ~first:0 v in
    Alcotest.(check string) (name ^ " encode") (hex bytes) (Bigstring.sub_string b ~off:0 ~len:o);
    let src = Bigstring.of_string (hex bytes) in
    let r = D.decode_integer src ~off:0 ~stop:(Bigstring.length src) ~prefix in
    Alcotest.(check (pair int int)) (name ^ " decode") (v, String.length (hex bytes)) (r lsr 3, r land 7)
  in
  check "C.1.1 10, 5-bit prefix" ~prefix:5 10 "0a";
  check "C.1.2 1337, 5-bit prefix" ~prefix:5 1337 "1f9a0a";
  check "C.1.3 42, 8-bit prefix" ~prefix:8 42 "2a"

let c2 () =
  let cases =
    [ ("C.2.1", "400a 6375 7374 6f6d 2d6b 6579 0d63 7573 746f 6d2d 6865 6164 6572",
       [ ("custom-key", "custom-header") ], ([ ("custom-key", "custom-header") ], 55),
       fun e b -> E.literal e b ~off:0 With_indexing "custom-key" "custom-header");
      ("C.2.2", "040c 2f73 616d 706c 652f 7061 7468", [ (":path", "/sample/path") ], ([], 0),
       fun e b -> E.literal e b ~off:0 Without_indexing ":path" "/sample/path");
      ("C.2.3", "1008 7061 7373 776f 7264 0673 6563 7265 74", [ ("password", "secret") ], ([], 0),
       fun e b -> E.field_sensitive e b ~off:0 "password" "secret");
      ("C.2.4", "82", [ (":method", "GET") ], ([], 0), fun e b -> E.field_s e b ~off:0 ":method" "GET") ]
  in
  List.iter
    (fun (name, block, fields, table, enc) ->
      let d = D.create () in
      Alcotest.check outcome (name ^ " fields") (Fields fields) (decode d (hex block));
      Alcotest.check table_t (name ^ " table") table (table_contents d);
      let e = E.create ~huffman:false ~table_size:4096 () in
      Alcotest.(check string) (name ^ " encode") (to_hex (hex block)) (to_hex (encode_with (enc e))))
    cases;
  (* C.2.3's never-indexed flag reaches the caller. *)
  let d = D.create () in
  let src = Bigstring.of_string (hex "1008 7061 7373 776f 7264 0673 6563 7265 74") in
  D.start_block d ~off:0 ~len:(Bigstring.length src);
  Alcotest.(check bool) "C.2.3 field" true (D.next_field d src ~out:(Bigstring.create 64) = D.Field);
  Alcotest.(check bool) "C.2.3 never indexed" true (D.never_indexed d)

let requests =
  [ [ (":method", "GET"); (":scheme", "http"); (":path", "/"); (":authority", "www.example.com") ];
    [ (":method", "GET"); (":scheme", "http"); (":path", "/"); (":authority", "www.example.com");
      ("cache-control", "no-cache") ];
    [ (":method", "GET"); (":scheme", "https"); (":path", "/index.html");
      (":authority", "www.example.com"); ("custom-key", "custom-value") ] ]

let request_tables =
  [ ([ (":authority", "www.example.com") ], 57);
    ([ ("cache-control", "no-cache"); (":authority", "www.example.com") ], 110);
    ([ ("custom-key", "custom-value"); ("cache-control", "no-cache");
       (":authority", "www.example.com") ], 164) ]

let date1 = "Mon, 21 Oct 2013 20:13:21 GMT"
let date2 = "Mon, 21 Oct 2013 20:13:22 GMT"
let cookie = "foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1"
let loc = "https://www.example.com"

let responses =
  [ [ (":status", "302"); ("cache-control", "private"); ("date", date1); ("location", loc) ];
    [ (":status", "307"); ("cache-control", "private"); ("date", date1); ("location", loc) ];
    [ (":status", "200"); ("cache-control", "private"); ("date", date2); ("location", loc);
      ("content-encoding", "gzip"); ("set-cookie", cookie) ] ]

let response_tables =
  [ ([ ("location", loc); ("date", date1); ("cache-control", "private"); (":status", "302") ], 222);
    ([ (":status", "307"); ("location", loc); ("date", date1); ("cache-control", "private") ], 222);
    ([ ("set-cookie", cookie); ("content-encoding", "gzip"); ("date", date2) ], 215) ]

let c3 = [ "828684410f7777772e6578616d706c652e636f6d"; "828684be58086e6f2d6361636865";
           "828785bf400a637573746f6d2d6b65790c637573746f6d2d76616c7565" ]
let c4 = [ "828684418cf1e3c2e5f23a6ba0ab90f4ff"; "828684be5886a8eb10649cbf";
           "828785bf408825a849e95ba97d7f8925a849e95bb8e8b4bf" ]
let c5 = [ "4803333032580770726976617465611d4d6f6e2c203231204f637420323031332032303a31333a323120474d546e1768747470733a2f2f7777772e6578616d706c652e636f6d";
           "4803333037c1c0bf";
           "88c1611d4d6f6e2c203231204f637420323031332032303a31333a323220474d54c05a04677a69707738666f6f3d4153444a4b48514b425a584f5157454f50495541585157454f49553b206d61782d6167653d333630303b2076657273696f6e3d31" ]
let c6 = [ "488264025885aec3771a4b6196d07abe941054d444a8200595040b8166e082a62d1bff6e919d29ad171863c78f0b97c8e9ae82ae43d3";
           "4883640effc1c0bf";
           "88c16196d07abe941054d444a8200595040b8166e084a62d1bffc05a839bd9ab77ad94e7821dd7f2e6c7b335dfdfcd5b3960d5af27087f3672c1ab270fb5291f9587316065c003ed4ee5b1063d5007" ]

(* Decodes a sequence of blocks with one decoder and encodes the same
   header lists with one encoder: both must match the RFC byte for byte. *)
let sequence name ~table_size ~huffman blocks lists tables () =
  let d = D.create ~max_table_size:table_size () in
  let e = E.create ~huffman ~table_size () in
  List.iteri
    (fun i ((block, fields), table) ->
      let label = Printf.sprintf "%s.%d" name (i + 1) in
      Alcotest.check outcome (label ^ " fields") (Fields fields) (decode d (hex block));
      Alcotest.check table_t (label ^ " table") table (table_contents d);
      let got =
        encode_with (fun b ->
            List.fold_left (fun o (n, v) -> E.field_s e b ~off:o n v) (E.start_block e b ~off:0) fields)
      in
      Alcotest.(check string) (label ^ " encode") block (to_hex got);
      let et = E.table e in
      Alcotest.check table_t (label ^ " encoder table") table (entries et, Hpack.Table.size et))
    (List.combine (List.combine blocks lists) tables)

let appendix_c =
  [ Alcotest.test_case "C.1 integers" `Quick c1_integers;
    Alcotest.test_case "C.2 literal fields" `Quick c2;
    Alcotest.test_case "C.3 requests, no Huffman" `Quick
      (sequence "C.3" ~table_size:4096 ~huffman:false c3 requests request_tables);
    Alcotest.test_case "C.4 requests, Huffman" `Quick
      (sequence "C.4" ~table_size:4096 ~huffman:true c4 requests request_tables);
    Alcotest.test_case "C.5 responses, no Huffman, eviction at 256" `Quick
      (sequence "C.5" ~table_size:256 ~huffman:false c5 responses response_tables);
    Alcotest.test_case "C.6 responses, Huffman, eviction at 256" `Quick
      (sequence "C.6" ~table_size:256 ~huffman:true c6 responses response_tables) ]

(* ---------- Huffman ---------- *)

let huff_encode s =
  let b = Bigstring.create ((4 * String.length s) + 8) in
  let n = Huffman.encode_string s ~off:0 ~len:(String.length s) b ~dst_off:0 in
  Bigstring.sub_string b ~off:0 ~len:n

(* The decoded string, or the error code. *)
let huff_decode ?(garbage = '\000') s =
  let src = S.bigstring_at ~garbage ~off:5 s in
  let dst = Bigstring.create ((2 * String.length s) + 8) in
  let n = Huffman.decode src ~off:5 ~len:(String.length s) dst ~dst_off:3 ~dst_stop:(Bigstring.length dst) in
  if n < 0 then Error n else Ok (Bigstring.sub_string dst ~off:3 ~len:n)

let huff_result = Alcotest.(result string int)

let huffman_roundtrip =
  QCheck2.Test.make ~count:1000 ~name:"Huffman: encode then decode is the identity"
    ~print:String.escaped QCheck2.Gen.(string_size ~gen:char (int_range 0 200))
    (fun s ->
      let e = huff_encode s in
      String.length e = Huffman.encoded_length_string s ~off:0 ~len:(String.length s)
      && String.length e = Huffman.encoded_length (Bigstring.of_string s) ~off:0 ~len:(String.length s)
      && (let b = Bigstring.create (String.length e) in
          Huffman.encode (Bigstring.of_string s) ~off:0 ~len:(String.length s) b ~dst_off:0 = String.length e
          && Bigstring.to_string b = e)
      && huff_decode ~garbage:'\000' e = Ok s
      && huff_decode ~garbage:'\255' e = Ok s)

let huffman_cases () =
  let all = String.init 256 Char.chr in
  Alcotest.check huff_result "all 256 byte values" (Ok all) (huff_decode (huff_encode all));
  (* each byte alone: exercises every code's padding *)
  for c = 0 to 255 do
    let s = String.make 1 (Char.chr c) in
    Alcotest.check huff_result (Printf.sprintf "byte %d" c) (Ok s) (huff_decode (huff_encode s))
  done;
  Alcotest.check huff_result "empty" (Ok "") (huff_decode "");
  (* 'a' is 00011: padding 111 is valid, 000 is not, a whole extra byte of
     ones is padding longer than 7 bits *)
  Alcotest.check huff_result "'a' padded with ones" (Ok "a") (huff_decode "\x1f");
  Alcotest.check huff_result "padding not all ones" (Error Huffman.error_padding) (huff_decode "\x18");
  Alcotest.check huff_result "padding of 8+ bits" (Error Huffman.error_padding) (huff_decode "\x1f\xff");
  Alcotest.check huff_result "a lone byte of ones" (Error Huffman.error_padding) (huff_decode "\xff");
  (* EOS is 30 ones: 32 ones hold it *)
  Alcotest.check huff_result "EOS" (Error Huffman.error_eos) (huff_decode "\xff\xff\xff\xff");
  Alcotest.check huff_result "EOS after a symbol" (Error Huffman.error_eos) (huff_decode "\x1f\xff\xff\xff\xff");
  (* RFC 7541 C.4.1's string *)
  Alcotest.check huff_result "www.example.com" (Ok "www.example.com")
    (huff_decode (hex "f1e3 c2e5 f23a 6ba0 ab90 f4ff"));
  Alcotest.(check string) "encode www.example.com" "f1e3c2e5f23a6ba0ab90f4ff" (to_hex (huff_encode "www.example.com"));
  (* output limit *)
  let src = Bigstring.of_string (huff_encode "hello") in
  let dst = Bigstring.create 8 in
  Alcotest.(check int) "no space" Huffman.error_no_space
    (Huffman.decode src ~off:0 ~len:(Bigstring.length src) dst ~dst_off:0 ~dst_stop:4)

(* ---------- limits and errors ---------- *)

let err e = Failed e

let limits () =
  let check name ?(d = D.create ()) expected block =
    Alcotest.check outcome name expected (decode d block)
  in
  (* HPACK bomb: one 4000-byte entry, then 10000 one-byte references *)
  let big = String.make 4000 'v' in
  let d = D.create () in
  let first = "\x40\x01x" ^ "\x7f\xa1\x1e" ^ big in
  (match decode d first with Fields [ ("x", v) ] when v = big -> () | o -> Alcotest.failf "bomb setup: %s" (outcome_to_string o));
  let bomb = String.make 10000 '\xbe' in
  check "bomb" ~d (err Header_list_too_large) bomb;
  let per = 1 + 4000 + 32 in
  Alcotest.(check int) "bomb: fields before the limit" (D.default_max_header_list_size / per) (D.field_count d);
  Alcotest.(check bool) "bomb: output bounded" true (D.output_length d <= D.default_max_header_list_size);
  Alcotest.(check bool) "bomb: stays failed" true (D.failed d);
  (* the limit counts 32 per field: 1000 empty-valued static refs (x:"" is
     index 1, :authority with 10+0+32 = 42 bytes) *)
  let d = D.create ~max_header_list_size:420 () in
  check "list size counts 32 per field" ~d (err Header_list_too_large) (String.make 11 '\x81');
  let d = D.create ~max_header_list_size:420 () in
  check "exactly at the limit" ~d (Fields (List.init 10 (fun _ -> (":authority", "")))) (String.make 10 '\x81');
  (* Huffman value that would cross the list limit *)
  let d = D.create ~max_header_list_size:(32 + 1 + 10) () in
  let v = huff_encode (String.make 11 'a') in
  check "huffman value over the limit" ~d (err Header_list_too_large)
    ("\x00\x01x" ^ String.make 1 (Char.chr (0x80 lor String.length v)) ^ v);
  check "string length over max_string_length" (err String_too_long) "\x00\x7f\xa1\x9c\x01";
  check "truncated string" (err Truncated) "\x41\x0fwww";
  check "truncated integer" (err Truncated) "\xff";
  check "integer overflow" (err Integer_overflow) "\xff\xff\xff\xff\xff\x0f";
  check "integer with 5 continuation bytes" (err Integer_overflow) "\xff\x80\x80\x80\x80\x00";
  check "index 0" (err Bad_index) "\x80";
  check "index past the empty dynamic table" (err Bad_index) "\xbe";
  check "name index past the tables" (err Bad_index) "\x7f\x00\x00";
  check "size update to the max" (Fields [ (":method", "GET") ]) "\x3f\xe1\x1f\x82";
  check "size update above the max" (err Table_size_too_large) "\x3f\xe2\x1f";
  check "size update after a field" (err Table_size_update_late) "\x82\x20";
  check "two size updates at the start" (Fields [ (":method", "GET") ]) "\x20\x3f\xe1\x1f\x82";
  check "huffman EOS in a value" (err Huffman_eos) "\x04\x84\xff\xff\xff\xff";
  check "huffman bad padding in a name" (err Huffman_padding) "\x00\x81\x18\x00"

let output_full () =
  let d = D.create () in
  Alcotest.check outcome "out of 10 bytes" (Failed Output_full) (decode ~out_size:10 d "\x82\x82\x82")

let size_update_evicts () =
  let d = D.create () in
  ignore (decode d (hex "400a637573746f6d2d6b65790d637573746f6d2d686561646572"));
  Alcotest.(check int) "one entry" 1 (Hpack.Table.length (D.table d));
  Alcotest.check outcome "update to 0, then a static field" (Fields [ (":path", "/") ]) (decode d "\x20\x84");
  Alcotest.check table_t "emptied" ([], 0) (table_contents d);
  Alcotest.check outcome "the entry is gone" (Failed Bad_index) (decode d "\xbe")

(* An entry whose name is an entry the insertion evicts (§4.4). *)
let evicted_name () =
  let d = D.create ~max_table_size:60 () in
  Alcotest.check outcome "first" (Fields [ ("abcd", "0123456789") ]) (decode d "\x40\x04abcd\x0a0123456789");
  Alcotest.check outcome "second names the first" (Fields [ ("abcd", "zyxwvutsrqponm") ])
    (decode d "\x7e\x0ezyxwvutsrqponm");
  Alcotest.check table_t "only the second" ([ ("abcd", "zyxwvutsrqponm") ], 50) (table_contents d)

(* ---------- robustness ---------- *)

let corpus = List.map hex (c3 @ c4 @ c5 @ c6)

let gen_input =
  let open QCheck2.Gen in
  let random = string_size ~gen:char (int_range 0 64) in
  let mutated =
    oneofl corpus >>= fun s ->
    list_size (int_range 1 4) (pair (int_bound (String.length s - 1)) char) >|= fun edits ->
    let b = Bytes.of_string s in
    List.iter (fun (i, c) -> Bytes.set b i c) edits;
    Bytes.to_string b
  in
  let truncated = oneofl corpus >>= fun s -> int_bound (String.length s) >|= fun n -> String.sub s 0 n in
  list_size (int_range 1 4) (oneof [ random; mutated; truncated; oneofl corpus ])

(* Several blocks through one decoder (the table carries over), twice with
   different garbage around the block: the same outcomes, never an
   exception. *)
let robustness =
  QCheck2.Test.make ~count:2000 ~name:"random and mutated blocks: an outcome, never an exception or a stray read"
    ~print:(fun (l, n) -> Printf.sprintf "out %d: %s" n (String.concat " | " (List.map to_hex l)))
    QCheck2.Gen.(pair gen_input (oneofl [ 64; 4096 ]))
    (fun (blocks, out_size) ->
      let run garbage =
        let d = D.create ~max_table_size:256 () in
        List.map (fun b -> decode ~garbage ~out_size d b) blocks
      in
      let a = run '\000' and b = run '\255' in
      a = b || QCheck2.Test.fail_reportf "garbage changes the outcome")

let robust_errors () =
  (* every prefix of every vector, alone: a truncation is an error or a
     shorter list, never an exception *)
  List.iter
    (fun s ->
      for n = 0 to String.length s do
        match decode (D.create ()) (String.sub s 0 n) with Fields _ | Failed _ -> ()
      done)
    corpus

(* ---------- encoder ---------- *)

(* field_checked and the plain (no table, no Huffman) fast paths write the
   bytes the general path writes. *)
let checked_cases () =
  let plain = E.create ~huffman:false () in
  let general f = encode_with f in
  let src = S.bigstring_at ~off:5 "text/html; charset=utf-8" in
  List.iter
    (fun name ->
      let expected = general (fun b -> E.field_span plain b ~off:0 name src (Span.make ~off:5 ~len:24)) in
      Alcotest.(check string) (Header_name.to_string name) (to_hex expected)
        (to_hex (general (fun b -> E.field_checked plain b ~off:0 name src ~voff:5 ~vlen:24))))
    [ Content_type; Etag; X_request_id; Date; Server; Accept_encoding; Link ];
  let gz = Bigstring.of_string "gzip, deflate" in
  Alcotest.(check string) "an exact static match stays indexed" "90"
    (to_hex (general (fun b -> E.field_checked plain b ~off:0 Accept_encoding gz ~voff:0 ~vlen:13)));
  List.iter
    (fun code ->
      let block = general (fun b -> E.status plain b ~off:0 code) in
      Alcotest.check outcome (Printf.sprintf "plain status %d" code) (Fields [ (":status", string_of_int code) ])
        (decode (D.create ()) block))
    [ 100; 200; 204; 302; 404; 503; 999 ];
  Alcotest.check_raises "outside the source" (Invalid_argument "Httpz.Hpack.Encoder.field_checked") (fun () ->
      ignore (general (fun b -> E.field_checked plain b ~off:0 Etag src ~voff:20 ~vlen:(Bigstring.length src))))

let encoder_cases () =
  let e = E.create () in
  let enc f = to_hex (encode_with f) in
  List.iter
    (fun (code, expected) ->
      Alcotest.(check string) (Printf.sprintf "status %d" code) expected (enc (fun b -> E.status e b ~off:0 code)))
    [ (200, "88"); (204, "89"); (206, "8a"); (304, "8b"); (400, "8c"); (404, "8d"); (500, "8e") ];
  (* other codes: literal, static name :status, Huffman when shorter *)
  List.iter
    (fun code ->
      let block = encode_with (fun b -> E.status e b ~off:0 code) in
      Alcotest.check outcome (Printf.sprintf "status %d" code) (Fields [ (":status", string_of_int code) ]) (decode (D.create ()) block);
      Alcotest.(check char) "name index 8, without indexing" '\x08' block.[0])
    [ 100; 302; 307; 418; 503; 999 ];
  let block = encode_with (fun b ->
    let o = E.field e b ~off:0 Content_type "text/html; charset=utf-8" in
    let o = E.field_int e b ~off:o Content_length 1234567 in
    let o = E.field e b ~off:o X_request_id "abc" in
    let o = E.field e b ~off:o Accept_encoding "gzip, deflate" in
    let src = S.bigstring_at ~off:3 "W/\"etag\"" in
    E.field_span e b ~off:o Etag src (Span.make ~off:3 ~len:8)) in
  Alcotest.check outcome "known fields"
    (Fields [ ("content-type", "text/html; charset=utf-8"); ("content-length", "1234567");
              ("x-request-id", "abc"); ("accept-encoding", "gzip, deflate"); ("etag", "W/\"etag\"") ])
    (decode (D.create ()) block);
  Alcotest.(check char) "accept-encoding: gzip, deflate is index 16" '\x90' block.[String.length block - 11];
  let raises name exn f =
    let b = Bigstring.create 4 in
    b.{0} <- 'z';
    Alcotest.check_raises name exn (fun () -> ignore (f b : int));
    Alcotest.(check char) (name ^ ": nothing written") 'z' b.{0}
  in
  raises "no space" E.No_space (fun b -> E.field e b ~off:0 Server "a long server name");
  raises "CR in a value" E.Invalid_field (fun b -> E.field e b ~off:0 Server "a\r");
  raises "upper-case name" E.Invalid_field (fun b -> E.field_s e b ~off:0 "X-A" "1");
  raises "upper-case name, span value" E.Invalid_field (fun b ->
      E.field_s_span e b ~off:0 "X-A" (Bigstring.of_string "1") (Span.make ~off:0 ~len:1));
  (* a name string, its value a span: as a server converting its own head lines *)
  let src = S.bigstring_at ~off:5 "nosniff" in
  let block = encode_with (fun b ->
    let o = E.field_s_span e b ~off:0 "x-content-type-options" src (Span.make ~off:5 ~len:7) in
    E.field_s_span e b ~off:o "cache-control" src (Span.make ~off:5 ~len:2)) in
  Alcotest.check outcome "field_s_span"
    (Fields [ ("x-content-type-options", "nosniff"); ("cache-control", "no") ]) (decode (D.create ()) block);
  raises "Other as a name" E.Invalid_field (fun b -> E.field e b ~off:0 Other "1");
  raises "status 1000" E.Invalid_field (fun b -> E.status e b ~off:0 1000);
  (* the dynamic table: the second time, one byte per field *)
  let e = E.create ~table_size:4096 () in
  let head b off =
    let o = E.status e b ~off 200 in
    let o = E.field e b ~off:o Server "httpz" in
    E.field e b ~off:o Content_type "text/html" in
  let first = encode_with (fun b -> head b 0) and second = encode_with (fun b -> head b 0) in
  Alcotest.(check string) "repeated head: indices" "88bfbe" (to_hex second);
  let d = D.create () in
  ignore (decode d first);
  Alcotest.check outcome "repeated head decodes"
    (Fields [ (":status", "200"); ("server", "httpz"); ("content-type", "text/html") ]) (decode d second);
  (* a smaller peer table: the next block starts with the update *)
  E.set_peer_max_table_size e 100;
  let third = encode_with (fun b -> head b (E.start_block e b ~off:0)) in
  Alcotest.(check char) "size update first" '\x3f' third.[0];
  Alcotest.check outcome "after the update"
    (Fields [ (":status", "200"); ("server", "httpz"); ("content-type", "text/html") ]) (decode d third)

(* The slot arrays grow (8, 16, ...) while entries wrap around them: every
   entry keeps its index, name and value, newest first. *)
let table_grows () =
  let t = Hpack_table.create ~capacity:4096 in
  let src = Bigstring.create 256 in
  let add i =
    let name = Printf.sprintf "n%d" i and value = Printf.sprintf "value-%d" i in
    Bigstring.blit_from_string name ~src_off:0 src ~dst_off:0 ~len:(String.length name);
    Bigstring.blit_from_string value ~src_off:0 src ~dst_off:100 ~len:(String.length value);
    Hpack_table.add t src ~name_off:0 ~name_len:(String.length name) ~value_off:100
      ~value_len:(String.length value) Header_name.Other Hpack_static.Regular
  in
  (* a small maximum first: entries 0..5 come and go, so the oldest slot
     is no longer slot 0 when the arrays fill up *)
  Hpack_table.set_max_size t 100;
  for i = 0 to 5 do add i done;
  Hpack_table.set_max_size t 4096;
  for i = 6 to 40 do add i done;
  let n = Hpack_table.length t in
  Alcotest.(check bool) "all kept" true (n >= 35);
  for k = 1 to n do
    let i = 41 - k in
    Alcotest.(check (pair string string)) "entry" (Printf.sprintf "n%d" i, Printf.sprintf "value-%d" i)
      (Hpack_table.entry t k)
  done;
  let name = Bigstring.of_string "n7value-7" in
  Alcotest.(check int) "found" (41 - 7) (Hpack_table.find t name ~name_off:0 ~name_len:2 ~value_off:2 ~value_len:7)

(* ---------- allocation ---------- *)

let zero_alloc =
  let src = Bigstring.of_string (hex (List.nth c4 1)) in
  let len = Bigstring.length src in
  let out = Bigstring.create 4096 in
  let d = D.create () in
  let warm = Bigstring.of_string (hex (List.nth c4 0)) in
  D.start_block d ~off:0 ~len:(Bigstring.length warm);
  while D.next_field d warm ~out = D.Field do () done;
  (* Each block adds an entry: the table reaches its steady state (full,
     evicting one entry per block, its slot arrays grown to the peak entry
     count, which happens once per table) after about 80 blocks. *)
  for _ = 1 to 200 do
    D.start_block d ~off:0 ~len;
    while D.next_field d src ~out = D.Field do () done
  done;
  let buf = Bigstring.create 4096 in
  let e = E.create ~table_size:4096 () in
  let plain = E.create () in
  let date = Bigstring.of_string date1 in
  let nosniff = Bigstring.of_string "nosniff" in
  let head e =
    let o = E.start_block e buf ~off:0 in
    let o = E.status e buf ~off:o 200 in
    let o = E.field e buf ~off:o Server "httpz" in
    let o = E.field e buf ~off:o Content_type "text/html; charset=utf-8" in
    let o = E.field_int e buf ~off:o Content_length 48213 in
    let o = E.field_span e buf ~off:o Date date (Span.make ~off:0 ~len:(Bigstring.length date)) in
    let o = E.status e buf ~off:o 302 in
    let o = E.field_s_span e buf ~off:o "x-content-type-options" nosniff (Span.make ~off:0 ~len:7) in
    ignore (E.field_s e buf ~off:o "x-trace" "0af7651916cd43dd8448eb211c80319c" : int)
  in
  let text = Bigstring.of_string "https://www.example.com/index.html?q=hpack" in
  let coded = Bigstring.create 64 in
  let n = Huffman.encode text ~off:0 ~len:(Bigstring.length text) coded ~dst_off:0 in
  [ S.zero_alloc "decode a request block (Huffman, dynamic table hits)" (fun () ->
        D.start_block d ~off:0 ~len;
        while D.next_field d src ~out = D.Field do ignore (D.header_name d : Header_name.t) done);
    S.zero_alloc "encode a response head, dynamic table" (fun () -> head e);
    S.zero_alloc "encode a response head, no table" (fun () -> head plain);
    (let raw = E.create ~huffman:false () in
     let ctype = Bigstring.of_string "text/html; charset=utf-8" in
     S.zero_alloc "encode a checked response head, no table, no Huffman" (fun () ->
         let o = E.start_block raw buf ~off:0 in
         let o = E.status raw buf ~off:o 200 in
         let o = E.field_checked raw buf ~off:o Content_type ctype ~voff:0 ~vlen:24 in
         let o = E.field_checked raw buf ~off:o Date date ~voff:0 ~vlen:(Bigstring.length date) in
         let o = E.field_checked raw buf ~off:o X_request_id nosniff ~voff:0 ~vlen:7 in
         let o = E.status raw buf ~off:o 302 in
         ignore (E.field_int raw buf ~off:o Content_length 48213 : int)));
    S.zero_alloc "Huffman encode" (fun () ->
        ignore (Huffman.encoded_length text ~off:0 ~len:(Bigstring.length text) : int);
        ignore (Huffman.encode text ~off:0 ~len:(Bigstring.length text) buf ~dst_off:0 : int));
    S.zero_alloc "Huffman decode" (fun () ->
        ignore (Huffman.decode coded ~off:0 ~len:n buf ~dst_off:0 ~dst_stop:4096 : int));
    (let path = Bigstring.of_string (huff_encode "/index.html") in
     S.zero_alloc "Huffman decode a typical :path" (fun () ->
         ignore (Huffman.decode path ~off:0 ~len:(Bigstring.length path) buf ~dst_off:0 ~dst_stop:4096 : int)));
    (* long codes (the tree walk), and an error *)
    (let path = Bigstring.of_string (huff_encode "/a|b\\c?q={\xc3\xa9}") in
     let eos = Bigstring.of_string "\x1f\xff\xff\xff\xff" in
     S.zero_alloc "Huffman decode long codes, and EOS" (fun () ->
         ignore (Huffman.decode path ~off:0 ~len:(Bigstring.length path) buf ~dst_off:0 ~dst_stop:4096 : int);
         ignore (Huffman.decode eos ~off:0 ~len:5 buf ~dst_off:0 ~dst_stop:4096 : int))) ]

let zero_alloc_errors =
  let bomb = Bigstring.of_string ("\x40\x01x\x7f\xa1\x1e" ^ String.make 4000 'v' ^ String.make 100 '\xbe') in
  let out = Bigstring.create 32768 in
  let d = D.create () in
  [ S.zero_alloc "decode an HPACK bomb to its error" (fun () ->
        D.reset d;
        D.start_block d ~off:0 ~len:(Bigstring.length bomb);
        while D.next_field d bomb ~out = D.Field do () done) ]

let () =
  Alcotest.run "hpack"
    [ ("appendix C", appendix_c);
      ("huffman", [ Alcotest.test_case "cases" `Quick huffman_cases; S.qcheck huffman_roundtrip ]);
      ("huffman vs reference", Hpack_huffman_diff.tests);
      ("limits", [ Alcotest.test_case "limits and errors" `Quick limits;
                   Alcotest.test_case "output buffer" `Quick output_full;
                   Alcotest.test_case "size update evicts" `Quick size_update_evicts;
                   Alcotest.test_case "evicted name reused" `Quick evicted_name;
                   Alcotest.test_case "slot arrays grow" `Quick table_grows ]);
      ("encoder", [ Alcotest.test_case "choices and refusals" `Quick encoder_cases;
                    Alcotest.test_case "checked values, plain encoder" `Quick checked_cases ]);
      ("differential", Hpack_differential.tests);
      ("table sync", Hpack_table_sync.tests);
      ("robustness", [ S.qcheck robustness; Alcotest.test_case "prefixes" `Quick robust_errors ]);
      ("zero alloc", zero_alloc @ zero_alloc_errors) ]
