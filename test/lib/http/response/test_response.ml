(* Tests for Httpz.Status and Httpz.Response: the registry table, status
   lines, every head writer byte for byte, the all-or-nothing refusals
   (response splitting, no space), chunk framing, and 0.0 words/op. *)

open Httpz
module S = Httpz_test_support

(* ---------- Status ---------- *)

(* The IANA HTTP Status Code Registry, as of RFC 9110 (2022) and the
   registrations since; 418 from RFC 2324 (reserved by RFC 9110 §15.5.19). *)
let registry =
  [
    (Status.Continue, 100, "Continue");
    (Status.Switching_protocols, 101, "Switching Protocols");
    (Status.Processing, 102, "Processing");
    (Status.Early_hints, 103, "Early Hints");
    (Status.Ok, 200, "OK");
    (Status.Created, 201, "Created");
    (Status.Accepted, 202, "Accepted");
    (Status.Non_authoritative_information, 203, "Non-Authoritative Information");
    (Status.No_content, 204, "No Content");
    (Status.Reset_content, 205, "Reset Content");
    (Status.Partial_content, 206, "Partial Content");
    (Status.Multi_status, 207, "Multi-Status");
    (Status.Already_reported, 208, "Already Reported");
    (Status.Im_used, 226, "IM Used");
    (Status.Multiple_choices, 300, "Multiple Choices");
    (Status.Moved_permanently, 301, "Moved Permanently");
    (Status.Found, 302, "Found");
    (Status.See_other, 303, "See Other");
    (Status.Not_modified, 304, "Not Modified");
    (Status.Use_proxy, 305, "Use Proxy");
    (Status.Temporary_redirect, 307, "Temporary Redirect");
    (Status.Permanent_redirect, 308, "Permanent Redirect");
    (Status.Bad_request, 400, "Bad Request");
    (Status.Unauthorized, 401, "Unauthorized");
    (Status.Payment_required, 402, "Payment Required");
    (Status.Forbidden, 403, "Forbidden");
    (Status.Not_found, 404, "Not Found");
    (Status.Method_not_allowed, 405, "Method Not Allowed");
    (Status.Not_acceptable, 406, "Not Acceptable");
    (Status.Proxy_authentication_required, 407, "Proxy Authentication Required");
    (Status.Request_timeout, 408, "Request Timeout");
    (Status.Conflict, 409, "Conflict");
    (Status.Gone, 410, "Gone");
    (Status.Length_required, 411, "Length Required");
    (Status.Precondition_failed, 412, "Precondition Failed");
    (Status.Content_too_large, 413, "Content Too Large");
    (Status.Uri_too_long, 414, "URI Too Long");
    (Status.Unsupported_media_type, 415, "Unsupported Media Type");
    (Status.Range_not_satisfiable, 416, "Range Not Satisfiable");
    (Status.Expectation_failed, 417, "Expectation Failed");
    (Status.Im_a_teapot, 418, "I'm a teapot");
    (Status.Misdirected_request, 421, "Misdirected Request");
    (Status.Unprocessable_content, 422, "Unprocessable Content");
    (Status.Locked, 423, "Locked");
    (Status.Failed_dependency, 424, "Failed Dependency");
    (Status.Too_early, 425, "Too Early");
    (Status.Upgrade_required, 426, "Upgrade Required");
    (Status.Precondition_required, 428, "Precondition Required");
    (Status.Too_many_requests, 429, "Too Many Requests");
    (Status.Request_header_fields_too_large, 431, "Request Header Fields Too Large");
    (Status.Unavailable_for_legal_reasons, 451, "Unavailable For Legal Reasons");
    (Status.Internal_server_error, 500, "Internal Server Error");
    (Status.Not_implemented, 501, "Not Implemented");
    (Status.Bad_gateway, 502, "Bad Gateway");
    (Status.Service_unavailable, 503, "Service Unavailable");
    (Status.Gateway_timeout, 504, "Gateway Timeout");
    (Status.Http_version_not_supported, 505, "HTTP Version Not Supported");
    (Status.Variant_also_negotiates, 506, "Variant Also Negotiates");
    (Status.Insufficient_storage, 507, "Insufficient Storage");
    (Status.Loop_detected, 508, "Loop Detected");
    (Status.Not_extended, 510, "Not Extended");
    (Status.Network_authentication_required, 511, "Network Authentication Required");
  ]

