(* Runs the conformance corpus in test/lib/http/vectors/ (see README.md there): every
   request vector against Httpz.Request, every chunked body against
   Httpz.Chunked, each one whole, byte by byte, inside garbage and followed by
   a pipelined message. One alcotest case per vector file. *)

open Httpz
module R = Request
module T = Httpz_test_support

let sprintf = Printf.sprintf

(* {1 Finding and reading the corpus} *)

(* An .expect file: [key: value] lines; [#] starts a comment line. *)
let read_expect path =
  T.read_file path |> String.split_on_char '\n'
  |> List.filter_map (fun line ->
         let line = String.trim line in
         if line = "" || line.[0] = '#' then None
         else
           match String.index_opt line ':' with
           | None -> failwith (sprintf "%s: line without colon: %S" path line)
           | Some i ->
               Some
                 ( String.sub line 0 i,
                   String.trim (String.sub line (i + 1) (String.length line - i - 1)) ))

let files dir ext =
  Sys.readdir dir |> Array.to_list
  |> List.filter (fun f -> Filename.check_suffix f ext)
  |> List.sort compare
  |> List.map (fun f -> Filename.chop_suffix f ext)

let hex_decode s =
  if String.length s mod 2 <> 0 then failwith ("odd hex length: " ^ s);
  String.init (String.length s / 2) (fun i -> Char.chr (int_of_string ("0x" ^ String.sub s (2 * i) 2)))

let get exp k = List.assoc_opt k exp

let get_int exp k = Option.map int_of_string (get exp k)

let get_bool exp k =
  Option.map (function "true" -> true | "false" -> false | v -> failwith ("not a bool: " ^ v)) (get exp k)

let fail fmt = Printf.ksprintf (fun s -> Alcotest.fail s) fmt

(* {1 Request vectors} *)

let follower = "GET /next HTTP/1.1\r\nHost: x\r\n\r\n"

let status_name t = function
  | R.Complete -> "complete"
  | R.Partial -> "partial"
  | R.Error -> "error " ^ Parse_error.to_string (R.error t)

let expected_status exp =
  match get exp "status" with
  | Some "complete" -> "complete"
  | Some "partial" -> "partial"
  | Some "error" -> (
      match get exp "error" with
      | Some e -> "error " ^ e
      | None -> failwith "status: error without an error: line")
  | s -> failwith ("bad status: " ^ Option.value s ~default:"(none)")

(* Decodes a chunked body starting at [off]; its framed length, or fails. *)
let chunked_length buf ~off ~len =
  let c = Chunked.create () in
  let pos = ref off and result = ref (-1) in
  while !result < 0 do
    match Chunked.decode c buf ~off:!pos ~len:(off + len - !pos) with
    | Chunked.Data -> pos := !pos + Chunked.consumed c
    | Chunked.Done ->
        pos := !pos + Chunked.consumed c;
        result := !pos - off
    | Chunked.Need_more -> fail "chunked body incomplete"
    | Chunked.Error -> fail "chunked body: %s" (Chunked.error_to_string (Chunked.error c))
  done;
  !result

(* Checks the facts of a Complete parse; returns the framed body length. *)
let check_facts where exp t buf ~off ~len =
  let str k got =
    match get exp k with
    | Some v -> Alcotest.(check string) (sprintf "%s: %s" where k) v got
    | None -> ()
  in
  let int k got =
    match get_int exp k with Some v -> Alcotest.(check int) (sprintf "%s: %s" where k) v got | None -> ()
  in
  let bool k got =
    match get_bool exp k with Some v -> Alcotest.(check bool) (sprintf "%s: %s" where k) v got | None -> ()
  in
  let hl = R.head_length t in
  if hl <= 0 || hl > len then fail "%s: head_length %d outside 1..%d" where hl len;
  str "method" (Span.to_string buf (R.meth_span t));
  str "target" (Span.to_string buf (R.target t));
  str "version" (Version.to_string (R.version t));
  int "header_count" (R.header_count t);
  int "content_length" (R.content_length t);
  bool "chunked" (R.is_chunked t);
  bool "keep_alive" (R.keep_alive t);
  let body =
    if R.is_chunked t then chunked_length buf ~off:(off + hl) ~len:(len - hl)
    else max 0 (R.content_length t)
  in
  int "body_length" body;
  if hl + body > len then fail "%s: head %d + body %d past the vector (%d)" where hl body len;
  body

let parse_whole where exp input ~off =
  let buf = T.bigstring_at ~off input in
  let t = R.create () in
  let st = R.parse t buf ~off ~len:(String.length input) in
  Alcotest.(check string) (where ^ ": status") (expected_status exp) (status_name t st);
  (match get_int exp "http_status" with
  | Some s when st = R.Error -> Alcotest.(check int) (where ^ ": http_status") s (Parse_error.status (R.error t))
  | Some _ -> fail "%s: http_status given for a vector that is not an error" where
  | None -> ());
  if st = R.Complete then ignore (check_facts where exp t buf ~off ~len:(String.length input) : int);
  (t, st)

(* Same state, the input growing one byte per call. *)
let byte_by_byte exp input =
  let off = 5 in
  let n = String.length input in
  let buf = T.bigstring_at ~off input in
  let t = R.create () in
  let want = expected_status exp in
  let rec go len =
    let st = R.parse t buf ~off ~len in
    match st with
    | R.Partial when len < n -> go (len + 1)
    | R.Partial -> st
    | R.Complete ->
        if len <> R.head_length t then
          fail "byte by byte: Complete at %d bytes but head_length %d" len (R.head_length t);
        ignore (check_facts "byte by byte" exp t buf ~off ~len:n : int);
        st
    | R.Error ->
        Alcotest.(check string) "byte by byte: error" want (status_name t st);
        st
  in
  match go 1 with
  | R.Partial when want <> "partial" ->
      (* request.mli: a resumed parse may report a late invalid byte only once
         the head ends; end it and the same error must come. *)
      let closed = input ^ "\r\n\r\n" in
      let buf2 = T.bigstring_at ~off closed in
      let t2 = R.create () in
      let rec feed len =
        if len > String.length closed then fail "byte by byte: still Partial after closing"
        else
          match R.parse t2 buf2 ~off ~len with
          | R.Partial -> feed (len + 1)
          | st -> Alcotest.(check string) "byte by byte, closed" want (status_name t2 st)
      in
      feed 1
  | _ -> ()

let pipelined exp input =
  let whole = input ^ follower in
  let off = 11 in
  let buf = T.bigstring_at ~off whole in
  let t = R.create () in
  let st = R.parse t buf ~off ~len:(String.length whole) in
  match expected_status exp with
  | "partial" -> ()  (* the follower would complete it into another request *)
  | "complete" ->
      Alcotest.(check string) "pipelined: first" "complete" (status_name t st);
      let body = check_facts "pipelined" exp t buf ~off ~len:(String.length whole) in
      let next = off + R.head_length t + body in
      Alcotest.(check int) "pipelined: follower starts where the vector ends" (off + String.length input) next;
      let st2 = R.parse t buf ~off:next ~len:(String.length follower) in
      Alcotest.(check string) "pipelined: follower" "complete" (status_name t st2);
      Alcotest.(check string) "pipelined: follower target" "/next" (Span.to_string buf (R.target t));
      Alcotest.(check int) "pipelined: follower length" (String.length follower) (R.head_length t)
  | want -> Alcotest.(check string) "pipelined: error" want (status_name t st)

let request_case dir name =
  Alcotest.test_case name `Quick (fun () ->
      let input = T.read_file (Filename.concat dir (name ^ ".http")) in
      let exp = read_expect (Filename.concat dir (name ^ ".expect")) in
      let t0, _ = parse_whole "at 0" exp input ~off:0 in
      ignore t0;
      List.iter (fun off -> ignore (parse_whole (sprintf "at %d in garbage" off) exp input ~off)) [ 1; 7; 64 ];
      byte_by_byte exp input;
      pipelined exp input)

(* {1 Chunked vectors} *)

let chunk_status c = function
  | Chunked.Data -> "data"
  | Chunked.Need_more -> "need_more"
  | Chunked.Done -> "done"
  | Chunked.Error -> "error " ^ Chunked.error_to_string (Chunked.error c)

(* Feeds [buf.{off .. off+len-1}] in slices of at most [step] bytes; returns
   the final status name, the decoded data and the bytes consumed. *)
let decode_all buf ~off ~len ~step =
  let c = Chunked.create () in
  let data = Buffer.create 64 in
  let pos = ref off and stop = ref None and avail = ref (min step len) in
  while !stop = None do
    let l = off + !avail - !pos in
    match Chunked.decode c buf ~off:!pos ~len:l with
    | Chunked.Data ->
        let k = Chunked.consumed c in
        if Chunked.data_off c < !pos || Chunked.data_off c + Chunked.data_len c <> !pos + k then
          fail "Data span outside the bytes consumed";
        Buffer.add_string data (Bigstring.sub_string buf ~off:(Chunked.data_off c) ~len:(Chunked.data_len c));
        pos := !pos + k
    | Chunked.Need_more ->
        pos := !pos + Chunked.consumed c;
        if !avail >= len then stop := Some (chunk_status c Chunked.Need_more)
        else avail := min len (!avail + step)
    | (Chunked.Done | Chunked.Error) as st ->
        pos := !pos + Chunked.consumed c;
        stop := Some (chunk_status c st)
  done;
  (Option.get !stop, Buffer.contents data, !pos - off, c)

let chunked_case dir name =
  Alcotest.test_case name `Quick (fun () ->
      let input = T.read_file (Filename.concat dir (name ^ ".body")) in
      let exp = read_expect (Filename.concat dir (name ^ ".expect")) in
      let want =
        match get exp "status" with
        | Some "error" -> "error " ^ Option.get (get exp "error")
        | Some s -> s
        | None -> failwith "no status"
      in
      let n = String.length input in
      let run where s ~off ~step ~whole_len =
        let buf = T.bigstring_at ~off s in
        let st, data, used, c = decode_all buf ~off ~len:whole_len ~step in
        Alcotest.(check string) (where ^ ": status") want st;
        if want = "done" then begin
          Alcotest.(check int) (where ^ ": consumed the whole body, no more") n used;
          (match get exp "data_hex" with
          | Some h -> Alcotest.(check string) (where ^ ": data") (hex_decode h) data
          | None -> ());
          (match get_int exp "body_bytes" with
          | Some b -> Alcotest.(check int) (where ^ ": body_bytes") b (Chunked.body_bytes c)
          | None -> ());
          match get_int exp "trailer_count" with
          | Some k -> Alcotest.(check int) (where ^ ": trailer_count") k (Chunked.trailer_count c)
          | None -> ()
        end;
        if want = "need_more" then Alcotest.(check int) (where ^ ": consumed all") n used;
        match get_int exp "http_status" with
        | Some s -> Alcotest.(check int) (where ^ ": http_status") s (Chunked.error_status (Chunked.error c))
        | None -> ()
      in
      run "whole" input ~off:0 ~step:max_int ~whole_len:n;
      run "in garbage" input ~off:13 ~step:max_int ~whole_len:n;
      run "byte by byte" input ~off:3 ~step:1 ~whole_len:n;
      run "3 bytes at a time" input ~off:3 ~step:3 ~whole_len:n;
      if want <> "need_more" then begin
        let s = input ^ follower in
        run "pipelined" s ~off:7 ~step:max_int ~whole_len:(String.length s);
        run "pipelined byte by byte" s ~off:7 ~step:1 ~whole_len:(String.length s)
      end)

(* {1 The corpus itself} *)

let request_keys =
  [ "status"; "error"; "http_status"; "method"; "target"; "version"; "header_count"; "content_length";
    "chunked"; "keep_alive"; "body_length"; "serve_status"; "serve_close" ]

let chunked_keys = [ "status"; "error"; "http_status"; "data_hex"; "body_bytes"; "trailer_count" ]

(* Every constructor, so a new one fails to compile here until it has a vector. *)
let chunked_errors =
  let name (e : Chunked.error) =
    match e with
    | Bad_size | Size_overflow | Bad_extension | Line_too_long | Bad_crlf | Bad_trailer
    | Forbidden_trailer | Trailer_too_large | Body_too_large ->
        Chunked.error_to_string e
  in
  List.map name
    [ Bad_size; Size_overflow; Bad_extension; Line_too_long; Bad_crlf; Bad_trailer; Forbidden_trailer;
      Trailer_too_large; Body_too_large ]

let corpus_cases rdir reqs cdir chunks =
  let check_files dir names keys =
    List.iter
      (fun n ->
        let path = Filename.concat dir (n ^ ".expect") in
        let text = T.read_file path in
        let cites =
          List.exists
            (fun l -> String.length l > 6 && String.sub l 0 6 = "# RFC ")
            (String.split_on_char '\n' text)
        in
        if not cites then fail "%s: no '# RFC ...' line" path;
        List.iter
          (fun (k, _) -> if not (List.mem k keys) then fail "%s: unknown key %S" path k)
          (read_expect path))
      names
  in
  let errors_of dir names =
    List.filter_map (fun n -> get (read_expect (Filename.concat dir (n ^ ".expect"))) "error") names
  in
  let with_status dir names st =
    List.length
      (List.filter (fun n -> get (read_expect (Filename.concat dir (n ^ ".expect"))) "status" = Some st) names)
  in
  [ Alcotest.test_case "every .expect cites the RFC and uses known keys" `Quick (fun () ->
        check_files rdir reqs request_keys;
        check_files cdir chunks chunked_keys);
    Alcotest.test_case "every request error has a vector" `Quick (fun () ->
        let have = errors_of rdir reqs in
        List.iter
          (fun e ->
            let n = Parse_error.to_string e in
            if not (List.mem n have) then fail "no request vector for %s" n)
          Parse_error.all;
        List.iter
          (fun n ->
            if not (List.exists (fun e -> Parse_error.to_string e = n) Parse_error.all) then
              fail "unknown request error name %S" n)
          have);
    Alcotest.test_case "every chunked error has a vector" `Quick (fun () ->
        let have = errors_of cdir chunks in
        List.iter (fun n -> if not (List.mem n have) then fail "no chunked vector for %s" n) chunked_errors;
        List.iter (fun n -> if not (List.mem n chunked_errors) then fail "unknown chunked error %S" n) have);
    Alcotest.test_case "accept, partial and reject all present" `Quick (fun () ->
        List.iter
          (fun (dir, names, st, min) ->
            let k = with_status dir names st in
            if k < min then fail "%d %s vectors in %s, want at least %d" k st dir min)
          [ (rdir, reqs, "complete", 20); (rdir, reqs, "partial", 5); (rdir, reqs, "error", 24);
            (cdir, chunks, "done", 10); (cdir, chunks, "need_more", 3); (cdir, chunks, "error", 9) ]) ]

let () =
  let root = T.vectors_dir () in
  let rdir = Filename.concat root "request" and cdir = Filename.concat root "chunked" in
  let reqs = files rdir ".http" and chunks = files cdir ".body" in
  List.iter
    (fun (dir, names, ext) ->
      List.iter
        (fun n ->
          if not (Sys.file_exists (Filename.concat dir (n ^ ".expect"))) then
            failwith (sprintf "%s%s has no .expect" n ext))
        names)
    [ (rdir, reqs, ".http"); (cdir, chunks, ".body") ];
  Alcotest.run "vectors"
    [ ("corpus", corpus_cases rdir reqs cdir chunks);
      ("request", List.map (request_case rdir) reqs);
      ("chunked", List.map (chunked_case cdir) chunks) ]
