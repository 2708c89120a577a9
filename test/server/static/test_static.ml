(* The static file handler, through the real server on 127.0.0.1.

   Each server runs in a forked child ([Server.run] with one worker, port
   0); the child reports its port through a pipe and is stopped with
   SIGTERM at exit. Requests are raw bytes over Unix sockets, so what is
   checked is exactly what goes on the wire. *)

open Httpz_sys
open Httpz_server
open Httpz_static
module B = Httpz.Bigstring

(* {1 The document root} *)

let mtime = 1_700_000_000.

let tmp_dir () =
  let f = Filename.temp_file "httpz_static" "" in
  Sys.remove f;
  Unix.mkdir f 0o755;
  f

let write_file path contents =
  let oc = open_out_bin path in
  output_string oc contents;
  close_out oc;
  Unix.utimes path mtime mtime

let base = tmp_dir ()
let root = Filename.concat base "root"
let outside = Filename.concat base "outside"
let secret = "TOPSECRET outside the root\n"
let hello = "Hello, world!\n"
let data = String.init 1000 (fun i -> Char.chr (32 + (i * 7 mod 95)))
let css = "body { color: red }\n"
let css_gz = "\x1f\x8b-pretend-gzip-bytes-"
let script_name = "<script>x'\".txt"

let () =
  let p = Filename.concat root in
  List.iter (fun d -> Unix.mkdir d 0o755)
    [ root; outside; p "dir"; p "dir/sub"; p "list"; p "list/d\"q"; p ".well-known"; p ".git" ];
  write_file (Filename.concat outside "secret.txt") secret;
  write_file (p "hello.txt") hello;
  write_file (p "data.bin") data;
  write_file (p "index.html") "<h1>root index</h1>\n";
  write_file (p "dir/index.html") "<h1>dir index</h1>\n";
  write_file (p "dir/sub/file.txt") "sub file\n";
  write_file (p "list/plain.txt") "plain\n";
  write_file (p ("list/" ^ script_name)) "x\n";
  write_file (p "list/a&b c.txt") "y\n";
  write_file (p "list/.hidden") "hidden\n";
  write_file (p "style.css") css;
  write_file (p "style.css.gz") css_gz;
  write_file (p "app.js") "console.log(1)\n";
  write_file (p "empty.txt") "";
  write_file (p "%2e%2e") "literal percent name\n";
  write_file (p ".secret") "dotfile\n";
  write_file (p ".git/config") "[core]\n";
  write_file (p ".well-known/x.txt") "well known\n";
  Unix.symlink "../outside/secret.txt" (p "link_out");
  Unix.symlink (Filename.concat outside "secret.txt") (p "abs_link_out");
  Unix.symlink "../outside" (p "dirlink_out");
  Unix.symlink "hello.txt" (p "link_in");
  Unix.symlink "../outside/secret.txt" (p "list/escape.txt");
  Unix.mkfifo (p "fifo") 0o644;
  write_file (p "future.txt") "from the future\n";
  Unix.utimes (p "future.txt") 4102444800. 4102444800. (* 2100-01-01 *)

(* {1 Servers} *)

open Httpz_live

let servers = ref []

let stats_token = "static-stats"

let start ?(stats = false) ?(fallback = false) cfg =
  let stats = if stats then Some stats_token else None in
  let s =
    spawn (fun ~on_listen ->
        if fallback then Syscall.set_openat2_fallback_for_testing true;
        match Static.create cfg with
        | Error msg -> prerr_endline msg; 3
        | Ok st ->
          Server.run
            { Server.default_config with port = 0; workers = 1; stats; on_listen }
            (Static.handler st))
  in
  servers := s :: !servers;
  s.port

(* The last test stops the servers and checks they exit 0; after a run of
   some tests only, the ones left are killed here. *)
let test_servers_exit () =
  let all = !servers in
  servers := [];
  List.iter (fun s -> ignore (stop s : string)) all

let () =
  at_exit (fun () ->
      List.iter kill !servers;
      ignore (Sys.command (Printf.sprintf "rm -rf %s" (Filename.quote base))))

let cfg = { Static.default_config with root; list_directories = true }
let port = lazy (start cfg)
(* The other settings: no listing, max-age, no sidecars, no symlinks,
   dotfiles served. *)
let port_nolist =
  lazy (start { cfg with list_directories = false; max_age = 60; gzip_static = false;
                         follow_symlinks = false; dotfiles = true })
let port_fallback = lazy (start ~fallback:true cfg)
let port_stats = lazy (start ~stats:true cfg)

(* {1 Requests}
   One request a connection, asking [Connection: close]: [exchange] checks
   that the server closes after the response, with nothing more. *)

let find_sub = Httpz_test_support.find_sub
let contains s sub = find_sub s sub >= 0

let req ?(meth = "GET") ?(headers = []) ?(port = port) target =
  let port = Lazy.force port in
  let h = String.concat "" (List.map (fun (k, v) -> k ^ ": " ^ v ^ "\r\n") headers) in
  exchange ~head:(meth = "HEAD") port
    (Printf.sprintf "%s %s HTTP/1.1\r\nHost: t\r\n%sConnection: close\r\n\r\n" meth target h)

let check_status name want r = Alcotest.(check int) (name ^ ": status") want r.status
let check_body name want r = Alcotest.(check string) (name ^ ": body") want r.body

(* {1 The small-file cache}
   A cached file is trusted for [cache_ttl_ms]; these servers use 200 ms so
   the tests can wait past it. Files written here get fresh mtimes (not the
   fixed [mtime] above), as a deploy would. *)

let cache_dir = Filename.concat base "cache_root"
let () = Unix.mkdir cache_dir 0o755
let port_cache = lazy (start { cfg with root = cache_dir; cache_ttl_ms = 200 })
let port_nocache = lazy (start { cfg with root = cache_dir; cache_max_file = 0 })

let write_now path contents =
  let tmp = path ^ ".tmp" in
  let oc = open_out_bin tmp in
  output_string oc contents;
  close_out oc;
  Unix.rename tmp path

