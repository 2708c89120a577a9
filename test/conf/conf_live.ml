(* The handler of a configuration, through the real server: sites by
   Host, locations, and 0 words per request on each path (measured by the
   server's own counters); and the CLI: `httpz check` on the example, and
   `serve --config` refusing other options. *)

open Httpz_server
open Httpz_conf
open Httpz_live

let write = Httpz_test_support.write_file
let base = Httpz_test_support.temp_dir "httpz_conf"

let () =
  let p = Filename.concat base in
  List.iter (fun d -> Unix.mkdir (p d) 0o755)
    [ "a"; "a/assets"; "a/assets/fixed"; "a/assets/dup"; "a/errors"; "a/admin"; "a/private"; "a/slow"; "a/priv2"; "b" ];
  List.iter (fun f -> write (p ("a/assets/" ^ f)) (f ^ "\n")) [ "fixed/x.css"; "dup/x.css"; "logo.png"; "exact.css"; "page.txt" ];
  write (p "a/priv2/index.html") "priv2\n";
  write (p "a/admin/index.html") "admin\n";
  write (p "a/private/index.html") "private\n";
  write (p "a/slow/index.html") "slow\n";
  (* openssl passwd -5 -salt abcdefgh secret *)
  write (p "users") "alice:$5$abcdefgh$gruCpC7VkOTspMQTTSAR8mtlO9Upms.fwqE5y16JVM.\n";
  write (p "a/index.html") "site a\n";
  write (p "a/assets/app.css") "body{}\n";
  write (p "a/errors/404.html") "custom 404\n";
  write (p "a/errors/denied.html") "custom denied\n";
  write (p "b/index.html") "site b\n"

let conf_text =
  Printf.sprintf
    {|log_format plain '$remote_addr $host "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent" $request_time $server_name $time_iso8601 $request_uri $http_x_test $request_completion';
log_format js escape=json '{"a":"$remote_addr","r":"$request","ua":"$http_user_agent","s":$status,"t":"$time_local","h":"$host"}';
site e.test {
  root %s/a;
  access_log e.log plain;
  location /assets/ { access_log e.json js; }
  location /errors/ { access_log off; }
  location /denied/ { deny all; }
  location /limited/ { limit_req 1r/m 1; }
}
site a.test *.a.test {
  root %s/a;
  error_page 404 /errors/404.html;
  error_page 401 403 429 /errors/denied.html;
  location /assets/ { header Cache-Control "public, max-age=31536000, immutable"; }
  location = /index.html { header Cache-Control no-cache; header X-Page index; }
  location /app/ { try_files $uri /index.html; }
  location /old/ { return 301 https://a.test/new/; }
  location /errors/ { internal; }
  allow 127.0.0.0/8;
  allow ::1;
  deny all;
  auth_basic_user_file users;
  location /admin/ { auth_basic Admin; limit_req 100000r/s 100000; }
  location /private/ { deny all; }
  location /slow/ { limit_req 1r/m 2; }
  location /styles/ { rewrite /; }
  location /leak/ { try_files $uri /admin/index.html; }
  location /oops/ { try_files $uri /errors/404.html; }
  location = /priv2/index.html { deny all; }
  location /loop/ { rewrite /loop/; }
}
site b.test default { root %s/b; location = /bad-gateway { return 502; } }
site d.test {
  root %s/a;
  location /assets/ { header X-Loc prefix; }
  location ^~ /assets/fixed/ { header X-Loc stop; }
  location ~ ^/assets/dup/ { header X-Loc first; }
  location ~ ^/files/(.*)$ { rewrite /assets/$1; }
  location ~ \.css$ { header X-Loc css; }
  location ~* \.PNG$ { header X-Loc png; }
  location = /assets/exact.css { header X-Loc exact; }
  location ~ ^/u/([a-z]+)/(.*)$ { return 302 https://d.test/users/$1?rest=$2; }
  location ~ ^/say/(\w+)$ { return 200 "hello $1, $7."; }
  location ~ ^/evil/(.)(.*)$ { rewrite /$1$1/$2; }
  location ~ ^/e3/([a-z]*)(.*)$ { rewrite /$1/$2; }
  location ~ ^/go(.*)$ { return 302 /$1; }
  location ~ ^/bt/(a+)+$ { deny all; }
}
site c.test {
  root %s/b;
  auth_basic "Site C";
  auth_basic_user_file users;
  location /free/ { auth_basic off; }
}
|}
    base base base base base

let stats_token = "conf-stats"

let server =
  lazy
    (spawn (fun ~on_listen ->
         match Result.bind (Conf_file.read_string ~file:(Filename.concat base "t.conf") conf_text) Sites.create with
         | Error e -> prerr_endline e; 3
         | Ok sites ->
             Server.run
               { Server.default_config with port = 0; workers = 1; stats = Some stats_token; on_listen }
               (Sites.handler sites)))

let () = at_exit (fun () -> if Lazy.is_val server then kill (Lazy.force server))

let request host path = Printf.sprintf "GET %s HTTP/1.1\r\nHost: %s\r\n\r\n" path host

(* alice:secret *)
let alice = "Basic YWxpY2U6c2VjcmV0"

let request_as auth host path =
  Printf.sprintf "GET %s HTTP/1.1\r\nHost: %s\r\nAuthorization: %s\r\n\r\n" path host auth

let ask_raw raw =
  let s = Lazy.force server in
  with_client s.port (fun c ->
      send c raw;
      read_response c)

let ask host path = ask_raw (request host path)

(* Regex locations (issue 39): nginx's order (exact, then a [^~] longest
   prefix, then the first regex in file order, then the longest prefix),
   captures in return and rewrite. *)
let test_regex () =
  let check name path status loc =
    let r = ask "d.test" path in
    Alcotest.(check int) (name ^ ": status") status r.status;
    if loc <> "" then Alcotest.(check (option string)) (name ^ ": location") (Some loc) (header r "x-loc");
    r
  in
  ignore (check "a regex beats the longest prefix" "/assets/app.css" 200 "css");
  ignore (check "no regex matches: the longest prefix" "/assets/page.txt" 200 "prefix");
  ignore (check "^~ stops the regex search" "/assets/fixed/x.css" 200 "stop");
  ignore (check "the first regex in file order" "/assets/dup/x.css" 200 "first");
  ignore (check "~* ignores case" "/assets/logo.png" 200 "png");
  ignore (check "exact beats every regex" "/assets/exact.css" 200 "exact");
  let r = check "return with captures" "/u/bob/a%20b%3Fx%22" 302 "" in
  Alcotest.(check (option string)) "captures percent-encoded in the URL" (Some "https://d.test/users/bob?rest=a%20b%3Fx%22")
    (header r "location");
  let r = check "return text with captures, a group that is not there empty" "/say/you" 200 "" in
  Alcotest.(check string) "text" "hello you, .\n" r.body;
  let r = check "rewrite with captures, then the location of the new path" "/files/page.txt" 200 "prefix" in
  Alcotest.(check string) "the file" "page.txt\n" r.body;
  let r = check "rewrite into a regex location" "/files/app.css" 200 "css" in
  Alcotest.(check string) "that file" "body{}\n" r.body;
  ignore (check "captures cannot make a .. segment" "/evil/.x" 400 "");
  ignore (check "captures cannot make an empty segment" "/e3/1" 400 "");
  let r = check "a redirect made of groups stays on the site" "/go/evil.com" 302 "" in
  Alcotest.(check (option string)) "no //host" (Some "/%2Fevil.com") (header r "location");
  (* (a+)+ against a's and a b backtracks exponentially: PCRE2's match
     limit stops it, and the request is refused, not served by the
     prefix location behind the regex's deny. *)
  ignore (check "a regex that gives up: 500, not the next location" ("/bt/" ^ String.make 40 'a' ^ "b") 500 "")

let test_answers () =
  let check name host path status body =
    let r = ask host path in
    Alcotest.(check int) (name ^ ": status") status r.status;
    if body <> "" then Alcotest.(check string) (name ^ ": body") body r.body;
    r
  in
  ignore (check "exact host" "a.test" "/" 200 "site a\n");
  ignore (check "wildcard host with port" "WWW.A.test:8080" "/" 200 "site a\n");
  ignore (check "other site" "b.test" "/" 200 "site b\n");
  ignore (check "unknown host: default site" "nobody.test" "/" 200 "site b\n");
  let r = check "prefix rule" "a.test" "/assets/app.css" 200 "body{}\n" in
  Alcotest.(check (option string)) "immutable" (Some "public, max-age=31536000, immutable") (header r "cache-control");
  let r = check "exact rule" "a.test" "/index.html" 200 "site a\n" in
  Alcotest.(check (option string)) "no-cache" (Some "no-cache") (header r "cache-control");
  Alcotest.(check (option string)) "its header" (Some "index") (header r "x-page");
  let r = check "index file: the location of /index.html" "a.test" "/" 200 "site a\n" in
  Alcotest.(check (option string)) "index file: its Cache-Control" (Some "no-cache") (header r "cache-control");
  Alcotest.(check (option string)) "index file: its header" (Some "index") (header r "x-page");
  let r = check "try_files" "a.test" "/app/settings/profile" 200 "site a\n" in
  Alcotest.(check (option string)) "fallback: the location of /index.html" (Some "no-cache") (header r "cache-control");
  let r = check "rewrite to another location" "a.test" "/styles/assets/app.css" 200 "body{}\n" in
  Alcotest.(check (option string)) "rewrite: its rules" (Some "public, max-age=31536000, immutable") (header r "cache-control");
  ignore (check "fallback into an internal location" "a.test" "/oops/x" 200 "custom 404\n");
  ignore (check "redirection cycle" "a.test" "/loop/x" 500 "");
  let r = check "redirect" "a.test" "/old/page" 301 "" in
  Alcotest.(check (option string)) "location" (Some "https://a.test/new/") (header r "location");
  ignore (check "internal" "a.test" "/errors/404.html" 404 "custom 404\n");
  ignore (check "not found: the custom page" "a.test" "/missing" 404 "custom 404\n");
  ignore (check "the other site has no such rule" "b.test" "/assets/app.css" 404 "")

(* Access control from the file: the site's rules, a location's own (kind
   by kind, the site's for the kinds it does not give). *)
let test_access () =
  let st name want raw =
    let r = ask_raw raw in
    Alcotest.(check int) name want r.status;
    r
  in
  ignore (st "site rules allow the loopback" 200 (request "a.test" "/"));
  let r = st "deny all in a location" 403 (request "a.test" "/private/") in
  (* Issue 34, finding 5: the site's error_page answers the guards'
     refusals, with their fields. *)
  Alcotest.(check string) "403: the site's error page" "custom denied\n" r.body;
  let r = st "a password in a location, none given" 401 (request "a.test" "/admin/") in
  Alcotest.(check (option string)) "challenge" (Some "Basic realm=\"Admin\", charset=\"UTF-8\"") (header r "www-authenticate");
  Alcotest.(check string) "401: the site's error page" "custom denied\n" r.body;
  ignore (st "wrong password" 401 (request_as "Basic YWxpY2U6d3Jvbmc=" "a.test" "/admin/"));
  let r = st "the site's user file, the location's realm" 200 (request_as alice "a.test" "/admin/") in
  Alcotest.(check string) "the file" "admin\n" r.body;
  ignore (st "burst of 2: first" 200 (request "a.test" "/slow/"));
  ignore (st "burst of 2: second" 200 (request "a.test" "/slow/"));
  let r = st "over the rate" 429 (request "a.test" "/slow/") in
  Alcotest.(check (option string)) "Retry-After" (Some "60") (header r "retry-after");
  Alcotest.(check string) "429: the site's error page" "custom denied\n" r.body;
  let r = st "site password" 401 (request "c.test" "/") in
  Alcotest.(check string) "no error page: the guard's answer" "401 Unauthorized\n" r.body;
  Alcotest.(check (option string)) "... its challenge" (Some "Basic realm=\"Site C\", charset=\"UTF-8\"") (header r "www-authenticate");
  let r = st "return 502: its built-in page" 502 (request "b.test" "/bad-gateway") in
  Alcotest.(check bool) ("502 page: " ^ r.body) true (Httpz_test_support.find_sub r.body "502 Bad Gateway" >= 0);
  ignore (st "site password, given" 200 (request_as alice "c.test" "/"));
  ignore (st "auth_basic off in a location: no password asked" 404 (request "c.test" "/free/x"));
  ignore (st "another site: none of a.test's rules" 200 (request "b.test" "/"));
  (* The rules of the path served, not of the path asked (nginx's
     internal redirects): issue 34, finding 1. *)
  ignore (st "rewrite into a guarded location" 401 (request "a.test" "/styles/admin/"));
  ignore (st "rewrite into a guarded location, a file" 401 (request "a.test" "/styles/admin/index.html"));
  let r = st "rewrite into a guarded location, password given" 200 (request_as alice "a.test" "/styles/admin/") in
  Alcotest.(check string) "the admin page" "admin\n" r.body;
  ignore (st "rewrite into a denied location" 403 (request "a.test" "/styles/private/"));
  ignore (st "try_files fallback into a guarded location" 401 (request "a.test" "/leak/nothing"));
  ignore (st "index file under a denied exact location" 403 (request "a.test" "/priv2/"));
  ignore (st "the denied exact location itself" 403 (request "a.test" "/priv2/index.html"))

let sites_error text =
  match Conf_file.read_string ~file:(Filename.concat base "e.conf") text with
  | Error e -> Alcotest.failf "read refused it: %s" e
  | Ok conf -> (
      match Sites.create conf with
      | Ok _ -> Alcotest.fail "Sites.create accepted it"
      | Error e -> e)

let test_access_errors () =
  let expect name text at part =
    let e = sites_error text in
    let prefix = Filename.concat base "e.conf" ^ ":" ^ at ^ ": " in
    Alcotest.(check bool) (name ^ ": " ^ e) true
      (Httpz_test_support.find_sub e prefix = 0 && Httpz_test_support.find_sub e part > 0)
  in
  expect "a user file that does not exist" "root /tmp;\nauth_basic A;\nauth_basic_user_file nope.users;\n" "3:1" "nope.users";
  write (Filename.concat base "weak.users") "bob:$3$$8846f7eaee8fb117ad06bdd830b7586c\n";
  expect "a weak hash" "root /tmp;\nlocation /a/ {\n  auth_basic A;\n  auth_basic_user_file weak.users;\n}\n" "4:3" "not supported";
  expect "auth_basic without a user file" "root /tmp;\nlocation /a/ { auth_basic A; }\n" "2:16" "needs auth_basic_user_file";
  expect "a user file no auth_basic uses" "root /tmp;\nauth_basic_user_file users;\nlocation /a/ { }\n" "2:1" "used by no auth_basic"

let words_per_request c raw status n =
  let stats () =
    send c (stats_request ~token:stats_token);
    let r = read_response c in
    (float_of_int (stats_field r.body "requests"), float_of_int (stats_field r.body "minor_words"))
  in
  let r0, w0 = stats () in
  for _ = 1 to n do
    send c raw;
    let r = read_response c in
    if r.status <> status then Alcotest.failf "status %d, want %d" r.status status
  done;
  let r1, w1 = stats () in
  (w1 -. w0) /. (r1 -. r0)

let test_zero_alloc () =
  let s = Lazy.force server in
  let cases =
    [ ("site by exact Host, index file under an exact rule", request "a.test" "/", 200);
      ("site by wildcard Host, prefix rule with a header", request "x.a.test:8443" "/assets/app.css", 200);
      ("exact rule with two headers", request "a.test" "/index.html", 200);
      ("try_files fallback, under another location", request "a.test" "/app/deep/route", 200);
      ("rewrite to another location", request "a.test" "/styles/assets/app.css", 200);
      ("index file under the same settings", request "b.test" "/", 200);
      ("unknown Host, default site", request "elsewhere.test" "/", 200);
      ("return 301", request "a.test" "/old/x", 301);
      ("guarded location: address rules, rate, remembered password", request_as alice "a.test" "/admin/", 200);
      ("guarded site without refusal pages", request_as alice "c.test" "/", 200);
      ("regex locations tried, the second matches", request "d.test" "/assets/app.css", 200);
      ("regex locations tried, none matches", request "d.test" "/assets/page.txt", 200);
      ("a site's log, a custom format of plain fields",
       Printf.sprintf "GET /?q=1 HTTP/1.1\r\nHost: e.test\r\nUser-Agent: u/1 (x; \"y\")\r\nReferer: http://r/\r\nX-Test: t\r\n\r\n", 200);
      ("a location's log, escape=json", request "e.test" "/assets/app.css", 200);
      ("access_log off in a location", request "e.test" "/errors/404.html", 200);
      ("a denied address: 403, its error-log line", request "e.test" "/denied/", 403);
      ("over the rate: 429, its error-log line", request "e.test" "/limited/", 429) ]
  in
  with_client s.port (fun c ->
      (* The rate's one request. *)
      send c (request "e.test" "/limited/");
      ignore (read_response c);
      (* Past the server's 1000-request warm-up, through every path. *)
      List.iter (fun (_, raw, st) -> ignore (words_per_request c raw st 200)) cases;
      List.iter
        (fun (name, raw, st) ->
          Alcotest.(check (float 0.)) (name ^ ": minor words per request") 0. (words_per_request c raw st 200))
        cases);
  (* Those lines went where the sites and locations say. *)
  let lines f = try String.split_on_char '\n' (String.trim (Httpz_test_support.read_file (Filename.concat base f))) with Sys_error _ -> [] in
  let deadline = Unix.gettimeofday () +. 5. in
  while List.length (lines "e.json") < 400 && Unix.gettimeofday () < deadline do Unix.sleepf 0.05 done;
  let plain = lines "e.log" and js = lines "e.json" in
  Alcotest.(check int) "e.log: the site's 400 lines" 400
    (List.length (List.filter (fun l -> Httpz_test_support.find_sub l "/?q=1" >= 0) plain));
  let plain = List.filter (fun l -> Httpz_test_support.find_sub l "/?q=1" >= 0) plain in
  Alcotest.(check bool) ("e.log: a custom line: " ^ List.hd plain) true
    (Httpz_test_support.find_sub (List.hd plain) "e.test \"GET /?q=1 HTTP/1.1\" 200 7 \"http://r/\" \"u/1 (x; \\x22y\\x22)\" " > 0);
  Alcotest.(check int) "e.json: the location's 400 lines" 400 (List.length js);
  Alcotest.(check bool) ("e.json: escape=json: " ^ List.hd js) true
    (Httpz_test_support.find_sub (List.hd js) "{\"a\":\"::1\",\"r\":\"GET /assets/app.css HTTP/1.1\",\"ua\":\"\",\"s\":200,\"t\":\"" = 0
     || Httpz_test_support.find_sub (List.hd js) "{\"a\":\"127.0.0.1\",\"r\":\"GET /assets/app.css HTTP/1.1\"" = 0);
  Alcotest.(check bool) "access_log off: no /errors/ line" false
    (List.exists (fun l -> Httpz_test_support.find_sub l "/errors/" >= 0) (lines "e.log" @ js));
  (* The refusals' error-log lines, as fail2ban reads them. *)
  let err = Httpz_test_support.read_file s.stderr_file in
  let count sub =
    List.length (List.filter (fun l -> Httpz_test_support.find_sub l sub >= 0) (String.split_on_char '\n' err))
  in
  Alcotest.(check int) "403: 400 'access forbidden by rule' lines" 400
    (count "access forbidden by rule, client: 127.0.0.1, server: e.test, request: \"GET /denied/ HTTP/1.1\", host: \"e.test\"");
  Alcotest.(check int) "429: 400 'limiting requests' lines" 400
    (count "by zone \"limit_req\", client: 127.0.0.1, server: e.test, request: \"GET /limited/ HTTP/1.1\"")

(* {1 The CLI} *)

let exe = Filename.concat (Filename.dirname Sys.executable_name) "../../bin/main.exe"

let run args =
  let err = Filename.temp_file "httpz_conf" ".err" and out = Filename.temp_file "httpz_conf" ".out" in
  let code = Sys.command (Printf.sprintf "%s %s >%s 2>%s </dev/null" (Filename.quote exe) args (Filename.quote out) (Filename.quote err)) in
  let o = Httpz_test_support.read_file out and e = Httpz_test_support.read_file err in
  Sys.remove out;
  Sys.remove err;
  (code, o, e)

(* examples/httpz.conf, with throwaway certificates where it names them
   (a copy of examples/ in a temporary directory). *)
let test_example () =
  let here = Filename.dirname Sys.executable_name in
  let examples =
    match
      List.find_opt
        (fun d -> Sys.file_exists (Filename.concat d "httpz.conf"))
        [ Filename.concat here "../../examples"; Filename.concat here "../../../../examples"; "examples" ]
    with
    | Some d -> d
    | None -> Alcotest.fail "examples/httpz.conf not found"
  in
  let copy = Filename.concat base "examples" in
  if Sys.command (Printf.sprintf "rm -rf %s/certs && cp -r %s %s && sh %s/make-example-certs.sh >/dev/null" (Filename.quote copy) (Filename.quote examples) (Filename.quote copy) (Filename.quote copy)) <> 0
  then Alcotest.fail "could not copy the examples and make certificates";
  let code, out, err = run ("check --config " ^ Filename.quote (Filename.concat copy "httpz.conf")) in
  Alcotest.(check int) ("exit 0: " ^ err) 0 code;
  Alcotest.(check bool) "one summary line" true (Httpz_test_support.find_sub out ": ok: 2 sites" >= 0);
  Alcotest.(check int) "one line" 1 (List.length (String.split_on_char '\n' (String.trim out)));
  (* Issue 34, finding 5: every site that serves the root with the
     administration area asks its password there. *)
  match Conf_file.read (Filename.concat copy "httpz.conf") with
  | Error e -> Alcotest.fail e
  | Ok t ->
      List.iter
        (fun (s : Conf_file.site) ->
          let guarded =
            List.exists
              (fun (l : Conf_file.location) ->
                l.path = "/admin/" && (not l.exact)
                && List.exists
                     (fun (e : Conf_file.access) -> e.directive = "auth_basic" && e.args <> [ "off" ])
                     (Conf_access.within ~outer:s.access ~inner:l.access))
              s.locations
          in
          Alcotest.(check bool) (String.concat " " s.names ^ ": /admin/ asks a password") true guarded)
        t.sites

let test_check_errors () =
  let file = Filename.concat base "bad.conf" in
  write file "root /tmp;\nlisten 8080\n";
  let code, out, err = run ("check --config " ^ Filename.quote file) in
  Alcotest.(check int) "exit 2" 2 code;
  Alcotest.(check string) "nothing on stdout" "" out;
  Alcotest.(check string) "one precise line" (file ^ ":3:1: unexpected end of file: the directive 'listen' (line 2) is missing its ';'\n") err;
  let code, _, err = run ("check --config " ^ Filename.quote (Filename.concat base "missing.conf")) in
  Alcotest.(check int) "missing file: exit 2" 2 code;
  Alcotest.(check bool) "names it" true (Httpz_test_support.find_sub err "missing.conf" >= 0);
  write file "root /no/such/dir/httpz;\n";
  let code, _, err = run ("check --config " ^ Filename.quote file) in
  Alcotest.(check int) "missing root: exit 2" 2 code;
  Alcotest.(check bool) "at the root directive" true (Httpz_test_support.find_sub err "bad.conf:1:6:" >= 0);
  write file (Printf.sprintf "root %s/a;\nerror_page 404 /errors/404.html;\nerror_page 403 /nope.html;\n" base);
  let code, _, err = run ("check --config " ^ Filename.quote file) in
  Alcotest.(check int) "missing error page: exit 2" 2 code;
  Alcotest.(check bool) ("at its error_page directive: " ^ err) true
    (Httpz_test_support.find_sub err "bad.conf:3:1: error page for 403: /nope.html" >= 0)

let test_serve_refuses_flags () =
  let file = Filename.concat base "ok.conf" in
  write file "root /tmp;\n";
  let code, _, err = run ("serve --config " ^ Filename.quote file ^ " --port 9") in
  Alcotest.(check int) "exit 2" 2 code;
  Alcotest.(check bool) "says why" true (Httpz_test_support.find_sub err "--port cannot be combined with --config" >= 0)

(* Issue 34, finding 3: what check accepted and serve then failed on (a
   log in a missing directory), or blocked on for ever (a FIFO as user
   file): refused at their directive, in bounded time. *)
let test_check_files () =
  let file = Filename.concat base "files.conf" in
  let check () =
    let err = Filename.temp_file "httpz_conf" ".err" in
    let code =
      Sys.command (Printf.sprintf "timeout 10 %s check --config %s >/dev/null 2>%s </dev/null" (Filename.quote exe) (Filename.quote file) (Filename.quote err))
    in
    let e = Httpz_test_support.read_file err in
    Sys.remove err;
    (code, e)
  in
  let expect name at part =
    let code, err = check () in
    Alcotest.(check int) (name ^ ": exit 2: " ^ err) 2 code;
    Alcotest.(check bool) (name ^ ": at " ^ at ^ ": " ^ err) true
      (Httpz_test_support.find_sub err (file ^ ":" ^ at ^ ": ") = 0 && Httpz_test_support.find_sub err part > 0)
  in
  write file "root /tmp;\naccess_log /nonexistent-httpz/access.log;\n";
  expect "access log in a missing directory" "2:12" "no such directory /nonexistent-httpz";
  write file "root /tmp;\nerror_log /nonexistent-httpz/error.log;\n";
  expect "error log in a missing directory" "2:11" "no such directory /nonexistent-httpz";
  write file (Printf.sprintf "root /tmp;\nerror_log %s;\n" base);
  expect "a directory as error log" "2:11" "is a directory";
  let fifo = Filename.concat base "fifo.users" in
  Unix.mkfifo fifo 0o600;
  write file "root /tmp;\nlocation /a/ {\n  auth_basic A;\n  auth_basic_user_file fifo.users;\n}\n";
  expect "a FIFO as user file" "4:3" "not a regular file";
  write file "root /tmp;\nsite a.test { root /tmp; access_log /nonexistent-httpz/a.log; }\n";
  expect "a site's access log in a missing directory" "2:37" "no such directory /nonexistent-httpz";
  write file "root /tmp;\nlocation /a/ { access_log syslog:server=unix:/nonexistent-httpz.sock; }\n";
  expect "a location's syslog socket nobody listens on" "2:27" "connect: No such file or directory";
  write file (Printf.sprintf "root /tmp;\naccess_log %s/ok.log;\nerror_log stderr;\n" base);
  let code, err = check () in
  Alcotest.(check int) ("a log that can be made: exit 0: " ^ err) 0 code;
  Alcotest.(check bool) "check made no file" false (Sys.file_exists (Filename.concat base "ok.log"))

let test_check_access () =
  let file = Filename.concat base "auth.conf" in
  write file "root /tmp;\nlocation /admin/ {\n  auth_basic Admin;\n  auth_basic_user_file missing.users;\n}\n";
  let code, _, err = run ("check --config " ^ Filename.quote file) in
  Alcotest.(check int) "an unreadable user file: exit 2" 2 code;
  Alcotest.(check bool) ("at the directive: " ^ err) true (Httpz_test_support.find_sub err (file ^ ":4:3: ") = 0);
  write file "root /tmp;\nlocation /admin/ {\n  auth_basic Admin;\n  auth_basic_user_file users;\n  allow 10.0.0.0/8;\n  deny all;\n}\n";
  let code, out, err = run ("check --config " ^ Filename.quote file) in
  Alcotest.(check int) ("valid: exit 0: " ^ err) 0 code;
  Alcotest.(check bool) ("counted: " ^ out) true (Httpz_test_support.find_sub out "4 access-control directives" > 0)

let tests =
  [ Alcotest.test_case "sites and rules answer" `Quick test_answers;
    Alcotest.test_case "regex locations" `Quick test_regex;
    Alcotest.test_case "0 words per request" `Quick test_zero_alloc;
    Alcotest.test_case "check: the example" `Quick test_example;
    Alcotest.test_case "check: errors exit 2" `Quick test_check_errors;
    Alcotest.test_case "serve --config refuses other options" `Quick test_serve_refuses_flags;
    Alcotest.test_case "access control from the file" `Quick test_access;
    Alcotest.test_case "access control errors at their directive" `Quick test_access_errors;
    Alcotest.test_case "check: user files" `Quick test_check_access;
    Alcotest.test_case "check: logs and user files that serve could not use" `Quick test_check_files ]
