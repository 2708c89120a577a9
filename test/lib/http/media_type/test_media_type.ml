(* Media types with parameters (RFC 9110 §8.3.1) and Accept negotiation
   (§12.5.1): vectors, the RFC's examples, robustness, zero allocation. *)

open Httpz
module S = Httpz_test_support

(* Every value is read at an offset inside garbage, so a function that
   strayed outside its span would see it. *)
let at s = (S.bigstring_at ~garbage:';' ~off:5 s, Span.make ~off:5 ~len:(String.length s))

let matches s p = let b, v = at s in Media_type.matches b v p
let param s n = let b, v = at s in if Media_type.param_present b v n then Some (Span.to_string b (Media_type.param b v n)) else None
let accepts a t = let b, v = at a in Media_type.accepts b v t
let best a ts = let b, v = at a in Media_type.best b v (Array.of_list ts)

let check_matches () =
  let yes s p = Alcotest.(check bool) (s ^ " ~ " ^ p) true (matches s p)
  and no s p = Alcotest.(check bool) (s ^ " !~ " ^ p) false (matches s p) in
  yes "application/json" "application/json";
  (* The issue's case: parameters do not stop a match. *)
  yes "application/json; charset=utf-8" "application/json";
  yes "application/json;charset=utf-8" "application/json";
  yes "Application/JSON ; charset=UTF-8" "application/json";
  yes "  text/html  " "text/html";
  (* RFC 9110 §8.3.1: these are equivalent. *)
  List.iter (fun s -> yes s "text/html")
    [ "text/html;charset=utf-8"; "Text/HTML;Charset=\"utf-8\""; "text/html; charset=\"utf-8\""; "text/html;charset=UTF-8" ];
  no "application/jsonx" "application/json";
  no "application/json-seq" "application/json";
  no "application/jso" "application/json";
  no "application" "application";
  no "" "application/json";
  no "application/json garbage" "application/json";
  no "application /json" "application/json";
  no "application/" "application/";
  no "/json" "/json";
  no "text/html, application/json" "text/html";
  no "*/*" "application/json";
  let b, v = at "text/plain; x=1" in
  Alcotest.(check bool) "is_type" true (Media_type.is_type b v "TEXT");
  Alcotest.(check bool) "is_type other" false (Media_type.is_type b v "tex");
  let json s = let b, v = at s in Media_type.is_json b v in
  List.iter (fun s -> Alcotest.(check bool) s true (json s))
    [ "application/json"; "application/json; charset=utf-8"; "text/json"; "application/problem+json";
      "application/vnd.api+JSON;ext=x" ];
  List.iter (fun s -> Alcotest.(check bool) s false (json s))
    [ "application/jsonp"; "text/plain"; "application/+json"; "application/json+xml"; "json"; "" ]

let check_params () =
  let p s n want = Alcotest.(check (option string)) (s ^ " [" ^ n ^ "]") want (param s n) in
  p "text/html;charset=utf-8" "charset" (Some "utf-8");
  p "text/html; Charset=\"utf-8\"" "charset" (Some "utf-8");
  p "text/html; charset=utf-8" "CHARSET" (Some "utf-8");
  p "multipart/form-data; boundary=----WebKitFormBoundary7MA4YWxkTrZu0gW" "boundary"
    (Some "----WebKitFormBoundary7MA4YWxkTrZu0gW");
  p "multipart/form-data; boundary=\"simple boundary\"" "boundary" (Some "simple boundary");
  (* Escapes are left as they are. *)
  p "a/b; x=\"q\\\"uote\"; y=2" "x" (Some "q\\\"uote");
  p "a/b; x=\"q\\\"uote\"; y=2" "y" (Some "2");
  (* The first of two wins; empty parameters are allowed. *)
  p "a/b; x=1; x=2" "x" (Some "1");
  p "a/b;; ;x=1" "x" (Some "1");
  p "a/b; x=\"\"" "x" (Some "");
  p "a/b; x=1" "y" None;
  p "a/b" "x" None;
  p "a/b;" "x" None;
  (* Malformed: reading stops there, parameters before still count. *)
  p "a/b; x=1; y; z=3" "x" (Some "1");
  p "a/b; x=1; y; z=3" "z" None;
  p "a/b; x =1" "x" None;
  p "a/b; x= 1" "x" None;
  p "a/b; x=" "x" None;
  p "a/b; x=\"open" "x" None;
  p "a/b; x=\"ctl\001\"" "x" None;
  p "a/b x=1" "x" None;
  p "a; x=1" "x" None;
  p "a/b; x=1 2" "x" (Some "1");
  let b, v = at "a/b" in
  Alcotest.(check int) "absent is Span.empty" (Span.empty :> int) (Media_type.param b v "x" :> int)

(* RFC 9110 §12.5.1's example with the RFC 7231 media types, whose table
   is consistent (RFC 9110's rewrite gives text/html;level=3 0.7, an
   erratum: nothing in its Accept value says 0.7 for text/html). *)
let rfc_example () =
  let a = "text/*;q=0.3, text/html;q=0.7, text/html;level=1,\r\n text/html;level=2;q=0.4, */*;q=0.5" in
  let a = String.concat "" (String.split_on_char '\r' a) |> String.split_on_char '\n' |> String.concat "" in
  List.iter (fun (t, w) -> Alcotest.(check int) t w (accepts a t))
    [ ("text/html;level=1", 1000); ("text/html", 700); ("text/plain", 300); ("image/jpeg", 500);
      ("text/html;level=2", 400); ("text/html;level=3", 700) ];
  let a = "text/*;q=0.3, text/plain;q=0.7, text/plain;format=flowed, text/plain;format=fixed;q=0.4, */*;q=0.5" in
  List.iter (fun (t, w) -> Alcotest.(check int) t w (accepts a t))
    [ ("text/plain;format=flowed", 1000); ("text/plain", 700); ("text/html", 300); ("image/jpeg", 500);
      ("text/plain;format=fixed", 400) ];
  (* Precedence without weights: the most specific range decides. *)
  let a = "text/*, text/plain, text/plain;format=flowed, */*" in
  List.iter (fun t -> Alcotest.(check int) t 1000 (accepts a t))
    [ "text/plain;format=flowed"; "text/plain"; "text/html"; "image/png" ]

let check_accepts () =
  let w a t want = Alcotest.(check int) (a ^ " / " ^ t) want (accepts a t) in
  w "application/json" "application/json" 1000;
  w "Application/JSON" "application/json" 1000;
  w "application/json" "text/html" 0;
  w "*/*" "image/png" 1000;
  w "image/*" "image/png" 1000;
  w "image/*" "text/png" 0;
  w "text/html;q=0.8" "text/html" 800;
  w "text/html;Q=0.25" "text/html" 250;
  w "text/html;q=1.000" "text/html" 1000;
  w "text/html;q=0." "text/html" 0;
  w "text/html ; q=0.5 ; ext=1" "text/html" 500;
  (* q=0 refuses even when a less specific range accepts. *)
  w "*/*, application/xml;q=0" "application/xml" 0;
  w "*/*, application/xml;q=0" "application/json" 1000;
  w "text/*;q=0, */*" "text/html" 0;
  w "text/*;q=0, */*" "image/png" 1000;
  (* Parameters after q are extensions, not part of the range. *)
  w "text/html;q=0.5;level=1" "text/html" 500;
  (* Range parameters: the offered type must carry them. *)
  w "text/html;level=1" "text/html" 0;
  w "text/html;level=1" "text/html;level=1" 1000;
  w "text/html;level=1" "text/html; LEVEL=\"1\"" 1000;
  w "text/html;charset=UTF-8" "text/html;charset=utf-8" 1000;
  (* Malformed elements are skipped, the rest counts. *)
  w "text/html;q=2, application/json" "text/html" 0;
  w "text/html;q=2, application/json" "application/json" 1000;
  w "text/html;q=0.5555, */*;q=0.1" "text/html" 100;
  w "text/html;q=1.5, */*;q=0.1" "text/html" 100;
  w "text/html;q=\"0.5\", */*;q=0.1" "text/html" 100;
  w "*/html, */*;q=0.2" "text/html" 200;
  w "garbage, text/html;q=0.3" "text/html" 300;
  w "text/html;x=\"a,b\";q=0.3, text/html;q=0.9" "text/html;x=\"a,b\"" 300;
  w "a/b;x=\"unterminated, text/html" "text/html" 0;
  w ",,, text/html ,," "text/html" 1000;
  w "" "text/html" 0;
  w "text/html" "texthtml" 0;
  w "text/html" "text/" 0;
  (* Equally specific ranges: the first wins. *)
  w "text/html;q=0.2, text/html;q=0.9" "text/html" 200

let check_best () =
  let b a ts want = Alcotest.(check int) a want (best a ts) in
  b "application/json" [ "text/html"; "application/json" ] 1;
  b "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8" [ "application/json"; "text/html" ] 1;
  b "*/*" [ "application/json"; "text/html" ] 0;
  b "text/html;q=0.5, application/json;q=0.5" [ "application/json"; "text/html" ] 0;
  b "image/png" [ "application/json"; "text/html" ] (-1);
  b "*/*;q=0" [ "application/json" ] (-1);
  b "text/html" [] (-1)

let gen = QCheck2.Gen.(string_size ~gen:(oneofl [ 'a'; '/'; ';'; '='; '"'; '\\'; ','; ' '; 'q'; '*'; '0'; '.'; '1'; '\t'; '\001' ]) (int_range 0 30))

let robust =
  QCheck2.Test.make ~name:"never raises, never reads outside its span" ~count:5000 gen (fun s ->
      let n = String.length s in
      let r g =
        let b = S.bigstring_at ~garbage:g ~off:7 s and v = Span.make ~off:7 ~len:n in
        ( Media_type.matches b v "a/a", Media_type.is_json b v,
          (if Media_type.param_present b v "q" then Some (Span.to_string b (Media_type.param b v "q")) else None),
          Media_type.accepts b v "a/a", Media_type.accepts b v "a/a;q=1", Media_type.best b v [| "x/y"; "a/a" |] )
      in
      r ';' = r '"' && r ',' = r 'a')

(* q-values: accepts is the written weight for every well-formed one. *)
let qvalues () =
  for k = 0 to 1000 do
    let s = Printf.sprintf "%d.%03d" (k / 1000) (k mod 1000) in
    Alcotest.(check int) s k (accepts ("x/y;q=" ^ s) "x/y")
  done

let parse_req head =
  let b = Bigstring.of_string head in
  let r = Request.create () in
  (match Request.parse r b ~off:0 ~len:(String.length head) with
   | Request.Complete -> ()
   | _ -> Alcotest.fail ("does not parse: " ^ head));
  (b, r)

let in_request () =
  let b, r = parse_req "POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/problem+json; charset=utf-8\r\nAccept: text/*;q=0.5\r\nAccept: text/html, image/png;q=0\r\n\r\n" in
  Alcotest.(check bool) "request_is_json" true (Media_type.request_is_json b r);
  Alcotest.(check bool) "request_is" true (Media_type.request_is b r "application/problem+json");
  Alcotest.(check bool) "request_is other" false (Media_type.request_is b r "application/json");
  Alcotest.(check string) "content_type" "application/problem+json; charset=utf-8"
    (Span.to_string b (Media_type.content_type b r));
  (* The two Accept lines are one list: text/html (second line) beats text/* (first). *)
  Alcotest.(check int) "text/html" 1000 (Media_type.accepts_request b r "text/html");
  Alcotest.(check int) "text/plain" 500 (Media_type.accepts_request b r "text/plain");
  Alcotest.(check int) "image/png refused" 0 (Media_type.accepts_request b r "image/png");
  Alcotest.(check int) "best" 2 (Media_type.best_request b r [| "image/png"; "text/plain"; "text/html" |]);
  Alcotest.(check int) "best, text/plain" 0 (Media_type.best_request b r [| "text/plain"; "image/png" |]);
  let b, r = parse_req "GET / HTTP/1.1\r\nHost: x\r\n\r\n" in
  Alcotest.(check int) "no Accept: all acceptable" 1000 (Media_type.accepts_request b r "image/png");
  Alcotest.(check int) "no Accept: first offered" 0 (Media_type.best_request b r [| "application/json"; "text/html" |]);
  Alcotest.(check int) "no Accept, nothing offered" (-1) (Media_type.best_request b r [||]);
  Alcotest.(check bool) "no Content-Type" false (Media_type.request_is_json b r);
  Alcotest.(check int) "no Content-Type: empty" 0 (Span.len (Media_type.content_type b r))

let zero_alloc =
  let rb, rq = parse_req "POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAccept: text/*;q=0.5\r\nAccept: text/html\r\n\r\n" in
  let ct, ctv = at "Application/JSON ; charset=\"utf-8\"; boundary=abc" in
  let ac, acv = at "text/html,application/xhtml+xml,application/xml;q=0.9,text/plain;format=flowed,*/*;q=0.8" in
  let offered = [| "application/json"; "text/plain;format=flowed"; "text/html" |] in
  [
    S.zero_alloc "matches" (fun () -> ignore (Media_type.matches ct ctv "application/json"));
    S.zero_alloc "is_json" (fun () -> ignore (Media_type.is_json ct ctv));
    S.zero_alloc "is_type" (fun () -> ignore (Media_type.is_type ct ctv "application"));
    S.zero_alloc "param" (fun () -> ignore (Media_type.param ct ctv "boundary"));
    S.zero_alloc "param_present" (fun () -> ignore (Media_type.param_present ct ctv "charset"));
    S.zero_alloc "accepts" (fun () -> ignore (Media_type.accepts ac acv "application/json"));
    S.zero_alloc "best" (fun () -> ignore (Media_type.best ac acv offered));
    S.zero_alloc "best_request" (fun () -> ignore (Media_type.best_request rb rq offered));
    S.zero_alloc "request_is_json" (fun () -> ignore (Media_type.request_is_json rb rq));
  ]

let () =
  Alcotest.run "media_type"
    [
      ( "content-type",
        [ Alcotest.test_case "matches" `Quick check_matches; Alcotest.test_case "parameters" `Quick check_params ] );
      ( "accept",
        [
          Alcotest.test_case "RFC 9110 12.5.1 examples" `Quick rfc_example;
          Alcotest.test_case "weights" `Quick check_accepts;
          Alcotest.test_case "best" `Quick check_best;
          Alcotest.test_case "every q-value" `Quick qvalues;
          Alcotest.test_case "in a request" `Quick in_request;
        ] );
      ("properties", [ S.qcheck robust ]);
      ("allocation", zero_alloc);
    ]