let overwrite_in_place path contents =
  let oc = open_out_gen [ Open_wronly; Open_trunc; Open_binary ] 0o644 path in
  output_string oc contents;
  close_out oc;
  (* mtime must move even within the same second on coarse filesystems *)
  let t = Unix.gettimeofday () +. 5. in
  Unix.utimes path t t

let after_ttl () = Unix.sleepf 0.35

let test_cache_change () =
  let f = Filename.concat cache_dir "change.txt" in
  write_now f "version one\n";
  let port = port_cache in
  let r1 = req ~port "/change.txt" in
  check_body "first" "version one\n" r1;
  let r2 = req ~port "/change.txt" in
  check_body "cached" "version one\n" r2;
  Alcotest.(check (option string)) "same ETag while cached" (header r1 "etag") (header r2 "etag");
  overwrite_in_place f "version two\n";
  after_ttl ();
  let r3 = req ~port "/change.txt" in
  check_body "same size, new mtime: re-read after the ttl" "version two\n" r3;
  Alcotest.(check bool) "ETag changed" true (header r1 "etag" <> header r3 "etag");
  overwrite_in_place f "version three, longer\n";
  after_ttl ();
  check_body "grown file" "version three, longer\n" (req ~port "/change.txt");
  (* Ranges and HEAD are answered from the cached bytes too. *)
  let r = req ~port ~headers:[ "Range", "bytes=8-12" ] "/change.txt" in
  check_status "range from cache" 206 r;
  check_body "range bytes" "three" r;
  let h = req ~port ~meth:"HEAD" "/change.txt" in
  Alcotest.(check (option string)) "HEAD length" (Some "22") (header h "content-length");
  Alcotest.(check string) "HEAD body" "" h.body

let test_cache_replace () =
  let f = Filename.concat cache_dir "replace.css" in
  write_now f "a { color: red }\n";
  let port = port_cache in
  check_body "first" "a { color: red }\n" (req ~port "/replace.css");
  write_now f "a { color: blue }\n";  (* rename over it: a new inode *)
  after_ttl ();
  check_body "replaced by rename" "a { color: blue }\n" (req ~port "/replace.css");
  (* A sidecar that appears later is found once the cached "absent" expires. *)
  let gz = [ "Accept-Encoding", "gzip" ] in
  check_body "no sidecar yet" "a { color: blue }\n" (req ~port ~headers:gz "/replace.css");
  write_now (f ^ ".gz") "\x1f\x8b-gz-bytes";
  after_ttl ();
  let r = req ~port ~headers:gz "/replace.css" in
  check_body "sidecar now served" "\x1f\x8b-gz-bytes" r;
  Alcotest.(check (option string)) "Content-Encoding" (Some "gzip") (header r "content-encoding");
  Sys.remove (f ^ ".gz");
  Sys.remove f;
  after_ttl ();
  check_status "deleted: 404 after the ttl" 404 (req ~port "/replace.css");
  check_status "deleted: sidecar not served either" 404 (req ~port ~headers:gz "/replace.css")

let test_cache_bypass () =
  let big = String.init (200 * 1024) (fun i -> Char.chr (97 + (i mod 26))) in
  write_now (Filename.concat cache_dir "big.bin") big;
  let r = req ~port:port_cache "/big.bin" in
  check_status "large file" 200 r;
  Alcotest.(check bool) "large file (sendfile) byte-equal" true (r.body = big);
  write_now (Filename.concat cache_dir "small.txt") "small\n";
  check_body "cache disabled: served" "small\n" (req ~port:port_nocache "/small.txt");
  overwrite_in_place (Filename.concat cache_dir "small.txt") "SMALL\n";
  check_body "cache disabled: a change shows at once" "SMALL\n" (req ~port:port_nocache "/small.txt")

(* {1 Plain GET and HEAD} *)

let test_get () =
  let r = req "/hello.txt" in
  check_status "GET" 200 r;
  check_body "GET" hello r;
  Alcotest.(check (option string)) "type" (Some "text/plain; charset=utf-8") (header r "content-type");
  Alcotest.(check (option string)) "length" (Some "14") (header r "content-length");
  Alcotest.(check (option string)) "ranges" (Some "bytes") (header r "accept-ranges");
  Alcotest.(check (option string)) "last-modified" (Some "Tue, 14 Nov 2023 22:13:20 GMT")
    (header r "last-modified");
  Alcotest.(check (option string)) "etag (nginx format)" (Some "\"6553f100-e\"") (header r "etag");
  Alcotest.(check (option string)) "no cache-control by default" None (header r "cache-control");
  Alcotest.(check (option string)) "text/plain varies" (Some "Accept-Encoding") (header r "vary");
  let r = req "/data.bin" in
  check_status "binary" 200 r;
  check_body "binary" data r;
  Alcotest.(check (option string)) "binary type" (Some "application/octet-stream") (header r "content-type");
  Alcotest.(check (option string)) "binary does not vary" None (header r "vary");
  let r = req "/empty.txt" in
  check_status "empty" 200 r;
  check_body "empty" "" r;
  Alcotest.(check (option string)) "empty length" (Some "0") (header r "content-length")

let test_future_mtime () =
  let r = req "/future.txt" in
  check_status "future" 200 r;
  Alcotest.(check (option string)) "Last-Modified is clamped to Date" (header r "date")
    (header r "last-modified");
  let r = req ~headers:[ "If-Modified-Since", "Fri, 01 Jan 2100 00:00:00 GMT" ] "/future.txt" in
  check_status "compared clamped" 304 r;
  let r = req ~headers:[ "If-Modified-Since", "Thu, 31 Dec 2099 23:59:59 GMT" ] "/future.txt" in
  check_status "the clamped time is before 2100" 304 r

let test_head () =
  let g = req "/hello.txt" and r = req ~meth:"HEAD" "/hello.txt" in
  check_status "HEAD" 200 r;
  check_body "HEAD has no body" "" r;
  Alcotest.(check (option string)) "HEAD length" (Some "14") (header r "content-length");
  Alcotest.(check (option string)) "same etag" (header g "etag") (header r "etag");
  let r = req ~meth:"HEAD" ~headers:[ "Range", "bytes=0-1" ] "/hello.txt" in
  check_status "HEAD ignores Range" 200 r

