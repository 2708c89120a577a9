(* Tests for Httpz.Target: splitting request-targets, percent-decoding and
   normalising paths, and the traversal attacks a static server meets. *)

open Httpz
module S = Httpz_test_support

let offsets = [ 0; 13 ]

let err_t = Alcotest.testable (fun ppf e -> Format.pp_print_string ppf (Target.error_to_string e)) ( = )

let kind_to_string = function
  | Target.Origin -> "origin"
  | Absolute -> "absolute"
  | Asterisk -> "asterisk"
  | Error -> "error"

(* ---------- split ---------- *)

type split_expect =
  | Parts of Target.kind * string * string option * string (* kind, path, query, authority *)
  | Fails of Target.error

let split_vectors =
  [ "/", Parts (Origin, "/", None, "");
    "/index.html", Parts (Origin, "/index.html", None, "");
    "/where?q=now", Parts (Origin, "/where", Some "q=now", "");
    "/a?", Parts (Origin, "/a", Some "", "");
    "/a?b?c/d", Parts (Origin, "/a", Some "b?c/d", "");
    "/%2e%2e/x", Parts (Origin, "/%2e%2e/x", None, "");
    (* RFC 9112 §3.2.2 example *)
    "http://www.example.org/pub/WWW/TheProject.html",
    Parts (Absolute, "/pub/WWW/TheProject.html", None, "www.example.org");
    "HTTPS://h:8443/a/b?x=1", Parts (Absolute, "/a/b", Some "x=1", "h:8443");
    "http://example.com", Parts (Absolute, "", None, "example.com");
    "http://example.com?q", Parts (Absolute, "", Some "q", "example.com");
    "http://[::1]:80/p", Parts (Absolute, "/p", None, "[::1]:80");
    "*", Parts (Asterisk, "", None, "");
    "", Fails Bad_form;
    "*?x", Fails Bad_form;
    "a/b", Fails Bad_form;
    "www.example.com:80", Fails Bad_form (* authority-form, RFC 9112 §3.2.3 *);
    "ftp://example.com/x", Fails Bad_form;
    "urn:isbn:1", Fails Bad_form;
    "http:/x", Fails Bad_form;
    "http:///x", Fails Bad_authority;
    "http://", Fails Bad_authority;
    "http://user@host/x", Fails Bad_authority;
    "http://user:pw@host", Fails Bad_authority;
    "/a#frag", Fails Fragment;
    "/a?b#c", Fails Fragment;
    "#", Fails Fragment;
    "/a b", Fails Bad_char;
    "/a\tb", Fails Bad_char;
    "/a\x7fb", Fails Bad_char;
    "/a\x00", Fails Bad_char;
    "/a?\r", Fails Bad_char;
  ]

let span_str buf s = Span.to_string buf s

let test_split_vectors () =
  let t = Target.create () in
  List.iter
    (fun (input, expect) ->
      List.iter
        (fun off ->
          let buf = S.bigstring_at ~off input in
          let name = Printf.sprintf "%S at %d" input off in
          let k = Target.split t buf (Span.make ~off ~len:(String.length input)) in
          Alcotest.(check string) (name ^ " kind = last kind") (kind_to_string k)
            (kind_to_string (Target.kind t));
          match expect with
          | Parts (ek, path, q, auth) ->
              Alcotest.(check string) (name ^ " kind") (kind_to_string ek) (kind_to_string k);
              Alcotest.(check string) (name ^ " path") path (span_str buf (Target.path t));
              Alcotest.(check (option string)) (name ^ " query") q
                (if Target.has_query t then Some (span_str buf (Target.query t)) else None);
              Alcotest.(check string) (name ^ " authority") auth
                (span_str buf (Target.authority t))
          | Fails e ->
              Alcotest.(check string) (name ^ " kind") "error" (kind_to_string k);
              Alcotest.check err_t name e (Target.error t))
        offsets)
    split_vectors

