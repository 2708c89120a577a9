(* Units without a server: the timer wheel, access-log lines and times,
   listen addresses. *)

open Httpz
open Httpz_sys
open Httpz_server

let check_str = Alcotest.(check string)
let find_sub = Httpz_test_support.find_sub

let wheel_basics () =
  let t = Timer_wheel.create ~ids:8 ~size:4 ~now:100 in
  Timer_wheel.set t 1 105;
  Timer_wheel.set t 2 102;
  Timer_wheel.set t 3 102;
  Timer_wheel.set t 4 120;
  (* 120 shares a bucket with 104 and 108, … *)
  Alcotest.(check int) "count" 4 (Timer_wheel.count t);
  Alcotest.(check int) "nothing yet" (-1) (Timer_wheel.pop_expired t ~now:101);
  let a = Timer_wheel.pop_expired t ~now:102 in
  let b = Timer_wheel.pop_expired t ~now:102 in
  Alcotest.(check (list int)) "both at 102" [ 2; 3 ] (List.sort compare [ a; b ]);
  Alcotest.(check int) "then none" (-1) (Timer_wheel.pop_expired t ~now:102);
  Timer_wheel.cancel t 1;
  Alcotest.(check int) "cancelled" (-1) (Timer_wheel.deadline t 1);
  Alcotest.(check int) "not early" (-1) (Timer_wheel.pop_expired t ~now:119);
  Alcotest.(check int) "later turn" 4 (Timer_wheel.pop_expired t ~now:125);
  Alcotest.(check int) "empty" 0 (Timer_wheel.count t);
  Timer_wheel.set t 5 3;
  Alcotest.(check int) "past deadline fires next" 5 (Timer_wheel.pop_expired t ~now:126)

(* The wheel against a model: a list of (id, deadline). *)
let wheel_model =
  QCheck2.Test.make ~name:"timer wheel agrees with a model" ~count:300
    QCheck2.Gen.(list_size (int_range 1 200) (triple (int_range 0 2) (int_range 0 15) (int_range 0 40)))
    (fun ops ->
      let t = Timer_wheel.create ~ids:16 ~size:8 ~now:0 in
      let model = Hashtbl.create 16 in
      let now = ref 0 in
      List.for_all
        (fun (op, id, x) ->
          match op with
          | 0 ->
              let d = max (!now + 1) (!now + x) in
              Timer_wheel.set t id d;
              Hashtbl.replace model id d;
              true
          | 1 ->
              Timer_wheel.cancel t id;
              Hashtbl.remove model id;
              true
          | _ ->
              now := !now + (x mod 10);
              let popped = ref [] in
              let rec pop () =
                let id = Timer_wheel.pop_expired t ~now:!now in
                if id >= 0 then (popped := id :: !popped; pop ())
              in
              pop ();
              let expected =
                Hashtbl.fold (fun id d acc -> if d <= !now then id :: acc else acc) model []
              in
              List.iter (Hashtbl.remove model) expected;
              List.sort compare !popped = List.sort compare expected
              && Timer_wheel.count t = Hashtbl.length model)
        ops)

let wheel_zero_alloc =
  let t = Timer_wheel.create ~ids:4 ~size:16 ~now:0 in
  let now = ref 0 in
  Httpz_test_support.zero_alloc "timer wheel set/cancel/pop" (fun () ->
      incr now;
      Timer_wheel.set t 0 (!now + 3);
      Timer_wheel.set t 1 (!now + 1);
      Timer_wheel.cancel t 0;
      Timer_wheel.set t 2 !now;
      ignore (Timer_wheel.pop_expired t ~now:!now : int);
      ignore (Timer_wheel.pop_expired t ~now:!now : int))

let log_time () =
  let b = Bigstring.create 28 in
  List.iter
    (fun (t, expected) ->
      ignore (Httpz.Date.write_common_log b ~off:0 t : int);
      check_str (string_of_int t) expected (Bigstring.to_string b))
    [
      (0, "[01/Jan/1970:00:00:00 +0000]");
      (971211336, "[10/Oct/2000:20:55:36 +0000]");
      (951782400, "[29/Feb/2000:00:00:00 +0000]");
      (4102444799, "[31/Dec/2099:23:59:59 +0000]");
    ];
  (* Against Unix.gmtime on many instants. *)
  let months = [| "Jan"; "Feb"; "Mar"; "Apr"; "May"; "Jun"; "Jul"; "Aug"; "Sep"; "Oct"; "Nov"; "Dec" |] in
  for i = 0 to 2000 do
    let t = i * 1_234_567 + (i * i) in
    let g = Unix.gmtime (float_of_int t) in
    let expected =
      Printf.sprintf "[%02d/%s/%04d:%02d:%02d:%02d +0000]" g.Unix.tm_mday months.(g.Unix.tm_mon)
        (g.Unix.tm_year + 1900) g.Unix.tm_hour g.Unix.tm_min g.Unix.tm_sec
    in
    ignore (Httpz.Date.write_common_log b ~off:0 t : int);
    check_str "gmtime" expected (Bigstring.to_string b)
  done