let test_absolute_form () =
  let r = req "http://example.com/hello.txt?x=1" in
  check_status "absolute-form" 200 r;
  check_body "absolute-form" hello r;
  let r = req "/hello.txt?q=%00" in
  check_status "the query is not a path" 200 r

let test_max_age () =
  let r = req ~port:port_nolist "/hello.txt" in
  Alcotest.(check (option string)) "max-age" (Some "max-age=60") (header r "cache-control");
  let etag = header_exn r "etag" in
  let r = req ~port:port_nolist ~headers:[ "If-None-Match", etag ] "/hello.txt" in
  check_status "304" 304 r;
  Alcotest.(check (option string)) "304 keeps max-age" (Some "max-age=60") (header r "cache-control")

(* {1 Conditional requests} *)

let test_if_none_match () =
  let etag = header_exn (req "/hello.txt") "etag" in
  let r = req ~headers:[ "If-None-Match", etag ] "/hello.txt" in
  check_status "match" 304 r;
  check_body "304 has no body" "" r;
  Alcotest.(check (option string)) "304 etag" (Some etag) (header r "etag");
  Alcotest.(check (option string)) "304 last-modified" (Some "Tue, 14 Nov 2023 22:13:20 GMT")
    (header r "last-modified");
  Alcotest.(check (option string)) "304 no length" None (header r "content-length");
  let r = req ~headers:[ "If-None-Match", "W/" ^ etag ] "/hello.txt" in
  check_status "weak comparison" 304 r;
  let r = req ~headers:[ "If-None-Match", "\"x\", " ^ etag ] "/hello.txt" in
  check_status "in a list" 304 r;
  let r = req ~headers:[ "If-None-Match", "\"x\""; "If-None-Match", etag ] "/hello.txt" in
  check_status "over two lines" 304 r;
  let r = req ~headers:[ "If-None-Match", "*" ] "/hello.txt" in
  check_status "star" 304 r;
  let r = req ~headers:[ "If-None-Match", "\"other\"" ] "/hello.txt" in
  check_status "no match" 200 r;
  check_body "no match" hello r;
  let r = req ~meth:"HEAD" ~headers:[ "If-None-Match", etag ] "/hello.txt" in
  check_status "HEAD 304" 304 r

let test_if_modified_since () =
  let lm = "Tue, 14 Nov 2023 22:13:20 GMT" in
  let r = req ~headers:[ "If-Modified-Since", lm ] "/hello.txt" in
  check_status "same date" 304 r;
  check_body "304" "" r;
  let r = req ~headers:[ "If-Modified-Since", "Wed, 15 Nov 2023 00:00:00 GMT" ] "/hello.txt" in
  check_status "later date" 304 r;
  let r = req ~headers:[ "If-Modified-Since", "Sun, 06 Nov 1994 08:49:37 GMT" ] "/hello.txt" in
  check_status "earlier date" 200 r;
  let r = req ~headers:[ "If-Modified-Since", "yesterday" ] "/hello.txt" in
  check_status "invalid date ignored" 200 r;
  let r = req ~headers:[ "If-Modified-Since", lm; "If-None-Match", "\"other\"" ] "/hello.txt" in
  check_status "If-None-Match takes precedence" 200 r

let test_if_match () =
  let etag = header_exn (req "/hello.txt") "etag" in
  let r = req ~headers:[ "If-Match", "\"nope\"" ] "/hello.txt" in
  check_status "If-Match fails" 412 r;
  Alcotest.(check bool) "412 body has no path" false (contains r.body "hello");
  let r = req ~headers:[ "If-Match", "W/" ^ etag ] "/hello.txt" in
  check_status "If-Match is strong" 412 r;
  let r = req ~headers:[ "If-Match", etag ] "/hello.txt" in
  check_status "If-Match holds" 200 r;
  let r = req ~headers:[ "If-Match", "*" ] "/hello.txt" in
  check_status "If-Match star" 200 r;
  let r = req ~headers:[ "If-Unmodified-Since", "Sun, 06 Nov 1994 08:49:37 GMT" ] "/hello.txt" in
  check_status "If-Unmodified-Since fails" 412 r;
  let r = req ~headers:[ "If-Unmodified-Since", "Tue, 14 Nov 2023 22:13:20 GMT" ] "/hello.txt" in
  check_status "If-Unmodified-Since holds" 200 r;
  let r = req ~headers:[ "If-Match", etag; "If-Unmodified-Since", "Sun, 06 Nov 1994 08:49:37 GMT" ]
      "/hello.txt" in
  check_status "If-Match wins over If-Unmodified-Since" 200 r;
  let r = req ~headers:[ "If-Match", "\"nope\""; "If-None-Match", etag ] "/hello.txt" in
  check_status "412 before 304" 412 r

(* {1 Ranges} *)

let test_range_single () =
  let r = req ~headers:[ "Range", "bytes=0-4" ] "/hello.txt" in
  check_status "first bytes" 206 r;
  check_body "first bytes" "Hello" r;
  Alcotest.(check (option string)) "content-range" (Some "bytes 0-4/14") (header r "content-range");
  Alcotest.(check (option string)) "length" (Some "5") (header r "content-length");
  let r = req ~headers:[ "Range", "bytes=-6" ] "/hello.txt" in
  check_status "suffix" 206 r;
  check_body "suffix" "orld!\n" r;
  let r = req ~headers:[ "Range", "bytes=990-" ] "/data.bin" in
  check_status "open end" 206 r;
  check_body "open end" (String.sub data 990 10) r;
  Alcotest.(check (option string)) "open end range" (Some "bytes 990-999/1000") (header r "content-range");
  let r = req ~headers:[ "Range", "bytes=5-9,10-20" ] "/data.bin" in
  check_status "touching ranges coalesce" 206 r;
  check_body "coalesced" (String.sub data 5 16) r

