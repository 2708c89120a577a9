(* Form and query decoding: vectors (WHATWG urlencoded parsing), round trip
   and robustness properties, zero allocation. *)

open Httpz
module S = Httpz_test_support

let whole s = Span.make ~off:0 ~len:(String.length s)
let pairs = Alcotest.(list (pair string string))

let vectors () =
  let check input want = Alcotest.check pairs input want (Form.pairs input) in
  check "a=1&b=2" [ ("a", "1"); ("b", "2") ];
  check "" [];
  check "&&a=1&&" [ ("a", "1") ];
  check "a" [ ("a", "") ];
  check "a=" [ ("a", "") ];
  check "=x" [ ("", "x") ];
  check "a=b=c" [ ("a", "b=c") ];
  check "name=J%C3%B6rg+X" [ ("name", "Jörg X") ];
  check "a+b=c+d" [ ("a b", "c d") ];
  check "%2B=%2b" [ ("+", "+") ];
  (* A '%' without two hex digits stays as it is (WHATWG). *)
  check "p=100%" [ ("p", "100%") ];
  check "p=%4" [ ("p", "%4") ];
  check "p=%zz1" [ ("p", "%zz1") ];
  check "p=%%41" [ ("p", "%A") ];
  check "k=%00v" [ ("k", "\000v") ];
  check "a=1&a=2" [ ("a", "1"); ("a", "2") ];
  let b = Bigstring.of_string "x=1&name=J%C3%B6rg&y" in
  Alcotest.(check (option string)) "get" (Some "Jörg") (Form.get b (whole "x=1&name=J%C3%B6rg&y") "name");
  Alcotest.(check (option string)) "get, no value" (Some "") (Form.get b (whole "x=1&name=J%C3%B6rg&y") "y");
  Alcotest.(check (option string)) "get, absent" None (Form.get b (whole "x=1&name=J%C3%B6rg&y") "z");
  Alcotest.(check string) "encode" "a+b%26c%3D%C3%B6*-._" (Form.encode "a b&c=ö*-._")

let encode_is_whatwg () =
  Alcotest.(check string) "tilde escaped" "%7E" (Form.encode "~")

let in_place () =
  let s = "a=x%20y+z" in
  let b = Bigstring.of_string s in
  let t = Form.create () in
  Form.start t b (whole s);
  Alcotest.(check bool) "a pair" true (Form.next t);
  let v = Form.value t in
  let n = Form.decode b v ~dst:b ~dst_off:(Span.off v) in
  Alcotest.(check string) "decoded in place" "x y z" (Bigstring.sub_string b ~off:(Span.off v) ~len:n);
  Alcotest.(check int) "too small: -1" (-1) (Form.decode b (Span.make ~off:0 ~len:3) ~dst:(Bigstring.create 1) ~dst_off:0)

let gen_bytes = QCheck2.Gen.(string_size ~gen:char (int_range 0 40))

let round_trip =
  QCheck2.Test.make ~name:"decode (encode s) = s" ~count:2000 gen_bytes (fun s ->
      Form.decode_string (Form.encode s) = s)

let pairs_round_trip =
  QCheck2.Test.make ~name:"pairs of encoded pairs" ~count:1000
    QCheck2.Gen.(list_size (int_range 0 6) (pair gen_bytes gen_bytes))
    (fun l ->
      let l = List.filter (fun (n, v) -> n <> "" || v <> "") l in
      let q = String.concat "&" (List.map (fun (n, v) -> Form.encode n ^ "=" ^ Form.encode v) l) in
      Form.pairs q = l)

(* Arbitrary bytes, at an offset inside garbage: no exception, and the
   bytes outside the span never matter. *)
let robust =
  QCheck2.Test.make ~name:"never raises, never reads outside its span" ~count:2000 gen_bytes (fun s ->
      let a = S.bigstring_at ~garbage:'&' ~off:7 s and b = S.bigstring_at ~garbage:'%' ~off:7 s in
      let span = Span.make ~off:7 ~len:(String.length s) in
      Form.to_list a span = Form.to_list b span)

let zero_alloc =
  let s = "x=1&name=J%C3%B6rg+X&flag&y=%41%42" in
  let b = Bigstring.of_string s and span = whole s in
  let t = Form.create () in
  let dst = Bigstring.create 64 in
  [
    S.zero_alloc "start + next over every pair" (fun () ->
        Form.start t b span;
        while Form.next t do ignore (Form.value t) done);
    S.zero_alloc "find + decode" (fun () ->
        if Form.find t b span "name" then ignore (Form.decode b (Form.value t) ~dst ~dst_off:0 : int));
    S.zero_alloc "equal_decoded" (fun () -> ignore (Form.equal_decoded b (Span.make ~off:4 ~len:4) "name"));
  ]

let () =
  Alcotest.run "form"
    [
      ( "decoding",
        [
          Alcotest.test_case "vectors" `Quick vectors;
          Alcotest.test_case "encode: WHATWG set" `Quick encode_is_whatwg;
          Alcotest.test_case "in place, too small" `Quick in_place;
        ] );
      ("properties", List.map S.qcheck [ round_trip; pairs_round_trip; robust ]);
      ("allocation", zero_alloc);
    ]
