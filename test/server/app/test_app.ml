(* The application layer's pure parts: tokens, signed sessions, CSRF origin
   checks, SSE formatting, redirects' Location check, and route matching
   without allocation. *)

open Httpz
open Httpz_server

let key1 = String.make 32 'k'
let key2 = String.make 32 'q'

let token_tests =
  [ Alcotest.test_case "base64url round trip, every length 0..64" `Quick (fun () ->
        for n = 0 to 64 do
          let s = Httpz_sys.Entropy.bytes n in
          let e = Token.base64url s in
          Alcotest.(check int) "length" ((4 * n + 2) / 3) (String.length e);
          String.iter (fun ch -> if not (ch = '-' || ch = '_' || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9')) then Alcotest.fail e) e;
          Alcotest.(check (option string)) "decode" (Some s) (Token.of_base64url e)
        done);
    Alcotest.test_case "base64url known vector (RFC 4648 §10 'foobar')" `Quick (fun () ->
        Alcotest.(check string) "foob" "Zm9vYg" (Token.base64url "foob");
        Alcotest.(check string) "\\xfb\\xff" "-_8" (Token.base64url "\xfb\xff"));
    Alcotest.test_case "of_base64url refuses bad input" `Quick (fun () ->
        List.iter (fun s -> Alcotest.(check (option string)) s None (Token.of_base64url s)) [ "Zm9vYg=="; "a"; "ab+c"; "ab/c"; "a b" ]);
    Alcotest.test_case "generate: length, distinct" `Quick (fun () ->
        let a = Token.generate 32 and b = Token.generate 32 in
        Alcotest.(check int) "43 chars" 43 (String.length a);
        Alcotest.(check bool) "distinct" false (a = b));
    Alcotest.test_case "Entropy.fill refuses a bad range" `Quick (fun () ->
        Alcotest.check_raises "range" (Invalid_argument "Entropy.fill: range outside the buffer") (fun () ->
            Httpz_sys.Entropy.fill (Bytes.create 4) ~off:2 ~len:3));
    Alcotest.test_case "HMAC-SHA256 RFC 4231 test case 2" `Quick (fun () ->
        let mac = Httpz_sys.Hmac.sha256 ~key:"Jefe" "what do ya want for nothing?" in
        let hex = String.concat "" (List.init 32 (fun i -> Printf.sprintf "%02x" (Char.code mac.[i]))) in
        Alcotest.(check string) "mac" "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843" hex);
    Alcotest.test_case "Hmac.equal" `Quick (fun () ->
        Alcotest.(check bool) "same" true (Httpz_sys.Hmac.equal "abc" "abc");
        Alcotest.(check bool) "differs" false (Httpz_sys.Hmac.equal "abc" "abd");
        Alcotest.(check bool) "length" false (Httpz_sys.Hmac.equal "abc" "ab")) ]

let store = Session.signed ~max_age:100 ~keys:[ key1 ] ()
let pairs = [ ("user", "alice & bob=1"); ("_csrf", "t0k3n"); ("empty", "") ]

let flip s i = String.mapi (fun j ch -> if j = i then (if ch = 'A' then 'B' else 'A') else ch) s

let session_tests =
  [ Alcotest.test_case "signed: round trip" `Quick (fun () ->
        let v = Session.encode store ~now:1000 pairs in
        Alcotest.(check (option (list (pair string string)))) "pairs" (Some pairs) (Session.decode store ~now:1050 v));
    Alcotest.test_case "signed: expiry" `Quick (fun () ->
        let v = Session.encode store ~now:1000 pairs in
        Alcotest.(check bool) "at expiry" true (Session.decode store ~now:1100 v = None);
        Alcotest.(check bool) "just before" true (Session.decode store ~now:1099 v <> None));
    Alcotest.test_case "signed: any flipped byte is refused" `Quick (fun () ->
        let v = Session.encode store ~now:1000 pairs in
        for i = 0 to String.length v - 1 do
          if v.[i] <> '.' then
            match Session.decode store ~now:1000 (flip v i) with
            | None -> ()
            | Some p -> if p <> pairs then Alcotest.failf "tampered byte %d accepted" i
        done);
    Alcotest.test_case "signed: another key is refused; rotation accepts the old key" `Quick (fun () ->
        let v = Session.encode store ~now:1000 pairs in
        let other = Session.signed ~keys:[ key2 ] () in
        Alcotest.(check bool) "other key" true (Session.decode other ~now:1000 v = None);
        let rotated = Session.signed ~max_age:100 ~keys:[ key2; key1 ] () in
        Alcotest.(check bool) "old key still verifies" true (Session.decode rotated ~now:1000 v = Some pairs);
        let v2 = Session.encode rotated ~now:1000 pairs in
        Alcotest.(check bool) "new cookies use the first key" true (Session.decode store ~now:1000 v2 = None));
    Alcotest.test_case "signed: a forged payload with a reused MAC is refused" `Quick (fun () ->
        let v = Session.encode store ~now:1000 [ ("user", "alice") ] in
        let mac = String.sub v (String.index v '.') (String.length v - String.index v '.') in
        let forged = Token.base64url "999999|user=admin" ^ mac in
        Alcotest.(check bool) "refused" true (Session.decode store ~now:1000 forged = None));
    Alcotest.test_case "signed: garbage values" `Quick (fun () ->
        List.iter (fun g -> Alcotest.(check bool) g true (Session.decode store ~now:0 g = None)) [ ""; "."; "abc"; "a.b"; "..."; "%%%.%%%" ]);
    Alcotest.test_case "signed: short keys and no keys refused" `Quick (fun () ->
        Alcotest.check_raises "short" (Invalid_argument "Session.signed: keys need 32 bytes or more") (fun () ->
            ignore (Session.signed ~keys:[ "short" ] ()));
        Alcotest.check_raises "none" (Invalid_argument "Session.signed: no key") (fun () -> ignore (Session.signed ~keys:[] ()))) ]