let test_range_other () =
  let r = req ~headers:[ "Range", "bytes=100-" ] "/hello.txt" in
  check_status "unsatisfiable" 416 r;
  Alcotest.(check (option string)) "416 content-range" (Some "bytes */14") (header r "content-range");
  let r = req ~headers:[ "Range", "bytes=oops" ] "/hello.txt" in
  check_status "malformed: whole file" 200 r;
  check_body "malformed" hello r;
  let r = req ~headers:[ "Range", "items=0-1" ] "/hello.txt" in
  check_status "other unit" 200 r;
  let many = "bytes=" ^ String.concat "," (List.init 20 (fun i -> Printf.sprintf "%d-%d" (i * 10) (i * 10))) in
  let r = req ~headers:[ "Range", many ] "/data.bin" in
  check_status "too many ranges: whole file" 200 r;
  check_body "too many" data r

let test_range_multi () =
  let r = req ~headers:[ "Range", "bytes=0-1,5-6" ] "/hello.txt" in
  check_status "multipart" 206 r;
  let ct = header_exn r "content-type" in
  let prefix = "multipart/byteranges; boundary=" in
  Alcotest.(check bool) "multipart type" true
    (String.length ct > String.length prefix && String.sub ct 0 (String.length prefix) = prefix);
  let boundary = String.sub ct (String.length prefix) (String.length ct - String.length prefix) in
  let expected =
    Printf.sprintf
      "--%s\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Range: bytes 0-1/14\r\n\r\nHe\r\n\
       --%s\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Range: bytes 5-6/14\r\n\r\n, \r\n--%s--\r\n"
      boundary boundary boundary
  in
  check_body "multipart body" expected r;
  Alcotest.(check (option string)) "multipart length"
    (Some (string_of_int (String.length expected))) (header r "content-length")

let test_if_range () =
  let g = req "/hello.txt" in
  let etag = header_exn g "etag" and lm = header_exn g "last-modified" in
  let r = req ~headers:[ "Range", "bytes=0-4"; "If-Range", etag ] "/hello.txt" in
  check_status "If-Range etag matches" 206 r;
  let r = req ~headers:[ "Range", "bytes=0-4"; "If-Range", "\"stale\"" ] "/hello.txt" in
  check_status "If-Range etag differs" 200 r;
  check_body "whole file" hello r;
  let r = req ~headers:[ "Range", "bytes=0-4"; "If-Range", "W/" ^ etag ] "/hello.txt" in
  check_status "If-Range weak never matches" 200 r;
  let r = req ~headers:[ "Range", "bytes=0-4"; "If-Range", lm ] "/hello.txt" in
  check_status "If-Range date matches" 206 r;
  let r = req ~headers:[ "Range", "bytes=0-4"; "If-Range", "Sun, 06 Nov 1994 08:49:37 GMT" ] "/hello.txt" in
  check_status "If-Range date differs" 200 r

(* {1 Directories} *)

let test_redirect () =
  let r = req "/dir" in
  check_status "no slash" 301 r;
  Alcotest.(check (option string)) "location" (Some "/dir/") (header r "location");
  let r = req "/dir?x=1&y=%41" in
  Alcotest.(check (option string)) "keeps the query" (Some "/dir/?x=1&y=%41") (header r "location");
  let r = req "//dir" in
  Alcotest.(check (option string)) "never scheme-relative" (Some "/dir/") (header r "location");
  let r = req "/%64ir" in
  Alcotest.(check (option string)) "from the decoded path" (Some "/dir/") (header r "location");
  let r = req "/list/d%22q" in
  Alcotest.(check (option string)) "re-encoded" (Some "/list/d%22q/") (header r "location");
  let r = req "/dir/sub/.." in
  check_status "dot segment resolves to a slash path" 200 r;
  check_body "dir index" "<h1>dir index</h1>\n" r

let test_index () =
  let r = req "/dir/" in
  check_status "index" 200 r;
  check_body "index" "<h1>dir index</h1>\n" r;
  Alcotest.(check (option string)) "html" (Some "text/html; charset=utf-8") (header r "content-type");
  let r = req "/" in
  check_status "root index" 200 r;
  check_body "root index" "<h1>root index</h1>\n" r;
  let r = req ~port:port_nolist "/dir/sub/" in
  check_status "no index, no listing" 403 r

let test_listing () =
  let r = req "/list/" in
  check_status "listing" 200 r;
  Alcotest.(check bool) "name escaped" true (contains r.body "&lt;script&gt;x&#39;&quot;.txt");
  Alcotest.(check bool) "no raw script" false (contains r.body "<script>");
  Alcotest.(check bool) "href encoded" true (contains r.body "href=\"%3Cscript%3Ex%27%22.txt\"");
  Alcotest.(check bool) "space and ampersand" true (contains r.body "href=\"a%26b%20c.txt\"");
  Alcotest.(check bool) "quote in a dir name" true (contains r.body "href=\"d%22q/\"");
  Alcotest.(check bool) "dotfile hidden" false (contains r.body "hidden");
  Alcotest.(check bool) "escaping symlink hidden" false (contains r.body "escape.txt");
  let i_dir = find_sub r.body "d%22q/" and i_file = find_sub r.body "plain.txt" in
  Alcotest.(check bool) "directories first" true (i_dir >= 0 && i_file > i_dir)

(* {1 Traversal and special files} *)