(* A split after a failed one must not keep stale parts. *)
let test_split_reuse () =
  let t = Target.create () in
  let buf = Bigstring.of_string "http://h/p?q /x" in
  ignore (Target.split t buf (Span.make ~off:0 ~len:12));
  Alcotest.(check string) "query first" "q" (span_str buf (Target.query t));
  let k = Target.split t buf (Span.make ~off:13 ~len:2) in
  Alcotest.(check string) "origin" "origin" (kind_to_string k);
  Alcotest.(check bool) "no query" false (Target.has_query t);
  Alcotest.(check int) "no authority" 0 (Span.len (Target.authority t))

(* ---------- decode_path / normalize ---------- *)

type outcome = Ok of string | Err of Target.error

let outcome_to_string = function
  | Ok s -> Printf.sprintf "Ok %S" s
  | Err e -> "Err " ^ Target.error_to_string e

let outcome_t = Alcotest.testable (fun ppf o -> Format.pp_print_string ppf (outcome_to_string o)) ( = )

let run_fn f ?(cap = 4096) ?(off = 0) input =
  let buf = S.bigstring_at ~off input in
  let dst = Bigstring.create cap in
  Bigarray.Array1.fill dst 'Z';
  let n = f buf (Span.make ~off ~len:(String.length input)) ~dst in
  if n >= 0 then Ok (Bigstring.sub_string dst ~off:0 ~len:n) else Err (Target.decode_error n)

let decode = run_fn Target.decode_path
let normalize = run_fn Target.normalize

let decode_vectors =
  [ (* plain and dot segments, RFC 3986 §5.2.4 / §5.4 style *)
    "/", Ok "/";
    "", Ok "/";
    "/index.html", Ok "/index.html";
    "/a/b/c", Ok "/a/b/c";
    "/dir/", Ok "/dir/";
    "/a/./b/../c", Ok "/a/c";
    "/a/b/c/./../../g", Ok "/a/g";
    "/mid/content=5/../6", Ok "/mid/6";
    "/a/.", Ok "/a/";
    "/a/..", Ok "/";
    "/a/b/..", Ok "/a/";
    "/./", Ok "/";
    "/.", Ok "/";
    "/a/...", Ok "/a/...";
    "/a/.b/..c/c..", Ok "/a/.b/..c/c..";
    "//a//b//", Ok "/a/b/";
    "///", Ok "/";
    (* percent-decoding *)
    "/%7euser/file%20name", Ok "/~user/file name";
    "/%41%42%43", Ok "/ABC";
    "/a%2fb", Ok "/a/b";
    "/a%2Fb%2F", Ok "/a/b/";
    "/%2e", Ok "/";
    "/a/%2e%2e", Ok "/";
    "/a/%2E%2e/b", Ok "/b";
    "/a/.%2e/b", Ok "/b";
    "/%25", Ok "/%";
    "/%252e%252e/", Ok "/%2e%2e/" (* double encoding: one level only *);
    "/%252e%252e/%252e%252e/etc/passwd", Ok "/%2e%2e/%2e%2e/etc/passwd";
    "/%c0%ae%c0%ae/x", Ok "/\xc0\xae\xc0\xae/x" (* overlong UTF-8 stays bytes *);
    "/..\\..\\etc", Ok "/..\\..\\etc" (* backslash is a file-name byte *);
    "/a%5c..%5cb", Ok "/a\\..\\b";
    "/caf\xc3\xa9", Ok "/caf\xc3\xa9";
    "/a%0ab", Ok "/a\nb";
    (* traversal attacks *)
    "/..", Err Above_root;
    "/../", Err Above_root;
    "/../etc/passwd", Err Above_root;
    "/a/../../x", Err Above_root;
    "/a/b/../../../x", Err Above_root;
    "/%2e%2e/", Err Above_root;
    "/%2E%2E/etc/passwd", Err Above_root;
    "/..%2f", Err Above_root;
    "/..%2fetc%2fpasswd", Err Above_root;
    "/a%2f..%2f..%2fetc", Err Above_root;
    "/.%2e/", Err Above_root;
    "/%2e./", Err Above_root;
    "/a/b/../../..", Err Above_root;
    "//../x", Err Above_root;
    "/./../x", Err Above_root;
    (* malformed *)
    "/%zz", Err Bad_escape;
    "/%4", Err Bad_escape;
    "/%", Err Bad_escape;
    "/a%g0", Err Bad_escape;
    "/a%0g", Err Bad_escape;
    "/%00", Err Nul_byte;
    "/a\x00b", Err Nul_byte;
    "/a%00/../b", Err Nul_byte;
    "/a b", Err Bad_char;
    "/a\tb", Err Bad_char;
    "/a\x7f", Err Bad_char;
    "/a\r\n", Err Bad_char;
    "a/b", Err Not_absolute;
    "%2fa", Err Not_absolute;
    ".", Err Not_absolute;
    "*", Err Not_absolute;
  ]