let ok = Ok ()
let check_origin ?(secure = false) ?origin ?referer ?fetch_site () =
  Csrf.check_origin_values ~secure ~host:"example.com:8443" ~origin ~referer ~fetch_site

let res = Alcotest.testable (fun ppf r -> Format.pp_print_string ppf (match r with Ok () -> "ok" | Error f -> Csrf.failure_to_string f)) ( = )

let csrf_tests =
  [ Alcotest.test_case "same origin passes" `Quick (fun () ->
        Alcotest.check res "origin" ok (check_origin ~origin:"http://example.com:8443" ());
        Alcotest.check res "origin, case" ok (check_origin ~origin:"HTTP://Example.COM:8443" ());
        Alcotest.check res "https" ok (check_origin ~secure:true ~origin:"https://example.com:8443" ());
        Alcotest.check res "referer" ok (check_origin ~referer:"http://example.com:8443/login?x=1" ());
        Alcotest.check res "neither (curl)" ok (check_origin ());
        Alcotest.check res "fetch same-origin" ok (check_origin ~fetch_site:"same-origin" ~origin:"http://example.com:8443" ());
        Alcotest.check res "fetch none" ok (check_origin ~fetch_site:"none" ()));
    Alcotest.test_case "foreign origins fail" `Quick (fun () ->
        Alcotest.check res "other host" (Error Csrf.Foreign_origin) (check_origin ~origin:"http://evil.example" ());
        Alcotest.check res "other port" (Error Csrf.Foreign_origin) (check_origin ~origin:"http://example.com" ());
        Alcotest.check res "scheme downgrade" (Error Csrf.Foreign_origin) (check_origin ~secure:true ~origin:"http://example.com:8443" ());
        Alcotest.check res "null" (Error Csrf.Foreign_origin) (check_origin ~origin:"null" ());
        Alcotest.check res "suffix trick" (Error Csrf.Foreign_origin) (check_origin ~origin:"http://example.com:8443.evil" ());
        Alcotest.check res "referer" (Error Csrf.Foreign_origin) (check_origin ~referer:"http://evil.example/http://example.com:8443/" ());
        Alcotest.check res "origin wins over referer" (Error Csrf.Foreign_origin)
          (check_origin ~origin:"http://evil.example" ~referer:"http://example.com:8443/" ()));
    Alcotest.test_case "Sec-Fetch-Site" `Quick (fun () ->
        Alcotest.check res "cross-site" (Error Csrf.Cross_site) (check_origin ~fetch_site:"cross-site" ~origin:"http://example.com:8443" ());
        Alcotest.check res "unknown value" (Error Csrf.Cross_site) (check_origin ~fetch_site:"weird" ()));
    Alcotest.test_case "unsafe methods" `Quick (fun () ->
        List.iter (fun m -> Alcotest.(check bool) (Meth.to_string m) true (Csrf.unsafe m)) Meth.[ Post; Put; Patch; Delete; Other ];
        List.iter (fun m -> Alcotest.(check bool) (Meth.to_string m) false (Csrf.unsafe m)) Meth.[ Get; Head; Options; Trace ]) ]