let test_traversal () =
  let attempts = [
    "/../outside/secret.txt"; "/%2e%2e/outside/secret.txt"; "/%2E%2E/outside/secret.txt";
    "/%2f../outside/secret.txt"; "/..%2foutside%2fsecret.txt"; "/dir/../../outside/secret.txt";
    "/%252e%252e/outside/secret.txt"; "/hello.txt%00.html"; "/%00"; "/link_out"; "/abs_link_out";
    "/dirlink_out/secret.txt"; "/list/escape.txt"; "../outside/secret.txt"; "/..\\outside\\secret.txt";
    "/%c0%ae%c0%ae/outside/secret.txt"; "/dir/%2e%2e/%2e%2e/outside/secret.txt";
  ] in
  List.iter
    (fun target ->
      let r = req target in
      if not (r.status = 400 || r.status = 404) then
        Alcotest.failf "%s: status %d, want 400 or 404" target r.status;
      if contains r.body "TOPSECRET" then Alcotest.failf "%s: served the outside file" target;
      if contains r.body "outside" || contains r.body "secret" then
        Alcotest.failf "%s: the error page echoes the path" target)
    attempts;
  let r = req "/link_in" in
  check_status "symlink inside the root" 200 r;
  check_body "symlink inside" hello r;
  let r = req "/%252e%252e" in
  check_status "double encoding is a literal name" 200 r;
  check_body "literal" "literal percent name\n" r

let test_fallback () =
  (* The same fence without openat2: every symlink refused. *)
  List.iter
    (fun target ->
      let r = req ~port:port_fallback target in
      if r.status <> 404 && r.status <> 400 then Alcotest.failf "fallback %s: %d" target r.status;
      if contains r.body "TOPSECRET" then Alcotest.failf "fallback %s: served the outside file" target)
    [ "/link_out"; "/abs_link_out"; "/dirlink_out/secret.txt"; "/../outside/secret.txt" ];
  let r = req ~port:port_fallback "/hello.txt" in
  check_status "fallback serves" 200 r;
  check_body "fallback serves" hello r

let test_options_off () =
  let r = req ~port:port_nolist "/link_in" in
  check_status "no symlinks: even inside" 404 r;
  let r = req ~port:port_nolist "/.secret" in
  check_status "dotfiles served" 200 r;
  check_body "dotfiles served" "dotfile\n" r;
  let r = req ~port:port_nolist "/list/" in
  check_status "no listing" 403 r

(* Property: whatever path a client builds from traversal-prone pieces,
   the answer is one of the expected statuses, never a 5xx, and never the
   bytes of the file outside the root. *)
let prop_no_escape =
  let pieces =
    [| ".."; "."; "%2e%2e"; "%2E%2e"; "%2f"; "%2F"; "/"; "//"; "%00"; "%252e"; "link_out";
       "dirlink_out"; "outside"; "secret.txt"; "hello.txt"; "dir"; "list"; "escape.txt";
       "%5c"; "\\"; ".%2e"; "%c0%ae"; "abs_link_out"; "fifo"; "?"; "%3f"; ".well-known" |]
  in
  let gen = QCheck2.Gen.(list_size (int_range 1 8) (oneofa pieces)) in
  QCheck2.Test.make ~count:300 ~name:"no path reaches outside the root"
    ~print:(fun l -> "/" ^ String.concat "/" l) gen
    (fun parts ->
      let target = "/" ^ String.concat "/" parts in
      let r = req target in
      List.mem r.status [ 200; 301; 400; 403; 404 ] && not (contains r.body "TOPSECRET"))

let test_fifo () =
  let t0 = Unix.gettimeofday () in
  let r = req "/fifo" in
  check_status "fifo" 403 r;
  Alcotest.(check bool) "did not block" true (Unix.gettimeofday () -. t0 < 2.)

let test_dotfiles () =
  check_status ".secret" 404 (req "/.secret");
  check_status ".git/config" 404 (req "/.git/config");
  check_status "%2e-encoded dotfile" 404 (req "/%2esecret");
  check_status "hidden in a listing dir" 404 (req "/list/.hidden");
  let r = req "/.well-known/x.txt" in
  check_status ".well-known" 200 r;
  check_body ".well-known" "well known\n" r

let test_methods () =
  let r = req ~meth:"POST" ~headers:[ "Content-Length", "0" ] "/hello.txt" in
  check_status "POST" 405 r;
  Alcotest.(check (option string)) "Allow" (Some "GET, HEAD, OPTIONS") (header r "allow");
  let r = req ~meth:"DELETE" "/hello.txt" in
  check_status "DELETE" 405 r;
  let r = req ~meth:"OPTIONS" "/hello.txt" in
  check_status "OPTIONS" 204 r;
  Alcotest.(check (option string)) "OPTIONS Allow" (Some "GET, HEAD, OPTIONS") (header r "allow");
  let r = req ~meth:"OPTIONS" "*" in
  check_status "OPTIONS *" 204 r

let test_errors_do_not_echo () =
  let r = req "/no-such-file-%3Cb%3Emarker" in
  check_status "404" 404 r;
  Alcotest.(check bool) "no echo" false (contains r.body "marker");
  let r = req "/bad%zzescape-marker" in
  check_status "400" 400 r;
  Alcotest.(check bool) "no echo" false (contains r.body "marker");
  let r = req "/hello.txt/" in
  check_status "file with a slash" 404 r

(* {1 Precompressed sidecars} *)