let test_decode_vectors () =
  List.iter
    (fun (input, expect) ->
      List.iter
        (fun off ->
          Alcotest.check outcome_t (Printf.sprintf "decode %S at %d" input off) expect
            (decode ~off input))
        offsets)
    decode_vectors

let normalize_vectors =
  [ "/a/./b/../c", Ok "/a/c";
    "/%2e%2e/x", Ok "/%2e%2e/x" (* '%' is literal in normalize *);
    "/a%2f..", Ok "/a%2f..";
    "/%zz", Ok "/%zz";
    "/%00", Ok "/%00";
    "//x//y/", Ok "/x/y/";
    "/../x", Err Above_root;
    "/a\x00", Err Nul_byte;
    "/a b\t\r\n\x7f", Ok "/a b\t\r\n\x7f";
    "x", Err Not_absolute;
  ]

let test_normalize_vectors () =
  List.iter
    (fun (input, expect) ->
      Alcotest.check outcome_t (Printf.sprintf "normalize %S" input) expect (normalize ~off:5 input))
    normalize_vectors

(* The capacity bound, exactly at the limit and one byte past it. *)
let test_capacity () =
  let check name cap input expect =
    Alcotest.check outcome_t name expect (decode ~cap input)
  in
  check "fits exactly" 4 "/abc" (Ok "/abc");
  check "one past" 3 "/abc" (Err Too_long);
  check "decoded length counts" 4 "/%61%62%63" (Ok "/abc");
  check "trailing slash fits" 5 "/abc/" (Ok "/abc/");
  check "trailing slash one past" 4 "/abc/" (Err Too_long);
  check "root in 1 byte" 1 "/" (Ok "/");
  (* documented: a dot segment needs room while it is being read *)
  check "dots need transient room" 4 "/a/.." (Err Too_long);
  check "dots with transient room" 5 "/a/.." (Ok "/");
  check "empty dst" 0 "/" (Err Too_long);
  (* Nothing is written past the capacity, even on error. *)
  let buf = Bigstring.of_string "/abcdef" in
  let dst = Bigstring.create 8 in
  Bigarray.Array1.fill dst 'Z';
  let small = Bigarray.Array1.sub dst 0 4 in
  let n = Target.decode_path buf (Span.make ~off:0 ~len:7) ~dst:small in
  Alcotest.check err_t "too long" Too_long (Target.decode_error n);
  Alcotest.(check string) "bytes beyond capacity untouched" "ZZZZ"
    (Bigstring.sub_string dst ~off:4 ~len:4)

let test_ends_in_slash () =
  let check input expect =
    let buf = Bigstring.of_string input in
    let dst = Bigstring.create 64 in
    let n = Target.decode_path buf (Span.make ~off:0 ~len:(String.length input)) ~dst in
    Alcotest.(check bool) (Printf.sprintf "ends_in_slash %S" input) expect (Target.ends_in_slash dst n)
  in
  check "/dir" false;
  check "/dir/" true;
  check "/dir%2F" true;
  check "/dir//" true;
  check "/dir/." true;
  check "/dir/sub/.." true;
  check "/" true;
  check "" true

let test_errors_total () =
  let all : Target.error list =
    [ Bad_char; Fragment; Bad_form; Bad_authority; Bad_escape; Nul_byte; Above_root;
      Too_long; Not_absolute ]
  in
  List.iter (fun e -> Alcotest.(check int) (Target.error_to_string e) 400 (Target.error_status e)) all;
  let names = List.map Target.error_to_string all in
  Alcotest.(check int) "distinct names" (List.length all)
    (List.length (List.sort_uniq compare names));
  List.iter
    (fun n ->
      String.iter
        (fun c -> if not ((c >= 'a' && c <= 'z') || c = '_') then Alcotest.failf "not snake_case: %s" n)
        n)
    names;
  Alcotest.check_raises "decode_error of a length" (Invalid_argument "Target.decode_error")
    (fun () -> ignore (Target.decode_error 3))