let sse_tests =
  [ Alcotest.test_case "format: fields and multi-line data" `Quick (fun () ->
        Alcotest.(check string) "all" "event: tick\nid: 7\nretry: 1500\ndata: a\ndata: b\ndata: c\ndata: d\n\n"
          (Sse.format ~event:"tick" ~id:"7" ~retry:1500 "a\nb\r\nc\rd"));
    Alcotest.test_case "format: empty and trailing newline" `Quick (fun () ->
        Alcotest.(check string) "empty" "data: \n\n" (Sse.format "");
        Alcotest.(check string) "trailing" "data: x\ndata: \n\n" (Sse.format "x\n"));
    Alcotest.test_case "format: refuses newlines in event and id, NUL in id" `Quick (fun () ->
        List.iter
          (fun f -> match f () with _ -> Alcotest.fail "accepted" | exception Invalid_argument _ -> ())
          [ (fun () -> Sse.format ~id:"1\n2" "x"); (fun () -> Sse.format ~event:"a\rb" "x");
            (fun () -> Sse.format ~id:"a\000" "x"); (fun () -> Sse.format ~retry:(-1) "x") ]) ]

let location_tests =
  [ Alcotest.test_case "valid_location" `Quick (fun () ->
        List.iter (fun u -> Alcotest.(check bool) u true (Respond.valid_location u)) [ "/"; "/me"; "/a?b=c"; "https://x.example/"; "HTTP://x" ];
        List.iter (fun u -> Alcotest.(check bool) u false (Respond.valid_location u))
          [ ""; "//evil.example"; "/\\evil.example"; "javascript:alert(1)"; "/a\r\nSet-Cookie: x=1"; "/a b"; "me"; "http://" ]) ]

let noop _ = ()

let app_router () =
  let r = Route.router () in
  Route.get r "/" noop;
  Route.get r "/todos/:id" noop;
  Route.post r "/todos" noop;
  Route.mount r "/assets" noop;
  Route.compile r

let route_tests =
  let t = app_router () in
  let find meth target =
    let buf = Httpz_test_support.bigstring_at ~off:3 target in
    Route.find t meth buf (Span.make ~off:3 ~len:(String.length target))
  in
  let result = Alcotest.testable (fun ppf r -> Format.pp_print_string ppf (Router.result_to_string r)) ( = ) in
  let buf = Httpz_test_support.bigstring_at ~off:0 "/todos?x=1" in
  let span = Span.make ~off:0 ~len:10 in
  [ Alcotest.test_case "find: query ignored, methods, mounts" `Quick (fun () ->
        Alcotest.check result "static" Router.Found (find Meth.Get "/todos/1?x=y");
        Alcotest.check result "405" Router.Method_not_allowed (find Meth.Delete "/todos/1");
        Alcotest.check result "HEAD" Router.Head_by_get (find Meth.Head "/");
        Alcotest.check result "OPTIONS" Router.Auto_options (find Meth.Options "/todos/1");
        Alcotest.check result "mount" Router.Found (find Meth.Get "/assets/a/b.css");
        Alcotest.check result "404" Router.Not_found (find Meth.Get "/nope");
        Alcotest.check result "absolute-form" Router.Found (find Meth.Post "http://h/todos");
        Alcotest.check result "malformed" Router.Not_found (find Meth.Get "/a#b"));
    Alcotest.test_case "form routes need ~csrf" `Quick (fun () ->
        let r = Route.router () in
        Route.post_form r "/login" noop;
        Alcotest.check_raises "csrf" (Invalid_argument "Route.compile: form routes need ~csrf") (fun () -> ignore (Route.compile r)));
    Httpz_test_support.zero_alloc "find on a static route with a query" (fun () ->
        ignore (Sys.opaque_identity (Route.find t Meth.Post buf span))) ]

let () =
  Alcotest.run "app"
    [ ("token", token_tests); ("session", session_tests); ("csrf", csrf_tests); ("sse", sse_tests);
      ("location", location_tests); ("route", route_tests) ]
