(* Errors: the built-in renderers' bodies, escaped for their formats, and
   the decision the server's paths make for every request at 0 words. *)

open Httpz
open Httpz_server

let check = Alcotest.(check string)

let contains s sub =
  let n = String.length s and m = String.length sub in
  let rec at i = i + m <= n && (String.sub s i m = sub || at (i + 1)) in
  at 0

let bodies =
  [ Alcotest.test_case "text: Respond.error's bodies" `Quick (fun () ->
        check "phrase" "404 Not Found\n" (Errors.text_body Status.Not_found "Not Found");
        check "reason" "403 Forbidden: CSRF token missing\n" (Errors.text_body Status.Forbidden "CSRF token missing"));
    Alcotest.test_case "json: status and message" `Quick (fun () ->
        check "404" "{\"error\":{\"status\":404,\"message\":\"Not Found\"}}\n" (Errors.json_body Status.Not_found "Not Found"));
    Alcotest.test_case "json_string: quotes, backslashes, controls escaped; UTF-8 kept" `Quick (fun () ->
        check "quote" {|"a \"b\" \\ c"|} (Errors.json_string {|a "b" \ c|});
        check "controls" {|"\n\r\t\u0001\u001f\u007f"|} (Errors.json_string "\n\r\t\001\031\127");
        check "utf-8" "\"caf\xc3\xa9 \xe2\x82\xac\"" (Errors.json_string "caf\xc3\xa9 \xe2\x82\xac");
        check "empty" {|""|} (Errors.json_string ""));
    Alcotest.test_case "json_string: a reason that is not UTF-8 stays valid JSON" `Quick (fun () ->
        (* A lone continuation byte, a truncated sequence: bytes above 0x7F
           become \u00XX, so the document is ASCII. *)
        check "invalid" {|"a\u0080b\u00c3"|} (Errors.json_string "a\x80b\xc3");
        check "overlong" {|"\u00c0\u00af"|} (Errors.json_string "\xc0\xaf"));
    Alcotest.test_case "html: escaped reason, phrase in the title" `Quick (fun () ->
        let b = Errors.html_body Status.Conflict "<script>alert('x')</script> & \"q\"" in
        let has s = Alcotest.(check bool) s true (contains b s) in
        has "<title>409 Conflict</title>";
        has "<p>&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;q&quot;</p>";
        Alcotest.(check bool) "no raw tag" false (contains b "<script>");
        Alcotest.(check bool) "no paragraph for the phrase" false
          (contains (Errors.html_body Status.Not_found "Not Found") "<p>")) ]

let server_side =
  [ Alcotest.test_case "set, current, active" `Quick (fun () ->
        Errors.set None;
        Alcotest.(check bool) "nothing set" false (Errors.active None);
        Alcotest.(check bool) "a router's" true (Errors.active (Some Errors.html));
        Errors.set (Some Errors.json);
        Alcotest.(check bool) "the server's" true (Errors.active None);
        Alcotest.(check bool) "current" true (match Errors.current () with Some _ -> true | None -> false);
        Errors.set None);
    Httpz_test_support.zero_alloc "Errors.active (nothing set)" (fun () -> ignore (Sys.opaque_identity (Errors.active None)));
    Httpz_test_support.zero_alloc "Errors.active (a router's)"
      (let r = Sys.opaque_identity (Some Errors.json) in
       fun () -> ignore (Sys.opaque_identity (Errors.active r)));
    Alcotest.test_case "Errors.active with the server's set: 0 words" `Quick (fun () ->
        Errors.set (Some Errors.json);
        let w = Httpz_test_support.minor_words_per_op (fun () -> ignore (Sys.opaque_identity (Errors.active None))) in
        Errors.set None;
        Alcotest.(check (float 0.)) "words" 0. w) ]

let () = Alcotest.run "errors" [ ("bodies", bodies); ("server", server_side) ]