let test_gzip () =
  let r = req ~headers:[ "Accept-Encoding", "gzip, deflate, br" ] "/style.css" in
  check_status "gzip" 200 r;
  check_body "sidecar bytes" css_gz r;
  Alcotest.(check (option string)) "encoding" (Some "gzip") (header r "content-encoding");
  Alcotest.(check (option string)) "type of the original" (Some "text/css; charset=utf-8") (header r "content-type");
  Alcotest.(check (option string)) "vary" (Some "Accept-Encoding") (header r "vary");
  let gz_etag = header_exn r "etag" in
  Alcotest.(check bool) "etag marks the variant" true
    (String.length gz_etag > 4 && String.sub gz_etag (String.length gz_etag - 4) 4 = "-gz\"");
  let i = req "/style.css" in
  check_body "identity" css i;
  Alcotest.(check (option string)) "identity has no encoding" None (header i "content-encoding");
  Alcotest.(check (option string)) "identity varies too" (Some "Accept-Encoding") (header i "vary");
  Alcotest.(check bool) "different etags" true (header_exn i "etag" <> gz_etag);
  let r = req ~headers:[ "Accept-Encoding", "gzip;q=0, br" ] "/style.css" in
  check_body "q=0 refuses" css r;
  let r = req ~headers:[ "Accept-Encoding", "br, *;q=0.5" ] "/style.css" in
  check_body "star accepts" css_gz r;
  let r = req ~headers:[ "Accept-Encoding", "*;q=0.5, gzip;q=0" ] "/style.css" in
  check_body "explicit gzip;q=0 beats star" css r;
  let r = req ~headers:[ "Accept-Encoding", "gzip"; "If-None-Match", gz_etag ] "/style.css" in
  check_status "304 on the gzip variant" 304 r;
  let r = req ~headers:[ "If-None-Match", gz_etag ] "/style.css" in
  check_status "gzip tag does not validate identity" 200 r;
  let r = req ~headers:[ "Accept-Encoding", "gzip"; "Range", "bytes=0-3" ] "/style.css" in
  check_status "range of the gzip variant" 206 r;
  check_body "range of the gzip variant" (String.sub css_gz 0 4) r;
  let r = req ~headers:[ "Accept-Encoding", "gzip" ] "/app.js" in
  check_status "no sidecar" 200 r;
  Alcotest.(check (option string)) "js type" (Some "application/javascript; charset=utf-8") (header r "content-type");
  Alcotest.(check (option string)) "no sidecar, no encoding" None (header r "content-encoding");
  let r = req ~headers:[ "Accept-Encoding", "gzip" ] "/style.css.gz" in
  Alcotest.(check (option string)) "a .gz fetched directly" (Some "application/gzip") (header r "content-type");
  Alcotest.(check (option string)) "is not content-encoded" None (header r "content-encoding");
  let r = req ~port:port_nolist ~headers:[ "Accept-Encoding", "gzip" ] "/style.css" in
  check_body "gzip_static off" css r;
  Alcotest.(check (option string)) "no vary when off" None (header r "vary")

(* {1 Pure parts} *)

let test_accept_encoding () =
  List.iter
    (fun (v, want) -> Alcotest.(check bool) (Printf.sprintf "%S" v) want (Static.accepts_gzip_value v))
    [ "gzip", true; "GZIP", true; "x-gzip", true; "gzip;q=1", true; "gzip;q=1.000", true;
      "gzip; q=0.001", true; "gzip ;Q=0.5", true; "gzip;q=0", false; "gzip;q=0.000", false;
      "gzip;q=0.0000", false; "gzip;q=1.001", false; "gzip;q=2", false; "gzip;q=", false;
      "gzip;q=.5", false; "", false; "identity", false; "br, deflate", false; "*", true;
      "*;q=0", false; "br;q=1, *;q=0.1", true; "*, gzip;q=0", false; "gzip;q=0, gzip", true;
      "gzipx", false; "deflate, gzip", true; " , gzip , ", true; "gzip;level=9", true;
      "gzip garbage, br", false; "gzip;q=0.5x", false ]

let test_mime () =
  match Static.create cfg with
  | Error e -> Alcotest.fail e
  | Ok t ->
    List.iter
      (fun (name, want) -> Alcotest.(check string) name want (Static.mime t name))
      [ "/a.html", "text/html; charset=utf-8"; "/A.HTML", "text/html; charset=utf-8";
        "/x/y.css", "text/css; charset=utf-8"; "/p.png", "image/png"; "/s.svg", "image/svg+xml; charset=utf-8";
        "/m.wasm", "application/wasm"; "/d.json", "application/json; charset=utf-8";
        "/noext", "application/octet-stream"; "/.bashrc", "application/octet-stream";
        "/dir.d/file", "application/octet-stream"; "/x.unknownext", "application/octet-stream";
        "/trailing.", "application/octet-stream"; "/f.Jpg", "image/jpeg" ];
    (* More distinct extensions than the cache holds: still correct. *)
    for i = 0 to 400 do
      Alcotest.(check string) "overflow" "application/octet-stream" (Static.mime t (Printf.sprintf "/f.zz%d" i))
    done;
    Alcotest.(check string) "after overflow" "text/html; charset=utf-8" (Static.mime t "/a.html");
    Static.close t

let test_encoding_helpers () =
  Alcotest.(check string) "encode" "/a%20b/%3C%3E%22%27%3F%23%25~._-" (Static.encode_path "/a b/<>\"'?#%~._-");
  Alcotest.(check string) "encode backslash" "/%5Cevil" (Static.encode_path "/\\evil");
  Alcotest.(check string) "escape" "&lt;a href=&quot;x&quot;&gt;&amp;&#39;" (Static.html_escape "<a href=\"x\">&'");
  Alcotest.(check bool) "compressible css" true (Static.is_compressible "text/css; charset=utf-8");
  Alcotest.(check bool) "compressible rss" true (Static.is_compressible "application/rss+xml");
  Alcotest.(check bool) "png" false (Static.is_compressible "image/png")

let test_create_errors () =
  (match Static.create { cfg with root = Filename.concat base "missing" } with
   | Error _ -> () | Ok _ -> Alcotest.fail "missing root accepted");
  (match Static.create { cfg with root = Filename.concat root "hello.txt" } with
   | Error _ -> () | Ok _ -> Alcotest.fail "file as root accepted");
  match Static.create { cfg with index = "a/b" } with
  | Error _ -> () | Ok _ -> Alcotest.fail "bad index accepted"

let parse_request raw =
  let r = Httpz.Request.create () in
  let buf = B.of_string raw in
  (match Httpz.Request.parse r buf ~off:0 ~len:(String.length raw) with
   | Complete -> ()
   | _ -> Alcotest.fail "request did not parse");
  buf, r

let alloc_accept_encoding =
  let buf, r = parse_request "GET / HTTP/1.1\r\nHost: a\r\nAccept-Encoding: br;q=1.0, gzip;q=0.8, *;q=0.1\r\n\r\n" in
  Httpz_test_support.zero_alloc "accepts_gzip" (fun () -> ignore (Static.accepts_gzip buf r))

