(* Httpz.Multipart: parts, pieces split anywhere, limits, malformed input,
   and 0 words for the parser's per-part work. *)
open Httpz
module M = Multipart
module C = Mp_collect
module S = Httpz_test_support

let b = "b0undary"

let field ?(boundary = b) ?filename ?ct name data =
  Printf.sprintf "--%s\r\nContent-Disposition: form-data; name=\"%s\"%s\r\n%s\r\n%s\r\n" boundary name
    (match filename with Some f -> Printf.sprintf "; filename=\"%s\"" f | None -> "")
    (match ct with Some c -> Printf.sprintf "Content-Type: %s\r\n" c | None -> "")
    data

let close ?(boundary = b) () = Printf.sprintf "--%s--\r\n" boundary

let body parts = String.concat "" parts ^ close ()

let show_part (p : C.part) =
  Printf.sprintf "{disp=%S name=%S filename=%s ct=%S data=%S}" p.disposition p.name
    (match p.filename with Some f -> Printf.sprintf "%S" f | None -> "-")
    p.content_type p.data

let show = function
  | Ok ps -> "Ok [" ^ String.concat "; " (List.map show_part ps) ^ "]"
  | Error e -> "Error " ^ M.error_to_string e

let result = Alcotest.testable (fun f r -> Format.pp_print_string f (show r)) ( = )

let part ?filename ?(ct = "") name data =
  { C.disposition = "form-data"; name; filename; content_type = ct; data }

let check_parse ?limits ?boundary ?cuts msg expected bodystr =
  Alcotest.check result msg expected (C.run ?limits ?boundary ?cuts bodystr)

let sample =
  body
    [ field "title" "hello world";
      field "file" ~filename:"a.txt" ~ct:"text/plain" "line1\r\nline2\r\n--b0undar\r\n-\r\r\n";
      field "empty" "";
      field "bin" ~filename:"x.bin" ~ct:"application/octet-stream" "\000\r\n\r\n--\r\n--b0undaryish\xff" ]

let sample_parts =
  [ part "title" "hello world";
    part "file" ~filename:"a.txt" ~ct:"text/plain" "line1\r\nline2\r\n--b0undar\r\n-\r\r\n";
    part "empty" "";
    part "bin" ~filename:"x.bin" ~ct:"application/octet-stream" "\000\r\n\r\n--\r\n--b0undaryish\xff" ]

let basic () = check_parse "four parts" (Ok sample_parts) sample

(* "--b0undaryish" inside a part is not preceded by CRLF... it is: that
   part's data above puts it after "\r\n". It must then be refused: see
   [delimiter_prefix_line]. So [sample] keeps it after a bare LF. *)
let () = ignore basic

let sample =
  body
    [ field "title" "hello world";
      field "file" ~filename:"a.txt" ~ct:"text/plain" "line1\r\nline2\r\n--b0undar\r\n-\r\r\n";
      field "empty" "";
      field "bin" ~filename:"x.bin" ~ct:"application/octet-stream" "\000\r\n\r\n--\n--b0undaryish\xff\r" ]

let sample_parts =
  [ part "title" "hello world";
    part "file" ~filename:"a.txt" ~ct:"text/plain" "line1\r\nline2\r\n--b0undar\r\n-\r\r\n";
    part "empty" "";
    part "bin" ~filename:"x.bin" ~ct:"application/octet-stream" "\000\r\n\r\n--\n--b0undaryish\xff\r" ]

let basic () = check_parse "four parts" (Ok sample_parts) sample

let every_split () =
  let n = String.length sample in
  for i = 0 to n do
    check_parse ~cuts:[ i ] (Printf.sprintf "split at %d" i) (Ok sample_parts) sample
  done

let every_two_splits () =
  let n = String.length sample in
  for i = 1 to n - 1 do
    for j = i + 1 to min (n - 1) (i + 90) do
      check_parse ~cuts:[ i; j ] (Printf.sprintf "split at %d, %d" i j) (Ok sample_parts) sample
    done
  done

let byte_by_byte () =
  check_parse ~cuts:(List.init (String.length sample) (fun i -> i)) "1-byte pieces" (Ok sample_parts) sample

let preamble_epilogue () =
  check_parse "preamble and epilogue ignored" (Ok [ part "a" "1" ])
    ("this is a preamble\r\n--b0undar\r\n" ^ field "a" "1" ^ close () ^ "epilogue\r\n--b0undary\r\nx");
  check_parse "delimiter after CRLF in preamble" (Ok [ part "a" "1" ]) ("\r\n" ^ field "a" "1" ^ close ());
  check_parse "no parts" (Ok []) (close ());
  check_parse "closing delimiter without CRLF" (Ok [ part "a" "1" ]) (field "a" "1" ^ "--b0undary--")

let padding () =
  check_parse "transport padding after delimiters" (Ok [ part "a" "1"; part "b" "2" ])
    ("--b0undary \t\r\nContent-Disposition: form-data; name=a\r\n\r\n1\r\n--b0undary\t\r\n"
   ^ "content-disposition:form-data;name=\"b\"  \r\n\r\n2\r\n--b0undary--  \r\n")

let params () =
  check_parse "parameters: case, spacing, token values, filename*, other fields"
    (Ok
       [ { C.disposition = "Form-Data"; name = "f"; filename = Some "a b\\\".txt"; content_type = "image/png";
           data = "x" } ])
    ("--b0undary\r\nX-Other: 1\r\nCONTENT-DISPOSITION: Form-Data ; filename*=UTF-8''z ; NAME = f ;"
   ^ " FileName=\"a b\\\".txt\"\r\nContent-type:   image/png  \r\n\r\nx\r\n" ^ close ());
  check_parse "no content-disposition" (Ok [ { C.disposition = ""; name = ""; filename = None; content_type = ""; data = "x" } ])
    ("--b0undary\r\n\r\nx\r\n" ^ close ());
  check_parse "empty filename" (Ok [ part "f" ~filename:"" "" ]) (field "f" ~filename:"" "" ^ close ())

let bare_lf () =
  (* CRLF required: "\n--b0undary" is data, so this body never closes. *)
  check_parse "bare LF before delimiter is data" (Error M.Truncated)
    "--b0undary\r\nContent-Disposition: form-data; name=a\r\n\r\n1\n--b0undary--\n";
  check_parse "bare LF after a delimiter" (Error M.Malformed_delimiter)
    "--b0undary\nContent-Disposition: form-data; name=a\n\n1\r\n--b0undary--\r\n";
  check_parse "bare LF ending a header line" (Error M.Malformed_header)
    "--b0undary\r\nContent-Disposition: form-data; name=a\n\r\n1\r\n--b0undary--\r\n"

let malformed () =
  check_parse "no delimiter" (Error M.No_boundary) "just some bytes\r\n";
  check_parse "empty body" (Error M.No_boundary) "";
  check_parse "other boundary" (Error M.No_boundary) (field ~boundary:"other" "a" "1" ^ close ~boundary:"other" ());
  check_parse "truncated in data" (Error M.Truncated) (field "a" "1");
  check_parse "truncated in header" (Error M.Truncated) "--b0undary\r\nContent-Disp";
  check_parse "truncated after delimiter" (Error M.Truncated) "--b0undary";
  check_parse "junk after delimiter" (Error M.Malformed_delimiter) ("--b0undaryX\r\n" ^ close ());
  check_parse "delimiter-prefixed line in data" (Error M.Malformed_delimiter)
    (field "a" "x\r\n--b0undaryish" ^ close ());
  check_parse "single dash" (Error M.Malformed_delimiter) (field "a" "1" ^ "--b0undary-x\r\n");
  check_parse "no colon" (Error M.Malformed_header) ("--b0undary\r\nContent-Disposition form-data\r\n\r\n1\r\n" ^ close ());
  check_parse "obs-fold" (Error M.Malformed_header)
    ("--b0undary\r\nContent-Disposition: form-data;\r\n name=a\r\n\r\n1\r\n" ^ close ());
  check_parse "control byte in value" (Error M.Malformed_header)
    ("--b0undary\r\nContent-Type: a\001b\r\n\r\n1\r\n" ^ close ());
  check_parse "unterminated quote" (Error M.Malformed_header)
    ("--b0undary\r\nContent-Disposition: form-data; name=\"a\r\n\r\n1\r\n" ^ close ());
  check_parse "parameter without =" (Error M.Malformed_header)
    ("--b0undary\r\nContent-Disposition: form-data; name\r\n\r\n1\r\n" ^ close ());
  check_parse "space before colon" (Error M.Malformed_header)
    ("--b0undary\r\nContent-Type : a\r\n\r\n1\r\n" ^ close ());
  List.iter
    (fun bd ->
      let t = M.create () in
      Alcotest.(check bool) (Printf.sprintf "boundary %S refused" bd) false (M.reset_string t bd);
      Alcotest.(check bool) "then Error" true (M.next t = M.Error))
    [ ""; String.make 71 'a'; "ends in space "; "semi;colon"; "quo\"te"; "cr\rlf" ];
  Alcotest.(check bool) "70 bchars accepted" true (M.reset_string (M.create ()) (String.make 69 'a' ^ "'()+_,-./:=? z"  |> fun s -> String.sub s 0 70))

let limits () =
  let l = M.default_limits in
  let three = body [ field "a" "1"; field "b" "2"; field "c" "3" ] in
  check_parse ~limits:{ l with max_parts = 3 } "3 parts allowed" (Ok [ part "a" "1"; part "b" "2"; part "c" "3" ]) three;
  check_parse ~limits:{ l with max_parts = 2 } "3 parts over 2" (Error M.Too_many_parts) three;
  let hdr = String.length "Content-Disposition: form-data; name=\"a\"\r\n\r\n" in
  check_parse ~limits:{ l with max_header_bytes = hdr } "header at the limit" (Ok [ part "a" "1" ]) (body [ field "a" "1" ]);
  check_parse ~limits:{ l with max_header_bytes = hdr - 1 } "header over the limit" (Error M.Header_too_large)
    (body [ field "a" "1" ]);
  check_parse ~cuts:[ 20 ] ~limits:{ l with max_header_bytes = hdr - 1 } "header over the limit, split"
    (Error M.Header_too_large) (body [ field "a" "1" ]);
  let n = String.length three in
  check_parse ~limits:{ l with max_total = n } "total at the limit" (Ok [ part "a" "1"; part "b" "2"; part "c" "3" ]) three;
  check_parse ~limits:{ l with max_total = n - 1 } "total over the limit" (Error M.Too_large) three;
  check_parse ~cuts:[ 10; 30 ] ~limits:{ l with max_total = n - 1 } "total over, pieces" (Error M.Too_large) three

(* Random bodies, random cuts: the same parts as unsplit. *)
let random_splits () =
  Random.init 38;
  for _ = 1 to 300 do
    let nparts = Random.int 4 in
    let alphabet = "\r\n-b0undary\000\xff" in
    let data () = String.init (Random.int 40) (fun _ -> alphabet.[Random.int (String.length alphabet)]) in
    let datas = List.init nparts (fun _ -> data ()) in
    let s = body (List.mapi (fun i d -> field (string_of_int i) d) datas) in
    let whole = C.run s in
    let n = String.length s in
    let cuts = List.sort_uniq compare (List.init (Random.int 6) (fun _ -> Random.int (n + 1))) in
    Alcotest.check result "random cuts" whole (C.run ~cuts s)
  done

(* 0 words: a body of 8 parts (fields and files, data holding delimiter
   prefixes) fed in 3 pieces, so that delimiters straddle pieces and bytes
   are held back. *)
let zero_words () =
  let s =
    body
      (List.init 8 (fun i ->
           if i mod 2 = 0 then field (Printf.sprintf "f%d" i) "value\r\n--b0und"
           else field (Printf.sprintf "file%d" i) ~filename:"a.bin" ~ct:"application/octet-stream" (String.make 300 'x')))
  in
  let buf = Bigstring.of_string s in
  let n = String.length s in
  let t = M.create () in
  let bd = Bigstring.of_string b in
  let cut1 = 97 and cut2 = n / 2 + 3 in
  let parts = ref 0 and bytes = ref 0 in
  let rec pump () =
    match M.next t with
    | M.Part -> incr parts; ignore (Span.len (M.name t) + Span.len (M.filename t)); pump ()
    | M.Data -> bytes := !bytes + Span.len (M.data t); pump ()
    | M.Part_end -> pump ()
    | M.End | M.Error | M.Await -> ()
  in
  let once () =
    ignore (M.reset t bd (Span.make ~off:0 ~len:(String.length b)) : bool);
    M.feed t buf ~off:0 ~len:cut1;
    pump ();
    M.feed t buf ~off:cut1 ~len:(cut2 - cut1);
    pump ();
    M.feed t buf ~off:cut2 ~len:(n - cut2);
    pump ();
    M.finish t;
    pump ()
  in
  once ();
  Alcotest.(check int) "8 parts" 8 !parts;
  Alcotest.(check bool) "ends" true (M.next t = M.End);
  let w = S.minor_words_per_op ~iters:2000 once in
  Alcotest.(check (float 0.)) "minor words per 8-part body" 0. w

let find_byte () =
  let s = String.init 300 (fun i -> Char.chr (i land 0x7f)) in
  let buf = Bigstring.of_string s in
  for pos = 0 to 40 do
    for stop = pos to 300 do
      List.iter
        (fun c ->
          let exp = match String.index_from_opt s pos (Char.chr c) with Some i when i < stop -> i | _ -> stop in
          if Simd.find_byte buf pos stop c <> exp then
            Alcotest.failf "find_byte %d %d %d: %d, expected %d" pos stop c (Simd.find_byte buf pos stop c) exp)
        [ 0; 13; 10; 45; 127; 200 ]
    done
  done

let () =
  Alcotest.run "multipart"
    [ ( "parse",
        [ Alcotest.test_case "basic" `Quick basic;
          Alcotest.test_case "split at every byte" `Quick every_split;
          Alcotest.test_case "split at every pair of bytes" `Quick every_two_splits;
          Alcotest.test_case "byte by byte" `Quick byte_by_byte;
          Alcotest.test_case "random splits" `Quick random_splits;
          Alcotest.test_case "preamble and epilogue" `Quick preamble_epilogue;
          Alcotest.test_case "transport padding" `Quick padding;
          Alcotest.test_case "content-disposition parameters" `Quick params;
          Alcotest.test_case "bare LF" `Quick bare_lf;
          Alcotest.test_case "malformed" `Quick malformed;
          Alcotest.test_case "limits" `Quick limits ] );
      ("simd", [ Alcotest.test_case "find_byte" `Quick find_byte ]);
      ("alloc", [ Alcotest.test_case "0 words per body" `Quick zero_words ]) ]