let parse_listen () =
  let show = function
    | Ok (h, p) -> Printf.sprintf "%s %d" h p
    | Error e -> "error: " ^ e
  in
  List.iter
    (fun (arg, want) -> check_str arg want (show (Server.parse_listen arg)))
    [ ("127.0.0.1:8080", "127.0.0.1 8080"); ("[::1]:8080", "::1 8080"); ("[::]:0", ":: 0");
      (":443", "0.0.0.0 443"); ("localhost:80", "localhost 80");
      ("[fe80::1%lo]:80", "error: \"[fe80::1%lo]:80\": fe80::1%lo is not an IPv6 address") ];
  List.iter
    (fun (arg, part) ->
      match Server.parse_listen arg with
      | Ok _ -> Alcotest.failf "%S accepted" arg
      | Error e -> Alcotest.(check bool) (arg ^ ": " ^ e) true (find_sub e part >= 0))
    [ ("::1:80", "brackets"); ("[::1]80", "after the brackets"); ("[::1", "missing ']'");
      ("[127.0.0.1]:80", "not an IPv6"); ("h:65536", "out of range"); ("h:-1", "number");
      ("h:", "number"); ("8080", "give ADDR:PORT"); ("", "give ADDR:PORT"); ("a b:1", "not an address") ]

(* The refusal lines' client address: RFC 5952 text (as Ipaddr writes
   it), an IPv4-mapped one as IPv4. *)
let refusal_addresses () =
  let bytes_of a = Bytes.of_string (Ipaddr.V6.to_octets a) in
  let check a want = Alcotest.(check string) want want (Refusal_log.address_text (bytes_of (Ipaddr.V6.of_string_exn a))) in
  check "::1" "::1";
  check "::" "::";
  check "::ffff:192.0.2.7" "192.0.2.7";
  check "2001:db8:0:0:1:0:0:1" "2001:db8::1:0:0:1";
  check "2001:db8:0:1:1:1:1:1" "2001:db8:0:1:1:1:1:1";
  check "1:0:0:0:0:0:0:0" "1::";
  check "fe80:0:0:0:0:0:0:abcd" "fe80::abcd";
  check "0:0:1:0:0:0:2:0" "0:0:1::2:0";
  Random.init 39;
  for _ = 1 to 2000 do
    (* Groups often zero, so that runs of every length and place come up. *)
    let g = Array.init 8 (fun _ -> if Random.bool () then 0 else Random.int 0x10000) in
    let a = Ipaddr.V6.of_int16 (g.(0), g.(1), g.(2), g.(3), g.(4), g.(5), g.(6), g.(7)) in
    if not (g.(0) = 0 && g.(1) = 0 && g.(2) = 0 && g.(3) = 0 && g.(4) = 0 && g.(5) = 0xffff) then
      Alcotest.(check string) "as Ipaddr writes it" (Ipaddr.V6.to_string a) (Refusal_log.address_text (bytes_of a))
  done

