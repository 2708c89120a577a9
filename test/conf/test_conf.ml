(* The configuration file (httpz.conf): malformed files (Conf_errors),
   what a valid one reads into, host and location matching with their
   allocation, and the handler through a live server (Conf_live). *)

open Httpz_conf
module B = Httpz.Bigstring

let read text =
  match Conf_file.read_string ~file:"/etc/httpz/t.conf" text with
  | Ok t -> t
  | Error e -> Alcotest.failf "refused: %s" e

let full =
  {|# two sites
listen 127.0.0.1:8443 tls;
listen 127.0.0.1:8080 plain;
listen 127.0.0.1:8081 redirect;
workers 3;
idle_timeout 2m;
max_body 64k;
header X-Frame-Options DENY;
max_age 60;
limit_conn 10;
error_log logs/error.log;
log_level warn;
stats_listen 9100;
stats_listen [::1]:9101;
deny 192.0.2.0/24;
limit_req 5r/s;
tls_certificate certs/main.crt;
tls_certificate_key /k/main.key;
site Example.COM *.example.com {
  root www;
  auth_basic "Admin area";
  auth_basic_user_file users;
  location /assets/ { header Cache-Control "public, max-age=31536000, immutable"; compress on; }
  location = /index.html { header Cache-Control no-cache; }
  location /admin/ { allow 10.0.0.0/8; deny all; limit_req 30r/m 3; }
  location /app/ { try_files $uri $uri/ /index.html; }
  location /old/ { return 301 'https://example.com/new/'; }
  location /errors/ { internal; }
  location /legacy/ { rewrite /assets/; }
}
site app.test default {
  root /srv/app;
  listing on;
  tls_certificate /c/app.crt;
  tls_certificate_key /c/app.key;
}
|}

let test_full () =
  let t = read full in
  let s = t.server in
  Alcotest.(check int) "workers" 3 s.workers;
  Alcotest.(check (float 0.)) "idle timeout" 120. s.idle_timeout;
  Alcotest.(check int) "max body" 65536 s.max_body;
  Alcotest.(check (list (pair string int))) "https addresses" [ ("127.0.0.1", 8443) ] s.listen;
  Alcotest.(check bool) "global header kept with the default" true
    (List.mem ("X-Frame-Options", "DENY") s.headers && List.mem_assoc "X-Content-Type-Options" s.headers);
  (match s.tls with
   | None -> Alcotest.fail "no tls"
   | Some tl ->
       Alcotest.(check string) "certificate beside the file" "/etc/httpz/certs/main.crt" tl.cert_file;
       Alcotest.(check string) "absolute key" "/k/main.key" tl.key_file;
       Alcotest.(check (list (pair string int))) "plain" [ ("127.0.0.1", 8080) ] tl.listen_plain;
       Alcotest.(check (list (pair string int))) "redirect" [ ("127.0.0.1", 8081) ] tl.redirect_http;
       Alcotest.(check int) "one SNI certificate" 1 (List.length tl.sni);
       let names, c, _ = List.hd tl.sni in
       Alcotest.(check (list string)) "SNI names" [ "app.test" ] names;
       Alcotest.(check string) "SNI cert" "/c/app.crt" c);
  Alcotest.(check int) "two sites" 2 (List.length t.sites);
  Alcotest.(check int) "default site" 1 t.default_site;
  let ex = List.hd t.sites in
  Alcotest.(check (list string)) "names lower case" [ "example.com"; "*.example.com" ] ex.names;
  Alcotest.(check string) "root beside the file" "/etc/httpz/www" ex.static.root;
  Alcotest.(check int) "max_age inherited" 60 ex.static.max_age;
  Alcotest.(check int) "seven locations" 7 (List.length ex.locations);
  Alcotest.(check int) "limit_conn" 10 s.conn_limit;
  Alcotest.(check (option string)) "error log beside the file" (Some "/etc/httpz/logs/error.log") s.error_log;
  Alcotest.(check bool) "log level" true (s.log_level = Httpz_server.Log.Warn);
  Alcotest.(check (list (pair string int))) "stats listeners (a bare port on the loopback)"
    [ ("127.0.0.1", 9100); ("::1", 9101) ] s.stats_listen;
  let show l = List.map (fun (a : Conf_file.access) -> String.concat " " (a.directive :: a.args)) l in
  Alcotest.(check (list string)) "site access: the top level's kept, kind by kind"
    [ "deny 192.0.2.0/24"; "limit_req 5r/s 5"; "auth_basic Admin area"; "auth_basic_user_file /etc/httpz/users" ]
    (show ex.access);
  let loc p = List.find (fun (l : Conf_file.location) -> l.path = p) ex.locations in
  Alcotest.(check (list string)) "location access, in order" [ "allow 10.0.0.0/8"; "deny all"; "limit_req 30r/m 3" ]
    (show (loc "/admin/").access);
  Alcotest.(check int) "access position" 25 (List.hd (loc "/admin/").access).at.line;
  (match Conf_access.config (Conf_access.within ~outer:ex.access ~inner:(loc "/admin/").access) with
   | Error (_, m) -> Alcotest.fail m
   | Ok g ->
       Alcotest.(check int) "the location's address rules only" 2 (List.length g.access);
       Alcotest.(check bool) "its own rate" true (g.rate = Some { Httpz_server.Guard.per_second = 0.5; burst = 3 });
       Alcotest.(check bool) "the site's password" true
         (g.auth = Some { Httpz_server.Guard.realm = "Admin area"; user_file = "/etc/httpz/users" }));
  (match Conf_access.config (Conf_access.within ~outer:ex.access ~inner:[]) with
   | Error (_, m) -> Alcotest.fail m
   | Ok g -> Alcotest.(check int) "a location without directives: the site's" 1 (List.length g.access));
  Alcotest.(check bool) "exact" true (loc "/index.html").exact;
  Alcotest.(check string) "try_files" "/index.html" (loc "/app/").try_files;
  Alcotest.(check (option bool)) "compress" (Some true) (loc "/assets/").compress;
  Alcotest.(check bool) "return" true ((loc "/old/").action = Return (301, "https://example.com/new/"));
  Alcotest.(check bool) "internal" true ((loc "/errors/").action = Internal);
  Alcotest.(check bool) "rewrite" true ((loc "/legacy/").action = Rewrite "/assets/");
  let app = List.nth t.sites 1 in
  Alcotest.(check bool) "site listing" true app.static.list_directories