let test_registry () =
  Alcotest.(check int) "count" (List.length registry) Status.count;
  Alcotest.(check int) "all" Status.count (Array.length Status.all);
  List.iteri
    (fun i (s, code, reason) ->
      Alcotest.(check int) (reason ^ ": code") code (Status.code s);
      Alcotest.(check string) (reason ^ ": reason") reason (Status.reason s);
      Alcotest.(check int) (reason ^ ": index") i (Status.index s);
      Alcotest.(check bool) (reason ^ ": position in all") true (Status.all.(i) = s);
      Alcotest.(check bool) (reason ^ ": of_code") true (Status.of_code code = Some s))
    registry;
  (* RFC 9110 names for the renamed codes *)
  Alcotest.(check string) "413" "Content Too Large" (Status.reason Content_too_large);
  Alcotest.(check string) "422" "Unprocessable Content" (Status.reason Unprocessable_content);
  Alcotest.(check string) "416" "Range Not Satisfiable" (Status.reason Range_not_satisfiable)

let test_of_code () =
  let registered n = List.exists (fun (_, c, _) -> c = n) registry in
  for n = -5 to 1000 do
    (match Status.of_code n with
     | Some s -> Alcotest.(check int) (Printf.sprintf "of_code %d" n) n (Status.code s)
     | None -> Alcotest.(check bool) (Printf.sprintf "of_code %d is None" n) false (registered n));
    let s = Status.of_code_or ~default:Status.Im_a_teapot n in
    if registered n then Alcotest.(check int) "of_code_or" n (Status.code s)
    else Alcotest.(check bool) "of_code_or default" true (s = Status.Im_a_teapot)
  done;
  List.iter
    (fun n -> Alcotest.(check bool) (Printf.sprintf "%d unregistered" n) true (Status.of_code n = None))
    [ 0; 99; 104; 199; 209; 306; 309; 419; 420; 427; 430; 450; 509; 512; 599; 600; 999 ]

let test_classes () =
  List.iter
    (fun (s, c, r) ->
      let cls = c / 100 in
      Alcotest.(check bool) (r ^ " 1xx") (cls = 1) (Status.is_informational s);
      Alcotest.(check bool) (r ^ " 2xx") (cls = 2) (Status.is_success s);
      Alcotest.(check bool) (r ^ " 3xx") (cls = 3) (Status.is_redirection s);
      Alcotest.(check bool) (r ^ " 4xx") (cls = 4) (Status.is_client_error s);
      Alcotest.(check bool) (r ^ " 5xx") (cls = 5) (Status.is_server_error s);
      Alcotest.(check bool) (r ^ " no content") (cls = 1 || c = 204 || c = 304) (Status.forbids_content s))
    registry

let test_lines () =
  List.iter
    (fun (s, c, r) ->
      Alcotest.(check string) "1.1" (Printf.sprintf "HTTP/1.1 %d %s\r\n" c r) (Status.line Http_1_1 s);
      Alcotest.(check string) "1.0" (Printf.sprintf "HTTP/1.0 %d %s\r\n" c r) (Status.line Http_1_0 s);
      (* reason-phrase = 1*( HTAB / SP / VCHAR / obs-text ) *)
      Alcotest.(check bool) (r ^ " is a reason-phrase") true
        (r <> "" && String.for_all (fun ch -> ch = '\t' || (ch >= ' ' && ch <> '\127')) r))
    registry;
  Alcotest.(check string) "200" "HTTP/1.1 200 OK\r\n" (Status.line Http_1_1 Ok);
  Alcotest.(check string) "404" "HTTP/1.1 404 Not Found\r\n" (Status.line Http_1_1 Not_found)

(* ---------- Response: helpers ---------- *)

let fresh n =
  let b = Bigstring.create n in
  Bigarray.Array1.fill b '#';
  b

let untouched name b =
  Alcotest.(check string) (name ^ ": buffer untouched") (String.make (Bigstring.length b) '#')
    (Bigstring.to_string b)

(* [writes name expected w] checks that [w buf off] writes exactly
   [expected] at [off] and returns [off + length], leaving every other byte
   alone, in a buffer with room to spare and in one that fits exactly; and
   that one byte less raises No_space without writing anything. A chain of
   several calls ([~atomic:false]) is all-or-nothing only call by call, so
   for it the last check is just the exception. *)
let writes ?(atomic = true) name expected w =
  let n = String.length expected in
  List.iter
    (fun off ->
      List.iter
        (fun slack ->
          let b = fresh (off + n + slack) in
          let o = w b off in
          Alcotest.(check int) (Printf.sprintf "%s: offset (at %d)" name off) (off + n) o;
          Alcotest.(check string) (Printf.sprintf "%s: bytes (at %d)" name off) expected
            (Bigstring.sub_string b ~off ~len:n);
          Alcotest.(check string) (name ^ ": before untouched") (String.make off '#')
            (Bigstring.sub_string b ~off:0 ~len:off);
          Alcotest.(check string) (name ^ ": after untouched") (String.make slack '#')
            (Bigstring.sub_string b ~off:(off + n) ~len:slack))
        [ 0; 11 ];
      if n > 0 then begin
        let b = fresh (off + n - 1) in
        (match w b off with
         | _ -> Alcotest.failf "%s: accepted one byte short" name
         | exception Response.No_space -> ());
        if atomic then untouched (name ^ " (no space)") b
      end)
    [ 0; 9 ]

