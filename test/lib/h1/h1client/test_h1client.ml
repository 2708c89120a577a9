(* The HTTP/1.1 client codec (issue 36): Response_head's framing rules and
   errors, input split at every byte, state reuse, 0 words per warm cycle;
   Request_writer's bytes, injection and bounds; a differential test
   against h11 (python3-h11) and interop with a real httpz serve and h2o. *)

open Httpz
module S = Httpz_test_support
module R = Response_head
module W = Request_writer

let sprintf = Printf.sprintf

(* --- Parsing helpers ----------------------------------------------------------- *)

type outcome = {
  status : int;
  framing : R.framing;
  cl : int;
  ka : bool;
  fields : (string * string) list;
  interim : int;  (* Interim heads before the final one *)
  consumed : int;  (* bytes of all heads *)
}

type result = Ok of outcome | Err of R.error | Incomplete

let pp_result = function
  | Ok o ->
    sprintf "%d %s cl=%d ka=%b fields=[%s] interim=%d consumed=%d" o.status (R.framing_to_string o.framing)
      o.cl o.ka (String.concat "; " (List.map (fun (k, v) -> k ^ ": " ^ v) o.fields)) o.interim o.consumed
  | Err e -> "error " ^ R.error_to_string e
  | Incomplete -> "incomplete"

let fields_of r buf =
  List.init (R.header_count r) (fun i ->
      (Span.to_string buf (R.header_name_span r i), Span.to_string buf (R.header_value r i)))

let outcome r buf interim consumed =
  Ok { status = R.status r; framing = R.framing r; cl = R.content_length r; ka = R.keep_alive r;
       fields = fields_of r buf; interim; consumed }

(* The heads in [s] (interim ones, then a final one), whole, or [step]
   bytes more per call (step 1: byte by byte), or in two pieces split
   after byte [split]. *)
let parse_heads ?(step = max_int) ?split ?(base = 3) r ~meth s =
  let buf = S.bigstring_at ~off:base s in
  let total = String.length s in
  let rec go off interim =
    let avail = base + total - off in
    let rec feed len =
      let len = min len avail in
      match R.parse r buf ~off ~len ~meth with
      | R.Partial -> if len >= avail then Incomplete else feed (if step = max_int then avail else len + step)
      | R.Error -> Err (R.error r)
      | R.Interim -> go (off + R.head_length r) (interim + 1)
      | R.Complete -> outcome r buf interim (off + R.head_length r - base)
    in
    match split with
    | Some k when base + k - off > 0 -> feed (base + k - off)
    | _ -> feed (if step = max_int then avail else step)
  in
  go base 0

let result_eq a b =
  match (a, b) with
  | Ok x, Ok y -> x = y
  | Err x, Err y -> x = y
  | Incomplete, Incomplete -> true
  | _ -> false

let check_result name expected got =
  if not (result_eq expected got) then
    Alcotest.failf "%s: expected %s, got %s" name (pp_result expected) (pp_result got)

(* --- Unit cases: every framing rule and every error ---------------------------------- *)

