(* Tests for Httpz.Router (and Target.decode_segment, which decodes its
   parameters): the routing rules one by one, a naive reference matcher
   that the compiled trie must agree with on random route sets and paths,
   and allocation-free matching. *)

open Httpz
module S = Httpz_test_support

open Router_harness

(* ---------- unit tests ---------- *)

let test_static () =
  let c = build [ Get, "/"; Get, "/todos"; Get, "/todos/"; Get, "/todos/done"; Post, "/todos" ] [] in
  check c Get "/" (found "GET /" ~remainder:"/");
  check c Get "" (found "GET /");
  check c Get "/todos" (found "GET /todos" ~remainder:"/todos");
  check c Get "/todos/" (found "GET /todos/" ~remainder:"/todos/");
  check c Get "/todos/done" (found "GET /todos/done" ~remainder:"/todos/done");
  check c Post "/todos" (found "POST /todos" ~remainder:"/todos");
  check c Get "/todo" not_found;
  check c Get "/todosx" not_found;
  check c Get "/todos/done/" not_found;
  check c Get "//" not_found;
  check c Get "*" not_found;
  check c Get "todos" not_found;
  (* literals compare decoded: an escaped unreserved byte is the byte *)
  check c Get "/tod%6Fs" (found "GET /todos" ~remainder:"/tod%6Fs");
  check c Get "/tod%6fs/%64one" (found "GET /todos/done" ~remainder:"/tod%6fs/%64one");
  check c Get "/tod%6" not_found;
  check c Get "/todos%2Fdone" not_found

let test_params () =
  let c = build [ Get, "/todos/:id/items/:item"; Get, "/todos/:id" ] [] in
  let o, buf, m = route c Get "/todos/42/items/x%20y" in
  Alcotest.check outcome_t "two params"
    (found "GET /todos/:id/items/:item" ~params:[ "id", "42"; "item", "x%20y" ]
       ~remainder:"/todos/42/items/x%20y")
    o;
  Alcotest.(check int) "index of item" 1 (Router.param_index c m "item");
  Alcotest.(check int) "index of nothing" (-1) (Router.param_index c m "nope");
  Alcotest.(check string) "by name" "42" (Span.to_string buf (Router.param_by_name c m "id"));
  Alcotest.(check bool) "absent name is Span.empty" true
    (Router.param_by_name c m "nope" = Span.empty);
  Alcotest.(check (result string reject)) "decoded" (Ok "x y")
    (Router.param_string buf (Router.param m 1));
  Alcotest.check_raises "param out of range" (Invalid_argument "Httpz.Router.param: index out of range")
    (fun () -> ignore (Router.param m 2));
  check c Get "/todos/7" (found "GET /todos/:id" ~params:[ "id", "7" ] ~remainder:"/todos/7");
  (* a parameter is one non-empty segment *)
  check c Get "/todos/" not_found;
  check c Get "/todos//items/x" not_found;
  check c Get "/todos/1/items/" not_found;
  check c Get "/todos/1/items/a/b" not_found

let test_encoded_slash_and_plus () =
  let c = build [ Get, "/files/:name"; Get, "/files/:name/meta"; Get, "/q/:v" ] [] in
  let o, buf, m = route c Get "/files/a%2Fb" in
  Alcotest.check outcome_t "%2F stays in the parameter"
    (found "GET /files/:name" ~params:[ "name", "a%2Fb" ] ~remainder:"/files/a%2Fb") o;
  Alcotest.(check string) "decodes to a slash inside the value" "a/b" (decoded buf (Router.param m 0));
  check c Get "/files/a%2fb/meta" (found "GET /files/:name/meta" ~params:[ "name", "a%2fb" ]
                                     ~remainder:"/files/a%2fb/meta");
  check c Get "/files/a/b" not_found;
  let _, buf, m = route c Get "/q/a+b%2Bc" in
  Alcotest.(check string) "+ is not a space" "a+b+c" (decoded buf (Router.param m 0));
  let _, buf, m = route c Get "/q/%252F" in
  Alcotest.(check string) "one decoding only" "%2F" (decoded buf (Router.param m 0));
  let _, buf, m = route c Get "/q/a%zz" in
  Alcotest.(check string) "bad escape" "error bad_escape" (decoded buf (Router.param m 0));
  let _, buf, m = route c Get "/q/a%2" in
  Alcotest.(check string) "truncated escape" "error bad_escape" (decoded buf (Router.param m 0));
  let _, buf, m = route c Get "/q/a%00" in
  Alcotest.(check string) "NUL" "error nul_byte" (decoded buf (Router.param m 0));
  let _, buf, m = route c Get "/q/abcdef" in
  let dst = Bigstring.create 4 in
  Alcotest.(check int) "too long" (-5)
    (Router.decode_param buf (Router.param m 0) ~dst ~dst_off:0);
  Alcotest.(check string) "too long names" "too_long"
    (Target.error_to_string (Target.decode_error (Router.decode_param buf (Router.param m 0) ~dst ~dst_off:1)));
  let dst = Bigstring.create 10 in
  Alcotest.(check int) "fits at an offset" 6 (Router.decode_param buf (Router.param m 0) ~dst ~dst_off:4);
  Alcotest.(check string) "written there" "abcdef" (Bigstring.sub_string dst ~off:4 ~len:6)