let refuses name w =
  let b = fresh 300 in
  (match w b 5 with
   | _ -> Alcotest.failf "%s: accepted" name
   | exception Response.Invalid_field -> ());
  untouched name b

(* ---------- Response: vectors ---------- *)

let test_full_head () =
  let expected =
    "HTTP/1.1 200 OK\r\n\
     Date: Sun, 06 Nov 1994 08:49:37 GMT\r\n\
     Content-Type: text/html; charset=utf-8\r\n\
     Content-Length: 1234\r\n\
     Connection: keep-alive\r\n\
     ETag: \"5f3c-4d2\"\r\n\
     Last-Modified: Sat, 05 Nov 1994 08:49:37 GMT\r\n\
     \r\n"
  in
  let cache = Date.Cache.create () in
  writes ~atomic:false "full head" expected (fun buf off ->
      let o = Response.status_line buf ~off Http_1_1 Ok in
      let o = Response.date buf ~off:o cache ~now:784111777 in
      let o = Response.header buf ~off:o Content_type "text/html; charset=utf-8" in
      let o = Response.header_int buf ~off:o Content_length 1234 in
      let o = Response.header buf ~off:o Connection "keep-alive" in
      let o = Response.header buf ~off:o Etag "\"5f3c-4d2\"" in
      let o = Response.header_date buf ~off:o Last_modified (784111777 - 86400) in
      Response.end_head buf ~off:o)

let test_status_line () =
  List.iter
    (fun (s, c, r) ->
      writes (string_of_int c) (Printf.sprintf "HTTP/1.1 %d %s\r\n" c r) (fun b off ->
          Response.status_line b ~off Http_1_1 s);
      writes (string_of_int c) (Printf.sprintf "HTTP/1.0 %d %s\r\n" c r) (fun b off ->
          Response.status_line b ~off Http_1_0 s))
    registry

let test_header () =
  writes "header" "Content-Type: text/plain\r\n" (fun b off ->
      Response.header b ~off Content_type "text/plain");
  writes "empty value" "Content-Type: \r\n" (fun b off -> Response.header b ~off Content_type "");
  writes "canonical spelling" "WWW-Authenticate: Basic realm=\"x\"\r\n" (fun b off ->
      Response.header b ~off Www_authenticate "Basic realm=\"x\"");
  writes "inner HTAB and SP" "Server: a\tb c\r\n" (fun b off -> Response.header b ~off Server "a\tb c");
  writes "obs-text" "Server: caf\xc3\xa9 \x80\xff\r\n" (fun b off ->
      Response.header b ~off Server "caf\xc3\xa9 \x80\xff");
  let long = String.init 100 (fun i -> Char.chr (33 + (i mod 94))) in
  writes "long" ("Server: " ^ long ^ "\r\n") (fun b off -> Response.header b ~off Server long);
  List.iter
    (fun n ->
      let name = Header_name.to_string n in
      writes name (name ^ ": v\r\n") (fun b off -> Response.header b ~off n "v"))
    (Array.to_list Header_name.all);
  refuses "Other has no spelling" (fun b off -> Response.header b ~off Other "v")

let test_header_s () =
  writes "header_s" "X-Custom: 1\r\n" (fun b off -> Response.header_s b ~off "X-Custom" "1");
  writes "every tchar" "!#$%&'*+-.^_`|~09azAZ: v\r\n" (fun b off ->
      Response.header_s b ~off "!#$%&'*+-.^_`|~09azAZ" "v");
  List.iter
    (fun name -> refuses ("name " ^ String.escaped name) (fun b off -> Response.header_s b ~off name "v"))
    [ ""; "X Custom"; "X-Custom:"; "X:Y"; "X\t"; " X"; "X\r\nSet-Cookie"; "X\n"; "X\000";
      "\xc3\x9c"; "("; ")"; "@"; "\""; "/"; "["; "{"; "="; "?"; ","; ";"; "\\"; "\x7f" ]

(* Response splitting and its cousins: each is refused before any byte is
   written. *)
let bad_values =
  [ "a\r\nSet-Cookie: evil=1";
    "/\r\n\r\n<script>alert(1)</script>";
    "a\nb"; "a\rb"; "\r\n"; "\n"; "\r"; "\000"; "a\000b"; "\x7f"; "a\x01"; "\x1b[31m"; "\x0b"; "\x0c";
    " leading"; "trailing "; "\tleading"; "trailing\t"; " "; "\t";
    "0123456789abcdef0123456789abcdef\r\nX: y" (* past the first words *);
    "0123456789abcdef0123456789abcd\n" (* in the byte tail *);
  ]

