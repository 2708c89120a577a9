(* Every malformed configuration gets its own error, at its line and
   column: [cases] is (name, file text, "LINE:COL", a part of the
   message). The roots named exist ([/tmp]), so each case fails for the
   one reason it shows. *)

let cases =
  [ (* lexical *)
    ("unterminated string", "root \"abc;\n", "1:6", "unterminated string");
    ("unknown escape", "root \"a\\qb\";\n", "1:8", "unknown escape \\q");
    ("quote inside a word", "root a\"b\";\n", "1:7", "a quote inside a word");
    ("control byte", "root a\001;\n", "1:7", "control character 0x01");
    ("bare carriage return", "root /tmp;\rworkers 2;\n", "1:11", "carriage return not followed by a line feed");
    (* syntax *)
    ("lone semicolon", "root /tmp;\n;\n", "2:1", "unexpected ';'");
    ("stray closing brace", "root /tmp;\n}\n", "2:1", "unexpected '}': no block is open");
    ("brace without a name", "{ root /tmp; }\n", "1:1", "unexpected '{'");
    ("quoted directive name", "\"root\" /tmp;\n", "1:1", "must be a bare word");
    ("missing final semicolon", "root /tmp", "1:10", "'root' (line 1) is missing its ';'");
    ("unclosed block", "site a {\n  root /tmp;\n", "3:1", "the block of 'site' opened at line 1 is not closed");
    ("semicolon missing before brace", "site a { root /tmp }\n", "1:20", "missing ';' before '}'");
    ("semicolon missing before a block", "listen 80\nsite a {\n root /tmp;\n}\n", "1:1", "'listen' takes no block");
    (* names and scopes *)
    ("typo with a hint", "roott /tmp;\n", "1:1", "unknown directive 'roott'; did you mean 'root'?");
    ("transposed letters", "root /tmp;\nwokrers 2;\n", "2:1", "did you mean 'workers'?");
    ("unknown, no hint", "root /tmp;\nfrobnicate 1;\n", "2:1", "unknown directive 'frobnicate'");
    ("site directive in a location", "root /tmp;\nlocation /a/ { root /x; }\n", "2:16", "'root' is not allowed in a location block");
    ("server directive in a site", "site a { root /tmp; listen 80; }\n", "1:21", "'listen' is not allowed in a site block");
    ("location directive at the top", "root /tmp;\ntry_files $uri /index.html;\n", "2:1", "only in location blocks");
    (* arguments *)
    ("missing argument", "root;\n", "1:1", "'root' takes 1 argument, 0 given");
    ("extra argument", "root /a /b;\n", "1:9", "unexpected \"/b\"");
    ("not a number", "root /tmp;\nworkers many;\n", "2:9", "\"many\" is not a whole number");
    ("below the least value", "root /tmp;\nworkers 0;\n", "2:9", "below the least value, 1");
    ("above the greatest value", "root /tmp;\ncompress_level 10;\n", "2:16", "above the greatest value, 9");
    ("unknown unit", "root /tmp;\nidle_timeout 5x;\n", "2:14", "unknown unit \"x\"");
    ("not a duration", "root /tmp;\ngrace soon;\n", "2:7", "is not a duration");
    ("not a size", "root /tmp;\nmax_body 1.5;\n", "2:10", "not a whole number of bytes");
    ("not a flag", "root /tmp;\nlisting maybe;\n", "2:9", "give on or off");
    ("given twice", "root /a;\nroot /tmp;\n", "2:1", "'root' is already given at line 1");
    ("header the server writes", "root /tmp;\nheader Content-Length 5;\n", "2:8", "written by the server itself");
    ("header name not a token", "root /tmp;\nheader \"a b\" c;\n", "2:8", "is not a token");
    ("header value with a line feed", "root /tmp;\nheader X-A \"a\\nb\";\n", "2:12", "must not hold CR, LF or NUL");
    ("not a media type", "root /tmp;\ndefault_type text;\n", "2:14", "not a media type");
    ("error page without a page", "root /tmp;\nerror_page 418 /x.html;\n", "2:12", "418 has no error page");
    ("io", "root /tmp;\nio kqueue;\n", "2:4", "give uring or epoll");
    ("log format", "root /tmp;\nlog_format xml;\n", "2:12", "give common, combined, vhost_combined or json");
    ("access log format", "root /tmp;\naccess_log a.log xml;\n", "2:18", "\"xml\": give common");
    ("access log off with a format", "root /tmp;\naccess_log off json;\n", "2:16", "'access_log off' takes no format");
    ("log_format: an unknown variable", "root /tmp;\nlog_format m '$status $nope';\n", "2:14", "unknown variable $nope");
    ("log_format: an upstream variable", "root /tmp;\nlog_format m '$upstream_addr';\n", "2:14", "no upstream");
    ("log_format: a built-in name", "root /tmp;\nlog_format json '$status';\n", "2:12", "is a built-in format");
    ("log_format: given twice", "root /tmp;\nlog_format m '$status';\nlog_format m '$request';\n", "3:12", "already given at line 2");
    ("log_format: escape", "root /tmp;\nlog_format m escape=xml '$status';\n", "2:14", "give escape=default, escape=json");
    ("log_format: ${ unclosed", "root /tmp;\nlog_format m '${status';\n", "2:14", "the closing } is missing");
    ("access_log: an unknown format in a site", "root /tmp;\nsite a { access_log a.log main; }\n", "2:27", "\"main\": give common");
    ("access_log: a format named further down", "root /tmp;\nsite a { access_log a.log m; location /x/ { access_log syslog:server=h:99999; } }\nlog_format m '$status';\n", "2:56", "give server=ADDRESS[:PORT]");
    ("access_log: a syslog parameter", "root /tmp;\naccess_log syslog:server=127.0.0.1,facility=local9;\n", "2:12", "facility \"local9\"");
    ("access_log: in a location, off with a format", "root /tmp;\nlocation /a/ { access_log off main; }\n", "2:31", "takes no format");
    ("no such user", "root /tmp;\nuser no-such-user-httpz;\n", "2:6", "no such user");
    ("unknown_host value", "root /tmp;\nunknown_host 500;\n", "2:14", "give default");
    (* listening and TLS *)
    ("port out of range", "root /tmp;\nlisten 99999;\n", "2:8", "out of range");
    ("listen role", "root /tmp;\nlisten 80 quic;\n", "2:11", "followed by tls, plain or redirect");
    ("tls without a certificate", "root /tmp;\nlisten 8443 tls;\n", "2:1", "needs tls_certificate");
    ("redirect without tls", "root /tmp;\nlisten 80 redirect;\n", "2:1", "it needs a 'listen … tls'");
    ("certificate without its key", "site a { root /tmp; tls_certificate a.crt; }\n", "1:21", "needs tls_certificate_key");
    ("same address twice", "root /tmp;\nlisten 8080;\nlisten 8080;\n", "3:1", "lists http://0.0.0.0:8080 twice");
    ("a bound the server checks", "root /tmp;\nidle_timeout 0;\n", "2:1", "idle_timeout");
    (* sites *)
    ("site without names", "site { root /tmp; }\n", "1:1", "'site' takes the host names");
    ("not a host name", "site \"exa mple\" { root /tmp; }\n", "1:6", "is not a host name");
    ("a name in two sites", "site a.test { root /tmp; }\nsite b.test A.test { root /tmp; }\n", "2:13", "a.test is already a name of the site at line 1");
    ("two default sites", "site a default { root /tmp; }\nsite b default { root /tmp; }\n", "2:8", "a second default site");
    ("site without root", "site a.test { listing on; }\n", "1:1", "the site a.test has no root");
    ("nothing to serve", "workers 2;\n", "1:1", "no directory to serve");
    ("location at the top beside sites", "location /a/ { internal; }\nsite a { root /tmp; }\n", "1:1", "move it into a site");
    (* locations *)
    ("location path", "root /tmp;\nlocation foo { internal; }\n", "2:10", "must start with '/'");
    ("location without a block", "root /tmp;\nlocation /a/;\n", "2:1", "needs a block");
    ("location given twice", "root /tmp;\nlocation /a/ { }\nlocation /a/ { }\n", "3:1", "location /a/ is already given at line 2");
    ("regex PCRE2 refuses", "root /tmp;\nlocation ~ \"a(b\" { }\n", "2:12", "not a regular expression PCRE2 accepts: missing closing parenthesis");
    ("regex given twice", "root /tmp;\nlocation ~* x { }\nlocation ~* x { }\n", "3:1", "location ~* x is already given at line 2");
    ("^~ and a prefix are one location", "root /tmp;\nlocation ^~ /b/ { }\nlocation /b/ { }\n", "3:1", "location /b/ is already given at line 2");
    ("unknown modifier", "root /tmp;\nlocation ~~ /a/ { }\n", "2:10", "\"~~\" is not a location modifier");
    ("dot segments", "root /tmp;\nlocation /a/ { rewrite /b/../c/; }\n", "2:24", "must not hold '.' or '..' segments");
    ("status code", "root /tmp;\nlocation /a/ { return 999; }\n", "2:23", "\"999\" is not a status code");
    ("redirect without URL", "root /tmp;\nlocation /a/ { return 301; }\n", "2:16", "'return 301' needs the URL");
    ("two answers", "root /tmp;\nlocation /a/ { internal; return 404; }\n", "2:26", "conflicts with the answer given at line 2");
    ("try_files arguments", "root /tmp;\nlocation /a/ { try_files $foo /i; }\n", "2:26", "try_files tries $uri and $uri/");
    (* access control and logs *)
    ("not an address", "root /tmp;\nallow 10.0.0.0/33;\n", "2:7", "\"10.0.0.0/33\" is not an address");
    ("deny without an address", "root /tmp;\ndeny;\n", "2:1", "'deny' takes 1 argument");
    ("not a rate", "root /tmp;\nlimit_req fast;\n", "2:11", "\"fast\" is not a rate");
    ("a rate of nothing", "root /tmp;\nlimit_req 0r/s;\n", "2:11", "\"0r/s\" is not a rate");
    ("burst below one", "root /tmp;\nlimit_req 10r/s 0;\n", "2:17", "below the least value, 1");
    ("limit_req twice", "root /tmp;\nlocation /a/ { limit_req 1; limit_req 2; }\n", "2:29", "'limit_req' is already given");
    ("realm with a quote", "root /tmp;\nauth_basic 'a\"b';\n", "2:12", "the realm must not be empty");
    ("limit_conn in a site", "site a { root /tmp; limit_conn 5; }\n", "1:21", "'limit_conn' is not allowed in a site block");
    ("limit_conn of zero", "root /tmp;\nlimit_conn 0;\n", "2:12", "below the least value, 1");
    ("log level", "root /tmp;\nlog_level verbose;\n", "2:11", "give error, warn, info or debug");
    ("stats listener", "root /tmp;\nstats_listen 127.0.0.1:99999;\n", "2:14", "out of range");
    ("stats listener on a served address", "root /tmp;\nlisten 127.0.0.1:8080;\nstats_listen 127.0.0.1:8080;\n", "3:1", "is in both listen and stats_listen");
    (* issue 34, finding 3: values check accepted that then misbehaved *)
    ("a timeout that overflows", "root /tmp;\nidle_timeout 99999999999999999h;\n", "2:14", "above the greatest value, 1 day");
    ("a max_age that overflows", "root /tmp;\nmax_age 99999999999999999h;\n", "2:9", "above the greatest value, 10 years");
    ("a size that overflows", "root /tmp;\nmax_body 99999999999999999g;\n", "2:10", "above the greatest value, 1 PiB");
    ("a burst that overflows the rate's clock", "root /tmp;\nlimit_req 1r/m 153722867;\n", "2:16", "above the greatest value, 100000");
    ("a rate too slow", "root /tmp;\nlimit_req 0.001;\n", "2:11", "below the least rate, 1r/m");
    ("a rate too fast", "root /tmp;\nlimit_req 2000000r/s;\n", "2:11", "above the greatest rate");
    ("a status the server cannot answer", "root /tmp;\nlocation /a/ { return 299; }\n", "2:23", "299 is not a status the server answers");
    ("too many workers", "root /tmp;\nworkers 100000000;\n", "2:9", "above the greatest value, 1024");
    ("listen on port 0", "root /tmp;\nlisten 0;\n", "2:8", "port 0 is a random port");
    ("stats on port 0", "root /tmp;\nstats_listen 127.0.0.1:0;\n", "2:14", "port 0 is a random port");
    (* issue 34, finding 5 *)
    ("error_page without a path", "root /tmp;\nerror_page 404;\n", "2:1", "'error_page' takes status codes, then a path");
    ("error_page, one code given twice", "root /tmp;\nerror_page 500 502 500 /x.html;\n", "2:20", "the error page of 500 is already given");
    ("server_header without a name", "root /tmp;\nserver_header \"\";\n", "2:15", "or off for no Server field");
    ("hsts and a Strict-Transport-Security header", "listen 8443 tls;\ntls_certificate a.crt;\ntls_certificate_key a.key;\nhsts 1d;\nsite a.test {\n  root /tmp;\n  header Strict-Transport-Security \"max-age=60\";\n}\n", "4:1", "(in a.test) would both send the field");
    ("hsts and a location's Strict-Transport-Security", "listen 8443 tls;\ntls_certificate a.crt;\ntls_certificate_key a.key;\nhsts 1d;\nroot /tmp;\nlocation /a/ { header strict-transport-security max-age=60; }\n", "4:1", "location /a/) would both send");
    (* issue 34, finding 2: a nesting this deep overflowed the stack *)
    ("blocks nested too deep", "root /tmp;\n" ^ String.concat "" (List.init 100_000 (fun _ -> "site a {")), "2:72",
     "blocks nested more than 8 deep");
    ("try_files beside return", "root /tmp;\nlocation /a/ { try_files $uri /i; return 404; }\n", "2:35", "try_files does nothing beside return");
  ]

let check_case (name, text, at, part) =
  match Httpz_conf.Conf_file.read_string ~file:"t.conf" text with
  | Ok _ -> Alcotest.failf "%s: accepted" name
  | Error e ->
      let prefix = "t.conf:" ^ at ^ ": " in
      if not (String.length e >= String.length prefix && String.sub e 0 (String.length prefix) = prefix) then
        Alcotest.failf "%s: %S does not start with %S" name e prefix;
      if Httpz_test_support.find_sub e part < 0 then Alcotest.failf "%s: %S does not say %S" name e part;
      if String.contains e '\n' then Alcotest.failf "%s: more than one line: %S" name e

let tests = List.map (fun ((name, _, _, _) as c) -> Alcotest.test_case name `Quick (fun () -> check_case c)) cases

(* Every case's message is its own: no two malformed files are told the
   same thing. *)
let distinct () =
  let messages =
    List.map
      (fun (_, text, _, _) ->
        match Httpz_conf.Conf_file.read_string ~file:"t.conf" text with Ok _ -> "" | Error e -> e)
      cases
  in
  Alcotest.(check int) "distinct messages" (List.length messages) (List.length (List.sort_uniq compare messages))