(* Lines of each format, read back from a file; [line] allocates nothing. *)
let log_formats () =
  let path = Filename.temp_file "httpz_test" ".log" in
  let fd = Unix.openfile path [ Unix.O_WRONLY; Unix.O_TRUNC ] 0o644 in
  let src = Bigstring.of_string "GET /a\"b\\c\xe9 HTTP/1.1|http://r/\"q\"|ua\x01\\|a.test:8443" in
  let peer = Bigstring.of_string "::1" in
  let one format ~elapsed_us =
    let t = Access_log.create ~fd:(Syscall.fd_of_unix fd) ~format in
    Access_log.exchange_line t ~now:971211336 ~peer ~peer_len:3 ~src ~req_off:0 ~req_len:20 ~status:404 ~bytes:0
      ~ref_off:21 ~ref_len:12 ~ua_off:34 ~ua_len:4 ~elapsed_us ~complete:true ~host_off:39 ~host_len:11
      ~tls:0x0304 ~protocol:11;
    (* A response cut before its end: marked. *)
    Access_log.line t ~now:971211336 ~peer ~peer_len:0 ~src ~req_off:0 ~req_len:(-1) ~status:400
      ~bytes:12 ~ref_off:0 ~ref_len:(-1) ~ua_off:0 ~ua_len:(-1) ~elapsed_us:(-5) ~complete:false;
    Access_log.flush t;
    t
  in
  let expect =
    [ ( Access_log.Common,
        "::1 - - [10/Oct/2000:20:55:36 +0000] \"GET /a\\x22b\\x5Cc\\xE9 HTTP/1.1\" 404 - 1234\n\
         - - - [10/Oct/2000:20:55:36 +0000] \"-\" 400 12 0 cut\n" );
      ( Access_log.Combined,
        "::1 - - [10/Oct/2000:20:55:36 +0000] \"GET /a\\x22b\\x5Cc\\xE9 HTTP/1.1\" 404 - \
         \"http://r/\\x22q\\x22\" \"ua\\x01\\x5C\" 1234\n\
         - - - [10/Oct/2000:20:55:36 +0000] \"-\" 400 12 \"-\" \"-\" 0 cut\n" );
      ( Access_log.Vhost_combined,
        "a.test:8443 ::1 - - [10/Oct/2000:20:55:36 +0000] \"GET /a\\x22b\\x5Cc\\xE9 HTTP/1.1\" 404 - \
         \"http://r/\\x22q\\x22\" \"ua\\x01\\x5C\" 1234\n\
         - - - - [10/Oct/2000:20:55:36 +0000] \"-\" 400 12 \"-\" \"-\" 0 cut\n" );
      ( Access_log.Json,
        "{\"time\":\"2000-10-10T20:55:36Z\",\"remote_addr\":\"::1\",\
         \"request\":\"GET /a\\\"b\\\\c\\u00E9 HTTP/1.1\",\"host\":\"a.test:8443\",\"scheme\":\"https\",\
         \"tls\":\"TLSv1.3\",\"protocol\":\"HTTP/1.1\",\"status\":404,\"body_bytes_sent\":0,\
         \"referer\":\"http://r/\\\"q\\\"\",\"user_agent\":\"ua\\u0001\\\\\",\"request_time_us\":1234,\"complete\":true}\n\
         {\"time\":\"2000-10-10T20:55:36Z\",\"remote_addr\":null,\"request\":null,\"host\":null,\"scheme\":\"http\",\"tls\":null,\"protocol\":null,\"status\":400,\
         \"body_bytes_sent\":12,\"referer\":null,\"user_agent\":null,\"request_time_us\":0,\"complete\":false}\n" );
      (* log_format with nginx's variables, its default escaping. *)
      ( Access_log.Custom
          (Result.get_ok
             (Access_log.compile ~name:"f" ~escape:Escape_default
                "$remote_addr|$request|$status|$body_bytes_sent|$http_referer|$http_user_agent|$http_host|$host|\
                 $time_local|${time_iso8601}|$request_time|$ssl_protocol|$server_protocol|$request_completion|$scheme|\
                 $request_method|$server_name")),
        "::1|GET /a\\x22b\\x5Cc\\xE9 HTTP/1.1|404|0|http://r/\\x22q\\x22|ua\\x01\\x5C|a.test:8443|a.test|\
         10/Oct/2000:20:55:36 +0000|2000-10-10T20:55:36+00:00|0.001|TLSv1.3|HTTP/1.1|OK|https|-|-\n\
         -|-|400|12|-|-|-|-|10/Oct/2000:20:55:36 +0000|2000-10-10T20:55:36+00:00|0.000|-|-||http|-|-\n" );
      (* escape=json: quote, backslash and control bytes escaped, a byte
         that is not UTF-8 as \u00HH; absent values empty. *)
      ( Access_log.Custom
          (Result.get_ok
             (Access_log.compile ~name:"j" ~escape:Escape_json
                "{\"r\":\"$request\",\"ua\":\"$http_user_agent\",\"s\":$status,\"h\":\"$host\"}")),
        "{\"r\":\"GET /a\\\"b\\\\c\\u00E9 HTTP/1.1\",\"ua\":\"ua\\u0001\\\\\",\"s\":404,\"h\":\"a.test\"}\n\
         {\"r\":\"\",\"ua\":\"\",\"s\":400,\"h\":\"\"}\n" );
      (* escape=none: the bytes as they are, but a control byte (here
         0x01; CR, LF and NUL alike) as \xHH, so that no client value
         starts a line. *)
      ( Access_log.Custom
          (Result.get_ok
             (Access_log.compile ~name:"n" ~escape:Escape_none "$request|$http_user_agent|$status")),
        "GET /a\"b\\c\xe9 HTTP/1.1|ua\\x01\\|404\n-|-|400\n" ) ]
  in
  List.iter
    (fun (format, want) ->
      ignore (Unix.lseek fd 0 Unix.SEEK_SET : int);
      Unix.ftruncate fd 0;
      ignore (one format ~elapsed_us:1234 : Access_log.t);
      check_str "line" want (Httpz_test_support.read_file path);
      (* Zero allocation per line, over more lines than the buffer holds. *)
      let t = one format ~elapsed_us:1 in
      let before = Gc.minor_words () in
      for i = 1 to 5000 do
        Access_log.exchange_line t ~now:(971211336 + i) ~peer ~peer_len:3 ~src ~req_off:0 ~req_len:20 ~status:200
          ~bytes:i ~ref_off:21 ~ref_len:12 ~ua_off:34 ~ua_len:4 ~elapsed_us:i ~complete:(i land 1 = 0)
          ~host_off:39 ~host_len:(if i land 2 = 0 then 11 else -1) ~tls:(if i land 4 = 0 then 0x0303 else 0)
          ~protocol:(if i land 8 = 0 then 11 else 20)
      done;
      Alcotest.(check (float 0.)) "minor words for 5000 lines" 0. (Gc.minor_words () -. before))
    expect;
  Unix.close fd;
  Sys.remove path;
  (* The JSON time against Unix.gmtime on many instants. *)
  let p2 = Filename.temp_file "httpz_test" ".log" in
  let fd = Unix.openfile p2 [ Unix.O_WRONLY; Unix.O_TRUNC ] 0o644 in
  let t = Access_log.create ~fd:(Syscall.fd_of_unix fd) ~format:Access_log.Json in
  let instants = List.init 300 (fun i -> (i * 9_876_543) + (i * i * 7)) in
  List.iter
    (fun now ->
      Access_log.line t ~now ~peer ~peer_len:0 ~src ~req_off:0 ~req_len:(-1) ~status:200 ~bytes:0
        ~ref_off:0 ~ref_len:(-1) ~ua_off:0 ~ua_len:(-1) ~elapsed_us:0 ~complete:true)
    instants;
  Access_log.flush t;
  Unix.close fd;
  let lines = String.split_on_char '\n' (String.trim (Httpz_test_support.read_file p2)) in
  Sys.remove p2;
  List.iter2
    (fun now l ->
      let g = Unix.gmtime (float_of_int now) in
      let want =
        Printf.sprintf "{\"time\":\"%04d-%02d-%02dT%02d:%02d:%02dZ\"" (g.Unix.tm_year + 1900)
          (g.Unix.tm_mon + 1) g.Unix.tm_mday g.Unix.tm_hour g.Unix.tm_min g.Unix.tm_sec
      in
      check_str "iso time" want (String.sub l 0 (String.length want)))
    instants lines

(* A marking phase left by allocation that stopped is ended by the second
   tick without allocation in between, and not by a tick after allocation. *)
let gc_settle () =
  let t = Gc_settle.create () in
  let keep = ref [] in
  let n = ref 0 in
  while (not (Extra.gc_marking ())) && !n < 10_000_000 do
    keep := Array.make 8 !n :: (if !n land 1023 = 0 then [] else !keep);
    incr n
  done;
  let started = Extra.gc_marking () in
  (* No allocation between the ticks: the checks come after. *)
  Gc_settle.tick t;
  let after_first = Extra.gc_marking () in
  Gc_settle.tick t;
  let after_second = Extra.gc_marking () in
  Alcotest.(check bool) "allocation started a marking phase" true started;
  Alcotest.(check bool) "first tick: words moved, the GC is left alone" true after_first;
  Alcotest.(check bool) "second tick, nothing allocated: marking ended" false after_second;
  ignore (Sys.opaque_identity !keep)