let test_refusals () =
  List.iter
    (fun v ->
      let name = String.escaped v in
      Alcotest.(check bool) (name ^ ": not a field-value") false (Response.is_field_value v);
      refuses ("header " ^ name) (fun b off -> Response.header b ~off Location v);
      refuses ("header_s " ^ name) (fun b off -> Response.header_s b ~off "X-Custom" v);
      let src = S.bigstring_at ~garbage:'a' ~off:3 v in
      refuses ("header_span " ^ name) (fun b off ->
          Response.header_span b ~off Location src (Span.make ~off:3 ~len:(String.length v))))
    bad_values;
  (* a bad byte at every position of a long value: each SWAR word and the tail *)
  List.iter
    (fun bad ->
      for len = 1 to 40 do
        for pos = 0 to len - 1 do
          let v = String.init len (fun i -> if i = pos then bad else 'v') in
          let name = Printf.sprintf "%C at %d of %d" bad pos len in
          refuses name (fun b off -> Response.header_s b ~off "X" v);
          let src = S.bigstring_at ~garbage:'v' ~off:(pos mod 8) v in
          refuses name (fun b off ->
              Response.header_span b ~off Location src (Span.make ~off:(pos mod 8) ~len))
        done
      done)
    [ '\r'; '\n'; '\000'; '\x7f'; '\x1f' ];
  refuses "negative int" (fun b off -> Response.header_int b ~off Content_length (-1));
  refuses "Other int" (fun b off -> Response.header_int b ~off Other 1);
  refuses "Other date" (fun b off -> Response.header_date b ~off Other 0);
  refuses "Other span" (fun b off -> Response.header_span b ~off Other b (Span.make ~off:0 ~len:1));
  refuses "date too late" (fun b off -> Response.header_date b ~off Expires (Date.max_time + 1));
  refuses "date too early" (fun b off -> Response.header_date b ~off Expires (Date.min_time - 1));
  refuses "Date: too late" (fun b off -> Response.date b ~off (Date.Cache.create ()) ~now:max_int);
  refuses "negative write_int" (fun b off -> Response.write_int b ~off min_int);
  refuses "chunk 0" (fun b off -> Response.chunk_header b ~off 0);
  refuses "chunk -1" (fun b off -> Response.chunk_header b ~off (-1));
  refuses "chunk 0 after data" (fun b off -> Response.chunk_header_after_data b ~off 0);
  (* a span outside its buffer is a programming error *)
  let src = Bigstring.create 4 in
  match Response.header_span (fresh 64) ~off:0 Location src (Span.make ~off:2 ~len:3) with
  | _ -> Alcotest.fail "span outside src accepted"
  | exception Invalid_argument _ -> ()

let test_no_space_edges () =
  (* Negative offsets are refused like a full buffer. *)
  let b = fresh 64 in
  (match Response.header b ~off:(-1) Server "x" with
   | _ -> Alcotest.fail "negative offset accepted"
   | exception Response.No_space -> ());
  (match Response.end_head b ~off:64 with
   | _ -> Alcotest.fail "offset at the end accepted"
   | exception Response.No_space -> ());
  (match Response.write_string b ~off:max_int "x" with
   | _ -> Alcotest.fail "huge offset accepted"
   | exception Response.No_space -> ());
  untouched "edges" b;
  (* Validation comes first: a bad value in a full buffer is Invalid_field. *)
  let b = fresh 4 in
  match Response.header b ~off:0 Server "a\r\n" with
  | _ -> Alcotest.fail "accepted"
  | exception Response.Invalid_field -> ()

let test_numbers () =
  List.iter
    (fun n ->
      writes (string_of_int n) (Printf.sprintf "Content-Length: %d\r\n" n) (fun b off ->
          Response.header_int b ~off Content_length n);
      writes (string_of_int n) (string_of_int n) (fun b off -> Response.write_int b ~off n))
    [ 0; 1; 9; 10; 99; 100; 1234; 999_999_999; 1_000_000_000; max_int ]

let test_header_span () =
  let src = S.bigstring_at ~garbage:'\n' ~off:17 "bytes 0-99/1000" in
  writes "span" "Content-Range: bytes 0-99/1000\r\n" (fun b off ->
      Response.header_span b ~off Content_range src (Span.make ~off:17 ~len:15));
  writes "empty span" "Content-Range: \r\n" (fun b off ->
      Response.header_span b ~off Content_range src (Span.make ~off:0 ~len:0));
  let src = S.bigstring_at ~garbage:'\r' ~off:3 "a\tb\tc\td\te\tf\tg\th\ti\tj" in
  writes "tabs" "Via: a\tb\tc\td\te\tf\tg\th\ti\tj\r\n" (fun b off ->
      Response.header_span b ~off Via src (Span.make ~off:3 ~len:19))