(* ---------- properties ---------- *)

(* A slow, obviously correct model: decode the whole byte string first
   (stopping at the first malformed byte), then resolve the segments that
   were complete before that point, as RFC 3986 §5.2.4 plus merging of
   empty segments. *)
let model ~pct input =
  let n = String.length input in
  if n > 0 && input.[0] <> '/' then Err Not_absolute
  else begin
    let dec = Buffer.create n in
    let derr = ref None and i = ref (min n 1) in
    let hex c =
      match c with
      | '0' .. '9' -> Char.code c - 48
      | 'a' .. 'f' -> Char.code c - 87
      | 'A' .. 'F' -> Char.code c - 55
      | _ -> -1
    in
    while !derr = None && !i < n do
      let c = input.[!i] in
      if pct && c = '%' then begin
        if !i + 2 < n && hex input.[!i + 1] >= 0 && hex input.[!i + 2] >= 0 then begin
          let b = (hex input.[!i + 1] * 16) + hex input.[!i + 2] in
          if b = 0 then derr := Some Target.Nul_byte else Buffer.add_char dec (Char.chr b);
          i := !i + 3
        end
        else derr := Some Target.Bad_escape
      end
      else if c = '\000' then derr := Some Nul_byte
      else if pct && (c <= ' ' || c = '\127') then derr := Some Bad_char
      else begin Buffer.add_char dec c; incr i end
    done;
    let segs = String.split_on_char '/' (Buffer.contents dec) in
    (* the last piece is a complete segment only if decoding reached the end *)
    let segs =
      if !derr = None then segs else List.rev (List.tl (List.rev segs))
    in
    let rec go stack trailing = function
      | [] -> `Ok (stack, trailing)
      | s :: rest ->
          if s = "" || s = "." then go stack true rest
          else if s = ".." then (match stack with [] -> `Above | _ :: st -> go st true rest)
          else go (s :: stack) false rest
    in
    match go [] true segs, !derr with
    | `Above, _ -> Err Above_root
    | _, Some e -> Err e
    | `Ok (stack, trailing), None ->
        let body = String.concat "/" (List.rev stack) in
        if stack = [] then Ok "/" else Ok ("/" ^ body ^ if trailing then "/" else "")
  end

let pieces =
  [ 8, "/"; 3, "."; 4, ".."; 4, "a"; 2, "bc"; 2, "%2e"; 1, "%2E"; 2, "%2f"; 1, "%2F"; 1, "%25";
    1, "%252e"; 1, "%"; 1, "%4"; 1, "%zz"; 1, "%00"; 1, "\\"; 1, "%c0%ae"; 1, "%41"; 1, "\x00";
    1, " "; 1, "\xc3\xa9"; 1, "%20" ]

let gen_path =
  QCheck2.Gen.(
    frequency
      [ 8, map (fun l -> "/" ^ String.concat "" l) (list_size (int_range 0 14) (frequencyl pieces));
        1, map (String.concat "") (list_size (int_range 0 6) (frequencyl pieces));
        1, string_size ~gen:(char_range '\000' '\255') (int_range 0 20);
        1, map (fun s -> "/" ^ s) (string_size ~gen:(oneofl [ '/'; '.'; '%'; '2'; 'e'; 'f'; 'a' ]) (int_range 0 20))
      ])

let print = Printf.sprintf "%S"

(* Structural invariant of every successful result. *)
let well_formed s =
  String.length s >= 1
  && s.[0] = '/'
  && (not (String.contains s '\000'))
  && List.for_all
       (fun seg -> seg <> "." && seg <> "..")
       (String.split_on_char '/' s)
  && (let ok = ref true in
      for i = 0 to String.length s - 2 do
        if s.[i] = '/' && s.[i + 1] = '/' then ok := false
      done;
      !ok)

let prop_model pct name (f : ?cap:int -> ?off:int -> string -> outcome) =
  QCheck2.Test.make ~count:3000 ~name ~print gen_path (fun input ->
      let got = f ~off:7 input and want = model ~pct input in
      if got <> want then
        QCheck2.Test.fail_reportf "got %s, model says %s" (outcome_to_string got)
          (outcome_to_string want)
      else true)