let test_decode_segment () =
  let cases =
    [ "a%2Fb", Ok "a/b"; "a+b", Ok "a+b"; "%41%62", Ok "Ab"; "..", Ok ".."; "", Ok "";
      "%e2%82%ac", Ok "\xe2\x82\xac"; "%", Error "bad_escape"; "%4", Error "bad_escape";
      "%g0", Error "bad_escape"; "%00", Error "nul_byte"; "a\000", Error "nul_byte";
      "a b", Error "bad_char"; "a\nb", Error "bad_char" ]
  in
  List.iter
    (fun (input, want) ->
      let buf = S.bigstring_at ~off:3 input in
      let dst = Bigstring.create 16 in
      let n = Target.decode_segment buf (Span.make ~off:3 ~len:(String.length input)) ~dst ~dst_off:2 in
      let got =
        if n >= 0 then Ok (Bigstring.sub_string dst ~off:2 ~len:n)
        else Error (Target.error_to_string (Target.decode_error n))
      in
      Alcotest.(check (result string string)) (Printf.sprintf "%S" input) want got)
    cases;
  (* in place: decoding only shrinks *)
  let buf = Bigstring.of_string "x%41%42y" in
  let n = Target.decode_segment buf (Span.make ~off:0 ~len:8) ~dst:buf ~dst_off:0 in
  Alcotest.(check string) "in place" "xABy" (Bigstring.sub_string buf ~off:0 ~len:n)

let test_wildcard () =
  let c = build [ Get, "/static/*path"; Get, "/static/special"; Get, "/*all" ] [] in
  let w p rem () = found "GET /static/*path" ~params:[ "path", p ] ~remainder:rem in
  check c Get "/static" (w "" "/static" ());
  check c Get "/static/" (w "" "/static/" ());
  check c Get "/static/a/b.css" (w "a/b.css" "/static/a/b.css" ());
  check c Get "/static/a/" (w "a/" "/static/a/" ());
  check c Get "/static//x" (w "/x" "/static//x" ());
  check c Get "/static/special" (found "GET /static/special" ~remainder:"/static/special");
  check c Get "/static/special/x" (w "special/x" "/static/special/x" ());
  check c Get "/" (found "GET /*all" ~params:[ "all", "" ] ~remainder:"/");
  check c Get "/other/x" (found "GET /*all" ~params:[ "all", "other/x" ] ~remainder:"/other/x");
  (* dot segments are never captured *)
  check c Get "/static/../etc/passwd" not_found;
  check c Get "/static/a/./b" not_found;
  check c Get "/static/%2e%2E/x" not_found;
  check c Get "/static/..x/.a" (w "..x/.a" "/static/..x/.a" ())

let test_dot_segments () =
  let c = build [ Get, "/a/:x"; Get, "/a/:x/b" ] [ "/m" ] in
  check c Get "/a/.." not_found;
  check c Get "/a/./b" not_found;
  check c Get "/a/%2e" not_found;
  check c Get "/a/.%2E/b" not_found;
  check c Get "/a/..." (found "GET /a/:x" ~params:[ "x", "..." ] ~remainder:"/a/...");
  (* a mount gets its remainder raw, to resolve beneath its own root *)
  check c Get "/m/../x" (found "mount /m" ~remainder:"/../x" ~prefix:2);
  check c Get "/../m" not_found