let test_accepts_gzip_request () =
  let buf, r = parse_request "GET / HTTP/1.1\r\nHost: a\r\nAccept-Encoding: br\r\nAccept-Encoding: gzip\r\n\r\n" in
  Alcotest.(check bool) "two lines" true (Static.accepts_gzip buf r);
  let buf, r = parse_request "GET / HTTP/1.1\r\nHost: a\r\n\r\n" in
  Alcotest.(check bool) "no field" false (Static.accepts_gzip buf r)

(* Which of the fields a file answer looks at are present, in one pass. *)
let test_present_fields () =
  let f hdrs = Preconditions.fields (snd (parse_request ("GET / HTTP/1.1\r\nHost: a\r\n" ^ hdrs ^ "\r\n"))) in
  let open Preconditions in
  Alcotest.(check int) "none" 0 (f "User-Agent: x\r\nAccept: */*\r\n");
  Alcotest.(check int) "Accept-Encoding" has_accept_encoding (f "accept-encoding: gzip\r\n");
  Alcotest.(check int) "Range" has_range (f "Range: bytes=0-1\r\n");
  List.iter
    (fun h -> Alcotest.(check int) h has_conditional (f (h ^ ": x\r\n")))
    [ "If-Match"; "If-None-Match"; "If-Modified-Since"; "If-Unmodified-Since" ];
  (* If-Range alone gates nothing: it matters only with Range. *)
  Alcotest.(check int) "If-Range" 0 (f "If-Range: \"x\"\r\n");
  Alcotest.(check int) "all, last field counts too"
    (has_accept_encoding lor has_range lor has_conditional)
    (f "Range: bytes=0-1\r\nX: y\r\nAccept-Encoding: br\r\nIf-None-Match: *\r\n")

let alloc_present_fields =
  let _, r = parse_request "GET / HTTP/1.1\r\nHost: a\r\nAccept: */*\r\nAccept-Encoding: gzip\r\nRange: bytes=1-2\r\n\r\n" in
  Httpz_test_support.zero_alloc "Preconditions.fields" (fun () ->
      ignore (Sys.opaque_identity (Preconditions.fields r)))

(* The dotfile rule, read eight bytes at a time, against the rule stated
   on the segments: one after a '/' that starts with '.', other than
   .well-known. Bytes past the path (which the word reads see) count for
   nothing. *)
let hidden_model s =
  match String.split_on_char '/' s with
  | [] | [ _ ] -> false
  | _ :: segs -> List.exists (fun g -> g <> "" && g.[0] = '.' && g <> ".well-known") segs

let in_slack s garbage =
  let b = B.create (String.length s + 9) in
  Bigarray.Array1.fill b garbage;
  B.blit_from_string s ~src_off:0 b ~dst_off:0 ~len:(String.length s);
  b

let prop_hidden_segment =
  let piece = QCheck2.Gen.oneofl [ "/"; "/"; "."; "a"; "bc"; "defghij"; ".well-known"; ".well"; "\xff" ] in
  QCheck2.Test.make ~count:3000 ~name:"hidden segments: word scan agrees with the rule"
    ~print:(fun (s, g) -> Printf.sprintf "%S %C" s g)
    QCheck2.Gen.(pair (map (String.concat "") (list_size (int_range 0 12) piece)) (oneofl [ '/'; '.'; 'a'; '\000' ]))
    (fun (s, garbage) ->
      let want = hidden_model s in
      let n = String.length s in
      Beneath.has_hidden_segment (B.of_string s) n = want
      && Beneath.has_hidden_segment (in_slack s garbage) n = want)