let test_dates () =
  writes "header_date" "Last-Modified: Sun, 06 Nov 1994 08:49:37 GMT\r\n" (fun b off ->
      Response.header_date b ~off Last_modified 784111777);
  writes "header_date epoch" "Expires: Thu, 01 Jan 1970 00:00:00 GMT\r\n" (fun b off ->
      Response.header_date b ~off Expires 0);
  let c = Date.Cache.create () in
  writes "date" "Date: Sun, 06 Nov 1994 08:49:37 GMT\r\n" (fun b off ->
      Response.date b ~off c ~now:784111777);
  writes "date next second" "Date: Sun, 06 Nov 1994 08:49:38 GMT\r\n" (fun b off ->
      Response.date b ~off c ~now:784111778);
  let lm = Date.Cache.create () in
  List.iter
    (fun t ->
      let b = Bigstring.create 64 in
      let want = Bigstring.sub_string b ~off:0 ~len:(Response.header_date b ~off:0 Last_modified t) in
      writes (Printf.sprintf "header_date_cached %d = header_date" t) want
        (fun b off -> Response.header_date_cached b ~off Last_modified lm t))
    [ 784111777; 784111777; 0; 784111777; Date.max_time; 1700000000 ];
  refuses "cached date too late" (fun b off ->
      Response.header_date_cached b ~off Expires lm (Date.max_time + 1))

let test_chunks () =
  writes "chunk_header 1" "1\r\n" (fun b off -> Response.chunk_header b ~off 1);
  writes "chunk_header 255" "ff\r\n" (fun b off -> Response.chunk_header b ~off 255);
  writes "chunk_header 4096" "1000\r\n" (fun b off -> Response.chunk_header b ~off 4096);
  writes "chunk_header max" "fffffffffffffff\r\n" (fun b off ->
      Response.chunk_header b ~off Response.max_chunk_size);
  refuses "chunk 2^60" (fun b off -> Response.chunk_header b ~off (1 lsl 60));
  writes "after data" "\r\nabc\r\n" (fun b off -> Response.chunk_header_after_data b ~off 0xabc);
  writes "after data max" "\r\nfffffffffffffff\r\n" (fun b off ->
      Response.chunk_header_after_data b ~off Response.max_chunk_size);
  refuses "after data 2^60" (fun b off -> Response.chunk_header_after_data b ~off (1 lsl 60));
  Alcotest.(check int) "max_chunk_header_length" 19 Response.max_chunk_header_length;
  (* What the writer writes, our decoder reads. *)
  let b = Httpz.Bigstring.create 64 in
  let n = Response.chunk_header b ~off:0 Response.max_chunk_size in
  let d = Httpz.Chunked.create ~max_body:max_int () in
  Alcotest.(check bool) "decoder accepts the largest chunk header" true
    (Httpz.Chunked.decode d b ~off:0 ~len:n = Httpz.Chunked.Need_more);
  writes "end_chunk" "\r\n" (fun b off -> Response.end_chunk b ~off);
  writes "last_chunk" "0\r\n\r\n" (fun b off -> Response.last_chunk b ~off);
  writes "last_chunk_after_data" "\r\n0\r\n\r\n" (fun b off -> Response.last_chunk_after_data b ~off);
  (* RFC 9112 §7.1: a whole chunked body, built as the .mli describes *)
  writes ~atomic:false "stream" "5\r\nhello\r\n7\r\n, world\r\n0\r\n\r\n" (fun b off ->
      let o = Response.chunk_header b ~off 5 in
      let o = Response.write_string b ~off:o "hello" in
      let o = Response.chunk_header_after_data b ~off:o 7 in
      let o = Response.write_string b ~off:o ", world" in
      Response.last_chunk_after_data b ~off:o);
  writes ~atomic:false "stream with end_chunk" "3\r\nabc\r\n0\r\n\r\n" (fun b off ->
      let o = Response.chunk_header b ~off 3 in
      let o = Response.write_string b ~off:o "abc" in
      let o = Response.end_chunk b ~off:o in
      Response.last_chunk b ~off:o)

let test_write_string () =
  writes "raw" "anything\r\n goes" (fun b off -> Response.write_string b ~off "anything\r\n goes");
  writes "empty" "" (fun b off -> Response.write_string b ~off "")

(* ---------- properties ---------- *)