let test_head_options_405 () =
  let c =
    build
      [ Get, "/r"; Post, "/r"; Get, "/h"; Head, "/h"; Post, "/p"; Options, "/o"; Get, "/o";
        Delete, "/x/:id"; Get, "/x/me" ]
      []
  in
  let head p ~remainder = expect ~remainder "head_by_get" p in
  check c Head "/r" (head "GET /r" ~remainder:"/r");
  check c Head "/h" (found "HEAD /h" ~remainder:"/h");
  check c Get "/h" (found "GET /h" ~remainder:"/h");
  check c Head "/p" (expect "method_not_allowed" "" ~allow:"POST, OPTIONS");
  check c Put "/r" (expect "method_not_allowed" "" ~allow:"GET, HEAD, POST, OPTIONS");
  check c Other "/r" (expect "method_not_allowed" "" ~allow:"GET, HEAD, POST, OPTIONS");
  check c Options "/r" (expect "auto_options" "" ~allow:"GET, HEAD, POST, OPTIONS");
  check c Options "/o" (found "OPTIONS /o" ~remainder:"/o");
  check c Options "/nothing" not_found;
  (* the method picks among path-matching candidates, most specific first *)
  check c Delete "/x/me" (found "DELETE /x/:id" ~params:[ "id", "me" ] ~remainder:"/x/me");
  check c Get "/x/me" (found "GET /x/me" ~remainder:"/x/me");
  check c Get "/x/you" (expect "method_not_allowed" "" ~allow:"DELETE, OPTIONS");
  (* Allow is the union over every candidate the path matches *)
  check c Put "/x/me" (expect "method_not_allowed" "" ~allow:"GET, HEAD, DELETE, OPTIONS");
  check c Options "/x/me" (expect "auto_options" "" ~allow:"GET, HEAD, DELETE, OPTIONS")

let test_allow_writer () =
  let all = List.fold_left (fun a m -> a lor Router.meth_bit m) 0
      Meth.[ Get; Head; Post; Put; Delete; Connect; Options; Trace; Patch; Other ] in
  let s = Router.allow_string all in
  Alcotest.(check string) "all" "GET, HEAD, POST, PUT, DELETE, CONNECT, OPTIONS, TRACE, PATCH" s;
  Alcotest.(check int) "60 bytes at most" 60 (String.length s);
  Alcotest.(check int) "length" 60 (Router.allow_length all);
  Alcotest.(check string) "empty" "" (Router.allow_string 0);
  Alcotest.(check int) "Other has no bit" 0 (Router.meth_bit Other);
  let dst = Bigstring.create 20 in
  let mask = Router.meth_bit Get lor Router.meth_bit Patch in
  Alcotest.(check int) "fits" 10 (Router.write_allow mask dst ~off:10);
  Alcotest.(check string) "written" "GET, PATCH" (Bigstring.sub_string dst ~off:10 ~len:10);
  Alcotest.(check int) "does not fit" (-1) (Router.write_allow mask dst ~off:11);
  Alcotest.(check int) "bad offset" (-1) (Router.write_allow mask dst ~off:(-1))

let test_mounts () =
  let c = build [ Get, "/assets/special"; Post, "/assets/*rest" ] [ "/assets/"; "/" ] in
  let a rem = found "mount /assets/" ~remainder:rem ~prefix:7 in
  check c Get "/assets" (a "");
  check c Get "/assets/" (a "/");
  check c Delete "/assets/css/a.css" (a "/css/a.css");
  check c Other "/assets/x" (a "/x");
  check c Options "/assets/x" (a "/x");
  check c Head "/assets/special" (expect "head_by_get" "GET /assets/special" ~remainder:"/assets/special");
  check c Post "/assets/special" (found "POST /assets/*rest" ~params:[ "rest", "special" ]
                                     ~remainder:"/assets/special");
  check c Put "/assets/special" (a "/special");
  check c Get "/assetsx" (found "mount /" ~remainder:"/assetsx");
  check c Get "/" (found "mount /" ~remainder:"/");
  check c Get "" (found "mount /");
  check c Get "/%61ssets/x" (found "mount /assets/" ~remainder:"/x" ~prefix:9)