let test_hidden_boundaries () =
  for len = 2 to 20 do
    for pos = 0 to len - 2 do
      let s = String.init len (fun i -> if i = pos then '/' else if i = pos + 1 then '.' else 'a') in
      List.iter
        (fun g ->
          Alcotest.(check bool) (Printf.sprintf "%S" s) true (Beneath.has_hidden_segment (in_slack s g) len);
          (* The pair cut by the path's end is no pair. *)
          Alcotest.(check bool) (Printf.sprintf "%S cut" s) (pos + 1 < len - 1 || hidden_model (String.sub s 0 (len - 1)))
            (Beneath.has_hidden_segment (in_slack s g) (len - 1)))
        [ '.'; 'a' ]
    done
  done

let alloc_hidden =
  let plain = in_slack "/assets/js/application.min.js" 'a' and dotted = in_slack "/a/.well-known/x" 'a' in
  Httpz_test_support.zero_alloc "Beneath.has_hidden_segment" (fun () ->
      ignore (Sys.opaque_identity (Beneath.has_hidden_segment plain 29));
      ignore (Sys.opaque_identity (Beneath.has_hidden_segment dotted 16)))

(* {1 Allocation in the steady state, measured by the server} *)

let words_per_request s raw ~head ~status n =
  let stats () =
    send s (stats_request ~token:stats_token);
    let r = read_response s in
    float_of_int (stats_field r.body "requests"), float_of_int (stats_field r.body "minor_words")
  in
  let r0, w0 = stats () in
  for _ = 1 to n do
    send s raw;
    let r = read_response s ~head in
    if r.status <> status then Alcotest.failf "status %d, want %d" r.status status
  done;
  let r1, w1 = stats () in
  Alcotest.(check (float 0.)) "requests counted" (float_of_int n) (r1 -. r0);
  (w1 -. w0) /. (r1 -. r0)

let test_zero_alloc_server () =
  let port = Lazy.force port_stats in
  let s = connect port in
  let get path hdrs = Printf.sprintf "GET %s HTTP/1.1\r\nHost: t\r\n%s\r\n" path hdrs in
  (* Warm up past the server's 1000-request threshold, through every path
     measured below (this fills the MIME cache and the connection slot). *)
  let etag = header_exn (req ~port:port_stats "/hello.txt") "etag" in
  let cases = [
    "200 GET", get "/hello.txt" "", false, 200;
    "200 HEAD", Printf.sprintf "HEAD /hello.txt HTTP/1.1\r\nHost: t\r\n\r\n", true, 200;
    "200 index", get "/dir/" "", false, 200;
    "304 If-None-Match", get "/hello.txt" ("If-None-Match: " ^ etag ^ "\r\n"), false, 304;
    "304 If-Modified-Since", get "/hello.txt" "If-Modified-Since: Tue, 14 Nov 2023 22:13:20 GMT\r\n", false, 304;
    "206 single range", get "/data.bin" "Range: bytes=10-19\r\n", false, 206;
    "200 gzip sidecar", get "/style.css" "Accept-Encoding: gzip, deflate, br\r\n", false, 200;
    "200 absolute-form", get "http://t/hello.txt?x=1" "", false, 200;
  ] in
  List.iter (fun (_, raw, head, status) ->
      for _ = 1 to 130 do
        send s raw;
        ignore (read_response s ~head)
      done;
      ignore status)
    cases;
  List.iter
    (fun (name, raw, head, status) ->
      let w = words_per_request s raw ~head ~status 200 in
      Alcotest.(check (float 0.)) (name ^ ": minor words per request") 0. w)
    cases;
  (* Control: a listing allocates, so the measurement does see the
     handler's allocations (a broken counter would pass everything). *)
  let w = words_per_request s (get "/list/" "") ~head:false ~status:200 20 in
  Alcotest.(check bool) (Printf.sprintf "a listing allocates (%.0f words)" w) true (w > 100.);
  close s

(* {1 The CLI} *)

let httpz_exe () =
  let cand = Filename.concat (Filename.dirname Sys.executable_name) "../../../bin/main.exe" in
  if Sys.file_exists cand then Some cand else None

let run_cli args =
  match httpz_exe () with
  | None -> None
  | Some exe ->
    let err = Filename.temp_file "httpz_cli" ".err" in
    let code =
      Sys.command (Printf.sprintf "%s serve %s 2>%s >/dev/null </dev/null" (Filename.quote exe) args
                     (Filename.quote err))
    in
    let msg = Httpz_test_support.read_file err in
    Sys.remove err;
    Some (code, msg)

let test_cli () =
  let expect args what =
    match run_cli args with
    | None -> Alcotest.fail "bin/main.exe not found next to the test"
    | Some (code, msg) ->
      Alcotest.(check int) (args ^ ": exit code") 2 code;
      Alcotest.(check bool) (args ^ ": mentions " ^ what) true (contains msg what);
      Alcotest.(check bool) (args ^ ": no backtrace") false (contains msg "Raised at")
  in
  expect (Filename.quote (Filename.concat base "missing")) "no such directory";
  expect ("-d " ^ Filename.quote (Filename.concat root "hello.txt")) "not a directory";
  expect ("--port 70000 " ^ Filename.quote root) "out of range";
  expect ("--port=-1 " ^ Filename.quote root) "out of range";
  expect ("--workers 0 " ^ Filename.quote root) "--workers"

let () =
  Alcotest.run "static"
    [
      "pure", [
        Alcotest.test_case "Accept-Encoding q-values" `Quick test_accept_encoding;
        Alcotest.test_case "Accept-Encoding over field lines" `Quick test_accepts_gzip_request;
        alloc_accept_encoding;
        Alcotest.test_case "present fields" `Quick test_present_fields;
        alloc_present_fields;
        Httpz_test_support.qcheck prop_hidden_segment;
        Alcotest.test_case "hidden segments at word boundaries" `Quick test_hidden_boundaries;
        alloc_hidden;
        Alcotest.test_case "MIME types" `Quick test_mime;
        Alcotest.test_case "encoding helpers" `Quick test_encoding_helpers;
        Alcotest.test_case "create errors" `Quick test_create_errors;
      ];
      "files", [
        Alcotest.test_case "GET" `Quick test_get;
        Alcotest.test_case "HEAD" `Quick test_head;
        Alcotest.test_case "mtime in the future" `Quick test_future_mtime;
        Alcotest.test_case "absolute-form" `Quick test_absolute_form;
        Alcotest.test_case "Cache-Control max-age" `Quick test_max_age;
        Alcotest.test_case "methods" `Quick test_methods;
        Alcotest.test_case "error pages do not echo" `Quick test_errors_do_not_echo;
      ];
      "conditional", [
        Alcotest.test_case "If-None-Match" `Quick test_if_none_match;
        Alcotest.test_case "If-Modified-Since" `Quick test_if_modified_since;
        Alcotest.test_case "If-Match / If-Unmodified-Since" `Quick test_if_match;
      ];
      "ranges", [
        Alcotest.test_case "single" `Quick test_range_single;
        Alcotest.test_case "unsatisfiable, malformed, too many" `Quick test_range_other;
        Alcotest.test_case "multipart" `Quick test_range_multi;
        Alcotest.test_case "If-Range" `Quick test_if_range;
      ];
      "directories", [
        Alcotest.test_case "301 to slash" `Quick test_redirect;
        Alcotest.test_case "index.html" `Quick test_index;
        Alcotest.test_case "listing" `Quick test_listing;
      ];
      "safety", [
        Alcotest.test_case "traversal" `Quick test_traversal;
        Alcotest.test_case "openat2 fallback" `Quick test_fallback;
        Alcotest.test_case "FIFO" `Quick test_fifo;
        Alcotest.test_case "dotfiles" `Quick test_dotfiles;
        Alcotest.test_case "symlinks off, dotfiles on, no listing" `Quick test_options_off;
        Httpz_test_support.qcheck prop_no_escape;
      ];
      "gzip", [ Alcotest.test_case "sidecars" `Quick test_gzip ];
      "alloc", [ Alcotest.test_case "0 words per request in the server" `Quick test_zero_alloc_server ];
      "cache",
      [ Alcotest.test_case "a change shows within the ttl" `Quick test_cache_change;
        Alcotest.test_case "replace, delete, sidecar appears" `Quick test_cache_replace;
        Alcotest.test_case "large files bypass it; disabled cache" `Quick test_cache_bypass ];
      "cli", [ Alcotest.test_case "validation errors exit 2" `Quick test_cli ];
      (* Last: it stops the servers the tests above started. *)
      "shutdown", [ Alcotest.test_case "servers exit 0 on SIGTERM" `Quick test_servers_exit ];
    ]