let naive_field_value s =
  let n = String.length s in
  let ows c = c = ' ' || c = '\t' in
  n = 0
  || (not (ows s.[0]))
     && (not (ows s.[n - 1]))
     && String.for_all (fun c -> c = '\t' || (c >= ' ' && c <> '\127')) s

(* Mostly value bytes, with every kind of offender mixed in. *)
let gen_value =
  let open QCheck2.Gen in
  let byte =
    frequency
      [ (40, char_range 'a' 'z'); (5, return ' '); (5, return '\t'); (3, char_range '\x80' '\xff');
        (2, char_range '\x00' '\x1f'); (1, return '\x7f'); (1, return '\r'); (1, return '\n');
        (3, char_range '!' '~') ]
  in
  string_size ~gen:byte (int_range 0 40)

let prop_value =
  QCheck2.Test.make ~count:3000 ~name:"field-value check agrees with the grammar"
    ~print:(fun (v, off) -> Printf.sprintf "%S at %d" v off)
    (QCheck2.Gen.pair gen_value (QCheck2.Gen.int_range 0 8))
    (fun (v, off) ->
      let expected = naive_field_value v in
      let src = S.bigstring_at ~garbage:'x' ~off v in
      let b = fresh (String.length v + 16) in
      let via_span =
        match Response.header_span b ~off:0 Via src (Span.make ~off ~len:(String.length v)) with
        | o -> o = String.length v + 7 && Bigstring.sub_string b ~off:0 ~len:o = "Via: " ^ v ^ "\r\n"
        | exception Response.Invalid_field -> false
      in
      let via_string =
        match Response.header_s b ~off:0 "Via" v with
        | _ -> true
        | exception Response.Invalid_field -> false
      in
      Response.is_field_value v = expected && via_span = expected && via_string = expected)

let prop_int =
  QCheck2.Test.make ~count:2000 ~name:"write_int is string_of_int" ~print:string_of_int
    QCheck2.Gen.(oneof [ int_range 0 1_000_000; int_range 0 max_int ])
    (fun n ->
      let b = fresh 32 in
      let o = Response.write_int b ~off:1 n in
      Bigstring.sub_string b ~off:1 ~len:(o - 1) = string_of_int n)

let prop_hex =
  QCheck2.Test.make ~count:2000 ~name:"chunk sizes are lower-case %x" ~print:string_of_int
    QCheck2.Gen.(oneof [ int_range 1 100_000; int_range 1 Response.max_chunk_size ])
    (fun n ->
      let b = fresh 32 in
      let o = Response.chunk_header b ~off:1 n in
      Bigstring.sub_string b ~off:1 ~len:(o - 1) = Printf.sprintf "%x\r\n" n)

(* ---------- allocation ---------- *)

let alloc_tests =
  let buf = Bigstring.create 1024 in
  let small = Bigstring.create 8 in
  let cache = Date.Cache.create () in
  let src = S.bigstring_at ~off:5 "bytes 0-99/1000 with a somewhat longer tail" in
  let span = Span.make ~off:5 ~len:43 in
  let tick = ref 0 in
  let sink = ref 0 in
  let value = "text/html; charset=utf-8" in
  [ S.zero_alloc "Status.line" (fun () -> sink := String.length (Status.line Http_1_1 Not_found));
    S.zero_alloc "Status.code/reason/index" (fun () ->
        sink := Status.code Partial_content + String.length (Status.reason Not_modified)
                + Status.index Range_not_satisfiable);
    S.zero_alloc "Status.of_code_or" (fun () -> sink := Status.index (Status.of_code_or ~default:Ok 416));
    S.zero_alloc "status_line" (fun () -> sink := Response.status_line buf ~off:0 Http_1_1 Ok);
    S.zero_alloc "header" (fun () -> sink := Response.header buf ~off:3 Content_type value);
    S.zero_alloc "header_s" (fun () -> sink := Response.header_s buf ~off:3 "X-Custom-Header" value);
    S.zero_alloc "header_int" (fun () -> sink := Response.header_int buf ~off:3 Content_length 1234567);
    S.zero_alloc "header_span" (fun () -> sink := Response.header_span buf ~off:3 Content_range src span);
    S.zero_alloc "header_date" (fun () ->
        incr tick;
        sink := Response.header_date buf ~off:3 Last_modified (784111777 + !tick));
    S.zero_alloc "date (cached)" (fun () -> sink := Response.date buf ~off:3 cache ~now:784111777);
    S.zero_alloc "date (new second)" (fun () ->
        incr tick;
        sink := Response.date buf ~off:3 cache ~now:(784111777 + !tick));
    S.zero_alloc "end_head" (fun () -> sink := Response.end_head buf ~off:3);
    S.zero_alloc "chunk_header" (fun () -> sink := Response.chunk_header buf ~off:3 0x1f3a);
    S.zero_alloc "chunk_header_after_data" (fun () ->
        sink := Response.chunk_header_after_data buf ~off:3 0x1f3a);
    S.zero_alloc "end_chunk" (fun () -> sink := Response.end_chunk buf ~off:3);
    S.zero_alloc "last_chunk" (fun () -> sink := Response.last_chunk buf ~off:3);
    S.zero_alloc "last_chunk_after_data" (fun () -> sink := Response.last_chunk_after_data buf ~off:3);
    S.zero_alloc "write_string" (fun () -> sink := Response.write_string buf ~off:3 value);
    S.zero_alloc "write_int" (fun () -> sink := Response.write_int buf ~off:3 max_int);
    S.zero_alloc "is_field_value" (fun () -> if Response.is_field_value value then incr sink);
    S.zero_alloc "full head" (fun () ->
        let o = Response.status_line buf ~off:0 Http_1_1 Ok in
        let o = Response.date buf ~off:o cache ~now:784111777 in
        let o = Response.header buf ~off:o Content_type value in
        let o = Response.header_int buf ~off:o Content_length 1234 in
        let o = Response.header buf ~off:o Connection "keep-alive" in
        let o = Response.header buf ~off:o Etag "\"5f3c-4d2\"" in
        let o = Response.header_date buf ~off:o Last_modified 784025377 in
        sink := Response.end_head buf ~off:o);
    S.zero_alloc "refused value (Invalid_field)" (fun () ->
        match Response.header buf ~off:0 Location "/\r\nSet-Cookie: x" with
        | o -> sink := o
        | exception Response.Invalid_field -> incr sink);
    S.zero_alloc "refused name (Invalid_field)" (fun () ->
        match Response.header_s buf ~off:0 "Bad Name" "v" with
        | o -> sink := o
        | exception Response.Invalid_field -> incr sink);
    S.zero_alloc "full buffer (No_space)" (fun () ->
        match Response.header small ~off:0 Content_type value with
        | o -> sink := o
        | exception Response.No_space -> incr sink);
  ]