let test_sub_routers () =
  let v1 = Router.create () in
  Router.add v1 Get "/" "v1 root";
  Router.add v1 Get "/users/:id" "v1 user";
  Router.mount v1 "/files" "v1 files";
  let api = Router.create () in
  Router.add api Get "/health" "health";
  Router.mount_router api "/v1" v1;
  let posts = Router.create () in
  Router.add posts Get "/posts/:pid" "post";
  Router.add posts Get "/*rest" "user rest";
  let c = build ~subs:[ "/api", api; "/u/:uid", posts ] [ Get, "/api/v1/users/me" ] [] in
  check c Get "/api/health" (found "health" ~remainder:"/health" ~prefix:4);
  check c Get "/api/v1" (found "v1 root" ~remainder:"" ~prefix:7);
  check c Get "/api/v1/" not_found;
  check c Get "/api/v1/users/7" (found "v1 user" ~params:[ "id", "7" ] ~remainder:"/users/7" ~prefix:7);
  check c Get "/api/v1/users/me" (found "GET /api/v1/users/me" ~remainder:"/api/v1/users/me");
  check c Put "/api/v1/files/a/b" (found "v1 files" ~remainder:"/a/b" ~prefix:13);
  check c Get "/u/ann/posts/3"
    (found "post" ~params:[ "uid", "ann"; "pid", "3" ] ~remainder:"/posts/3" ~prefix:6);
  check c Get "/u/ann/x/y"
    (found "user rest" ~params:[ "uid", "ann"; "rest", "x/y" ] ~remainder:"/x/y" ~prefix:6);
  (* a sub-router is read when compiling: later additions count *)
  Router.add v1 Post "/users/:id" "v1 user post";
  let c = build ~subs:[ "/api", api ] [] [] in
  check c Post "/api/v1/users/9" (found "v1 user post" ~params:[ "id", "9" ] ~remainder:"/users/9" ~prefix:7)

let test_precedence () =
  let c =
    build
      [ Get, "/a/b/x"; Get, "/a/:p/c"; Get, "/a/:p/:q"; Get, "/a/*rest"; Get, "/:k/b/c/d" ]
      []
  in
  check c Get "/a/b/x" (found "GET /a/b/x" ~remainder:"/a/b/x");
  (* /a/b/ dead-ends on c: back to /a/:p/c with p unbound from nothing *)
  check c Get "/a/b/c" (found "GET /a/:p/c" ~params:[ "p", "b" ] ~remainder:"/a/b/c");
  check c Get "/a/b/z" (found "GET /a/:p/:q" ~params:[ "p", "b"; "q", "z" ] ~remainder:"/a/b/z");
  check c Get "/a/b/c/d" (found "GET /a/*rest" ~params:[ "rest", "b/c/d" ] ~remainder:"/a/b/c/d");
  check c Get "/a/z/c/d" (found "GET /a/*rest" ~params:[ "rest", "z/c/d" ] ~remainder:"/a/z/c/d");
  check c Get "/z/b/c/d" (found "GET /:k/b/c/d" ~params:[ "k", "z" ] ~remainder:"/z/b/c/d");
  check c Get "/a" (found "GET /a/*rest" ~params:[ "rest", "" ] ~remainder:"/a");
  (* specificity is decided at the first depth where routes differ: the
     literal b at depth 1 beats the parameter, whatever comes after *)
  let c = build [ Get, "/a/:p/c"; Get, "/a/b/*t" ] [] in
  check c Get "/a/b/c" (found "GET /a/b/*t" ~params:[ "t", "c" ] ~remainder:"/a/b/c");
  check c Get "/a/z/c" (found "GET /a/:p/c" ~params:[ "p", "z" ] ~remainder:"/a/z/c");
  (* parameters bound in a dead branch do not leak *)
  let c = build [ Get, "/:x/:y/end"; Get, "/:z/*t" ] [] in
  check c Get "/1/2/nope" (found "GET /:z/*t" ~params:[ "z", "1"; "t", "2/nope" ] ~remainder:"/1/2/nope")

