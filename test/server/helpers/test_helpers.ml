(* The application helpers: Html escaping (pure), then Helpers_app on a
   live one-worker server over HTTP/1.1 (test/e2e/test_helpers.py runs the
   same app over HTTP/2 and TLS too): Req.json's 201/415/413/400, Accept
   negotiation, typed request fields, Respond's ?headers and pending
   headers, the static handler mounted once, and 0 words per request for
   the typed checks and a preallocated ?headers. *)

open Httpz_server
open Httpz_live

let html_tests =
  let esc = Html.escape in
  [ Alcotest.test_case "escape: the five bytes" `Quick (fun () ->
        Alcotest.(check string) "all" "&amp;&lt;&gt;&quot;&#39;" (esc "&<>\"'");
        Alcotest.(check string) "mixed" "a &lt;b&gt; &amp;amp; &quot;c&quot; d&#39;s"
          (esc "a <b> &amp; \"c\" d's");
        Alcotest.(check string) "UTF-8 untouched" "Jörg ✓" (esc "Jörg ✓");
        Alcotest.(check string) "empty" "" (esc ""));
    Alcotest.test_case "escape: no copy when clean" `Quick (fun () ->
        let s = "plain text, no markup" in
        Alcotest.(check bool) "same string" true (esc s == s);
        Alcotest.(check bool) "needs_escape" false (Html.needs_escape s);
        Alcotest.(check bool) "needs_escape <" true (Html.needs_escape "a<b"));
    Alcotest.test_case "escape_into = escape, escaped_length" `Quick (fun () ->
        List.iter
          (fun s ->
            let b = Buffer.create 8 in
            Buffer.add_string b "x";
            Html.escape_into b s;
            Alcotest.(check string) s ("x" ^ esc s) (Buffer.contents b);
            Alcotest.(check int) (s ^ " length") (String.length (esc s)) (Html.escaped_length s))
          [ ""; "abc"; "<"; "a&b<c>d\"e'f"; "&&&&"; "trailing<"; "<leading" ]);
    (* Every byte, and attribute safety: the escaped form has no quote,
       no angle bracket, and no ampersand but those of references. *)
    Alcotest.test_case "every byte; attribute-safe" `Quick (fun () ->
        let all = String.init 256 Char.chr in
        let e = esc all in
        String.iter (fun ch -> if ch = '<' || ch = '>' || ch = '"' || ch = '\'' then Alcotest.failf "%C left" ch) e;
        let refs = [ "&amp;"; "&lt;"; "&gt;"; "&quot;"; "&#39;" ] in
        String.iteri
          (fun i ch ->
            if ch = '&' && not (List.exists (fun r -> i + String.length r <= String.length e && String.sub e i (String.length r) = r) refs)
            then Alcotest.failf "bare & at %d" i)
          e;
        Alcotest.(check int) "length" (256 + 4 + 3 + 3 + 5 + 4) (String.length e));
    Httpz_test_support.zero_alloc "needs_escape, escaped_length" (fun () ->
        ignore (Html.needs_escape "a <b> c");
        ignore (Html.escaped_length "a <b> c"));
    Httpz_test_support.zero_alloc "escape of a clean string" (fun () -> ignore (Html.escape "nothing to escape")) ]

(* {1 The live server} *)

let stats_token = "helpers-stats"

let root =
  let d = Httpz_test_support.temp_dir "httpz_helpers" in
  let r = Filename.concat d "assets" in
  Unix.mkdir r 0o755;
  Unix.mkdir (Filename.concat r "sub") 0o755;
  Httpz_test_support.write_file (Filename.concat r "x.css") "body { color: teal }\n";
  Httpz_test_support.write_file (Filename.concat r "sub/index.html") "<p>sub</p>\n";
  Httpz_test_support.write_file (Filename.concat d "secret.txt") "SECRET\n";
  (* A file at the prefix's own name under the root: reachable only if
     the prefix were served twice (/assets/assets/...). *)
  Unix.mkdir (Filename.concat r "assets") 0o755;
  Httpz_test_support.write_file (Filename.concat r "assets/x.css") "WRONG\n";
  r

let server =
  lazy
    (start
       ~config:{ Server.default_config with workers = 1; stats = Some stats_token }
       (Helpers_app.handler ~root))

