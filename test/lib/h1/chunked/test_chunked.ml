(* Tests for Httpz.Chunked (RFC 9112 §7.1) and Httpz.Fixed_body. Every
   vector is fed whole, at an offset inside garbage, byte by byte, and split
   in two at every position; all must agree. *)

open Httpz
module S = Httpz_test_support

(* ---------- a driver that feeds slices and records the outcome ---------- *)

type final = Done | Need_more | Failed of Chunked.error * int (* error, absolute offset *)

type outcome = {
  data : string;
  final : final;
  rest : string;  (* bytes after Done, untouched by the decoder *)
  trailers : int;
  body : int;
}

let final_to_string = function
  | Done -> "done"
  | Need_more -> "need_more"
  | Failed (e, at) -> Printf.sprintf "error %s at %d" (Chunked.error_to_string e) at

let outcome_to_string o =
  Printf.sprintf "{data=%S; %s; rest=%S; trailers=%d; body=%d}" o.data (final_to_string o.final)
    o.rest o.trailers o.body

let outcome_t = Alcotest.testable (fun ppf o -> Format.pp_print_string ppf (outcome_to_string o)) ( = )

let fail fmt = Printf.ksprintf failwith fmt

(* Feeds [slices] in order, each in its own buffer at [off] with garbage
   around it, and checks the per-call contract on the way. *)
let feed ?(off = 0) ?(garbage = '\r') t slices =
  let data = Buffer.create 64 and rest = Buffer.create 16 in
  let final = ref Need_more and base = ref 0 in
  List.iter
    (fun s ->
      match !final with
      | Done -> Buffer.add_string rest s
      | Failed _ -> ()
      | Need_more ->
          let buf = S.bigstring_at ~garbage ~off s in
          let stop = off + String.length s in
          let pos = ref off and go = ref true in
          while !go do
            let len = stop - !pos in
            let r = Chunked.decode t buf ~off:!pos ~len in
            let c = Chunked.consumed t in
            if c < 0 || c > len then fail "consumed %d of %d" c len;
            match r with
            | Data ->
                let d_off = Chunked.data_off t and d_len = Chunked.data_len t in
                if d_len <= 0 then fail "empty Data";
                if d_off < !pos || d_off + d_len <> !pos + c then
                  fail "Data span [%d,+%d) does not end the %d consumed bytes at %d" d_off d_len c !pos;
                Buffer.add_string data (Bigstring.sub_string buf ~off:d_off ~len:d_len);
                pos := !pos + c
            | Need_more ->
                if c <> len then fail "Need_more consumed %d of %d" c len;
                if Chunked.data_len t <> 0 then fail "data_len after Need_more";
                go := false
            | Chunked.Done ->
                if not (Chunked.is_done t) then fail "is_done after Done";
                pos := !pos + c;
                Buffer.add_string rest (Bigstring.sub_string buf ~off:!pos ~len:(stop - !pos));
                final := Done;
                go := false
            | Error ->
                final := Failed (Chunked.error t, !base + (!pos - off) + c);
                go := false
          done;
          base := !base + String.length s)
    slices;
  { data = Buffer.contents data; final = !final; rest = Buffer.contents rest;
    trailers = Chunked.trailer_count t; body = Chunked.body_bytes t }

(* Vectors exercise the grammar with sizes up to 15 hex digits, so they run
   without a body limit; the default limit has tests of its own. *)
let decoder = function None -> Chunked.create ~max_body:max_int () | Some f -> f ()

let whole ?mk ?off input = feed ?off (decoder mk) [ input ]
let bytes_of s = List.init (String.length s) (fun i -> String.make 1 s.[i])