let test_slash_redirect () =
  let c = build [ Get, "/a"; Get, "/b/"; Post, "/c"; Get, "/w/*x" ] [] in
  let redirect meth path =
    let o, buf, m = route c meth path in
    let r = Router.slash_redirect c m buf in
    let after = Router.allow m, Router.param_count m in
    if after <> (0, 0) then fail "state after slash_redirect";
    o.result, r
  in
  Alcotest.(check (pair string bool)) "/a/ -> /a" ("not_found", true) (redirect Get "/a/");
  Alcotest.(check (pair string bool)) "/b -> /b/" ("not_found", true) (redirect Get "/b");
  Alcotest.(check (pair string bool)) "HEAD /b -> /b/" ("not_found", true) (redirect Head "/b");
  Alcotest.(check (pair string bool)) "/c/ for GET" ("not_found", false) (redirect Get "/c/");
  Alcotest.(check (pair string bool)) "/c/ for POST" ("not_found", true) (redirect Post "/c/");
  Alcotest.(check (pair string bool)) "nothing" ("not_found", false) (redirect Get "/d");
  Alcotest.(check (pair string bool)) "found: no redirect" ("found", false) (redirect Get "/a");
  Alcotest.(check (pair string bool)) "root" ("not_found", false) (redirect Get "/");
  Alcotest.(check (pair string bool)) "/b// -> /b/" ("not_found", true) (redirect Get "/b//");
  Alcotest.(check (pair string bool)) "/a// is two slashes from /a" ("not_found", false) (redirect Get "/a//")

let raises name f =
  match f () with
  | () -> fail "%s: no exception" name
  | exception Invalid_argument _ -> ()

let test_build_errors () =
  let bad =
    [ ""; "a"; "a/b"; "//"; "/a//b"; "/:"; "/*"; "/*a/b"; "/:a/:a"; "/:a/*a"; "/:a-b"; "/a%zz";
      "/a%2"; "/%00"; "/."; "/.."; "/%2e"; "/a/%2E%2e/b"; "/a b"; "/a?b"; "/a#b"; "/a\tb" ]
  in
  List.iter
    (fun p -> raises (Printf.sprintf "pattern %S" p) (fun () -> Router.add (Router.create ()) Get p ()))
    bad;
  let r = Router.create () in
  Router.add r Get "/a/:x" ();
  Router.add r Post "/a/:x" ();
  Router.add r Get "/a/%3Ax" ();
  raises "duplicate up to names" (fun () -> Router.add r Get "/a/:y" ());
  raises "duplicate decoded literal" (fun () -> Router.add r Get "/%61/%3ax" ());
  raises "Other" (fun () -> Router.add r Other "/z" ());
  Router.mount r "/m" ();
  raises "duplicate mount" (fun () -> Router.mount r "/m/" ());
  raises "mount wildcard" (fun () -> Router.mount r "/n/*x" ());
  raises "sub wildcard" (fun () -> Router.mount_router r "/n/*x" (Router.create ()));
  ignore (Router.compile r);
  let sub = Router.create () in
  Router.add sub Get "/:z" ();
  Router.mount_router r "/a" sub;
  raises "duplicate through a sub-router" (fun () -> ignore (Router.compile r));
  let r = Router.create () in
  let sub = Router.create () in
  Router.add sub Get "/:id" ();
  Router.mount_router r "/u/:id" sub;
  raises "name repeated across a prefix" (fun () -> ignore (Router.compile r));
  let r = Router.create () in
  Router.mount_router r "/again" r;
  raises "cycle" (fun () -> ignore (Router.compile r));
  let c = build [ Get, "/:a/:b/:c" ] [] in
  let m = Router.Match.create ~max_params:2 in
  let buf = Bigstring.of_string "/x" in
  raises "small Match.t" (fun () -> ignore (Router.find c m Get buf ~path:(Span.make ~off:0 ~len:2)));
  let m = Router.Match.create ~max_params:3 in
  raises "span outside" (fun () -> ignore (Router.find c m Get buf ~path:(Span.make ~off:1 ~len:2)));
  ignore (Router.find c m Get buf ~path:(Span.make ~off:0 ~len:2));
  raises "payload after not_found" (fun () -> ignore (Router.payload c m))