let () = at_exit (fun () -> if Lazy.is_val server then kill (Lazy.force server))

let req ?(meth = "GET") ?(headers = []) ?body target =
  let s = Lazy.force server in
  let h = String.concat "" (List.map (fun (k, v) -> k ^ ": " ^ v ^ "\r\n") headers) in
  let b, cl = match body with None -> ("", "") | Some b -> (b, Printf.sprintf "Content-Length: %d\r\n" (String.length b)) in
  exchange ~head:(meth = "HEAD") s.port
    (Printf.sprintf "%s %s HTTP/1.1\r\nHost: t\r\n%s%sConnection: close\r\n\r\n%s" meth target h cl b)

let check name ~status ?body ?(hdrs = []) r =
  Alcotest.(check int) (name ^ ": status") status r.status;
  (match body with Some b -> Alcotest.(check string) (name ^ ": body") b r.body | None -> ());
  List.iter (fun (k, v) -> Alcotest.(check (option string)) (name ^ ": " ^ k) v (header r k)) hdrs

let contains s sub = Httpz_test_support.find_sub s sub >= 0

let json_tests =
  let post ?(ct = Some "application/json") body =
    req ~meth:"POST" ~headers:(match ct with Some v -> [ ("Content-Type", v) ] | None -> []) ~body "/todos"
  in
  [ Alcotest.test_case "good body: 201, parsed, ?headers Location" `Quick (fun () ->
        check "good" ~status:201 ~body:{|{"id":1,"title":"milk"}|}
          ~hdrs:[ ("content-type", Some "application/json"); ("location", Some "/todos/1") ]
          (post {|{"title":"milk"}|}));
    (* The issue's case: a charset parameter is no reason to refuse. *)
    Alcotest.test_case "charset and +json accepted" `Quick (fun () ->
        check "charset" ~status:201 (post ~ct:(Some "Application/JSON; charset=utf-8") {|{"title":"a"}|});
        check "+json" ~status:201 (post ~ct:(Some "application/merge-patch+json") {|{"title":"b"}|}));
    Alcotest.test_case "not JSON: 415" `Quick (fun () ->
        let r = post ~ct:(Some "text/plain") {|{"title":"milk"}|} in
        check "text/plain" ~status:415 r;
        Alcotest.(check bool) "reason" true (contains r.body "JSON");
        check "no Content-Type" ~status:415 (post ~ct:None {|{"title":"milk"}|});
        check "application/jsonx" ~status:415 (post ~ct:(Some "application/jsonx") {|{"title":"milk"}|}));
    Alcotest.test_case "over the limit: 413" `Quick (fun () ->
        let big = {|{"title":"|} ^ String.make 2000 'a' ^ {|"}|} in
        check "2 KB with a 1 KiB limit" ~status:413 (post big);
        check "exactly at the limit" ~status:201 (post ({|{"title":"|} ^ String.make (1024 - 12) 'a' ^ {|"}|})));
    Alcotest.test_case "over the limit, chunked: 413" `Quick (fun () ->
        let s = Lazy.force server in
        let chunk = String.make 600 'a' in
        let body = Printf.sprintf "%x\r\n%s\r\n%x\r\n%s\r\n0\r\n\r\n" 600 chunk 600 chunk in
        let r =
          exchange s.port
            ("POST /todos HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\
              Connection: close\r\n\r\n" ^ body)
        in
        check "chunked 1200 bytes" ~status:413 r);
    Alcotest.test_case "parser error: 400 with its message" `Quick (fun () ->
        let r = post {|{"name":"x"}|} in
        check "400" ~status:400 r;
        Alcotest.(check bool) ("message: " ^ r.body) true (contains r.body "malformed JSON body: expected");
        check "empty body" ~status:400 (post ""));
    Alcotest.test_case "a body that does not come with the head" `Quick (fun () ->
        (* Sent in two writes, after a pause: read with read_body. *)
        let s = Lazy.force server in
        with_client s.port (fun cl ->
            send cl "POST /todos HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: 16\r\n\r\n{\"ti";
            Unix.sleepf 0.05;
            send cl "tle\":\"milk\"}";
            let r = read_response cl in
            check "split body" ~status:201 ~body:{|{"id":1,"title":"milk"}|} r)) ]

let negotiation_tests =
  let neg accept = req ~headers:(match accept with Some a -> [ ("Accept", a) ] | None -> []) "/negotiate" in
  [ Alcotest.test_case "Accept picks the representation" `Quick (fun () ->
        check "json" ~status:200 ~hdrs:[ ("content-type", Some "application/json"); ("vary", Some "Accept") ]
          (neg (Some "application/json"));
        check "browser" ~status:200 ~hdrs:[ ("content-type", Some "text/html; charset=utf-8") ]
          (neg (Some "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"));
        check "text/*" ~status:200 ~hdrs:[ ("content-type", Some "text/html; charset=utf-8") ] (neg (Some "text/*"));
        check "q" ~status:200 ~hdrs:[ ("content-type", Some "text/plain; charset=utf-8") ]
          (neg (Some "application/json;q=0.2, text/plain;q=0.5, text/html;q=0.1"));
        check "no Accept: first offered" ~status:200 ~hdrs:[ ("content-type", Some "application/json") ] (neg None);
        check "*/* but json refused" ~status:200 ~hdrs:[ ("content-type", Some "text/html; charset=utf-8") ]
          (neg (Some "*/*, application/json;q=0"));
        check "none acceptable: 406" ~status:406 (neg (Some "image/png")));
    Alcotest.test_case "accepts: weights" `Quick (fun () ->
        let w accept t = (req ~headers:[ ("Accept", accept) ] ("/accepts?type=" ^ t)).body in
        Alcotest.(check string) "0.3" "300\n" (w "text/*;q=0.3, */*;q=0.1" "text/css");
        Alcotest.(check string) "0.1" "100\n" (w "text/*;q=0.3, */*;q=0.1" "image/png");
        Alcotest.(check string) "refused" "0\n" (w "text/css;q=0, */*" "text/css")) ]

let field_tests =
  [ Alcotest.test_case "typed request fields" `Quick (fun () ->
        let r =
          req ~meth:"POST"
            ~headers:
              [ ("User-Agent", "ua/1"); ("Accept", "a/b"); ("accept", "c/d"); ("Accept-Language", "de");
                ("Content-Type", "application/x-www-form-urlencoded; charset=utf-8") ]
            ~body:"x=1" "/fields"
        in
        check "fields" ~status:200
          ~body:"user-agent=ua/1\naccept=a/b|c/d\nhas-cookie=false\nspan=de\njson=false\nform=true\n" r;
        check "absent" ~status:200
          ~body:"user-agent=-\naccept=\nhas-cookie=true\nspan=\njson=true\nform=false\n"
          (req ~headers:[ ("Cookie", "a=1"); ("Content-Type", "application/json") ] "/fields")) ]