let prop_invariants =
  QCheck2.Test.make ~count:3000 ~name:"decode_path: result well formed, never raises" ~print
    gen_path (fun input ->
      match decode input with
      | Ok s -> well_formed s || QCheck2.Test.fail_reportf "not normalised: %S" s
      | Err _ -> true)

let prop_idempotent =
  QCheck2.Test.make ~count:3000 ~name:"normalize (decode_path p) = decode_path p" ~print gen_path
    (fun input ->
      match decode input with
      | Ok s -> (
          match normalize s with
          | Ok s' -> s = s' || QCheck2.Test.fail_reportf "%S renormalised to %S" s s'
          | Err e -> QCheck2.Test.fail_reportf "%S renormalised to error %s" s (Target.error_to_string e))
      | Err _ -> true)

(* A request-target glued from the path pieces splits back into its parts. *)
let prop_split =
  QCheck2.Test.make ~count:2000 ~name:"split: path and query of generated origin-forms" ~print:(fun (p, q) -> print p ^ " ? " ^ print q)
    QCheck2.Gen.(
      pair
        (map (fun l -> "/" ^ String.concat "" l) (list_size (int_range 0 8) (oneofl [ "a"; "/"; "."; "%2f"; "=" ])))
        (string_size ~gen:(oneofl [ 'a'; '?'; '='; '&'; '/' ]) (int_range 0 8)))
    (fun (p, q) ->
      let t = Target.create () in
      let input = p ^ "?" ^ q in
      let buf = S.bigstring_at ~off:3 input in
      match Target.split t buf (Span.make ~off:3 ~len:(String.length input)) with
      | Origin -> span_str buf (Target.path t) = p && span_str buf (Target.query t) = q
      | _ -> false)

(* ---------- word-at-a-time scans ---------- *)

(* [split] and [decode_path] test 8 bytes at a time, and read a short run
   as a whole word when the buffer has the bytes after it: whatever lies
   past the target, and however much room [dst] has, the results are the
   byte loop's (the model's), and [dst] past the result is not written. *)
