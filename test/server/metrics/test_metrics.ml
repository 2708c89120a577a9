(* Prometheus's families by site (issue 39): what Totals counts per
   site, protocol and class, the histogram's buckets, the columns made at
   start and kept by name across reloads; 0 words per count; and a live
   server with a configuration file's sites, counted by Host and answered
   with 0 words per request. *)

open Httpz_server
open Httpz_conf
open Httpz_live
module T = Httpz_test_support

let lines text = String.split_on_char '\n' text

let value text series =
  let p = series ^ " " in
  match List.find_opt (fun l -> String.length l > String.length p && String.sub l 0 (String.length p) = p) (lines text) with
  | Some l -> Some (String.sub l (String.length p) (String.length l - String.length p))
  | None -> None

let check_value text series want =
  Alcotest.(check (option string)) series (Some want) (value text series)

let h2 = 2 and h11 = 1 and h10 = 0

let unit_tests =
  [
    Alcotest.test_case "by site, protocol and class; buckets at their bounds; (status) and (other)" `Quick (fun () ->
        Totals.set_sites [| "a.test"; "b.test" |];
        let t = Totals.create ~rows:2 in
        let row = Totals.claim t in
        let a = Totals.site_column 0 and b = Totals.site_column 1 in
        Alcotest.(check bool) "two columns of their own" true (a >= 2 && b >= 2 && a <> b);
        Alcotest.(check int) "no site: (other)" Totals.col_other (Totals.site_column (-1));
        Alcotest.(check int) "out of range: (other)" Totals.col_other (Totals.site_column 2);
        let ex col protocol status ns = Totals.exchange t row ~col ~protocol ~status ~bytes:100 ~body:10 ~ns in
        ex a h11 200 5_000_000;       (* exactly 0.005: in le="0.005" *)
        ex a h11 200 5_000_001;       (* just above: le="0.01" *)
        ex a h11 404 (-7);            (* negative: 0 *)
        ex a h2 200 11_000_000_000;   (* above 10 s: +Inf only *)
        ex b h10 301 300_000_000;
        ex Totals.col_status h11 200 1_000;
        ex a h11 99 1;                (* no class: the old totals only *)
        ex a 3 200 1;                 (* no such protocol: likewise *)
        let s = Totals.summary t in
        Alcotest.(check (list string)) "sites: named, then (status); (other) counted nothing"
          [ "a.test"; "b.test"; "(status)" ] (List.map (fun x -> x.Totals.site) s.sites);
        let text = Totals.prometheus s in
        let r site proto code = Printf.sprintf "httpz_requests_total{site=\"%s\",protocol=\"%s\",code=\"%s\"}" site proto code in
        check_value text (r "a.test" "http1.1" "2xx") "2";
        check_value text (r "a.test" "http1.1" "4xx") "1";
        check_value text (r "a.test" "h2" "2xx") "1";
        check_value text (r "a.test" "http1.0" "2xx") "0";
        check_value text (r "b.test" "http1.0" "3xx") "1";
        check_value text (r "(status)" "http1.1" "2xx") "1";
        let bk site proto le = Printf.sprintf "httpz_request_duration_seconds_bucket{site=\"%s\",protocol=\"%s\",le=\"%s\"}" site proto le in
        check_value text (bk "a.test" "http1.1" "0.005") "2";
        check_value text (bk "a.test" "http1.1" "0.01") "3";
        check_value text (bk "a.test" "http1.1" "+Inf") "3";
        check_value text (bk "a.test" "h2" "10") "0";
        check_value text (bk "a.test" "h2" "+Inf") "1";
        check_value text (bk "b.test" "http1.0" "0.25") "0";
        check_value text (bk "b.test" "http1.0" "0.5") "1";
        check_value text "httpz_request_duration_seconds_sum{site=\"a.test\",protocol=\"http1.1\"}" "0.010000001";
        check_value text "httpz_request_duration_seconds_count{site=\"a.test\",protocol=\"http1.1\"}" "3";
        check_value text "httpz_request_duration_seconds_sum{site=\"a.test\",protocol=\"h2\"}" "11.000000000";
        check_value text "httpz_response_body_bytes_total{site=\"a.test\",protocol=\"http1.1\"}" "30";
        check_value text "httpz_responses_total{class=\"2xx\"}" "5";
        check_value text "httpz_sent_bytes_total" "800";
        Alcotest.(check bool) "a histogram family" true (T.find_sub text "# TYPE httpz_request_duration_seconds histogram\n" >= 0));
    Alcotest.test_case "a reload: a site keeps its column by name, a new one gets the next, past the room (other)" `Quick (fun () ->
        Totals.set_sites [| "a.test" |];
        let t = Totals.create ~rows:1 in
        let row = Totals.claim t in
        let a = Totals.site_column 0 in
        Totals.exchange t row ~col:a ~protocol:h11 ~status:200 ~bytes:1 ~body:1 ~ns:1;
        Totals.set_sites [| "new.test"; "a.test" |];
        Alcotest.(check int) "a.test kept its column" a (Totals.site_column 1);
        Alcotest.(check int) "new.test the next" (a + 1) (Totals.site_column 0);
        (* 1 site at start: room for 8 more (new.test, s0 .. s6); s7 is (other). *)
        Totals.set_sites (Array.init 10 (fun i -> Printf.sprintf "s%d.test" i));
        Alcotest.(check int) "s6: the last room" (a + 8) (Totals.site_column 6);
        Alcotest.(check int) "s7: no room left" Totals.col_other (Totals.site_column 7);
        Totals.exchange t row ~col:(Totals.site_column 8) ~protocol:h11 ~status:500 ~bytes:1 ~body:1 ~ns:1;
        let s = Totals.summary t in
        let names = List.map (fun x -> x.Totals.site) s.sites in
        Alcotest.(check int) "9 named (a.test, new.test, s0..s6) and (other)" 10 (List.length names);
        Alcotest.(check bool) "a.test still counted" true
          (value (Totals.prometheus s) "httpz_requests_total{site=\"a.test\",protocol=\"http1.1\",code=\"2xx\"}" = Some "1");
        Alcotest.(check bool) "(other) counted" true
          (value (Totals.prometheus s) "httpz_requests_total{site=\"(other)\",protocol=\"http1.1\",code=\"5xx\"}" = Some "1"));
    Alcotest.test_case "label values escaped; promtool-shaped lines" `Quick (fun () ->
        Totals.set_sites [| "we\"ird\\" |];
        let t = Totals.create ~rows:1 in
        ignore (Totals.claim t);
        let text = Totals.prometheus (Totals.summary t) in
        Alcotest.(check bool) text true (T.find_sub text "site=\"we\\\"ird\\\\\"" >= 0));
    T.zero_alloc "exchange and site_column: 0 words"
      (Totals.set_sites [| "a.test"; "b.test" |];
       let t = Totals.create ~rows:2 in
       let row = Totals.claim t in
       let ns = ref 0 in
       fun () ->
         ns := (!ns + 7_919_111) land 0x3_ffff_ffff;
         Totals.exchange t row ~col:(Totals.site_column (!ns land 1)) ~protocol:(!ns land 1) ~status:200 ~bytes:612
           ~body:400 ~ns:!ns);
  ]

(* {1 A live server with a configuration file's sites} *)

let base = T.temp_dir "httpz_metrics"

let () =
  List.iter (fun d -> Unix.mkdir (Filename.concat base d) 0o755) [ "a"; "b" ];
  T.write_file (Filename.concat base "a/index.html") "site a\n";
  T.write_file (Filename.concat base "b/index.html") "site b\n"

let token = "metrics-stats"

let conf_text unknown =
  Printf.sprintf "%ssite a.test *.a.test { root %s/a; }\nsite b.test www.b.test default { root %s/b; }\n" unknown base base

let serve unknown =
  spawn (fun ~on_listen ->
      match Conf_file.read_string ~file:(Filename.concat base "t.conf") (conf_text unknown) with
      | Error e -> prerr_endline e; 3
      | Ok conf -> (
          match Sites.create conf with
          | Error e -> prerr_endline e; 3
          | Ok sites ->
              Site_labels.register conf;
              Server.run
                { Server.default_config with port = 0; workers = 1; stats = Some token; on_listen }
                (Sites.handler sites)))

let metrics c =
  send c (Printf.sprintf "GET /__httpz/metrics HTTP/1.1\r\nHost: b.test\r\nAuthorization: Bearer %s\r\n\r\n" token);
  (read_response c).body

let req host path = Printf.sprintf "GET %s HTTP/1.1\r\nHost: %s\r\n\r\n" path host

let live_sites () =
  let s = serve "" in
  killing s (fun () ->
      with_client s.port (fun c ->
          let ask raw n = for _ = 1 to n do send c raw; ignore (read_response c) done in
          ask (req "a.test" "/") 3;
          ask (req "x.a.test:8443" "/missing") 2;
          ask (req "www.b.test" "/") 1;
          ask (req "elsewhere.test" "/") 4;
          ask "GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n" 1;
          let m = metrics c in
          let r site proto code = Printf.sprintf "httpz_requests_total{site=\"%s\",protocol=\"%s\",code=\"%s\"}" site proto code in
          check_value m (r "a.test" "http1.1" "2xx") "3";
          check_value m (r "a.test" "http1.1" "4xx") "2";
          (* Unknown hosts go to the default site, as the handler serves them. *)
          check_value m (r "b.test" "http1.1" "2xx") "5";
          check_value m (r "b.test" "http1.0" "2xx") "1";
          check_value m "httpz_request_duration_seconds_count{site=\"a.test\",protocol=\"http1.1\"}" "5";
          let body = int_of_string (Option.value ~default:"0" (value m "httpz_response_body_bytes_total{site=\"a.test\",protocol=\"http1.1\"}")) in
          Alcotest.(check bool) (Printf.sprintf "a.test's body bytes: 3 x 7 and two 404 pages (%d)" body) true (body > 21);
          (* 0 words per request, the site found by Host on the way: past
             the server's 1000-request warm-up. *)
          let words raw n =
            let st () =
              send c (stats_request ~token);
              let b = (read_response c).body in
              (stats_field b "requests", stats_field b "minor_words")
            in
            let r0, w0 = st () in
            ask raw n;
            let r1, w1 = st () in
            Alcotest.(check int) "requests" n (r1 - r0);
            Alcotest.(check int) "minor words" 0 (w1 - w0)
          in
          ask (req "a.test" "/") 1200;
          words (req "x.a.test" "/") 500;
          words (req "elsewhere.test" "/") 500;
          words "GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n" 500));
  ignore (stop s : string)

let live_refused () =
  let s = serve "unknown_host 421;\n" in
  killing s (fun () ->
      with_client s.port (fun c ->
          send c (req "elsewhere.test" "/");
          Alcotest.(check int) "refused" 421 (read_response c).status;
          let m = metrics c in
          check_value m "httpz_requests_total{site=\"(other)\",protocol=\"http1.1\",code=\"4xx\"}" "1"));
  ignore (stop s : string)

let () =
  Alcotest.run "metrics"
    [ ("totals", unit_tests);
      ("live", [ Alcotest.test_case "sites by Host, 0 words per request" `Quick live_sites;
                 Alcotest.test_case "an unknown Host refused: (other)" `Quick live_refused ]) ]