(* Every way of feeding must give the same outcome. *)
let check_all_feedings ?mk name input expected =
  let chk how got = Alcotest.check outcome_t (Printf.sprintf "%s (%s)" name how) expected got in
  chk "whole" (whole ?mk input);
  chk "at offset 11" (whole ?mk ~off:11 input);
  chk "garbage '0'" (feed ~off:5 ~garbage:'0' (decoder mk) [ input ]);
  chk "byte by byte" (feed (decoder mk) (bytes_of input));
  for p = 0 to String.length input do
    let a = String.sub input 0 p and b = String.sub input p (String.length input - p) in
    chk (Printf.sprintf "split at %d" p) (feed ~off:3 (decoder mk) [ a; b ])
  done

let ok ?(rest = "") ?(trailers = 0) data =
  { data; final = Done; rest; trailers; body = String.length data }

let err ?(data = "") ?(body = -1) e at =
  { data; final = Failed (e, at); rest = ""; trailers = 0;
    body = (if body < 0 then String.length data else body) }

let partial ?(body = -1) data =
  { data; final = Need_more; rest = ""; trailers = 0; body = (if body < 0 then String.length data else body) }

let x255 = String.make 255 'x'

let vectors =
  [ (* sizes *)
    "last chunk only", "0\r\n\r\n", ok "";
    "size 1", "1\r\na\r\n0\r\n\r\n", ok "a";
    "size ff", "ff\r\n" ^ x255 ^ "\r\n0\r\n\r\n", ok x255;
    "size FF", "FF\r\n" ^ x255 ^ "\r\n0\r\n\r\n", ok x255;
    "size fF", "fF\r\n" ^ x255 ^ "\r\n0\r\n\r\n", ok x255;
    "15 digits", "000000000000001\r\nz\r\n000000000000000\r\n\r\n", ok "z";
    "16 digits overflow", "0000000000000001\r\nz\r\n0\r\n\r\n", err Size_overflow 15;
    "16 f overflow", "ffffffffffffffff\r\n", err Size_overflow 15;
    "15 f fits", "fffffffffffffff\r\nabc", partial ~body:0xfff_ffff_ffff_ffff "abc";
    "several chunks",
    "4\r\nWiki\r\n5\r\npedia\r\nE\r\n in\r\n\r\nchunks.\r\n0\r\n\r\n",
    ok "Wikipedia in\r\n\r\nchunks.";
    "data holds CRLF and 0", "5\r\n0\r\n\r\n\r\n0\r\n\r\n", ok "0\r\n\r\n";
    (* bad sizes *)
    "empty size", "\r\n", err Bad_size 0;
    "minus", "-1\r\n", err Bad_size 0;
    "plus", "+1\r\n", err Bad_size 0;
    "leading space", " 1\r\n", err Bad_size 0;
    "0x prefix", "0x1\r\n", err Bad_size 1;
    "non-hex", "g\r\n", err Bad_size 0;
    "hex then junk", "1g\r\n", err Bad_size 1;
    "underscore", "1_0\r\n", err Bad_size 1;
    (* extensions *)
    "extension", "5;name=value\r\nhello\r\n0;last\r\n\r\n", ok "hello";
    "extension BWS", "5 ; a = b ;c\t;d\r\nhello\r\n0\r\n\r\n", ok "hello";
    "quoted extension", "5;a=\"q \\\"x\\\\ ;=\"\r\nhello\r\n0;z=\"\"\r\n\r\n", ok "hello";
    "empty ext name", "5;\r\nhello\r\n0\r\n\r\n", err ~body:5 Bad_extension 2;
    "empty ext value", "5;a=\r\n", err ~body:5 Bad_extension 4;
    "space before CRLF", "5 \r\n", err ~body:5 Bad_extension 2;
    "space after name before CRLF", "5;a \r\n", err ~body:5 Bad_extension 4;
    "space after token value before CRLF", "5;a=b \r\n", err ~body:5 Bad_extension 6;
    "two names", "5;a b\r\n", err ~body:5 Bad_extension 4;
    "unterminated quote", "5;a=\"x\r\n", err ~body:5 Bad_extension 6;
    "bad ext char", "5;a@b\r\n", err ~body:5 Bad_extension 3;
    "bad quoted-pair", "5;a=\"\\\x01\"\r\n", err ~body:5 Bad_extension 6;
    "junk after quote", "5;a=\"x\"y\r\n", err ~body:5 Bad_extension 7;
    "ext value '=' twice", "5;a==b\r\n", err ~body:5 Bad_extension 4;
    (* line endings *)
    "bare LF after size", "1\na\r\n0\r\n\r\n", err Bad_crlf 1;
    "bare LF alone", "\n", err Bad_crlf 0;
    "bare LF after ext", "1;a\n", err ~body:1 Bad_crlf 3;
    "CR then junk", "1\ra\r\n", err ~body:1 Bad_crlf 2;
    "bare LF after data", "1\r\na\n0\r\n\r\n", err ~data:"a" Bad_crlf 4;
    "missing CRLF after data", "1\r\nab\r\n0\r\n\r\n", err ~data:"a" Bad_crlf 4;
    "CR without LF after data", "1\r\na\r0\r\n\r\n", err ~data:"a" Bad_crlf 5;
    "bare LF at end", "0\r\n\n", err Bad_crlf 3;
    "CR junk at end", "0\r\n\rX", err Bad_crlf 4;
    (* trailers *)
    "one trailer", "0\r\nExpires: Wed, 21 Oct 2015 07:28:00 GMT\r\n\r\n", ok ~trailers:1 "";
    "two trailers", "1\r\nx\r\n0\r\nX-Sum: abc\r\nETag:\"e\"\r\n\r\n", ok ~trailers:2 "x";
    "empty value", "0\r\nX-Empty:\r\n\r\n", ok ~trailers:1 "";
    "obs-text value", "0\r\nX: caf\xc3\xa9\t!\r\n\r\n", ok ~trailers:1 "";
    "long name", "0\r\n" ^ String.make 40 'h' ^ ": v\r\n\r\n", ok ~trailers:1 "";
    "long name ending like a forbidden one", "0\r\nX-Content-Length-Something-Long-Name: 1\r\n\r\n",
    ok ~trailers:1 "";
    "forbidden Content-Length", "0\r\nContent-Length: 5\r\n\r\n", err Forbidden_trailer 17;
    "forbidden lower-case", "0\r\ntransfer-encoding: chunked\r\n\r\n", err Forbidden_trailer 20;
    "forbidden Host", "0\r\nX: 1\r\nHOST: a\r\n\r\n", { (err Forbidden_trailer 13) with trailers = 1 };
    "forbidden Trailer", "0\r\nTrailer: X\r\n\r\n", err Forbidden_trailer 10;
    "forbidden Authorization", "0\r\nAuthorization: x\r\n\r\n", err Forbidden_trailer 16;
    "forbidden Content-Type", "0\r\nContent-Type: x\r\n\r\n", err Forbidden_trailer 15;
    "space before colon", "0\r\nX : y\r\n\r\n", err Bad_trailer 4;
    "leading space", "0\r\n X: y\r\n\r\n", err Bad_trailer 3;
    "obs-fold", "0\r\nX: a\r\n b\r\n\r\n", { (err Bad_trailer 9) with trailers = 1 };
    "empty name", "0\r\n: y\r\n\r\n", err Bad_trailer 3;
    "no colon", "0\r\nX\r\n\r\n", err Bad_trailer 4;
    "control in value", "0\r\nX: a\x01b\r\n\r\n", err Bad_trailer 7;
    "NUL in value", "0\r\nX: \x00\r\n\r\n", err Bad_trailer 6;
    "DEL in value", "0\r\nX: \x7f\r\n\r\n", err Bad_trailer 6;
    "bare LF in value", "0\r\nX: a\nY: b\r\n\r\n", err Bad_crlf 7;
    "CR junk in trailer", "0\r\nX: a\rY\r\n\r\n", err Bad_crlf 8;
    (* pipelining *)
    "pipelined request after", "0\r\n\r\nGET / HTTP/1.1\r\n\r\n", ok ~rest:"GET / HTTP/1.1\r\n\r\n" "";
    "data then pipelined", "3\r\nabc\r\n0\r\n\r\n0\r\n\r\n", ok ~rest:"0\r\n\r\n" "abc";
    "trailer then pipelined", "0\r\nA: b\r\n\r\nPOST", ok ~trailers:1 ~rest:"POST" "";
    (* incomplete *)
    "empty input", "", partial "";
    "size only", "a", partial ~body:0 "";
    "inside data", "a\r\n01234", partial ~body:10 "01234";
    "before final CRLF", "0\r\nX: y\r\n", { (partial "") with trailers = 1 };
  ]