let respond_tests =
  [ Alcotest.test_case "?headers on text, empty, redirect" `Quick (fun () ->
        check "text" ~status:200 ~body:"with headers\n"
          ~hdrs:[ ("cache-control", Some "no-store"); ("content-language", Some "en");
                  ("content-type", Some "text/plain; charset=utf-8") ]
          (req "/with-headers");
        check "empty" ~status:204 ~body:"" ~hdrs:[ ("etag", Some {|"v1"|}) ] (req "/no-content");
        check "redirect" ~status:303 ~hdrs:[ ("location", Some "/fast"); ("cache-control", Some "no-store") ]
          (req "/moved"));
    Alcotest.test_case "a Content-Type in ?headers replaces the default" `Quick (fun () ->
        let r = req "/csv" in
        check "csv" ~status:200 ~hdrs:[ ("content-type", Some "text/csv; charset=utf-8") ] r;
        Alcotest.(check int) "one Content-Type" 1
          (List.length (List.filter (fun (k, _) -> k = "content-type") r.headers)));
    Alcotest.test_case "pending headers: string names, read back, written" `Quick (fun () ->
        check "pending" ~status:200 ~body:"x-request-id=req-42 cache-control=private vary=-\n"
          ~hdrs:[ ("x-request-id", Some "req-42"); ("cache-control", Some "private") ]
          (req "/pending"));
    Alcotest.test_case "Html.escape in a page" `Quick (fun () ->
        check "hello" ~status:200
          ~body:"<p title=\"&lt;b&gt;&quot;x&#39;&amp;\">Hello, &lt;b&gt;&quot;x&#39;&amp;</p>\n"
          (req "/hello?name=%3Cb%3E%22x%27%26")) ]