(* {1 Prepared fields} *)

module P = Prepared_fields

(* The fields an HPACK block decodes to, as "name=value". *)
let hpack_fields p =
  let d = Hpack.Decoder.create () and out = Bigstring.create 4096 in
  Hpack.Decoder.start_block d ~off:0 ~len:(P.hpack_length p);
  let r = ref [] in
  while Hpack.Decoder.next_field d (P.hpack p) ~out = Hpack.Decoder.Field do
    r := (Span.to_string out (Hpack.Decoder.name d) ^ "=" ^ Span.to_string out (Hpack.Decoder.value d)) :: !r
  done;
  Alcotest.(check bool) "the block decodes whole" false (Hpack.Decoder.failed d);
  List.rev !r

let text p = Bigstring.sub_string (P.text p) ~off:0 ~len:(P.text_length p)

let test_prepared_forms () =
  let p = P.of_list [ (Content_type, "text/html; charset=utf-8"); (Cache_control, "max-age=60") ] in
  P.add_s p "X-Frame-Options" "DENY";
  P.add_int p Age 42;
  P.add_date p Last_modified 784111777;
  let src = Bigstring.of_string "xx\"abc\"yy" in
  P.add_bytes p Etag src ~off:2 ~len:5;
  P.add p Accept_ranges "bytes";
  let b = Bigstring.create 512 in
  let o = Response.header b ~off:0 Content_type "text/html; charset=utf-8" in
  let o = Response.header b ~off:o Cache_control "max-age=60" in
  let o = Response.header_s b ~off:o "X-Frame-Options" "DENY" in
  let o = Response.header_int b ~off:o Age 42 in
  let o = Response.header_date b ~off:o Last_modified 784111777 in
  let o = Response.header b ~off:o Etag "\"abc\"" in
  let o = Response.header b ~off:o Accept_ranges "bytes" in
  Alcotest.(check string) "text: what Response's writers write" (Bigstring.sub_string b ~off:0 ~len:o) (text p);
  Alcotest.(check int) "count" 7 (P.count p);
  Alcotest.(check (list string)) "HPACK: the same fields, lower-case names"
    [ "content-type=text/html; charset=utf-8"; "cache-control=max-age=60"; "x-frame-options=DENY"; "age=42";
      "last-modified=Sun, 06 Nov 1994 08:49:37 GMT"; "etag=\"abc\""; "accept-ranges=bytes" ]
    (hpack_fields p);
  P.clear p;
  Alcotest.(check int) "cleared: no text" 0 (P.text_length p);
  Alcotest.(check int) "cleared: no HPACK" 0 (P.hpack_length p);
  P.add p Vary "Accept-Encoding";
  Alcotest.(check (list string)) "refilled" [ "vary=Accept-Encoding" ] (hpack_fields p)