let ok ?(cl = -1) ?(ka = true) ?(interim = 0) status (framing : R.framing) =
  `Ok (status, framing, cl, ka, interim)

let cases : (string * Meth.t * string * [ `Ok of int * R.framing * int * bool * int | `Err of R.error | `Inc ]) list =
  let h = "HTTP/1.1 200 OK\r\n" in
  [ ("content-length", Get, h ^ "Content-Length: 5\r\n\r\n", ok ~cl:5 200 Length);
    ("content-length zero", Get, h ^ "Content-Length: 0\r\n\r\n", ok ~cl:0 200 Length);
    ("content-length repeated equal", Get, h ^ "Content-Length: 7\r\nContent-Length: 7\r\n\r\n", ok ~cl:7 200 Length);
    ("content-length leading zeros", Get, h ^ "Content-Length: 007\r\n\r\n", ok ~cl:7 200 Length);
    ("chunked", Get, h ^ "Transfer-Encoding: chunked\r\n\r\n", ok 200 Chunked);
    ("chunked any case", Get, h ^ "transfer-encoding: ChUnKeD\r\n\r\n", ok 200 Chunked);
    ("until close", Get, h ^ "Server: x\r\n\r\n", ok ~ka:false 200 Until_close);
    ("until close beats keep-alive", Get, h ^ "Connection: keep-alive\r\n\r\n", ok ~ka:false 200 Until_close);
    ("head: no body despite length", Head, h ^ "Content-Length: 100\r\n\r\n", ok ~cl:100 200 No_body);
    ("head: no body despite chunked", Head, h ^ "Transfer-Encoding: chunked\r\n\r\n", ok 200 No_body);
    ("head: no body without framing", Head, h ^ "\r\n", ok 200 No_body);
    ("204", Get, "HTTP/1.1 204 No Content\r\n\r\n", ok 204 No_body);
    ("304 with length", Get, "HTTP/1.1 304 Not Modified\r\nContent-Length: 50\r\n\r\n", ok ~cl:50 304 No_body);
    ("connect 200: tunnel", Connect, h ^ "\r\n", ok ~ka:false 200 Tunnel);
    ("connect 407: body", Connect, "HTTP/1.1 407 Proxy Auth\r\nContent-Length: 3\r\n\r\n", ok ~cl:3 407 Length);
    ("101: tunnel", Get, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n", ok ~ka:false 101 Tunnel);
    ("100 then 200", Post, "HTTP/1.1 100 Continue\r\n\r\n" ^ h ^ "Content-Length: 1\r\n\r\n", ok ~cl:1 ~interim:1 200 Length);
    ("103 then 200", Get, "HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n" ^ h ^ "Content-Length: 1\r\n\r\n",
     ok ~cl:1 ~interim:1 200 Length);
    ("8 interim allowed", Get, String.concat "" (List.init 8 (fun _ -> "HTTP/1.1 100 Continue\r\n\r\n")) ^ h ^ "Content-Length: 0\r\n\r\n",
     ok ~cl:0 ~interim:8 200 Length);
    ("9 interim refused", Get, String.concat "" (List.init 9 (fun _ -> "HTTP/1.1 100 Continue\r\n\r\n")) ^ h ^ "\r\n",
     `Err R.Too_many_interim);
    ("connection close", Get, h ^ "Connection: close\r\nContent-Length: 1\r\n\r\n", ok ~cl:1 ~ka:false 200 Length);
    ("connection list close", Get, h ^ "Connection: keep-alive, CLOSE\r\nContent-Length: 1\r\n\r\n", ok ~cl:1 ~ka:false 200 Length);
    ("http/1.0 closes", Get, "HTTP/1.0 200 OK\r\nContent-Length: 1\r\n\r\n", ok ~cl:1 ~ka:false 200 Length);
    ("http/1.0 keep-alive", Get, "HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 1\r\n\r\n", ok ~cl:1 200 Length);
    ("http/1.2 is 1.1", Get, "HTTP/1.2 200 OK\r\nContent-Length: 1\r\n\r\n", ok ~cl:1 200 Length);
    ("no reason, no space", Get, "HTTP/1.1 200\r\nContent-Length: 1\r\n\r\n", ok ~cl:1 200 Length);
    ("empty reason", Get, "HTTP/1.1 200 \r\nContent-Length: 1\r\n\r\n", ok ~cl:1 200 Length);
    ("reason with tab", Get, "HTTP/1.1 200 O\tK \xff\r\nContent-Length: 1\r\n\r\n", ok ~cl:1 200 Length);
    ("599", Get, "HTTP/1.1 599 x\r\nContent-Length: 1\r\n\r\n", ok ~cl:1 599 Length);
    (* errors *)
    ("garbage status line", Get, "ICY 200 OK\r\n\r\n", `Err R.Bad_version);
    ("lower-case version", Get, "http/1.1 200 OK\r\n\r\n", `Err R.Bad_version);
    ("leading empty line", Get, "\r\nHTTP/1.1 200 OK\r\n\r\n", `Err R.Bad_version);
    ("http/2", Get, "HTTP/2.0 200 OK\r\n\r\n", `Err R.Unsupported_version);
    ("two spaces", Get, "HTTP/1.1  200 OK\r\n\r\n", `Err R.Bad_status);
    ("no space after version", Get, "HTTP/1.1-200 OK\r\n\r\n", `Err R.Bad_status_line);
    ("two-digit status", Get, "HTTP/1.1 20 OK\r\n\r\n", `Err R.Bad_status);
    ("four-digit status", Get, "HTTP/1.1 2000 OK\r\n\r\n", `Err R.Bad_status);
    ("status 600", Get, "HTTP/1.1 600 OK\r\n\r\n", `Err R.Bad_status);
    ("status 099", Get, "HTTP/1.1 099 OK\r\n\r\n", `Err R.Bad_status);
    ("reason control byte", Get, "HTTP/1.1 200 O\001K\r\n\r\n", `Err R.Bad_status_line);
    ("reason too long", Get, "HTTP/1.1 200 " ^ String.make 1025 'x' ^ "\r\n\r\n", `Err R.Reason_too_long);
    ("bare lf in status line", Get, "HTTP/1.1 200 OK\n\r\n", `Err R.Bare_lf);
    ("bare cr in status line", Get, "HTTP/1.1 200 OK\rX\r\n\r\n", `Err R.Bare_cr);
    ("bare lf after field", Get, h ^ "Content-Length: 1\nX: y\r\n\r\n", `Err R.Bare_lf);
    ("bare lf end of head", Get, h ^ "Content-Length: 1\r\n\n", `Err R.Bare_lf);
    ("bare cr in field", Get, h ^ "X: a\rb\r\n\r\n", `Err R.Bare_cr);
    ("obs-fold", Get, h ^ "X: a\r\n b\r\n\r\n", `Err R.Obs_fold);
    ("space before colon", Get, h ^ "X : a\r\n\r\n", `Err R.Space_before_colon);
    ("empty name", Get, h ^ ": a\r\n\r\n", `Err R.Bad_header_name);
    ("nul in name", Get, h ^ "X\000: a\r\n\r\n", `Err R.Bad_header_name);
    ("nul in value", Get, h ^ "X: a\000b\r\n\r\n", `Err R.Bad_header_value);
    ("too many headers", Get, h ^ String.concat "" (List.init 101 (fun i -> sprintf "X-%d: v\r\n" i)) ^ "\r\n",
     `Err R.Too_many_headers);
    ("head too large", Get, h ^ "X: " ^ String.make (64 * 1024) 'a' ^ "\r\n\r\n", `Err R.Head_too_large);
    ("bad content-length", Get, h ^ "Content-Length: 1x\r\n\r\n", `Err R.Bad_content_length);
    ("negative content-length", Get, h ^ "Content-Length: -1\r\n\r\n", `Err R.Bad_content_length);
    ("empty content-length", Get, h ^ "Content-Length: \r\n\r\n", `Err R.Bad_content_length);
    ("content-length list", Get, h ^ "Content-Length: 5, 5\r\n\r\n", `Err R.Bad_content_length);
    ("content-length 19 digits", Get, h ^ "Content-Length: 1000000000000000000\r\n\r\n", `Err R.Bad_content_length);
    ("conflicting content-length", Get, h ^ "Content-Length: 1\r\nContent-Length: 2\r\n\r\n", `Err R.Conflicting_content_length);
    ("conflicting content-length on HEAD", Head, h ^ "Content-Length: 1\r\nContent-Length: 2\r\n\r\n",
     `Err R.Conflicting_content_length);
    ("content too large", Get, h ^ "Content-Length: 1125899906842625\r\n\r\n", `Err R.Content_too_large);
    ("empty transfer-encoding", Get, h ^ "Transfer-Encoding: ,\r\n\r\n", `Err R.Bad_transfer_encoding);
    ("transfer-encoding gzip", Get, h ^ "Transfer-Encoding: gzip\r\n\r\n", `Err R.Unsupported_transfer_coding);
    ("gzip, chunked", Get, h ^ "Transfer-Encoding: gzip, chunked\r\n\r\n", `Err R.Unsupported_transfer_coding);
    ("chunked not last", Get, h ^ "Transfer-Encoding: chunked, gzip\r\n\r\n", `Err R.Unsupported_transfer_coding);
    ("chunked twice", Get, h ^ "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n",
     `Err R.Unsupported_transfer_coding);
    ("te on 304", Get, "HTTP/1.1 304 x\r\nTransfer-Encoding: gzip\r\n\r\n", `Err R.Unsupported_transfer_coding);
    ("length and chunked", Get, h ^ "Transfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n", `Err R.Length_and_chunked);
    ("length and chunked on HEAD", Head, h ^ "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n", `Err R.Length_and_chunked);
    ("te in http/1.0", Get, "HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", `Err R.Transfer_encoding_http10);
    ("incomplete", Get, h ^ "Content-Length: 5\r\n", `Inc);
  ]

let expected_result = function
  | `Ok (status, framing, cl, ka, interim), r, s ->
    (* fields and consumed come from the parse; checked separately *)
    (match r with
     | Ok o -> Ok { o with status; framing; cl; ka; interim }
     | _ -> Ok { status; framing; cl; ka; fields = []; interim; consumed = String.length s })
  | `Err e, _, _ -> Err e
  | `Inc, _, _ -> Incomplete

let run_cases ~simd () =
  List.iter
    (fun (name, meth, s, want) ->
       let r = R.create ~simd () in
       let whole = parse_heads r ~meth s in
       let exp = expected_result (want, whole, s) in
       check_result name exp whole;
       (match whole with
        | Ok o when o.consumed <> String.length s -> Alcotest.failf "%s: consumed %d of %d" name o.consumed (String.length s)
        | _ -> ());
       (* byte by byte and in other splits: the same answer, same fields *)
       List.iter
         (fun step ->
            R.reset r;
            check_result (sprintf "%s (step %d)" name step) whole (parse_heads ~step r ~meth s))
         [ 1; 2; 3; 7; 16 ];
       (* two pieces, split at every byte boundary *)
       for k = 1 to min (String.length s - 1) 400 do
         R.reset r;
         check_result (sprintf "%s (split at %d)" name k) whole (parse_heads ~split:k r ~meth s)
       done)
    cases

(* Every error constructor has a case above. *)
let test_every_error () =
  let all =
    R.[ Bad_status_line; Bad_version; Unsupported_version; Bad_status; Reason_too_long; Bare_cr; Bare_lf;
        Obs_fold; Bad_header_name; Space_before_colon; Bad_header_value; Too_many_headers; Head_too_large;
        Bad_content_length; Conflicting_content_length; Content_too_large; Bad_transfer_encoding;
        Unsupported_transfer_coding; Length_and_chunked; Transfer_encoding_http10; Too_many_interim ]
  in
  List.iter
    (fun e ->
       if not (List.exists (fun (_, _, _, w) -> w = `Err e) cases) then
         Alcotest.failf "no case for %s" (R.error_to_string e))
    all

let test_fields () =
  let r = R.create () in
  let s = "HTTP/1.1 200 Fine\r\nServer:  h2o \r\nX-Custom:\tv\t\r\ncontent-length: 3\r\nSet-Cookie: a=1\r\nSet-Cookie: b=2\r\n\r\nabc" in
  let buf = S.bigstring_at ~off:3 s in
  Alcotest.(check bool) "complete" true (R.parse r buf ~off:3 ~len:(String.length s) ~meth:Get = R.Complete);
  Alcotest.(check string) "reason" "Fine" (Span.to_string buf (R.reason r));
  Alcotest.(check int) "head length" (String.length s - 3) (R.head_length r);
  Alcotest.(check (list (pair string string))) "fields"
    [ ("Server", "h2o"); ("X-Custom", "v"); ("content-length", "3"); ("Set-Cookie", "a=1"); ("Set-Cookie", "b=2") ]
    (fields_of r buf);
  Alcotest.(check bool) "ids" true (R.header_name r 0 = Header_name.Server && R.header_name r 1 = Header_name.Other);
  let c = R.find r Header_name.Set_cookie in
  Alcotest.(check int) "find" 3 c;
  Alcotest.(check int) "find_next" 4 (R.find_next r Header_name.Set_cookie ~after:c);
  Alcotest.(check int) "find_string" 1 (R.find_string r buf "x-custom");
  Alcotest.(check bool) "version" true (R.version r = Version.Http_1_1)

(* A response parsed after a failed one with many fields, and after an
   abandoned partial one, has exactly its own fields and facts. *)
let test_reuse () =
  let r = R.create () in
  let big =
    "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\n"
    ^ String.concat "" (List.init 60 (fun i -> sprintf "X-%d: %d\r\n" i i))
    ^ "Content-Length: 1\r\nContent-Length: 2\r\n\r\n"
  in
  check_result "failing" (Err R.Conflicting_content_length) (parse_heads r ~meth:Get big);
  let small = "HTTP/1.1 200 OK\r\nA: 1\r\n\r\n" in
  (match parse_heads r ~meth:Get small with
   | Ok o ->
     Alcotest.(check (list (pair string string))) "only the new fields" [ ("A", "1") ] o.fields;
     Alcotest.(check int) "no length" (-1) o.cl;
     Alcotest.(check bool) "framing" true (o.framing = Until_close)
   | x -> Alcotest.failf "small: %s" (pp_result x));
  (* abandoned partial head, then reset, then a new one at the same offset *)
  let buf = S.bigstring_at ~off:3 big in
  Alcotest.(check bool) "partial" true (R.parse r buf ~off:3 ~len:200 ~meth:Get = R.Partial);
  R.reset r;
  let buf2 = S.bigstring_at ~off:3 (small ^ String.make 200 ' ') in
  Alcotest.(check bool) "new head" true (R.parse r buf2 ~off:3 ~len:(String.length small) ~meth:Get = R.Complete);
  Alcotest.(check int) "one field" 1 (R.header_count r);
  (* the interim bound counts per response: reset clears it *)
  let interims n = String.concat "" (List.init n (fun _ -> "HTTP/1.1 100 Continue\r\n\r\n")) in
  let r = R.create () in
  let b = S.bigstring_at ~off:0 (interims 8) in
  let off = ref 0 in
  for _ = 1 to 8 do
    Alcotest.(check bool) "interim" true (R.parse r b ~off:!off ~len:(8 * 25 - !off) ~meth:Get = R.Interim);
    off := !off + R.head_length r
  done;
  Alcotest.(check int) "count" 8 (R.interim_count r);
  R.reset r;
  check_result "after reset" (Ok { status = 200; framing = Length; cl = 0; ka = true; fields = [ ("Content-Length", "0") ];
                                   interim = 8; consumed = 8 * 25 + 38 })
    (parse_heads r ~meth:Get (interims 8 ^ "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"));
  (* and a final response resets it too: 8 more interims are fine *)
  (match parse_heads r ~meth:Get (interims 8 ^ "HTTP/1.1 204 x\r\n\r\n") with
   | Ok o -> Alcotest.(check int) "interim after final" 8 o.interim
   | x -> Alcotest.failf "second response: %s" (pp_result x))

(* A whole exchange's bytes, as a server sends them on one connection:
   heads and bodies parsed back to back at their offsets. *)
let test_pipelined_bodies () =
  let s =
    "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc"
    ^ "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nxyz\r\n0\r\nServer-Timing: a\r\n\r\n"
    ^ "HTTP/1.1 304 Not Modified\r\nETag: \"x\"\r\n\r\n"
    ^ "HTTP/1.1 200 OK\r\n\r\ntail until close"
  in
  let buf = S.bigstring_at ~off:0 s in
  let r = R.create () and c = Chunked.create () and fb = Fixed_body.create () in
  let n = String.length s in
  let off = ref 0 and bodies = ref [] in
  let finished = ref false in
  while not !finished do
    match R.parse r buf ~off:!off ~len:(n - !off) ~meth:Get with
    | R.Interim -> off := !off + R.head_length r
    | R.Complete ->
      off := !off + R.head_length r;
      (match R.framing r with
       | No_body -> bodies := "" :: !bodies
       | Length ->
         Fixed_body.start fb (R.content_length r);
         let k = Fixed_body.take fb ~available:(n - !off) in
         bodies := Bigstring.sub_string buf ~off:!off ~len:k :: !bodies;
         off := !off + k
       | Chunked ->
         Chunked.reset c;
         let acc = Buffer.create 16 in
         let fin = ref false in
         while not !fin do
           match Chunked.decode c buf ~off:!off ~len:(n - !off) with
           | Data ->
             Buffer.add_string acc (Bigstring.sub_string buf ~off:(Chunked.data_off c) ~len:(Chunked.data_len c));
             off := !off + Chunked.consumed c
           | Done -> off := !off + Chunked.consumed c; fin := true
           | Need_more | Error -> Alcotest.fail "chunked"
         done;
         Alcotest.(check int) "trailer" 1 (Chunked.trailer_count c);
         bodies := Buffer.contents acc :: !bodies
       | Until_close ->
         bodies := Bigstring.sub_string buf ~off:!off ~len:(n - !off) :: !bodies;
         finished := true
       | Tunnel -> Alcotest.fail "tunnel")
    | _ -> Alcotest.fail "head"
  done;
  Alcotest.(check (list string)) "bodies" [ "abc"; "xyz"; ""; "tail until close" ] (List.rev !bodies)

(* --- Request_writer -------------------------------------------------------------- *)

let write f =
  let buf = Bigstring.create 4096 in
  Bigstring.blit_from_string (String.make 4096 '#') ~src_off:0 buf ~dst_off:0 ~len:4096;
  let w = W.create () in
  W.start w buf ~off:10 ~len:4000;
  f w;
  match W.finish w with
  | -1 -> Error (W.error w)
  | n -> Result.Ok (Bigstring.sub_string buf ~off:10 ~len:n)

let w_ok name want f =
  match write f with
  | Result.Ok s -> Alcotest.(check string) name want s
  | Error e -> Alcotest.failf "%s: error %s" name (W.error_to_string e)

let w_err name want f =
  match write f with
  | Result.Ok s -> Alcotest.failf "%s: wrote %S" name s
  | Error e -> Alcotest.(check string) name (W.error_to_string want) (W.error_to_string e)

let test_writer_bytes () =
  w_ok "get" "GET /a?b=1 HTTP/1.1\r\nHost: example.com\r\nAccept: */*\r\nX-Trace: t1\r\nMax-Forwards: 10\r\n\r\n"
    (fun w ->
       W.request_line w Get ~target:"/a?b=1";
       W.host w "example.com";
       W.field w Accept "*/*";
       W.field_other w ~name:"X-Trace" "t1";
       W.field_int w Max_forwards 10;
       W.end_head w);
  w_ok "post length + expect" "POST /u HTTP/1.1\r\nHost: h:8080\r\nContent-Length: 12345\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n"
    (fun w ->
       W.request_line w Post ~target:"/u";
       W.host w "h:8080";
       W.content_length w 12345;
       W.expect_continue w;
       W.connection_close w;
       W.end_head w);
  w_ok "other method, span value" "PROPFIND * HTTP/1.1\r\nHost: h\r\nUser-Agent: abc\r\n\r\n" (fun w ->
      W.request_line_token w ~meth:"PROPFIND" ~target:"*";
      W.host w "h";
      let src = Bigstring.of_string "xxabcxx" in
      W.field_span w src User_agent (Span.make ~off:2 ~len:3);
      W.end_head w);
  w_ok "chunked body with trailers"
    "PUT /f HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n1a\r\nabcdefghijklmnopqrstuvwxyz\r\n3\r\n\r\n0\r\nETag: \"x\"\r\nX-Sum: 9\r\n\r\n"
    (fun w ->
       W.request_line w Put ~target:"/f";
       W.host w "h";
       W.chunked w;
       W.end_head w;
       let src = Bigstring.of_string "hello abcdefghijklmnopqrstuvwxyz" in
       W.chunk w src ~off:0 ~len:5;
       W.chunk w src ~off:6 ~len:26;
       W.chunk w src ~off:0 ~len:0;
       W.chunk_header w 3; (* data sent by the caller itself, between these two *)
       W.chunk_end w;
       W.last_chunk w;
       W.trailer w Etag "\"x\"";
       W.trailer_other w ~name:"X-Sum" "9";
       W.end_trailers w)

(* A chunked head, ended: what comes next is the body. *)
let chunked_head w = W.request_line w Put ~target:"/"; W.host w "h"; W.chunked w; W.end_head w

let test_writer_errors () =
  let head w = W.request_line w Get ~target:"/"; W.host w "h" in
  List.iter
    (fun (name, v) ->
       w_err ("value " ^ name) W.Bad_value (fun w -> head w; W.field w Accept v; W.end_head w);
       w_err ("other value " ^ name) W.Bad_value (fun w -> head w; W.field_other w ~name:"X-A" v; W.end_head w);
       w_err ("host " ^ name) W.Bad_value (fun w -> W.request_line w Get ~target:"/"; W.host w v; W.end_head w);
       w_err ("trailer " ^ name) W.Bad_value (fun w -> chunked_head w; W.last_chunk w; W.trailer_other w ~name:"X-A" v);
       let src = Bigstring.of_string v in
       w_err ("span " ^ name) W.Bad_value (fun w -> head w; W.field_span w src Accept (Span.make ~off:0 ~len:(String.length v))))
    [ ("cr", "a\rb"); ("lf", "a\nb"); ("crlf injection", "a\r\nX-Evil: 1"); ("nul", "a\000b"); ("del", "a\127");
      ("esc", "\027[31m") ];
  List.iter
    (fun t -> w_err ("target " ^ String.escaped t) W.Bad_target (fun w -> W.request_line w Get ~target:t))
    [ ""; "/a b"; "/a\r\nHost: evil"; "/a#frag"; "/\000"; "/\xff" ];
  w_err "method other" W.Bad_method (fun w -> W.request_line w Other ~target:"/");
  w_err "method token" W.Bad_method (fun w -> W.request_line_token w ~meth:"GE T" ~target:"/");
  w_err "name with colon" W.Bad_name (fun w -> head w; W.field_other w ~name:"X:Y" "v");
  w_err "name with crlf" W.Bad_name (fun w -> head w; W.field_other w ~name:"X\r\nY" "v");
  w_err "empty name" W.Bad_name (fun w -> head w; W.field_other w ~name:"" "v");
  w_err "Other id" W.Bad_name (fun w -> head w; W.field w Other "v");
  List.iter
    (fun n -> w_err ("reserved " ^ n) W.Bad_name (fun w -> head w; W.field_other w ~name:n "1"))
    [ "Content-Length"; "transfer-encoding"; "HOST"; "Expect" ];
  w_err "reserved id" W.Bad_name (fun w -> head w; W.field w Content_length "1");
  w_err "reserved int" W.Bad_name (fun w -> head w; W.field_int w Content_length 1);
  w_err "two framings" W.Bad_framing (fun w -> head w; W.content_length w 1; W.chunked w);
  w_err "two lengths" W.Bad_framing (fun w -> head w; W.content_length w 1; W.content_length w 1);
  w_err "negative length" W.Bad_value (fun w -> head w; W.content_length w (-1));
  w_err "two hosts" W.Bad_name (fun w -> head w; W.host w "h");
  w_err "no host" W.Bad_framing (fun w -> W.request_line w Get ~target:"/"; W.end_head w);
  w_err "forbidden trailer" W.Bad_name (fun w -> chunked_head w; W.last_chunk w; W.trailer w Content_length "1");
  w_err "forbidden trailer name" W.Bad_name (fun w -> chunked_head w; W.last_chunk w; W.trailer_other w ~name:"transfer-encoding" "x");
  w_err "zero chunk header" W.Bad_value (fun w -> chunked_head w; W.chunk_header w 0);
  (* sticky: after an error nothing more is written *)
  let buf = Bigstring.create 256 in
  let w = W.create () in
  W.start w buf ~off:0 ~len:256;
  W.request_line w Get ~target:"/";
  let p = W.pos w in
  W.field w Accept "a\nb";
  W.host w "h";
  W.end_head w;
  Alcotest.(check int) "nothing after the error" p (W.pos w);
  Alcotest.(check int) "finish" (-1) (W.finish w);
  (* and start clears it *)
  W.start w buf ~off:0 ~len:256;
  W.request_line w Get ~target:"/"; W.host w "h"; W.end_head w;
  Alcotest.(check int) "fresh" 27 (W.finish w)

(* Every window too small gives No_space and writes nothing past it. *)
let test_writer_no_space () =
  let full = ref "" in
  let seq w =
    W.request_line w Post ~target:"/upload";
    W.host w "example.com";
    W.field w Content_type "text/plain";
    W.field_int w Max_forwards 123456;
    W.chunked w;
    W.expect_continue w;
    W.end_head w;
    let src = Bigstring.of_string "some body bytes" in
    W.chunk w src ~off:0 ~len:15;
    W.last_chunk w;
    W.trailer_other w ~name:"X-T" "1";
    W.end_trailers w
  in
  (match write seq with Result.Ok s -> full := s | Error _ -> Alcotest.fail "full");
  let n = String.length !full in
  let buf = Bigstring.create (n + 32) in
  let w = W.create () in
  for len = 0 to n - 1 do
    Bigstring.blit_from_string (String.make (n + 32) '#') ~src_off:0 buf ~dst_off:0 ~len:(n + 32);
    W.start w buf ~off:8 ~len;
    seq w;
    if W.error w <> W.No_space then Alcotest.failf "len %d: %s" len (W.error_to_string (W.error w));
    if W.written w > len then Alcotest.failf "len %d: wrote %d" len (W.written w);
    let s = Bigstring.to_string buf in
    if String.sub s 0 8 <> "########" || String.sub s (8 + len) (n + 24 - len) <> String.make (n + 24 - len) '#' then
      Alcotest.failf "len %d: wrote outside the window" len;
    (* what was written is a prefix of the full message *)
    if Bigstring.sub_string buf ~off:8 ~len:(W.written w) <> String.sub !full 0 (W.written w) then
      Alcotest.failf "len %d: not a prefix" len
  done

(* Calls out of turn are Bad_order and write nothing: before the fix,
   fields and chunks after the head landed in the body. *)
let test_writer_order () =
  let head w = W.request_line w Get ~target:"/"; W.host w "h" in
  let fixed w = head w; W.content_length w 3; W.end_head w in
  List.iter
    (fun (name, f) -> w_err name W.Bad_order f)
    [ ("field after end_head", fun w -> head w; W.end_head w; W.field w Accept "x");
      ("field_other after end_head", fun w -> head w; W.end_head w; W.field_other w ~name:"X-A" "x");
      ("field_int after end_head", fun w -> fixed w; W.field_int w Max_forwards 1);
      ("field_span after end_head", fun w ->
          fixed w; W.field_span w (Bigstring.of_string "abc") Accept (Span.make ~off:0 ~len:3));
      ("host after end_head", fun w -> W.request_line w Get ~target:"/"; W.host w "h"; W.end_head w; W.host w "i");
      ("chunked after end_head", fun w -> head w; W.end_head w; W.chunked w);
      ("content_length after end_head", fun w -> head w; W.end_head w; W.content_length w 1);
      ("expect after end_head", fun w -> head w; W.end_head w; W.expect_continue w);
      ("close after end_head", fun w -> head w; W.end_head w; W.connection_close w);
      ("two end_heads", fun w -> head w; W.end_head w; W.end_head w);
      ("chunk after content_length", fun w -> fixed w; W.chunk w (Bigstring.of_string "abc") ~off:0 ~len:3);
      ("chunk in the head", fun w -> head w; W.chunked w; W.chunk w (Bigstring.of_string "abc") ~off:0 ~len:3);
      ("empty chunk after content_length", fun w -> fixed w; W.chunk w (Bigstring.of_string "") ~off:0 ~len:0);
      ("chunk_header after content_length", fun w -> fixed w; W.chunk_header w 3);
      ("last_chunk after content_length", fun w -> fixed w; W.last_chunk w);
      ("last_chunk with no body", fun w -> head w; W.end_head w; W.last_chunk w);
      ("chunk with no head", fun w -> W.chunk w (Bigstring.of_string "abc") ~off:0 ~len:3);
      ("field before request line", fun w -> W.host w "h");
      ("end_head before request line", fun w -> W.end_head w);
      ("two request lines", fun w -> W.request_line w Get ~target:"/"; W.request_line w Get ~target:"/");
      ("request line token twice", fun w -> head w; W.request_line_token w ~meth:"GET" ~target:"/");
      ("request line after end_head", fun w -> head w; W.end_head w; W.request_line w Get ~target:"/");
      ("chunk_end without chunk_header", fun w -> chunked_head w; W.chunk_end w);
      ("chunk inside chunk_header", fun w ->
          chunked_head w; W.chunk_header w 3; W.chunk w (Bigstring.of_string "abc") ~off:0 ~len:3);
      ("last_chunk inside chunk_header", fun w -> chunked_head w; W.chunk_header w 3; W.last_chunk w);
      ("trailer before last_chunk", fun w -> chunked_head w; W.trailer_other w ~name:"X-A" "1");
      ("end_trailers before last_chunk", fun w -> chunked_head w; W.end_trailers w);
      ("chunk after last_chunk", fun w -> chunked_head w; W.last_chunk w; W.chunk w (Bigstring.of_string "a") ~off:0 ~len:1);
      ("trailer after end_trailers", fun w ->
          chunked_head w; W.last_chunk w; W.end_trailers w; W.trailer_other w ~name:"X-A" "1");
      ("field in trailers", fun w -> chunked_head w; W.last_chunk w; W.field w Accept "x") ];
  (* nothing of the refused call is written *)
  let buf = Bigstring.create 256 in
  let w = W.create () in
  W.start w buf ~off:0 ~len:256;
  head w; W.content_length w 3; W.end_head w;
  let p = W.pos w in
  W.chunk w (Bigstring.of_string "abc") ~off:0 ~len:3;
  Alcotest.(check int) "chunk wrote nothing" p (W.pos w);
  Alcotest.(check string) "bad_order" "bad_order" (W.error_to_string (W.error w));
  (* a good order across windows: head, then two batches of chunks by resume *)
  let out = Buffer.create 64 in
  let flush () = if W.finish w < 0 then Alcotest.failf "batch: %s" (W.error_to_string (W.error w));
    Buffer.add_string out (Bigstring.sub_string buf ~off:0 ~len:(W.finish w)) in
  W.start w buf ~off:0 ~len:256; chunked_head w; flush ();
  W.resume w buf ~off:0 ~len:256; W.chunk w (Bigstring.of_string "ab") ~off:0 ~len:2; flush ();
  W.resume w buf ~off:0 ~len:256; W.chunk_header w 1; flush ();
  W.resume w buf ~off:0 ~len:256; W.chunk_end w; W.last_chunk w; W.end_trailers w; flush ();
  Alcotest.(check string) "batches"
    "PUT / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n1\r\n\r\n0\r\n\r\n"
    (Buffer.contents out);
  (* start drops an unfinished message: a new head is accepted *)
  W.start w buf ~off:0 ~len:256; chunked_head w; W.chunk_header w 5;
  W.start w buf ~off:0 ~len:256; head w; W.end_head w;
  Alcotest.(check int) "new head after an abandoned body" 27 (W.finish w);
  (* No_space does not move the phase: the same call succeeds in a bigger window *)
  W.start w buf ~off:0 ~len:256; chunked_head w;
  W.resume w buf ~off:0 ~len:2; W.last_chunk w;
  Alcotest.(check string) "no space" "no_space" (W.error_to_string (W.error w));
  W.resume w buf ~off:0 ~len:256; W.last_chunk w; W.end_trailers w;
  Alcotest.(check int) "last chunk after no space" 5 (W.finish w)

(* The writer's heads, read back by the server's parser. *)
let test_writer_roundtrip () =
  match
    write (fun w ->
        W.request_line w Post ~target:"/x?y";
        W.host w "example.org";
        W.field w Content_type "application/json";
        W.field_other w ~name:"X-Id" "42";
        W.content_length w 2;
        W.expect_continue w;
        W.end_head w)
  with
  | Error _ -> Alcotest.fail "write"
  | Result.Ok s ->
    let buf = Bigstring.of_string s in
    let q = Request.create () in
    Alcotest.(check bool) "parsed" true (Request.parse q buf ~off:0 ~len:(String.length s) = Request.Complete);
    Alcotest.(check bool) "post" true (Request.meth q = Meth.Post);
    Alcotest.(check string) "host" "example.org" (Span.to_string buf (Request.host q));
    Alcotest.(check int) "length" 2 (Request.content_length q);
    Alcotest.(check bool) "expect" true (Request.expect_continue q);
    Alcotest.(check int) "fields" 5 (Request.header_count q)

(* Chunks written are chunks decoded, for random sizes. *)
let test_chunk_roundtrip () =
  let rng = Random.State.make [| 36 |] in
  for _ = 1 to 200 do
    let sizes = List.init (Random.State.int rng 6) (fun _ -> 1 + Random.State.int rng 300) in
    let body = String.concat "" (List.map (fun n -> String.init n (fun _ -> Char.chr (Random.State.int rng 256))) sizes) in
    let src = Bigstring.of_string body in
    let out = Bigstring.create 8192 in
    let w = W.create () in
    W.start w out ~off:0 ~len:8192;
    chunked_head w;
    let hlen = W.written w in
    let off = ref 0 in
    List.iter (fun n -> W.chunk w src ~off:!off ~len:n; off := !off + n) sizes;
    W.last_chunk w; W.trailer_other w ~name:"X-Done" "1"; W.end_trailers w;
    let n = W.finish w in
    let c = Chunked.create () in
    let acc = Buffer.create 16 and p = ref hlen and fin = ref false in
    while not !fin do
      match Chunked.decode c out ~off:!p ~len:(n - !p) with
      | Data -> Buffer.add_string acc (Bigstring.sub_string out ~off:(Chunked.data_off c) ~len:(Chunked.data_len c));
        p := !p + Chunked.consumed c
      | Done -> p := !p + Chunked.consumed c; fin := true
      | _ -> Alcotest.fail "decode"
    done;
    Alcotest.(check int) "all consumed" n !p;
    Alcotest.(check string) "body" body (Buffer.contents acc)
  done

(* --- 0 words per warm parse + write cycle --------------------------------------------- *)

let zero_alloc () =
  let r = R.create () and w = W.create () and c = Chunked.create () and fb = Fixed_body.create () in
  let out = Bigstring.create 1024 in
  let body = Bigstring.of_string "0123456789" in
  let resp =
    "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nDate: Sat, 28 Nov 2026 19:49:21 GMT\r\nServer: h2o/2.2.5\r\n"
    ^ "content-type: text/plain\r\nConnection: keep-alive\r\nX-Custom-Header: some value here\r\nTransfer-Encoding: chunked\r\n\r\n"
    ^ "a\r\n0123456789\r\n0\r\nServer-Timing: x\r\n\r\n"
    ^ "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello"
  in
  let inb = S.bigstring_at ~off:3 resp in
  let n = String.length resp + 3 in
  let cycle () =
    W.start w out ~off:0 ~len:1024;
    W.request_line w Post ~target:"/upload?x=1";
    W.host w "example.com";
    W.field w Accept "*/*";
    W.field_other w ~name:"X-Request-Token" "abc";
    W.field_span w body User_agent (Span.make ~off:0 ~len:10);
    W.field_int w Max_forwards 7;
    W.chunked w;
    W.expect_continue w;
    W.end_head w;
    W.chunk w body ~off:0 ~len:10;
    W.last_chunk w;
    W.trailer_other w ~name:"X-Sum" "abc";
    W.end_trailers w;
    if W.finish w < 0 then failwith "write";
    let off = ref 3 in
    if R.parse r inb ~off:!off ~len:(n - !off) ~meth:Post <> R.Interim then failwith "interim";
    off := !off + R.head_length r;
    if R.parse r inb ~off:!off ~len:(n - !off) ~meth:Post <> R.Complete then failwith "head";
    if R.framing r <> Chunked || R.find r Header_name.Server < 0 then failwith "framing";
    off := !off + R.head_length r;
    Chunked.reset c;
    while Chunked.decode c inb ~off:!off ~len:(n - !off) = Data do off := !off + Chunked.consumed c done;
    off := !off + Chunked.consumed c;
    if not (Chunked.is_done c) then failwith "chunked";
    if R.parse r inb ~off:!off ~len:(n - !off) ~meth:Get <> R.Complete then failwith "second";
    off := !off + R.head_length r;
    Fixed_body.start fb (R.content_length r);
    if Fixed_body.take fb ~available:(n - !off) <> 5 || R.keep_alive r then failwith "fixed"
  in
  let words = S.minor_words_per_op ~iters:2000 cycle in
  if words <> 0.0 then Alcotest.failf "%.2f minor words per cycle" words;
  (* the portable scanners too *)
  let rp = R.create ~simd:false () in
  let words =
    S.minor_words_per_op ~iters:2000 (fun () ->
        if R.parse rp inb ~off:3 ~len:(n - 3) ~meth:Get <> R.Interim then failwith "portable";
        let o = 3 + R.head_length rp in
        if R.parse rp inb ~off:o ~len:(n - o) ~meth:Get <> R.Complete then failwith "portable 2";
        R.reset rp)
  in
  if words <> 0.0 then Alcotest.failf "portable: %.2f minor words" words;
  (* errors cost nothing either *)
  let bad = S.bigstring_at ~off:0 "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n" in
  let words = S.minor_words_per_op ~iters:2000 (fun () -> ignore (R.parse rp bad ~off:0 ~len:60 ~meth:Get : R.status)) in
  if words <> 0.0 then Alcotest.failf "error path: %.2f minor words" words;
  let words = S.minor_words_per_op ~iters:2000 (fun () ->
      W.start w out ~off:0 ~len:20; W.request_line w Get ~target:"/a/very/long/target/over/twenty"; W.field w Accept "a\r\n") in
  if words <> 0.0 then Alcotest.failf "writer error path: %.2f minor words" words;
  let words = S.minor_words_per_op ~iters:2000 (fun () ->
      W.start w out ~off:0 ~len:1024; W.request_line w Get ~target:"/"; W.host w "h"; W.chunked w; W.end_head w;
      W.resume w out ~off:100 ~len:100; W.chunk w body ~off:0 ~len:10;
      W.resume w out ~off:200 ~len:100; W.last_chunk w; W.field w Accept "x";
      if W.error w <> W.Bad_order then failwith "order") in
  if words <> 0.0 then Alcotest.failf "writer resume and order: %.2f minor words" words

(* --- Differential: h11 ------------------------------------------------------------------- *)

let root () =
  let ok d = Sys.file_exists (Filename.concat d "test/lib/h1/h1client/h11_ref.py") in
  let rec up dir n = if ok dir then dir else if n = 0 then raise Not_found else up (Filename.dirname dir) (n - 1) in
  try up (Sys.getcwd ()) 8
  with Not_found ->
    let exe = Sys.executable_name in
    let exe = if Filename.is_relative exe then Filename.concat (Sys.getcwd ()) exe else exe in
    up (Filename.dirname exe) 8

let of_hex h = String.init (String.length h / 2) (fun i -> Char.chr (int_of_string ("0x" ^ String.sub h (2 * i) 2)))

let hex s = String.concat "" (List.init (String.length s) (fun i -> Printf.sprintf "%02x" (Char.code s.[i])))

(* The body after a parsed head, in h11_ref.py's terms, from the bytes of
   [s] after the heads: the whole response is all the server sent. *)
let body_verdict s = function
  | Ok o ->
    let rest = String.sub s o.consumed (String.length s - o.consumed) in
    (match o.framing with
     | No_body -> "data:"
     | Length -> if String.length rest >= o.cl then "data:" ^ hex (String.sub rest 0 o.cl) else "short"
     | Until_close -> "data:" ^ hex rest
     | Tunnel -> "tunnel"
     | Chunked ->
       let c = Chunked.create () in
       let b = S.bigstring_at ~off:5 rest in
       let n = String.length rest + 5 in
       let acc = Buffer.create 64 and off = ref 5 and v = ref "" in
       while !v = "" do
         match Chunked.decode c b ~off:!off ~len:(n - !off) with
         | Data ->
           Buffer.add_string acc (Bigstring.sub_string b ~off:(Chunked.data_off c) ~len:(Chunked.data_len c));
           off := !off + Chunked.consumed c
         | Done -> v := "data:" ^ hex (Buffer.contents acc)
         | Need_more -> v := "short"
         | Error -> v := "error"
       done;
       !v)
  | _ -> "-"

let test_differential () =
  let script = Filename.concat (root ()) "test/lib/h1/h1client/h11_ref.py" in
  let ic = Unix.open_process_args_in "/usr/bin/python3" [| "/usr/bin/python3"; script |] in
  let lines = ref [] in
  (try while true do lines := input_line ic :: !lines done with End_of_file -> ());
  (match Unix.close_process_in ic with Unix.WEXITED 0 -> () | _ -> Alcotest.fail "h11_ref.py failed");
  let lines = List.rev !lines in
  if List.length lines < 300 then Alcotest.failf "only %d cases from h11" (List.length lines);
  let agree = ref 0 and stricter = ref 0 in
  let r = R.create () in
  List.iter
    (fun line ->
       match String.split_on_char '\t' line with
       | [ m; tag; hex; ref_v; ref_body ] ->
         let s = of_hex hex in
         let meth = Meth.of_string m in
         R.reset r;
         let ours = parse_heads r ~meth s in
         let ours_bytes = List.map (fun step -> R.reset r; parse_heads ~step r ~meth s) [ 1; 5 ] in
         List.iter (fun x -> if not (result_eq ours x) then Alcotest.failf "split differs on %S" s) ours_bytes;
         let mine =
           match ours with
           | Err _ -> "error"
           | Incomplete -> "partial"
           | Ok o ->
             let fr, len =
               match o.framing with
               | No_body -> ("length", 0)
               | Length -> ("length", o.cl)
               | Chunked -> ("chunked", -1)
               | Until_close -> ("close", -1)
               | Tunnel -> ("tunnel", -1)
             in
             let nf = List.length (List.filter (fun (k, _) -> String.lowercase_ascii k <> "content-length") o.fields) in
             sprintf "%d,%s,%d,%s,%d,%d" o.status fr len "%" nf o.interim
         in
         (* keep-alive compared where h11 decides it as RFC 9112 does:
            HTTP/1.1 and a delimited body *)
         let ref_parts = String.split_on_char ',' ref_v in
         let ref_cmp =
           match ref_parts with
           | [ st; fr; len; ka; nf; ni ] ->
             (match ours with
              | Ok o when fr <> "close" && ka <> "-1" && (ka = "1") <> o.ka ->
                Alcotest.failf "keep-alive differs on %S: h11 %s, ours %b" s ka o.ka
              | _ -> ());
             String.concat "," [ st; fr; len; "%"; nf; ni ]
           | _ -> ref_v
         in
         if mine = ref_cmp then begin
           let b = body_verdict s ours in
           if b = ref_body then incr agree
           else if tag <> "-" && b = "error" then incr stricter
           else Alcotest.failf "body differs on %S (%s): h11 %s, ours %s" s tag ref_body b
         end
         else if tag <> "-" && mine = "error" then incr stricter
         else Alcotest.failf "differs on %S (%s): h11 %s, ours %s (%s)" s tag ref_v mine (pp_result ours)
       | _ -> Alcotest.failf "bad line %S" line)
    lines;
  Printf.printf "h11: %d agree, %d stricter by decision\n" !agree !stricter;
  (* only tagged cases may differ, and then only by our refusing them *)
  if !agree < 400 then Alcotest.failf "only %d agreements" !agree

(* --- Interop: httpz serve and h2o ----------------------------------------------------- *)

let free_port () =
  let s = Unix.socket PF_INET SOCK_STREAM 0 in
  Unix.setsockopt s SO_REUSEADDR true;
  Unix.bind s (ADDR_INET (Unix.inet_addr_loopback, 0));
  let p = match Unix.getsockname s with ADDR_INET (_, p) -> p | _ -> assert false in
  Unix.close s;
  p

let connect_retry port =
  let deadline = Unix.gettimeofday () +. 10.0 in
  let rec go () =
    let s = Unix.socket PF_INET SOCK_STREAM 0 in
    match Unix.connect s (ADDR_INET (Unix.inet_addr_loopback, port)) with
    | () ->
      Unix.setsockopt_float s SO_RCVTIMEO 10.0;
      s
    | exception Unix.Unix_error _ when Unix.gettimeofday () < deadline ->
      Unix.close s; Unix.sleepf 0.05; go ()
  in
  go ()

type conn = { fd : Unix.file_descr; rb : Bigstring.t; mutable lo : int; mutable hi : int; scratch : Bytes.t;
              r : R.t; w : W.t; wb : Bigstring.t; ch : Chunked.t; fb : Fixed_body.t }

let conn fd =
  { fd; rb = Bigstring.create (1 lsl 20); lo = 0; hi = 0; scratch = Bytes.create 65536; r = R.create ();
    w = W.create (); wb = Bigstring.create 4096; ch = Chunked.create (); fb = Fixed_body.create () }

(* More bytes at [hi]; false at end of stream. *)
let fill c =
  if c.lo = c.hi then begin c.lo <- 0; c.hi <- 0 end;
  let n = Unix.read c.fd c.scratch 0 (min 65536 (Bigstring.length c.rb - c.hi)) in
  Bigstring.blit_from_string (Bytes.unsafe_to_string c.scratch) ~src_off:0 c.rb ~dst_off:c.hi ~len:n;
  c.hi <- c.hi + n;
  n > 0

let send c f =
  W.start c.w c.wb ~off:0 ~len:4096;
  f c.w;
  let n = W.finish c.w in
  if n < 0 then Alcotest.failf "writer: %s" (W.error_to_string (W.error c.w));
  let s = Bigstring.sub_string c.wb ~off:0 ~len:n in
  let rec go o = if o < n then go (o + Unix.write_substring c.fd s o (n - o)) in
  go 0

type resp = { st : int; body : string; keep : bool; etag : string; framing : R.framing; hdrs : (string * string) list }

let receive c ~meth =
  let rec head () =
    match R.parse c.r c.rb ~off:c.lo ~len:(c.hi - c.lo) ~meth with
    | R.Partial -> if fill c then head () else Alcotest.fail "eof in head"
    | R.Error -> Alcotest.failf "parse error %s" (R.error_to_string (R.error c.r))
    | R.Interim -> c.lo <- c.lo + R.head_length c.r; head ()
    | R.Complete ->
      let hdrs = fields_of c.r c.rb in
      let etag = match R.find c.r Header_name.Etag with -1 -> "" | i -> Span.to_string c.rb (R.header_value c.r i) in
      c.lo <- c.lo + R.head_length c.r;
      let b = Buffer.create 256 in
      (match R.framing c.r with
       | No_body -> ()
       | Length ->
         Fixed_body.start c.fb (R.content_length c.r);
         while not (Fixed_body.is_done c.fb) do
           if c.lo = c.hi && not (fill c) then Alcotest.fail "eof in body";
           let k = Fixed_body.take c.fb ~available:(c.hi - c.lo) in
           Buffer.add_string b (Bigstring.sub_string c.rb ~off:c.lo ~len:k);
           c.lo <- c.lo + k
         done
       | Chunked ->
         Chunked.reset c.ch;
         let fin = ref false in
         while not !fin do
           match Chunked.decode c.ch c.rb ~off:c.lo ~len:(c.hi - c.lo) with
           | Data ->
             Buffer.add_string b (Bigstring.sub_string c.rb ~off:(Chunked.data_off c.ch) ~len:(Chunked.data_len c.ch));
             c.lo <- c.lo + Chunked.consumed c.ch
           | Need_more -> c.lo <- c.lo + Chunked.consumed c.ch; if not (fill c) then Alcotest.fail "eof in chunks"
           | Done -> c.lo <- c.lo + Chunked.consumed c.ch; fin := true
           | Error -> Alcotest.failf "chunked: %s" (Chunked.error_to_string (Chunked.error c.ch))
         done
       | Until_close ->
         Buffer.add_string b (Bigstring.sub_string c.rb ~off:c.lo ~len:(c.hi - c.lo));
         c.lo <- c.hi;
         while fill c do
           Buffer.add_string b (Bigstring.sub_string c.rb ~off:c.lo ~len:(c.hi - c.lo)); c.lo <- c.hi
         done
       | Tunnel -> Alcotest.fail "tunnel");
      { st = R.status c.r; body = Buffer.contents b; keep = R.keep_alive c.r; etag; framing = R.framing c.r; hdrs }
  in
  head ()

let get ?(meth = Meth.Get) ?(extra = fun _ -> ()) c path =
  send c (fun w -> W.request_line w meth ~target:path; W.host w "127.0.0.1"; extra w; W.end_head w);
  receive c ~meth

let with_server argv port f =
  let devnull = Unix.openfile "/dev/null" [ O_RDWR ] 0 in
  let pid = Unix.create_process argv.(0) argv devnull devnull devnull in
  Unix.close devnull;
  Fun.protect
    ~finally:(fun () -> (try Unix.kill pid Sys.sigterm with _ -> ()); ignore (Unix.waitpid [] pid))
    (fun () -> f (connect_retry port))

let big_content = String.concat "" (List.init 4000 (fun i -> sprintf "line %d\n" i))

let docroot () =
  let d = S.temp_dir "h1client" in
  S.write_file (Filename.concat d "small.txt") "hello, client\n";
  S.write_file (Filename.concat d "big.txt") big_content;
  d

let exercise name fd ~chunked_path =
  let c = conn fd in
  (* 1000 sequential requests on one connection *)
  for i = 1 to 1000 do
    let rsp = get c "/small.txt" in
    if rsp.st <> 200 || rsp.body <> "hello, client\n" || not rsp.keep then
      Alcotest.failf "%s: request %d: %d %S keep=%b" name i rsp.st rsp.body rsp.keep
  done;
  (* HEAD: a length, no body; the connection goes on *)
  let h = get ~meth:Head c "/big.txt" in
  Alcotest.(check int) (name ^ " head status") 200 h.st;
  Alcotest.(check string) (name ^ " head body") "" h.body;
  Alcotest.(check bool) (name ^ " head framing") true (h.framing = No_body);
  let big = get c "/big.txt" in
  Alcotest.(check bool) (name ^ " big body") true (big.body = big_content);
  (* 304 *)
  if big.etag = "" then Alcotest.failf "%s: no etag" name;
  let nm = get ~extra:(fun w -> W.field w If_none_match big.etag) c "/big.txt" in
  Alcotest.(check int) (name ^ " 304") 304 nm.st;
  Alcotest.(check string) (name ^ " 304 body") "" nm.body;
  (* a chunked response, when the server has one *)
  (match chunked_path with
   | None -> ()
   | Some p ->
     let ch = get ~extra:(fun w -> W.field w Accept_encoding "gzip") c p in
     Alcotest.(check bool) (name ^ " chunked") true (ch.framing = Chunked);
     Alcotest.(check bool) (name ^ " gzip magic") true (String.length ch.body > 2 && String.sub ch.body 0 2 = "\x1f\x8b"));
  (* still alive after all that, and Connection: close is honoured *)
  let last = get ~extra:W.connection_close c "/small.txt" in
  Alcotest.(check int) (name ^ " last") 200 last.st;
  Alcotest.(check bool) (name ^ " close") false last.keep;
  Unix.close fd

let test_httpz_serve () =
  let bin = Filename.concat (root ()) "_build/install/default/bin/httpz" in
  if not (Sys.file_exists bin) then Alcotest.failf "%s not built" bin;
  let d = docroot () and port = free_port () in
  with_server [| bin; "serve"; "-d"; d; "-p"; string_of_int port; "--host"; "127.0.0.1"; "--workers"; "1"; "--io"; "epoll" |]
    port (fun fd -> exercise "httpz" fd ~chunked_path:None)

let test_h2o () =
  if not (Sys.file_exists "/usr/bin/h2o") then Alcotest.fail "/usr/bin/h2o missing (scripts/deps.sh bench)";
  let d = docroot () and port = free_port () in
  let tmp = S.temp_dir "h1client-h2o" in
  let conf = Filename.concat tmp "h2o.conf" in
  S.write_file conf
    (sprintf "listen:\n  host: 127.0.0.1\n  port: %d\nnum-threads: 1\nerror-log: %s/err.log\nhosts:\n  default:\n    paths:\n      /:\n        file.dir: %s\n        compress: ON\n"
       port tmp d);
  with_server [| "/usr/bin/h2o"; "-c"; conf |] port (fun fd -> exercise "h2o" fd ~chunked_path:(Some "/big.txt"))

let () =
  Alcotest.run "h1client"
    [ ("response_head",
       [ Alcotest.test_case "framing and errors, simd" `Quick (run_cases ~simd:true);
         Alcotest.test_case "framing and errors, portable" `Quick (run_cases ~simd:false);
         Alcotest.test_case "every error has a case" `Quick test_every_error;
         Alcotest.test_case "fields and lookups" `Quick test_fields;
         Alcotest.test_case "state reuse after error, partial, reset" `Quick test_reuse;
         Alcotest.test_case "heads and bodies back to back" `Quick test_pipelined_bodies ]);
      ("request_writer",
       [ Alcotest.test_case "bytes" `Quick test_writer_bytes;
         Alcotest.test_case "injection and misuse refused" `Quick test_writer_errors;
         Alcotest.test_case "calls out of turn are Bad_order" `Quick test_writer_order;
         Alcotest.test_case "no space at every window size" `Quick test_writer_no_space;
         Alcotest.test_case "read back by Request.parse" `Quick test_writer_roundtrip;
         Alcotest.test_case "chunks read back by Chunked" `Quick test_chunk_roundtrip ]);
      ("alloc", [ Alcotest.test_case "0 words per warm parse+write cycle" `Quick zero_alloc ]);
      ("h11", [ Alcotest.test_case "differential" `Quick test_differential ]);
      ("interop",
       [ Alcotest.test_case "httpz serve" `Quick test_httpz_serve;
         Alcotest.test_case "h2o" `Quick test_h2o ]) ]