let vector_cases =
  List.map
    (fun (name, input, expected) ->
      Alcotest.test_case name `Quick (fun () -> check_all_feedings name input expected))
    vectors

(* ---------- limits: exactly at each limit, and one byte past ---------- *)

let test_line_limit () =
  let mk () = Chunked.create ~max_chunk_line:8 () in
  check_all_feedings ~mk "line at limit" "1;abcdef\r\nx\r\n0\r\n\r\n" (ok "x");
  check_all_feedings ~mk "line one past" "1;abcdefg\r\nx\r\n0\r\n\r\n" (err ~body:1 Line_too_long 8);
  check_all_feedings ~mk "limit applies per line" "1;abcdef\r\nx\r\n1;abcdef\r\ny\r\n0\r\n\r\n" (ok "xy");
  Alcotest.(check int) "default" 4096 Chunked.default_max_chunk_line;
  let long = "1;" ^ String.make 4094 'a' in
  Alcotest.check outcome_t "default at limit" (ok "x") (whole (long ^ "\r\nx\r\n0\r\n\r\n"));
  Alcotest.check outcome_t "default one past" (err ~body:1 Line_too_long 4096)
    (whole (long ^ "a\r\nx\r\n0\r\n\r\n"))

let test_trailer_limit () =
  let mk () = Chunked.create ~max_trailer_bytes:10 () in
  (* "Ab: cdef\r\n" is 10 bytes; the final empty line is not counted *)
  check_all_feedings ~mk "trailers at limit" "0\r\nAb: cdef\r\n\r\n" (ok ~trailers:1 "");
  check_all_feedings ~mk "trailers one past" "0\r\nAb: cdefg\r\n\r\n" (err Trailer_too_large 13);
  check_all_feedings ~mk "limit over all trailers" "0\r\nA: b\r\nC:d\r\n\r\n"
    { (err Trailer_too_large 13) with trailers = 1 };
  Alcotest.(check int) "default" 8192 Chunked.default_max_trailer_bytes;
  let at = "0\r\nX: " ^ String.make (8192 - 5) 'v' ^ "\r\n\r\n" in
  Alcotest.check outcome_t "default at limit" (ok ~trailers:1 "") (whole at);
  let past = "0\r\nX: " ^ String.make (8192 - 4) 'v' ^ "\r\n\r\n" in
  Alcotest.check outcome_t "default one past" (err Trailer_too_large (3 + 8192)) (whole past)

let test_body_limit () =
  let mk () = Chunked.create ~max_body:5 () in
  check_all_feedings ~mk "body at limit" "2\r\nhe\r\n3\r\nllo\r\n0\r\n\r\n" (ok "hello");
  check_all_feedings ~mk "one chunk past" "6\r\n" (err ~body:0 Body_too_large 1);
  check_all_feedings ~mk "sum past" "3\r\nabc\r\n3\r\nabc\r\n" (err ~data:"abc" Body_too_large 9);
  check_all_feedings ~mk "checked before extensions" "6;a=b\r\n" (err ~body:0 Body_too_large 1);
  (* no overflow near max_int: 2^60-1 + 2^60-1 declared with max_body = max_int is fine *)
  let t = Chunked.create ~max_body:max_int () in
  Alcotest.check outcome_t "huge sizes"
    (partial ~body:0xfff_ffff_ffff_ffff "")
    (feed t [ "fffffffffffffff\r\n" ]);
  (* set_max_body survives reset and is per message *)
  let t = Chunked.create () in
  Chunked.set_max_body t 2;
  Chunked.reset t;
  Alcotest.check outcome_t "set_max_body" (err ~body:0 Body_too_large 1) (feed t [ "3\r\nabc" ]);
  Chunked.reset t;
  Chunked.set_max_body t (-1);
  Alcotest.check outcome_t "set_max_body -1 = unlimited" (ok "abc") (feed t [ "3\r\nabc\r\n0\r\n\r\n" ]);
  Alcotest.check_raises "negative limit" (Invalid_argument "Chunked.create") (fun () ->
      ignore (Chunked.create ~max_body:(-1) ()));
  (* The default bounds a chunked body like Request bounds Content-Length. *)
  let t = Chunked.create () in
  Alcotest.check outcome_t "default limit: 1 GiB accepted"
    (partial ~body:(1 lsl 30) "") (feed t [ "40000000\r\n" ]);
  let t = Chunked.create () in
  Alcotest.check outcome_t "default limit: 1 GiB + 1 refused"
    (err ~body:0 Body_too_large 8) (feed t [ "40000001\r\n" ])

(* ---------- the state after Done / Error, and reset ---------- *)

let test_terminal_states () =
  let t = Chunked.create () in
  let buf = Bigstring.of_string "0\r\n\r\nXYZ" in
  let r = Chunked.decode t buf ~off:0 ~len:8 in
  Alcotest.(check bool) "done" true (r = Chunked.Done);
  Alcotest.(check int) "consumed up to the final LF" 5 (Chunked.consumed t);
  let r = Chunked.decode t buf ~off:5 ~len:3 in
  Alcotest.(check bool) "still done" true (r = Chunked.Done);
  Alcotest.(check int) "consumes nothing after Done" 0 (Chunked.consumed t);
  Chunked.reset t;
  Alcotest.(check bool) "reset clears done" false (Chunked.is_done t);
  let buf = Bigstring.of_string "zz" in
  let r = Chunked.decode t buf ~off:0 ~len:2 in
  Alcotest.(check bool) "error" true (r = Chunked.Error);
  Alcotest.(check int) "error at first byte" 0 (Chunked.consumed t);
  let r = Chunked.decode t (Bigstring.of_string "0\r\n\r\n") ~off:0 ~len:5 in
  Alcotest.(check bool) "poisoned" true (r = Chunked.Error);
  Alcotest.(check int) "poisoned consumes nothing" 0 (Chunked.consumed t);
  Chunked.reset t;
  Alcotest.check outcome_t "usable after reset" (ok "ab") (feed t [ "2\r\nab\r\n0\r\n\r\n" ]);
  Chunked.reset t;
  Alcotest.(check int) "reset clears counters" 0 (Chunked.trailer_count t + Chunked.body_bytes t)

let test_errors_total () =
  let all : Chunked.error list =
    [ Bad_size; Size_overflow; Bad_extension; Line_too_long; Bad_crlf; Bad_trailer;
      Forbidden_trailer; Trailer_too_large; Body_too_large ]
  in
  List.iter
    (fun e ->
      let want = match e with Chunked.Body_too_large -> 413 | Trailer_too_large -> 431 | _ -> 400 in
      Alcotest.(check int) (Chunked.error_to_string e) want (Chunked.error_status e))
    all;
  let names = List.map Chunked.error_to_string all in
  Alcotest.(check int) "distinct names" (List.length all) (List.length (List.sort_uniq compare names));
  List.iter
    (fun n -> String.iter (fun c -> if not ((c >= 'a' && c <= 'z') || c = '_') then fail "not snake_case: %s" n) n)
    names

let test_forbidden_list () =
  let forbidden =
    [ "Transfer-Encoding"; "Content-Length"; "Host"; "Trailer"; "Connection"; "TE"; "Upgrade";
      "Keep-Alive"; "Expect"; "Range"; "If-Match"; "If-None-Match"; "If-Modified-Since";
      "If-Unmodified-Since"; "If-Range"; "Max-Forwards"; "Cache-Control"; "Pragma";
      "Authorization"; "Proxy-Authorization"; "WWW-Authenticate"; "Proxy-Authenticate";
      "Cookie"; "Set-Cookie"; "Content-Encoding"; "Content-Type"; "Content-Range" ]
  and allowed = [ "Expires"; "ETag"; "Date"; "Server-Timing"; "Digest"; "X-Checksum"; "Last-Modified" ] in
  List.iter
    (fun n ->
      Alcotest.(check bool) n true (Chunked.forbidden_trailer (Header_name.of_string n));
      let input = "0\r\n" ^ String.lowercase_ascii n ^ ": v\r\n\r\n" in
      Alcotest.check outcome_t ("refused: " ^ n)
        (err Forbidden_trailer (3 + String.length n))
        (whole input))
    forbidden;
  List.iter
    (fun n ->
      Alcotest.(check bool) n false (Chunked.forbidden_trailer (Header_name.of_string n));
      Alcotest.check outcome_t ("accepted: " ^ n) (ok ~trailers:1 "") (whole ("0\r\n" ^ n ^ ": v\r\n\r\n")))
    allowed

(* ---------- properties ---------- *)

(* Splits [s] at the given cut points (any order, duplicates allowed). *)
let cut s points =
  let n = String.length s in
  let pts = List.sort_uniq compare (List.map (fun p -> p mod (n + 1)) points) in
  let rec go start = function
    | [] -> [ String.sub s start (n - start) ]
    | p :: rest -> String.sub s start (p - start) :: go p rest
  in
  go 0 pts

let gen_ext =
  QCheck2.Gen.oneofl [ ""; ";a"; ";a=b"; " ; name = \"quoted \\\" v\""; ";x=1;y"; "\t;k=v" ]

let gen_trailer =
  QCheck2.Gen.oneofl [ "X-Sum: 1\r\n"; "Expires: never\r\n"; "ETag: \"x\"\r\n"; "A:\r\n"; "Server-Timing: db;dur=53\r\n" ]

(* A valid chunked body built from generated parts, with its decoded data. *)
let gen_valid =
  QCheck2.Gen.(
    let chunk =
      map3
        (fun data ext upper ->
          let size = Printf.sprintf (if upper then "%X" else "%x") (String.length data) in
          (size ^ ext ^ "\r\n" ^ data ^ "\r\n", data))
        (string_size ~gen:char (int_range 1 40))
        gen_ext bool
    in
    map3
      (fun chunks (last_ext, trailers) suffix ->
        let wire = String.concat "" (List.map fst chunks) ^ "0" ^ last_ext ^ "\r\n"
                   ^ String.concat "" trailers ^ "\r\n" in
        (wire, String.concat "" (List.map snd chunks), List.length trailers, suffix))
      (list_size (int_range 0 5) chunk)
      (pair gen_ext (list_size (int_range 0 3) gen_trailer))
      (oneofl [ ""; "GET / HTTP/1.1\r\n"; "0\r\n\r\n" ]))

let prop_valid =
  QCheck2.Test.make ~count:500 ~name:"valid bodies decode to their data under any split"
    ~print:(fun ((w, _, _, s), pts) -> Printf.sprintf "%S ^ %S cut at %s" w s
               (String.concat "," (List.map string_of_int pts)))
    QCheck2.Gen.(pair gen_valid (list_size (int_range 0 12) nat))
    (fun ((wire, data, trailers, suffix), pts) ->
      let input = wire ^ suffix in
      let expected = { data; final = Done; rest = suffix; trailers; body = String.length data } in
      let got = feed ~off:2 (Chunked.create ()) (cut input pts) in
      got = expected
      || QCheck2.Test.fail_reportf "expected %s, got %s" (outcome_to_string expected) (outcome_to_string got))

(* Arbitrary (mostly invalid) byte strings: whatever the verdict, it must
   not depend on where the input was split, and decode never raises. *)
let gen_any =
  QCheck2.Gen.(
    map2 (fun prefix l -> prefix ^ String.concat "" l)
      (oneofl [ ""; "1\r\n"; "2\r\nab\r\n"; "0\r\n"; "0\r\nX: y\r\n"; "3;e=\"v\"\r\n"; "a" ])
      (list_size (int_range 0 20)
         (frequencyl
            [ 4, "\r\n"; 1, "\r"; 1, "\n"; 3, "0"; 2, "1"; 2, "a"; 1, "F"; 1, ";"; 1, "="; 1, " ";
              1, "\""; 1, "\\"; 1, ":"; 1, "X"; 1, "Host"; 1, "g"; 1, "\x00"; 1, "0\r\n\r\n"; 1, "X: y"; 1, "\t";
              1, "ffffffffffffffff" ])))

let prop_split_invariant =
  QCheck2.Test.make ~count:1000 ~name:"any input: the outcome does not depend on the split"
    ~print:(fun (s, pts) -> Printf.sprintf "%S cut at %s" s (String.concat "," (List.map string_of_int pts)))
    QCheck2.Gen.(pair gen_any (list_size (int_range 1 8) nat))
    (fun (input, pts) ->
      let a = feed (Chunked.create ~max_chunk_line:6 ~max_trailer_bytes:12 ()) [ input ]
      and b = feed ~off:1 (Chunked.create ~max_chunk_line:6 ~max_trailer_bytes:12 ()) (cut input pts) in
      a = b || QCheck2.Test.fail_reportf "whole %s, split %s" (outcome_to_string a) (outcome_to_string b))

(* ---------- zero allocation ---------- *)

let alloc_tests =
  let t = Chunked.create () in
  let body = "4\r\nWiki\r\n5;ext=\"v\"\r\npedia\r\nE\r\n in\r\n\r\nchunks.\r\n0\r\nX-Sum: 1\r\nExpires: x\r\n\r\n" in
  let buf = S.bigstring_at ~off:7 body in
  let n = String.length body in
  let drain () =
    Chunked.reset t;
    let off = ref 7 and stop = 7 + n and go = ref true in
    while !go do
      match Chunked.decode t buf ~off:!off ~len:(stop - !off) with
      | Data -> off := !off + Chunked.consumed t
      | _ -> go := false
    done
  in
  let bytewise () =
    Chunked.reset t;
    for i = 7 to 7 + n - 1 do
      let off = ref i and go = ref true in
      while !go do
        match Chunked.decode t buf ~off:!off ~len:(i + 1 - !off) with
        | Data -> off := !off + Chunked.consumed t
        | _ -> go := false
      done
    done
  in
  let bad = Bigstring.of_string "5;a=b\r\nhello\r\n0\r\nContent-Length: 1\r\n\r\n" in
  let fb = Fixed_body.create () in
  [ S.zero_alloc "decode whole body" drain;
    S.zero_alloc "decode byte by byte" bytewise;
    S.zero_alloc "decode to an error" (fun () ->
        Chunked.reset t;
        ignore (Chunked.decode t bad ~off:0 ~len:(Bigstring.length bad));
        ignore (Chunked.decode t bad ~off:(Chunked.consumed t) ~len:(Bigstring.length bad - Chunked.consumed t));
        ignore (Chunked.decode t bad ~off:(Chunked.consumed t) ~len:0);
        ignore (Chunked.error_status (Chunked.error t)));
    S.zero_alloc "fixed body" (fun () ->
        Fixed_body.start fb 10;
        ignore (Fixed_body.take fb ~available:4);
        ignore (Fixed_body.take fb ~available:100);
        ignore (Fixed_body.is_done fb && Fixed_body.remaining fb = 0));
  ]

(* ---------- Fixed_body ---------- *)

let test_fixed_body () =
  let t = Fixed_body.create () in
  Alcotest.(check bool) "fresh is done" true (Fixed_body.is_done t);
  Alcotest.(check int) "fresh takes nothing" 0 (Fixed_body.take t ~available:10);
  Fixed_body.start t 0;
  Alcotest.(check bool) "zero length done at once" true (Fixed_body.is_done t);
  Alcotest.(check int) "zero length: all bytes are the next request's" 0
    (Fixed_body.take t ~available:18);
  Fixed_body.start t 10;
  Alcotest.(check int) "remaining" 10 (Fixed_body.remaining t);
  Alcotest.(check bool) "not done" false (Fixed_body.is_done t);
  Alcotest.(check int) "nothing available" 0 (Fixed_body.take t ~available:0);
  Alcotest.(check int) "part" 4 (Fixed_body.take t ~available:4);
  Alcotest.(check int) "remaining after part" 6 (Fixed_body.remaining t);
  (* the rest of the body followed by a pipelined request *)
  let follower = "GET /next HTTP/1.1\r\n\r\n" in
  let k = Fixed_body.take t ~available:(6 + String.length follower) in
  Alcotest.(check int) "only the body's bytes" 6 k;
  Alcotest.(check bool) "done" true (Fixed_body.is_done t);
  Alcotest.(check int) "then nothing more" 0 (Fixed_body.take t ~available:5);
  Fixed_body.start t 3;
  Alcotest.(check int) "exact" 3 (Fixed_body.take t ~available:3);
  Alcotest.(check bool) "exact done" true (Fixed_body.is_done t);
  Alcotest.check_raises "negative length" (Invalid_argument "Fixed_body.start") (fun () ->
      Fixed_body.start t (-1));
  Alcotest.check_raises "negative available" (Invalid_argument "Fixed_body.take") (fun () ->
      ignore (Fixed_body.take t ~available:(-1)))

let prop_fixed_body =
  QCheck2.Test.make ~count:500 ~name:"fixed body: takes sum to the length, never more"
    QCheck2.Gen.(pair (int_range 0 1000) (list_size (int_range 0 20) (int_range 0 200)))
    (fun (n, reads) ->
      let t = Fixed_body.create () in
      Fixed_body.start t n;
      let total =
        List.fold_left
          (fun acc a ->
            let k = Fixed_body.take t ~available:a in
            assert (k >= 0 && k <= a);
            acc + k)
          0 reads
      in
      let avail = List.fold_left ( + ) 0 reads in
      total = min n avail && Fixed_body.remaining t = n - total
      && Fixed_body.is_done t = (total = n))

let () =
  Alcotest.run "chunked"
    [ "vectors", vector_cases;
      ( "limits",
        [ Alcotest.test_case "chunk line" `Quick test_line_limit;
          Alcotest.test_case "trailer bytes" `Quick test_trailer_limit;
          Alcotest.test_case "body" `Quick test_body_limit ] );
      ( "api",
        [ Alcotest.test_case "after Done / Error, reset" `Quick test_terminal_states;
          Alcotest.test_case "errors" `Quick test_errors_total;
          Alcotest.test_case "forbidden trailers" `Quick test_forbidden_list ] );
      "properties", [ S.qcheck prop_valid; S.qcheck prop_split_invariant ];
      ( "fixed_body",
        [ Alcotest.test_case "tracking" `Quick test_fixed_body; S.qcheck prop_fixed_body ] );
      "zero-alloc", alloc_tests;
    ]