let test_prepared_refusals () =
  let p = P.of_list [ (Content_type, "text/plain") ] in
  let before = text p and hbefore = P.hpack_length p in
  let unchanged what =
    Alcotest.(check string) (what ^ ": text unchanged") before (text p);
    Alcotest.(check int) (what ^ ": HPACK unchanged") hbefore (P.hpack_length p)
  in
  List.iter
    (fun n ->
      (match P.add p n "1" with
       | () -> Alcotest.fail ("accepted " ^ Header_name.to_string n)
       | exception Invalid_argument _ -> ());
      unchanged (Header_name.to_string n))
    [ Content_length; Transfer_encoding; Connection; Keep_alive; Upgrade; Date ];
  List.iter
    (fun n ->
      (match P.add_s p n "1" with
       | () -> Alcotest.fail ("accepted " ^ n)
       | exception Invalid_argument _ -> ());
      unchanged n)
    [ "Content-Length"; "proxy-connection"; "TRANSFER-ENCODING" ];
  Alcotest.check_raises "CR LF in a value" Response.Invalid_field (fun () -> P.add p Etag "a\r\nb: c");
  unchanged "CR LF";
  Alcotest.check_raises "name not a token" Response.Invalid_field (fun () -> P.add_s p "a b" "c");
  unchanged "bad name";
  let small = P.create ~capacity:40 () in
  P.add small Content_type "text/plain";
  let t0 = text small in
  Alcotest.check_raises "past the capacity" Response.No_space (fun () -> P.add small Etag (String.make 30 'e'));
  Alcotest.(check string) "past the capacity: unchanged" t0 (text small);
  Alcotest.(check (list string)) "past the capacity: HPACK unchanged" [ "content-type=text/plain" ] (hpack_fields small)

(* Long values and many short fields: the HPACK buffer never runs out
   before the text does. *)
let prop_prepared_room =
  QCheck.Test.make ~count:300 ~name:"prepared fields: HPACK bytes always fit"
    QCheck.(list_of_size Gen.(1 -- 40) (string_gen_of_size Gen.(0 -- 300) (Gen.char_range 'a' 'z')))
    (fun values ->
      let p = P.create ~capacity:600 () in
      let n = ref 0 in
      (try
         List.iter (fun v -> P.add_s p "x" v; incr n) values
       with Response.No_space -> ());
      List.length (hpack_fields p) = !n && P.count p = !n)

let prepared_alloc_tests =
  let p = P.create () in
  P.add_s p "X-Upper" "warm";
  let src = Bigstring.of_string "\"0123-abcd\"" in
  [ S.zero_alloc "prepared fields: clear and refill a file's fields" (fun () ->
        P.clear p;
        P.add p Content_type "text/html";
        P.add_bytes p Etag src ~off:0 ~len:(Bigstring.length src);
        P.add_date p Last_modified 784111777;
        P.add p Cache_control "max-age=60";
        P.add_s p "X-Upper" "yes";
        P.add_int p Age 7;
        P.add p Accept_ranges "bytes") ]

let () =
  Alcotest.run "response"
    [ ( "status",
        [ Alcotest.test_case "registry" `Quick test_registry;
          Alcotest.test_case "of_code" `Quick test_of_code;
          Alcotest.test_case "classes" `Quick test_classes;
          Alcotest.test_case "status lines" `Quick test_lines;
        ] );
      ( "head",
        [ Alcotest.test_case "full head, byte for byte" `Quick test_full_head;
          Alcotest.test_case "status_line" `Quick test_status_line;
          Alcotest.test_case "header" `Quick test_header;
          Alcotest.test_case "header_s" `Quick test_header_s;
          Alcotest.test_case "header_span" `Quick test_header_span;
          Alcotest.test_case "numbers" `Quick test_numbers;
          Alcotest.test_case "dates" `Quick test_dates;
          Alcotest.test_case "write_string" `Quick test_write_string;
        ] );
      ( "safety",
        [ Alcotest.test_case "refusals write nothing" `Quick test_refusals;
          Alcotest.test_case "no space" `Quick test_no_space_edges;
        ] );
      "chunked", [ Alcotest.test_case "chunk framing" `Quick test_chunks ];
      "properties", List.map S.qcheck [ prop_value; prop_int; prop_hex ];
      ( "prepared fields",
        [ Alcotest.test_case "text and HPACK forms" `Quick test_prepared_forms;
          Alcotest.test_case "refusals leave the set unchanged" `Quick test_prepared_refusals;
          S.qcheck prop_prepared_room ] );
      "allocation", alloc_tests @ prepared_alloc_tests;
    ]