let test_implicit_site () =
  let t = read "root /srv;\nlocation = /x { internal; }\n" in
  Alcotest.(check int) "one site" 1 (List.length t.sites);
  Alcotest.(check (list string)) "for every host" [] (List.hd t.sites).names;
  Alcotest.(check (list (pair string int))) "default address" [ ("127.0.0.1", 8080) ] t.server.listen;
  Alcotest.(check int) "its location" 1 (List.length (List.hd t.sites).locations)

(* Issue 34, finding 5: several codes on one error_page line (nginx's
   error_page 500 502 503 504 /50x.html;), and pages for 401, 429, 502. *)
let test_error_page_codes () =
  let t = read "root /srv;\nerror_page 500 502 503 /50x.html;\nerror_page 401 403 429 /denied.html;\n" in
  Alcotest.(check (list (pair int string))) "one page per code"
    [ (500, "/50x.html"); (502, "/50x.html"); (503, "/50x.html"); (401, "/denied.html"); (403, "/denied.html");
      (429, "/denied.html") ]
    (List.hd t.sites).static.error_pages

let test_comments_and_quotes () =
  let t = read "# top\nroot '/srv/a b'; # trailing\nheader X-Note \"say \\\"hi\\\" # not a comment\";\n" in
  Alcotest.(check string) "single quotes" "/srv/a b" (List.hd t.sites).static.root;
  Alcotest.(check bool) "escapes and # inside quotes" true
    (List.mem ("X-Note", "say \"hi\" # not a comment") t.server.headers)

let test_suggest () =
  Alcotest.(check (option string)) "near" (Some "listen") (Conf_args.suggest "lisen" [ "root"; "listen" ]);
  Alcotest.(check (option string)) "far" None (Conf_args.suggest "zzzzzz" [ "root"; "listen" ])

(* {1 Hosts} *)

let hosts =
  Host_match.create
    ~names:[| [ "example.com"; "*.example.com" ]; [ "*.a.example.com" ]; [ "other.test" ]; [ "[::1]" ] |]
    ~default:2

let test_hosts () =
  List.iter
    (fun (host, want) -> Alcotest.(check int) host want (Host_match.find_string hosts host))
    [ ("example.com", 0); ("EXAMPLE.com", 0); ("example.com:8443", 0); ("example.com.", 0);
      ("www.example.com", 0); ("x.a.example.com", 1); ("y.x.a.example.com", 1); ("a.example.com", 0);
      ("other.test", 2); ("unknown.test", 2); ("xexample.com", 2); ("[::1]:8080", 3); ("", 2) ];
  let strict = Host_match.create ~names:[| [ "a.test" ] |] ~default:(-1) in
  Alcotest.(check int) "no default" (-1) (Host_match.find_string strict "b.test")