let decode_in ~garbage ~cap input =
  let buf = S.bigstring_at ~garbage ~off:5 input in
  let dst = Bigstring.create cap in
  Bigarray.Array1.fill dst 'Z';
  let n = Target.decode_path buf (Span.make ~off:5 ~len:(String.length input)) ~dst in
  (* Byte by byte, an input of [len] bytes is written into [dst.{0 .. len-1}]
     at most (the first '/' is the output's, then a byte or less each; "" gives "/"). *)
  let untouched = ref true in
  for i = max 1 (String.length input) to cap - 1 do if Bigarray.Array1.get dst i <> 'Z' then untouched := false done;
  (if n >= 0 then Ok (Bigstring.sub_string dst ~off:0 ~len:n) else Err (Target.decode_error n)), !untouched

let split_in ~garbage input =
  let t = Target.create () in
  let buf = S.bigstring_at ~garbage ~off:5 input in
  match Target.split t buf (Span.make ~off:5 ~len:(String.length input)) with
  | Error -> "error " ^ Target.error_to_string (Target.error t)
  | Origin -> Printf.sprintf "origin %S %b %S" (span_str buf (Target.path t)) (Target.has_query t) (span_str buf (Target.query t))
  | Absolute -> "absolute"
  | Asterisk -> "asterisk"

let special = [ '/'; '%'; '#'; '?'; ' '; '\127'; '\000'; '\r'; '\x80'; '\xff'; '.'; '!'; '~' ]

let test_word_boundaries () =
  for len = 1 to 20 do
    for pos = 1 to len - 1 do
      List.iter
        (fun c ->
          let input = String.init len (fun i -> if i = 0 then '/' else if i = pos then c else Char.chr (97 + (i mod 26))) in
          let want = model ~pct:true input in
          List.iter
            (fun garbage ->
              List.iter
                (fun cap ->
                  let got, untouched = decode_in ~garbage ~cap input in
                  let want = if got = Err Too_long && cap <= len then got else want in
                  Alcotest.check outcome_t (Printf.sprintf "decode %S cap %d" input cap) want got;
                  Alcotest.(check bool) (Printf.sprintf "dst past %S untouched" input) true untouched)
                [ 4096; len; len + 3; len + 8 ];
              Alcotest.(check string) (Printf.sprintf "split %S" input)
                (split_in ~garbage:'a' input) (split_in ~garbage input))
            [ 'a'; '/'; '#'; '\000'; '%' ])
        special
    done
  done

let prop_tail_ignored =
  QCheck2.Test.make ~count:2000 ~name:"bytes past the target and room in dst change nothing" ~print:(fun (p, g, c) -> Printf.sprintf "%S %C %d" p g c)
    QCheck2.Gen.(triple gen_path (oneofl special) (int_range 1 40))
    (fun (input, garbage, cap) ->
      let want = model ~pct:true input in
      let got, untouched = decode_in ~garbage ~cap input in
      (untouched || QCheck2.Test.fail_reportf "dst written past the input's length")
      && (got = want || (got = Err Too_long && cap <= String.length input)
          || QCheck2.Test.fail_reportf "got %s, want %s" (outcome_to_string got) (outcome_to_string want))
      && (split_in ~garbage:'a' input = split_in ~garbage input || QCheck2.Test.fail_reportf "split differs"))

(* ---------- zero allocation ---------- *)

let alloc_tests =
  let t = Target.create () in
  let buf = Bigstring.of_string "GET http://example.com/a/b/../c%20d/./e?x=1 HTTP/1.1" in
  let abs = Span.make ~off:4 ~len:39 in
  let buf2 = Bigstring.of_string "/static/css/../js/./app.%6As?v=3" in
  let org = Span.make ~off:0 ~len:(Bigstring.length buf2) in
  let bad = Bigstring.of_string "/a/%2e%2e/../../etc/passwd" in
  let bad_span = Span.make ~off:0 ~len:(Bigstring.length bad) in
  let dst = Bigstring.create 256 in
  let long = Bigstring.of_string "/assets/javascripts/application-0123456789abcdef.min.js?v=1 HTTP/1.1\r\n" in
  let long_span = Span.make ~off:0 ~len:59 in
  [ S.zero_alloc "split absolute-form" (fun () -> ignore (Target.split t buf abs));
    S.zero_alloc "split + decode_path, long plain runs" (fun () ->
        ignore (Target.split t long long_span);
        ignore (Target.decode_path long (Target.path t) ~dst));
    S.zero_alloc "split origin-form" (fun () -> ignore (Target.split t buf2 org));
    S.zero_alloc "split + decode_path" (fun () ->
        ignore (Target.split t buf2 org);
        ignore (Target.decode_path buf2 (Target.path t) ~dst));
    S.zero_alloc "decode_path error" (fun () -> ignore (Target.decode_path bad bad_span ~dst));
    S.zero_alloc "normalize" (fun () -> ignore (Target.normalize bad bad_span ~dst));
    S.zero_alloc "decode_error + status" (fun () ->
        ignore (Target.error_status (Target.decode_error (Target.decode_path bad bad_span ~dst))));
  ]

let () =
  Alcotest.run "target"
    [ ( "split",
        [ Alcotest.test_case "vectors" `Quick test_split_vectors;
          Alcotest.test_case "reuse" `Quick test_split_reuse;
          S.qcheck prop_split ] );
      ( "decode",
        [ Alcotest.test_case "vectors and traversal attacks" `Quick test_decode_vectors;
          Alcotest.test_case "normalize vectors" `Quick test_normalize_vectors;
          Alcotest.test_case "capacity" `Quick test_capacity;
          Alcotest.test_case "ends_in_slash" `Quick test_ends_in_slash;
          Alcotest.test_case "errors" `Quick test_errors_total;
          Alcotest.test_case "word boundaries" `Quick test_word_boundaries;
          S.qcheck prop_tail_ignored ] );
      ( "properties",
        [ S.qcheck (prop_model true "decode_path agrees with the model" decode);
          S.qcheck (prop_model false "normalize agrees with the model" normalize);
          S.qcheck prop_invariants;
          S.qcheck prop_idempotent ] );
      "zero-alloc", alloc_tests;
    ]