let static_tests =
  [ Alcotest.test_case "Route.mount once: /assets/x.css is x.css" `Quick (fun () ->
        check "x.css" ~status:200 ~body:"body { color: teal }\n" (req "/assets/x.css");
        check "encoded prefix" ~status:200 ~body:"body { color: teal }\n" (req "/%61ssets/x.css");
        check "HEAD" ~status:200 (req ~meth:"HEAD" "/assets/x.css");
        check "the prefix is not served twice" ~status:200 ~body:"WRONG\n" (req "/assets/assets/x.css");
        check "missing" ~status:404 (req "/assets/nope.css"));
    Alcotest.test_case "redirects keep the prefix" `Quick (fun () ->
        check "/assets" ~status:301 ~hdrs:[ ("location", Some "/assets/") ] (req "/assets");
        check "/assets/sub" ~status:301 ~hdrs:[ ("location", Some "/assets/sub/") ] (req "/assets/sub");
        check "/%61ssets/sub?q=1" ~status:301 ~hdrs:[ ("location", Some "/assets/sub/?q=1") ] (req "/%61ssets/sub?q=1");
        check "/assets/sub/" ~status:200 ~body:"<p>sub</p>\n" (req "/assets/sub/"));
    Alcotest.test_case "../ escapes refused" `Quick (fun () ->
        List.iter
          (fun t ->
            let r = req t in
            Alcotest.(check bool) (t ^ ": refused") true (r.status = 400 || r.status = 404);
            Alcotest.(check bool) (t ^ ": no secret") false (contains r.body "SECRET"))
          [ "/assets/../secret.txt"; "/assets/%2e%2e/secret.txt"; "/assets/..%2fsecret.txt";
            "/assets/sub/../../secret.txt"; "/assets/%2e%2e%2f%2e%2e%2fsecret.txt"; "/assets/../../secret.txt" ];
        check "a .. that stays below the mount" ~status:200 ~body:"body { color: teal }\n" (req "/assets/sub/../x.css")) ]

let alloc_tests =
  [ Alcotest.test_case "0 words per request: typed checks, negotiate, ?headers preallocated" `Quick (fun () ->
        let s = Lazy.force server in
        with_client s.port (fun cl ->
            let kinds =
              [ "GET /fast HTTP/1.1\r\nHost: t\r\nAccept: application/json;q=0.9, text/plain;q=0.5\r\n\r\n";
                "GET /fast HTTP/1.1\r\nHost: t\r\nAccept: text/*\r\n\r\n";
                "POST /fast HTTP/1.1\r\nHost: t\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: 2\r\n\r\n{}";
                "POST /fast HTTP/1.1\r\nHost: t\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nab";
                "GET /fast HTTP/1.1\r\nHost: t\r\n\r\n" ]
            in
            let batch = String.concat "" kinds in
            let run n =
              for _ = 1 to n do
                send cl batch;
                List.iter (fun _ -> let r = read_response cl in if r.status <> 200 && r.status <> 204 then Alcotest.fail "status") kinds
              done
            in
            let stats () =
              send cl (stats_request ~token:stats_token);
              (read_response cl).body
            in
            run 400;
            let s1 = stats () in
            run 2000;
            let s2 = stats () in
            Alcotest.(check int) "requests" 10_000 (stats_field s2 "requests" - stats_field s1 "requests");
            Alcotest.(check int) "minor words" 0 (stats_field s2 "minor_words" - stats_field s1 "minor_words"))) ]

let stop_test =
  [ Alcotest.test_case "the server exits 0" `Quick (fun () -> ignore (stop (Lazy.force server) : string)) ]

let () =
  Alcotest.run "helpers"
    [ ("html", html_tests); ("json", json_tests); ("negotiation", negotiation_tests); ("fields", field_tests);
      ("respond", respond_tests); ("static", static_tests); ("allocation", alloc_tests); ("stop", stop_test) ]