let host_buf = B.of_string "GET / HTTP/1.1\r\nHost: www.a.example.com:8443\r\n"
let host_span = Httpz.Span.make ~off:22 ~len:22

let alloc_hosts =
  Httpz_test_support.zero_alloc "Host_match.find (wildcard, port)" (fun () ->
      if Host_match.find hosts host_buf host_span <> 1 then failwith "wrong site")

(* {1 Locations} *)

let rules = Rules.create [ (false, "/"); (false, "/assets/"); (true, "/assets/x"); (false, "/assets/img/"); (true, "/index.html") ]

let find_rule p = Rules.find rules (B.of_string p) (String.length p)

let test_rules () =
  List.iter
    (fun (p, want) -> Alcotest.(check int) p want (find_rule p))
    [ ("/assets/a.css", 1); ("/assets/x", 2); ("/assets/x/y", 1); ("/assets/img/a.png", 3);
      ("/index.html", 4); ("/index.htm", 0); ("/", 0); ("/assets", 0) ];
  let none = Rules.create [ (false, "/a/") ] in
  Alcotest.(check int) "no match" (-1) (Rules.find none (B.of_string "/b") 2)

(* Against the plain definition (an exact path, else the longest prefix,
   the first given of equal ones), on random sets of nested paths: the
   sorted table's search must agree (issue 34, finding 4). *)
let test_rules_reference () =
  let st = Random.State.make [| 34 |] in
  let word () = String.init (Random.State.int st 4) (fun _ -> "ab/".[Random.State.int st 3]) in
  let path () = "/" ^ word () ^ (if Random.State.bool st then "/" ^ word () else "") in
  for _ = 1 to 300 do
    let locations = List.init (Random.State.int st 30) (fun _ -> (Random.State.int st 4 = 0, path ())) in
    let t = Rules.create locations in
    let naive p =
      let indexed = List.mapi (fun i l -> (i, l)) locations in
      match List.find_opt (fun (_, (e, q)) -> e && q = p) indexed with
      | Some (i, _) -> i
      | None ->
          List.fold_left
            (fun (best, len) (i, (e, q)) ->
              let m = String.length q in
              if (not e) && m <= String.length p && String.sub p 0 m = q && m > len then (i, m) else (best, len))
            (-1, -1) indexed
          |> fst
    in
    for _ = 1 to 30 do
      let p = path () ^ word () in
      let got = Rules.find t (B.of_string p) (String.length p) in
      if got <> naive p then
        Alcotest.failf "%S among [%s]: %d, want %d" p
          (String.concat "; " (List.map (fun (e, q) -> (if e then "= " else "") ^ q) locations)) got (naive p)
    done
  done

let rule_path = B.of_string "/assets/img/logo.png"

(* Issue 34, finding 4: 50,000 locations took over a minute to read (a
   list appended to and searched per location); now well under a second.
   The bound is 40 times that, for a loaded machine. *)
let test_many_locations () =
  let b = Buffer.create (2 lsl 20) in
  Buffer.add_string b "root /tmp;\n";
  for i = 0 to 49_999 do
    Buffer.add_string b (Printf.sprintf "location /p%d/ { header X-L %d; }\n" i i)
  done;
  let t0 = Unix.gettimeofday () in
  let t = read (Buffer.contents b) in
  (match Sites.create t with Ok s -> Sites.close s | Error e -> Alcotest.fail e);
  let dt = Unix.gettimeofday () -. t0 in
  Alcotest.(check int) "every location" 50_000 (List.length (List.hd t.sites).locations);
  Alcotest.(check bool) (Printf.sprintf "read and built in %.2f s (at most 20)" dt) true (dt < 20.)

(* 50,000 locations: the search still allocates nothing. *)
let many = Rules.create (List.init 50_000 (fun i -> (i mod 5 = 0, Printf.sprintf "/p%d/" i)))
let many_path = B.of_string "/p49999/x/y"

let alloc_many_rules =
  Httpz_test_support.zero_alloc "Rules.find among 50,000 locations" (fun () ->
      if Rules.find many many_path 11 <> 49999 then failwith "wrong rule")

let alloc_rules =
  Httpz_test_support.zero_alloc "Rules.find (longest prefix)" (fun () ->
      if Rules.find rules rule_path 20 <> 3 then failwith "wrong rule")

(* include: files spliced where they are named, errors pointing into
   them, and what a hostile or broken tree cannot make a reload do. *)
let with_tree files f =
  let dir = Filename.concat (Filename.get_temp_dir_name ()) (Printf.sprintf "httpz-inc-%d-%d" (Unix.getpid ()) (Random.bits ())) in
  let rec mkdir_p d = if not (Sys.file_exists d) then (mkdir_p (Filename.dirname d); Unix.mkdir d 0o755) in
  List.iter
    (fun (name, text) ->
      let path = Filename.concat dir name in
      mkdir_p (Filename.dirname path);
      let oc = open_out_bin path in
      output_string oc text;
      close_out oc)
    files;
  Fun.protect ~finally:(fun () -> ignore (Sys.command ("rm -rf " ^ Filename.quote dir))) (fun () -> f dir)

let test_include () =
  with_tree
    [ ("httpz.conf", "listen 127.0.0.1:8080;\ninclude sites/*.conf;\nsite c.test { root www; include locs/c-*.conf; }\ninclude none/*.conf;\n");
      ("sites/b.conf", "site b.test { root www; }\n"); ("sites/a.conf", "site a.test { root www; location /x/ { deny all; } }\n");
      ("sites/.hidden.conf", "site hidden.test { root www; }\n"); ("sites/notes.txt", "not a config\n");
      ("locs/c-1.conf", "location /one/ { deny all; }\n"); ("locs/c-2.conf", "location = /two { return 204; }\n") ]
    (fun dir ->
      Unix.mkdir (Filename.concat dir "none") 0o755;
      match Conf_file.read (Filename.concat dir "httpz.conf") with
      | Error e -> Alcotest.failf "refused: %s" e
      | Ok t ->
          Alcotest.(check (list (list string))) "sites in glob order, hidden and non-matching files left out"
            [ [ "a.test" ]; [ "b.test" ]; [ "c.test" ] ] (List.map (fun s -> s.Conf_file.names) t.sites);
          let c = List.nth t.sites 2 in
          Alcotest.(check (list string)) "a site's block includes its locations" [ "/one/"; "/two" ]
            (List.map (fun (l : Conf_file.location) -> l.path) c.locations);
          Alcotest.(check string) "a root in an included file is relative to the main file's directory"
            (Filename.concat dir "www") (List.hd t.sites).static.root)

let find_sub s sub from =
  let n = String.length s and m = String.length sub in
  let rec go i = if i + m > n then -1 else if String.sub s i m = sub then i else go (i + 1) in
  go from

let contains s sub = find_sub s sub 0 >= 0

let rec strip_all ~sub s =
  match find_sub s sub 0 with
  | -1 -> s
  | i -> strip_all ~sub (String.sub s 0 i ^ String.sub s (i + String.length sub) (String.length s - i - String.length sub))

let include_error files expect =
  with_tree files (fun dir ->
      match Conf_file.read (Filename.concat dir "httpz.conf") with
      | Ok _ -> Alcotest.failf "accepted, expected %S" expect
      | Error e ->
          let rel = strip_all ~sub:(dir ^ "/") e in
          if not (contains rel expect) then Alcotest.failf "message %S does not contain %S" rel expect)

let test_include_errors () =
  include_error [ ("httpz.conf", "include sites/*.conf;\n"); ("sites/a.conf", "site a.test {\n  root www\n}\n") ]
    "sites/a.conf:3:1: missing ';' before '}'";
  include_error [ ("httpz.conf", "listen 8080;\n  include missing.conf;\n") ] "httpz.conf:2:11: include \"missing.conf\": ";
  include_error [ ("httpz.conf", "include a.conf;\n"); ("a.conf", "include b.conf;\n"); ("b.conf", "include a.conf;\n") ]
    "b.conf:1:9: include \"a.conf\": ";
  include_error [ ("httpz.conf", "include */x.conf;\n") ] "httpz.conf:1:9: a wildcard may appear in the file name";
  include_error [ ("httpz.conf", "include;\n") ] "httpz.conf:1:1: 'include' takes one file or pattern";
  include_error [ ("httpz.conf", "include conf.d/[a.conf;\n") ] "httpz.conf:1:9: include \"conf.d/[a.conf\": \"[a.conf\" is not a file-name pattern";
  include_error [ ("httpz.conf", "include a.conf b.conf;\n") ] "httpz.conf:1:1: 'include' takes one file or pattern";
  include_error
    [ ("httpz.conf", "site a.test { root www; }\ninclude more.conf;\n"); ("more.conf", "\nsite a.test { root www; }\n") ]
    "more.conf:2:6: ";
  (* Six levels of four files, each including the whole next level: no
     cycle, but 4^6 reads; the budget stops it at 1024. *)
  include_error
    (("httpz.conf", "include d1/*.conf;\n")
    :: List.concat
         (List.init 6 (fun l ->
              List.init 4 (fun i ->
                  (Printf.sprintf "d%d/%d.conf" (l + 1) i, if l = 5 then "" else Printf.sprintf "include d%d/*.conf;\n" (l + 2))))))
    "more than 1024 files read through include"

(* Zones through Site_guards: a $server_name zone counts each site apart,
   two zones in one site count apart, and reading the file again (a
   reload) keeps a zone of the same size and empties a resized one. *)
let test_zones () =
  let module G = Httpz_server.Guard in
  let text size =
    Printf.sprintf
      "limit_req_zone $server_name zone=site:%s rate=1r/m;\n\
       limit_req_zone $binary_remote_addr zone=ip:64k rate=1r/m;\n\
       site a.test { root /srv/a; limit_req zone=site burst=1 nodelay; location /x/ { limit_req zone=ip; } }\n\
       site b.test { root /srv/b; limit_req zone=site burst=1; }\n" size
  in
  let addr last =
    let b = Bytes.make 16 '\000' in
    Bytes.set b 10 '\255';
    Bytes.set b 11 '\255';
    Bytes.set b 12 '\192';
    Bytes.set b 15 (Char.chr last);
    b
  in
  let guards size =
    match Site_guards.create (read (text size)) with
    | Ok [ a; b ] -> (Option.get a.site, Option.get a.locations.(0), Option.get b.site)
    | Ok _ -> Alcotest.fail "two sites"
    | Error e -> Alcotest.fail e
  in
  let decide g last = G.decide g ~addr:(addr last) ~now_ns:1_000_000_000_000 (B.create 1) Httpz.Span.empty in
  let verdict = Alcotest.testable (fun f v -> Format.pp_print_string f (match v with G.Admit -> "Admit" | Too_many -> "Too_many" | _ -> "other")) ( = ) in
  let a, ax, b = guards "64k" in
  Alcotest.(check (list verdict)) "site a: two clients share its count (burst=1: 2 at once)" [ G.Admit; Admit; Too_many ]
    (List.map (decide a) [ 1; 2; 3 ]);
  Alcotest.(check verdict) "site b counts apart" G.Admit (decide b 1);
  Alcotest.(check (list verdict)) "a location's zone by address: its own count" [ G.Admit; Too_many; Admit ]
    (List.map (decide ax) [ 1; 1; 2 ]);
  let a, ax, _ = guards "64k" in
  Alcotest.(check verdict) "read again: the zone kept, site a still over" G.Too_many (decide a 4);
  Alcotest.(check verdict) "... and the address zone too" G.Too_many (decide ax 1);
  let a, ax, _ = guards "128k" in
  Alcotest.(check verdict) "read with another size: a new zone" G.Admit (decide a 4);
  Alcotest.(check verdict) "... the unchanged one kept" G.Too_many (decide ax 1)

let () =
  Alcotest.run "conf"
    [ ("malformed", Conf_errors.tests @ [ Alcotest.test_case "each its own message" `Quick Conf_errors.distinct ]);
      ( "reading",
        [ Alcotest.test_case "a full file" `Quick test_full;
          Alcotest.test_case "no site block" `Quick test_implicit_site;
          Alcotest.test_case "comments and quotes" `Quick test_comments_and_quotes;
          Alcotest.test_case "error_page: several codes" `Quick test_error_page_codes;
          Alcotest.test_case "did you mean" `Quick test_suggest;
          Alcotest.test_case "include: globs, blocks, relative paths" `Quick test_include;
          Alcotest.test_case "include: errors in the right file" `Quick test_include_errors ] );
      ("hosts", [ Alcotest.test_case "exact, wildcard, default" `Quick test_hosts; alloc_hosts ]);
      ("zones", [ Alcotest.test_case "by site, by address, kept over a reload" `Quick test_zones ]);
      ( "rules",
        [ Alcotest.test_case "exact, longest prefix" `Quick test_rules;
          Alcotest.test_case "as the plain definition, random sets" `Quick test_rules_reference; alloc_rules;
          Alcotest.test_case "50,000 locations read in linear time" `Quick test_many_locations;
          alloc_many_rules ] );
      ("live", Conf_live.tests);
      ("settings", Conf_settings.tests) ]
