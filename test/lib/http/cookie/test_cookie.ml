(* Cookie parsing (RFC 6265 §5.4, as browsers send it) and Set-Cookie
   building: vectors, refusals, properties, zero allocation. *)

open Httpz
module S = Httpz_test_support

let whole s = Span.make ~off:0 ~len:(String.length s)
let pairs = Alcotest.(list (pair string string))
let parse s = Cookie.to_list (Bigstring.of_string s) (whole s)

let parsing () =
  let check input want = Alcotest.check pairs input want (parse input) in
  check "SID=31d4d96e407aad42; lang=en-US" [ ("SID", "31d4d96e407aad42"); ("lang", "en-US") ];
  check "a=1;b=2" [ ("a", "1"); ("b", "2") ];
  check "  a = 1 ;\tb=2  " [ ("a", "1"); ("b", "2") ];
  check "q=\"quoted value\"" [ ("q", "quoted value") ];
  check "q=\"" [ ("q", "\"") ];
  check "empty=; x=y" [ ("empty", ""); ("x", "y") ];
  check "novalue; a=1" [ ("a", "1") ];
  check "=nameless; a=1" [ ("a", "1") ];
  check "eq=a=b" [ ("eq", "a=b") ];
  check "" [];
  check ";;;" []

let request_lookup () =
  let head = "GET / HTTP/1.1\r\nHost: x\r\nCookie: a=1; theme=dark\r\nCookie: sid=xyz\r\n\r\n" in
  let buf = Bigstring.of_string head in
  let req = Request.create () in
  (match Request.parse req buf ~off:0 ~len:(String.length head) with
   | Request.Complete -> ()
   | _ -> Alcotest.fail "head did not parse");
  Alcotest.(check (option string)) "first field" (Some "dark") (Cookie.get buf req "theme");
  Alcotest.(check (option string)) "second field" (Some "xyz") (Cookie.get buf req "sid");
  Alcotest.(check (option string)) "absent" None (Cookie.get buf req "nope");
  Alcotest.(check (option string)) "case-sensitive" None (Cookie.get buf req "Theme")

let building () =
  Alcotest.(check string) "plain" "id=a3fWa" (Cookie.to_string "id" "a3fWa");
  Alcotest.(check string) "every attribute"
    "id=a3fWa; Max-Age=2592000; Expires=Wed, 21 Oct 2015 07:28:00 GMT; Domain=example.com; \
     Path=/docs; Secure; HttpOnly; SameSite=Lax"
    (Cookie.to_string ~max_age:2592000 ~expires:1445412480 ~domain:"example.com" ~path:"/docs"
       ~secure:true ~http_only:true ~same_site:Cookie.Lax "id" "a3fWa");
  Alcotest.(check string) "quoted value" "q=\"abc\"" (Cookie.to_string "q" "\"abc\"");
  Alcotest.(check string) "delete" "id=; Max-Age=0" (Cookie.to_string ~max_age:0 "id" "");
  Alcotest.(check string) "None with Secure" "a=b; Secure; SameSite=None"
    (Cookie.to_string ~secure:true ~same_site:Cookie.No_restriction "a" "b")

let refusals () =
  let refused what f =
    match f () with
    | _ -> Alcotest.failf "%s: accepted" what
    | exception Invalid_argument _ -> ()
  in
  refused "name with space" (fun () -> Cookie.to_string "a b" "c");
  refused "empty name" (fun () -> Cookie.to_string "" "c");
  refused "name with =" (fun () -> Cookie.to_string "a=b" "c");
  refused "value with ;" (fun () -> Cookie.to_string "a" "b; Domain=evil.example");
  refused "value with CRLF" (fun () -> Cookie.to_string "a" "b\r\nSet-Cookie: x=y");
  refused "value with space" (fun () -> Cookie.to_string "a" "b c");
  refused "value with comma" (fun () -> Cookie.to_string "a" "b,c");
  refused "value with backslash" (fun () -> Cookie.to_string "a" "b\\c");
  refused "value with inner quote" (fun () -> Cookie.to_string "a" "b\"c");
  refused "domain with ;" (fun () -> Cookie.to_string ~domain:"a.com; Secure" "a" "b");
  refused "path with CR" (fun () -> Cookie.to_string ~path:"/\r" "a" "b");
  refused "SameSite=None without Secure" (fun () -> Cookie.to_string ~same_site:Cookie.No_restriction "a" "b");
  refused "Max-Age -5" (fun () -> Cookie.to_string ~max_age:(-5) "a" "b")

let gen_value =
  QCheck2.Gen.(string_size ~gen:(map Char.chr (int_range 0x21 0x7e)) (int_range 0 30))

(* Whatever the builder accepts reads back as the same pair. *)
let round_trip =
  QCheck2.Test.make ~name:"accepted values read back" ~count:2000 gen_value (fun v ->
      match Cookie.to_string "k" v with
      | exception Invalid_argument _ ->
          (* refused: it holds a byte outside cookie-octets *)
          String.exists (fun c -> c = '"' || c = ',' || c = ';' || c = '\\') v
      | field ->
          let n = String.length v in
          let unquoted = if n >= 2 && v.[0] = '"' && v.[n - 1] = '"' then String.sub v 1 (n - 2) else v in
          parse field = [ ("k", unquoted) ])

(* Arbitrary bytes never break the reader, and bytes outside the span
   never matter. *)
let robust =
  QCheck2.Test.make ~name:"never raises, never reads outside its span" ~count:2000
    QCheck2.Gen.(string_size ~gen:char (int_range 0 40))
    (fun s ->
      let a = S.bigstring_at ~garbage:';' ~off:5 s and b = S.bigstring_at ~garbage:'=' ~off:5 s in
      let span = Span.make ~off:5 ~len:(String.length s) in
      Cookie.to_list a span = Cookie.to_list b span)

let zero_alloc =
  let s = "a=1; theme=dark; sid=\"xyz\"; flag" in
  let b = Bigstring.of_string s and span = whole s in
  let t = Cookie.create () in
  let out = Bigstring.create 512 in
  [
    S.zero_alloc "start + next" (fun () ->
        Cookie.start t b span;
        while Cookie.next t do ignore (Cookie.value t) done);
    S.zero_alloc "find" (fun () -> ignore (Cookie.find t b span "sid"));
    S.zero_alloc "write Set-Cookie" (fun () ->
        ignore
          (Cookie.write out ~off:0 ~name:"sid" ~value:"xyz" ~max_age:3600 ~expires:1445412480
             ~domain:"example.com" ~path:"/" ~secure:true ~http_only:true ~same_site:(Some Cookie.Lax)
            : int));
  ]

let () =
  Alcotest.run "cookie"
    [
      ( "cookies",
        [
          Alcotest.test_case "parsing" `Quick parsing;
          Alcotest.test_case "lookup in a request" `Quick request_lookup;
          Alcotest.test_case "Set-Cookie" `Quick building;
          Alcotest.test_case "refusals" `Quick refusals;
        ] );
      ("properties", List.map S.qcheck [ round_trip; robust ]);
      ("allocation", zero_alloc);
    ]