(* ---------- zero allocation ---------- *)

let alloc_tests =
  let r = Router.create () in
  List.iter (fun p -> Router.add r Get p p)
    [ "/"; "/todos"; "/todos/done"; "/users/:uid/posts/:pid"; "/static/*path"; "/a/b/x"; "/a/:p/c" ];
  Router.add r Post "/todos" "post";
  Router.mount r "/assets" "assets";
  let c = Router.compile r in
  let m = Router.Match.create ~max_params:(Router.max_params c) in
  let at path =
    let buf = S.bigstring_at ~off:5 path in
    buf, Span.make ~off:5 ~len:(String.length path)
  in
  let case name meth path want =
    let buf, span = at path in
    S.zero_alloc name (fun () ->
        if Router.find c m meth buf ~path:span <> want then failwith name)
  in
  let users_buf, users = at "/users/ann%2Fbob/posts/42" in
  let dst = Bigstring.create 64 and allow_dst = Bigstring.create 64 in
  let lookups () =
    if Router.find c m Get users_buf ~path:users <> Found then failwith "find";
    if Router.param_count m <> 2 then failwith "count";
    if Router.param_index c m "pid" <> 1 then failwith "index";
    if Span.len (Router.param_by_name c m "uid") <> 9 then failwith "by name";
    if Router.param_by_name c m "none" <> Span.empty then failwith "absent";
    if String.length (Router.param_name c m 0) <> 3 then failwith "name";
    if Router.decode_param users_buf (Router.param m 0) ~dst ~dst_off:0 <> 7 then failwith "decode";
    if String.length (Router.payload c m) = 0 then failwith "payload";
    if Span.len (Router.remainder m) <> 25 then failwith "remainder"
  in
  let not_found_buf, not_found = at "/todos/" in
  let put_buf, put = at "/todos" in
  [ case "static literal" Get "/todos/done" Found;
    case "root" Get "/" Found;
    case "escaped literal" Get "/tod%6Fs" Found;
    case "2 parameters" Get "/users/ann/posts/42" Found;
    case "backtracking" Get "/a/b/c" Found;
    case "wildcard" Get "/static/css/site.css" Found;
    case "mount" Delete "/assets/img/logo.png" Found;
    case "405" Put "/todos" Method_not_allowed;
    case "HEAD by GET" Head "/todos/done" Head_by_get;
    case "auto OPTIONS" Options "/todos" Auto_options;
    case "404" Get "/nothing/here" Not_found;
    case "dot segment" Get "/static/../x" Not_found;
    S.zero_alloc "param lookups and decoding" lookups;
    S.zero_alloc "405 Allow written" (fun () ->
        if Router.find c m Put put_buf ~path:put <> Method_not_allowed then failwith "405";
        if Router.write_allow (Router.allow m) allow_dst ~off:0 <> 24 then failwith "allow");
    S.zero_alloc "slash_redirect" (fun () ->
        if Router.find c m Get not_found_buf ~path:not_found <> Not_found then failwith "404";
        if not (Router.slash_redirect c m not_found_buf) then failwith "redirect") ]

let () =
  let unit name f = Alcotest.test_case name `Quick f in
  Alcotest.run "router"
    [ ( "rules",
        [ unit "static routes and literals" test_static;
          unit "parameters" test_params;
          unit "%2F stays in its parameter, + is +" test_encoded_slash_and_plus;
          unit "Target.decode_segment" test_decode_segment;
          unit "wildcard tails" test_wildcard;
          unit "dot segments" test_dot_segments;
          unit "HEAD, OPTIONS, 405 Allow" test_head_options_405;
          unit "Allow writer" test_allow_writer;
          unit "mounts" test_mounts;
          unit "sub-routers" test_sub_routers;
          unit "precedence with backtracking" test_precedence;
          unit "trailing-slash redirect" test_slash_redirect;
          unit "build errors" test_build_errors ] );
      "properties", List.map S.qcheck Properties.all;
      "zero-alloc", alloc_tests ]

