(* Tests for Httpz.Etag: entity-tag syntax, the RFC 9110 §8.8.3.2
   comparison table, If-Match / If-None-Match / If-Range evaluation
   (RFC examples, lists with OWS and malformed elements), the tag writer,
   properties against a model, zero allocation. *)

open Httpz
module S = Httpz_test_support

let show_kind = function
  | Etag.Strong -> "Strong"
  | Etag.Weak -> "Weak"
  | Etag.Not_entity_tag -> "Not_entity_tag"

let show_cond = function Etag.Match -> "Match" | Etag.No_match -> "No_match" | Etag.Invalid -> "Invalid"
let kind = Alcotest.testable (fun ppf k -> Format.pp_print_string ppf (show_kind k)) ( = )
let cond = Alcotest.testable (fun ppf c -> Format.pp_print_string ppf (show_cond c)) ( = )

(* Garbage around the value that would change the answer of a reader that
   overran it: quotes, commas, letters, spaces. *)
let placements = [ (0, '\r'); (4, '"'); (9, ','); (1, 'x'); (2, ' ') ]

let at_placements name s f =
  List.iter
    (fun (off, garbage) ->
      let where = Printf.sprintf "%s (off %d, garbage %C)" name off garbage in
      f where (S.bigstring_at ~garbage ~off s) off (String.length s))
    placements

(* -- Syntax --------------------------------------------------------------- *)

let test_parse () =
  let cases =
    [ "\"xyzzy\"", Etag.Strong;
      "W/\"xyzzy\"", Etag.Weak;
      "\"\"", Etag.Strong;
      "W/\"\"", Etag.Weak;
      "\"a,b\"", Etag.Strong;
      "\"!#~\"", Etag.Strong;
      "\"\x80\xff\"", Etag.Strong;
      (* weak prefix is case-sensitive: %s"W/" *)
      "w/\"xyzzy\"", Etag.Not_entity_tag;
      "W\"x\"", Etag.Not_entity_tag;
      "W/", Etag.Not_entity_tag;
      "W/x", Etag.Not_entity_tag;
      "W/ \"x\"", Etag.Not_entity_tag;
      "xyzzy", Etag.Not_entity_tag;
      "\"xyzzy", Etag.Not_entity_tag;
      "xyzzy\"", Etag.Not_entity_tag;
      "\"", Etag.Not_entity_tag;
      "\"a\"b", Etag.Not_entity_tag;
      "\"a\"\"", Etag.Not_entity_tag;
      "\"a\" ", Etag.Not_entity_tag;
      " \"a\"", Etag.Not_entity_tag;
      "\"a b\"", Etag.Not_entity_tag;
      "\"a\tb\"", Etag.Not_entity_tag;
      "\"a\x7fb\"", Etag.Not_entity_tag;
      "\"a\x00b\"", Etag.Not_entity_tag;
      "\"a\rb\"", Etag.Not_entity_tag;
      "\"a\\\"", Etag.Strong (* a backslash is an etagc: no escaping *);
      "*", Etag.Not_entity_tag;
      "", Etag.Not_entity_tag ]
  in
  List.iter
    (fun (s, k) ->
      at_placements (String.escaped s) s (fun where buf off len ->
          Alcotest.check kind where k (Etag.parse buf ~off ~len)))
    cases

let test_scan () =
  at_placements "scan" "\"a\", W/\"b,c\" ,\"d" (fun where buf off len ->
      let stop = off + len in
      Alcotest.(check int) (where ^ ": first") (off + 3) (Etag.scan buf ~off ~stop);
      Alcotest.(check int) (where ^ ": weak with comma") (off + 12) (Etag.scan buf ~off:(off + 5) ~stop);
      Alcotest.(check int) (where ^ ": unterminated") (-1) (Etag.scan buf ~off:(off + 15) ~stop);
      Alcotest.(check int) (where ^ ": not a tag") (-1) (Etag.scan buf ~off:(off + 3) ~stop);
      Alcotest.(check int) (where ^ ": stop inside") (-1) (Etag.scan buf ~off ~stop:(off + 2));
      Alcotest.(check int) (where ^ ": W at stop") (-1) (Etag.scan buf ~off:(off + 5) ~stop:(off + 6)))

(* RFC 9110 §8.8.3.2 *)
let comparison_table =
  [ ("W/\"1\"", "W/\"1\"", false, true);
    ("W/\"1\"", "W/\"2\"", false, false);
    ("W/\"1\"", "\"1\"", false, true);
    ("\"1\"", "\"1\"", true, true) ]

let test_comparison_table () =
  List.iter
    (fun (a, b, strong, weak) ->
      let name = Printf.sprintf "%s vs %s" a b in
      Alcotest.(check bool) (name ^ ": strong") strong (Etag.strong_equal a b);
      Alcotest.(check bool) (name ^ ": strong, swapped") strong (Etag.strong_equal b a);
      Alcotest.(check bool) (name ^ ": weak") weak (Etag.weak_equal a b);
      Alcotest.(check bool) (name ^ ": weak, swapped") weak (Etag.weak_equal b a);
      (* the same table through the precondition evaluators: If-Match uses
         the strong function, If-None-Match the weak one *)
      let as_cond m = if m then Etag.Match else Etag.No_match in
      at_placements name a (fun where buf off len ->
          Alcotest.check cond (where ^ ": if_match") (as_cond strong) (Etag.if_match buf ~off ~len ~etag:b);
          Alcotest.check cond (where ^ ": if_none_match") (as_cond weak)
            (Etag.if_none_match buf ~off ~len ~etag:b)))
    comparison_table;
  Alcotest.(check bool) "is_weak W/" true (Etag.is_weak "W/\"1\"");
  Alcotest.(check bool) "is_weak strong" false (Etag.is_weak "\"1\"");
  Alcotest.(check bool) "different lengths" false (Etag.weak_equal "\"1\"" "\"12\"");
  Alcotest.(check bool) "invalid never equal" false (Etag.weak_equal "1" "1");
  Alcotest.(check bool) "invalid never equal, strong" false (Etag.strong_equal "x" "x");
  Alcotest.(check bool) "w/ is not weak" false (Etag.weak_equal "w/\"1\"" "\"1\"")

(* -- Preconditions -------------------------------------------------------- *)

type case = { value : string; etag : string; inm : Etag.condition; im : Etag.condition }

let c value etag inm im = { value; etag; inm; im }

let xyzzy = "\"xyzzy\""
let m = Etag.Match and n = Etag.No_match and i = Etag.Invalid

let precondition_cases =
  [ (* RFC 9110 §13.1.1 examples *)
    c "\"xyzzy\"" xyzzy m m;
    c "\"xyzzy\", \"r2d2xxxx\", \"c3piozzzz\"" xyzzy m m;
    c "\"r2d2xxxx\", \"xyzzy\", \"c3piozzzz\"" xyzzy m m;
    c "\"xyzzy\", \"r2d2xxxx\", \"c3piozzzz\"" "\"c3piozzzz\"" m m;
    c "\"xyzzy\", \"r2d2xxxx\", \"c3piozzzz\"" "\"other\"" n n;
    c "*" xyzzy m m;
    (* RFC 9110 §13.1.2 examples *)
    c "W/\"xyzzy\"" xyzzy m n;
    c "W/\"xyzzy\", W/\"r2d2xxxx\", W/\"c3piozzzz\"" xyzzy m n;
    c "W/\"xyzzy\", W/\"r2d2xxxx\", W/\"c3piozzzz\"" "W/\"r2d2xxxx\"" m n;
    (* a weak server tag: If-Match only through "*" *)
    c "\"xyzzy\"" "W/\"xyzzy\"" m n;
    c "W/\"xyzzy\"" "W/\"xyzzy\"" m n;
    c "*" "W/\"xyzzy\"" m m;
    (* a representation without a tag: only "*" *)
    c "*" "" m m;
    c "\"\"" "" n n;
    c "\"xyzzy\"" "" n n;
    (* a malformed server tag behaves as none *)
    c "\"xyzzy\"" "xyzzy" n n;
    c "*" "xyzzy" m m;
    (* empty opaque tags are tags *)
    c "\"\"" "\"\"" m m;
    c "W/\"\"" "\"\"" m n;
    (* whitespace and empty elements *)
    c "  *  " xyzzy m m;
    c "\t*" xyzzy m m;
    c " \"a\" ,\t\"xyzzy\" " xyzzy m m;
    c "\"a\",\"xyzzy\"" xyzzy m m;
    c ",,\"a\",, ,\"xyzzy\"," xyzzy m m;
    c "" xyzzy n n;
    c "   " xyzzy n n;
    c "," xyzzy n n;
    c " , , " xyzzy n n;
    (* commas inside an opaque-tag do not split it *)
    c "\"a,\"xyzzy\"" xyzzy i i;
    c "\"a,xyzzy\"" xyzzy n n;
    c "\"a,xyzzy\"" "\"a,xyzzy\"" m m;
    c "\"a,\", \"xyzzy\"" xyzzy m m;
    (* exact, case-sensitive comparison *)
    c "\"XYZZY\"" xyzzy n n;
    c "\"xyzzy \"" xyzzy i i;
    c "\"xyzz\"" xyzzy n n;
    c "\"xyzzyy\"" xyzzy n n;
    (* malformed lists: Invalid, even after a match *)
    c "\"xyzzy\" \"a\"" xyzzy i i;
    c "\"xyzzy\", a" xyzzy i i;
    c "\"xyzzy\", *" xyzzy i i;
    c "*, \"xyzzy\"" xyzzy i i;
    c "**" xyzzy i i;
    c "* *" xyzzy i i;
    c "xyzzy" xyzzy i i;
    c "\"xyzzy" xyzzy i i;
    c "\"xyzzy\"\"" xyzzy i i;
    c "W/ \"xyzzy\"" xyzzy i i;
    c "w/\"xyzzy\"" xyzzy i i;
    c "W/xyzzy" xyzzy i i;
    c "\"xyzzy\";q=1" xyzzy i i;
    c "\"xyzzy\"\r\n" xyzzy i i;
    c "\"xy zzy\"" xyzzy i i;
    c "'xyzzy'" xyzzy i i ]

let test_preconditions () =
  List.iter
    (fun { value; etag; inm; im } ->
      at_placements (Printf.sprintf "%s against %s" (String.escaped value) etag) value
        (fun where buf off len ->
          Alcotest.check cond (where ^ ": if_none_match") inm (Etag.if_none_match buf ~off ~len ~etag);
          Alcotest.check cond (where ^ ": if_match") im (Etag.if_match buf ~off ~len ~etag)))
    precondition_cases

let test_if_range () =
  let cases =
    [ ("\"xyzzy\"", xyzzy, m);
      (" \"xyzzy\"\t", xyzzy, m);
      ("\"other\"", xyzzy, n);
      (* a weak validator never matches strongly (RFC 9110 §13.1.5) *)
      ("W/\"xyzzy\"", xyzzy, n);
      ("\"xyzzy\"", "W/\"xyzzy\"", n);
      ("\"xyzzy\"", "", n);
      (* not an entity-tag: the caller tries HTTP-date *)
      ("Sat, 29 Oct 1994 19:43:31 GMT", xyzzy, i);
      ("", xyzzy, i);
      ("*", xyzzy, i);
      ("\"xyzzy\", \"xyzzy\"", xyzzy, i);
      ("\"xyzzy", xyzzy, i) ]
  in
  List.iter
    (fun (value, etag, expected) ->
      at_placements (String.escaped value) value (fun where buf off len ->
          Alcotest.check cond where expected (Etag.if_range buf ~off ~len ~etag)))
    cases

(* -- Writer --------------------------------------------------------------- *)

let written ~mtime ~nsec ~size =
  let b = Bigstring.create 100 in
  Bigarray.Array1.fill b '#';
  let stop = Etag.write b ~off:5 ~mtime ~nsec ~size in
  Alcotest.(check char) "byte before untouched" '#' (Bigstring.unsafe_get b 4);
  Alcotest.(check char) "byte after untouched" '#' (Bigstring.unsafe_get b stop);
  Bigstring.sub_string b ~off:5 ~len:(stop - 5)

let test_write () =
  (* nginx's "%xT-%xO": mtime and size in lower-case hex, no padding *)
  Alcotest.(check string) "nginx format" "\"5f5e1000-4d2\"" (written ~mtime:1_600_000_000 ~nsec:0 ~size:1234);
  Alcotest.(check string) "zeros" "\"0-0\"" (written ~mtime:0 ~nsec:0 ~size:0);
  Alcotest.(check string) "nanoseconds" "\"5f5e1000.3b9ac9ff-4d2\""
    (written ~mtime:1_600_000_000 ~nsec:999_999_999 ~size:1234);
  Alcotest.(check string) "1 ns" "\"1.1-1\"" (written ~mtime:1 ~nsec:1 ~size:1);
  Alcotest.(check string) "> 4 GiB" "\"5f5e1000-12a05f200\"" (written ~mtime:1_600_000_000 ~nsec:0 ~size:5_000_000_000);
  Alcotest.(check string) "pre-1970 mtime, unsigned" "\"7fffffffffffffff-1\"" (written ~mtime:(-1) ~nsec:0 ~size:1);
  let longest = written ~mtime:(-1) ~nsec:999_999_999 ~size:max_int in
  Alcotest.(check string) "longest" "\"7fffffffffffffff.3b9ac9ff-3fffffffffffffff\"" longest;
  Alcotest.(check int) "max_length" Etag.max_length (String.length longest);
  Alcotest.(check string) "to_string = write" (written ~mtime:123 ~nsec:456 ~size:789)
    (Etag.to_string ~mtime:123 ~nsec:456 ~size:789);
  (* the tags it makes are strong entity-tags that match themselves *)
  let tag = Etag.to_string ~mtime:1_600_000_000 ~nsec:0 ~size:1234 in
  let b = Bigstring.of_string tag in
  Alcotest.check kind "parses as strong" Etag.Strong (Etag.parse b ~off:0 ~len:(String.length tag));
  Alcotest.check cond "if_match itself" Etag.Match (Etag.if_match b ~off:0 ~len:(String.length tag) ~etag:tag);
  Alcotest.check cond "if_none_match itself" Etag.Match
    (Etag.if_none_match b ~off:0 ~len:(String.length tag) ~etag:tag);
  List.iter
    (fun (name, msg, f) -> Alcotest.check_raises name (Invalid_argument msg) (fun () -> ignore (f ())))
    [ ("negative size", "Httpz.Etag.write: negative size", fun () -> Etag.to_string ~mtime:0 ~nsec:0 ~size:(-1));
      ("nsec < 0", "Httpz.Etag.write: nsec", fun () -> Etag.to_string ~mtime:0 ~nsec:(-1) ~size:0);
      ("nsec = 1e9", "Httpz.Etag.write: nsec", fun () -> Etag.to_string ~mtime:0 ~nsec:1_000_000_000 ~size:0) ];
  let b = Bigstring.create 14 in
  Alcotest.(check int) "exact fit" 14 (Etag.write b ~off:0 ~mtime:1_600_000_000 ~nsec:0 ~size:1234);
  Alcotest.check_raises "one short" (Invalid_argument "Httpz.Etag.write: buffer too small") (fun () ->
      ignore (Etag.write b ~off:1 ~mtime:1_600_000_000 ~nsec:0 ~size:1234));
  Alcotest.check_raises "negative off" (Invalid_argument "Httpz.Etag.write: buffer too small") (fun () ->
      ignore (Etag.write b ~off:(-1) ~mtime:0 ~nsec:0 ~size:0))

(* -- Properties ----------------------------------------------------------- *)

(* Decode a tag back into (mtime, nsec, size): distinct triples give
   distinct tags iff this inverts [write]. *)
let decode tag =
  let n = String.length tag in
  assert (n >= 5 && tag.[0] = '"' && tag.[n - 1] = '"');
  let body = String.sub tag 1 (n - 2) in
  let hex s =
    assert (s <> "" && (s = "0" || s.[0] <> '0'));
    String.fold_left
      (fun acc ch ->
        let d = match ch with '0' .. '9' -> Char.code ch - 48 | 'a' .. 'f' -> Char.code ch - 87 | _ -> assert false in
        (acc lsl 4) lor d)
      0 s
  in
  match String.split_on_char '-' body with
  | [ t; size ] -> (
    match String.split_on_char '.' t with
    | [ s ] -> (hex s, 0, hex size)
    | [ s; ns ] -> (hex s, hex ns, hex size)
    | _ -> assert false)
  | _ -> assert false

let prop_write_injective =
  let open QCheck2.Gen in
  let gen =
    triple
      (oneof [ int; int_range 0 2_000_000_000 ])
      (oneof [ return 0; int_range 0 999_999_999 ])
      (oneof [ int_range 0 max_int; int_range 0 10_000 ])
  in
  QCheck2.Test.make ~name:"write is injective (decodes back) and makes a strong tag" ~count:2000
    ~print:(fun (a, b, c) -> Printf.sprintf "(%d, %d, %d)" a b c)
    gen
    (fun (mtime, nsec, size) ->
      let tag = Etag.to_string ~mtime ~nsec ~size in
      let b = Bigstring.of_string tag in
      String.length tag <= Etag.max_length
      && decode tag = (mtime, nsec, size)
      && Etag.parse b ~off:0 ~len:(String.length tag) = Etag.Strong)

(* A slow model of the list evaluation, on OCaml strings. *)
module Model = struct
  let is_ows ch = ch = ' ' || ch = '\t'
  let etagc ch = ch = '\x21' || (ch >= '\x23' && ch <= '\x7e') || ch >= '\x80'

  (* [Some (weak, opaque)] when [s] is exactly one entity-tag *)
  let tag s =
    let n = String.length s in
    let w = n >= 2 && String.sub s 0 2 = "W/" in
    let o = if w then String.sub s 2 (n - 2) else s in
    let k = String.length o in
    if k >= 2 && o.[0] = '"' && o.[k - 1] = '"' && String.for_all etagc (String.sub o 1 (k - 2)) then Some (w, o)
    else None

  let trim s =
    let n = String.length s in
    let i = ref 0 and j = ref n in
    while !i < n && is_ows s.[!i] do incr i done;
    while !j > !i && is_ows s.[!j - 1] do decr j done;
    String.sub s !i (!j - !i)

  (* Split on commas outside quotes, then every non-empty trimmed element
     must be exactly one entity-tag. *)
  let split s =
    let parts = ref [] and cur = Buffer.create 16 and inq = ref false in
    String.iter
      (fun ch ->
        if ch = ',' && not !inq then (parts := Buffer.contents cur :: !parts; Buffer.clear cur)
        else begin
          if ch = '"' then inq := not !inq;
          Buffer.add_char cur ch
        end)
      s;
    List.rev (Buffer.contents cur :: !parts)

  let eval ~strong value etag =
    if trim value = "*" then Etag.Match
    else
      let own = tag etag in
      let elems = List.filter (fun e -> e <> "") (List.map trim (split value)) in
      let tags = List.map tag elems in
      if List.mem None tags then Etag.Invalid
      else if
        List.exists
          (function
            | Some (w, o) -> (
              match own with
              | Some (w', o') -> o = o' && ((not strong) || ((not w) && not w'))
              | None -> false)
            | None -> false)
          tags
      then Etag.Match
      else Etag.No_match
end

let gen_value =
  let open QCheck2.Gen in
  let piece = oneofl [ "\"a\""; "\"b\""; "W/\"a\""; "W/\"b\""; "\"\""; "\"a,b\""; ","; ", "; " "; "\t"; "*"; "\""; "W/"; "a"; "w/"; "\"a b\""; "\x80"; "\x7f" ] in
  frequency
    [ (6, map (String.concat "") (list_size (int_range 0 8) piece));
      (2, string_size (int_range 0 12));
      (1, map (fun l -> String.concat ", " l) (list_size (int_range 0 5) (oneofl [ "\"a\""; "W/\"a\""; "\"b\"" ]))) ]

let gen_own = QCheck2.Gen.oneofl [ "\"a\""; "W/\"a\""; "\"b\""; "\"a,b\""; "\"\""; ""; "a" ]

let prop_model =
  QCheck2.Test.make ~name:"if_none_match / if_match agree with the model; never raise" ~count:5000
    ~print:(fun (v, e) -> Printf.sprintf "%S against %S" v e)
    QCheck2.Gen.(pair gen_value gen_own)
    (fun (value, etag) ->
      let buf = S.bigstring_at ~garbage:'"' ~off:3 value in
      let len = String.length value in
      let inm = Etag.if_none_match buf ~off:3 ~len ~etag and im = Etag.if_match buf ~off:3 ~len ~etag in
      let minm = Model.eval ~strong:false value etag and mim = Model.eval ~strong:true value etag in
      if inm <> minm then QCheck2.Test.fail_reportf "if_none_match %s, model %s" (show_cond inm) (show_cond minm);
      if im <> mim then QCheck2.Test.fail_reportf "if_match %s, model %s" (show_cond im) (show_cond mim);
      (* strong match implies weak match *)
      if im = Etag.Match && inm <> Etag.Match then QCheck2.Test.fail_report "strong without weak";
      ignore (Etag.if_range buf ~off:3 ~len ~etag);
      let k = Etag.parse buf ~off:3 ~len in
      let mk = match Model.tag value with None -> Etag.Not_entity_tag | Some (true, _) -> Etag.Weak | Some _ -> Etag.Strong in
      if k <> mk then QCheck2.Test.fail_reportf "parse %s, model %s" (show_kind k) (show_kind mk);
      true)

(* -- Zero allocation ------------------------------------------------------ *)

let zero_alloc_tests =
  let etag = "\"5f5e1000-4d2\"" in
  let list = Bigstring.of_string "W/\"r2d2xxxx\", \"c3piozzzz\" ,, \"5f5e1000-4d2\"" in
  let bad = Bigstring.of_string "\"5f5e1000-4d2\", garbage" in
  let star = Bigstring.of_string " * " in
  let one = Bigstring.of_string etag in
  let len b = Bigstring.length b in
  let out = Bigstring.create 64 in
  [ S.zero_alloc "parse" (fun () -> ignore (Etag.parse one ~off:0 ~len:(len one)));
    S.zero_alloc "scan" (fun () -> ignore (Etag.scan list ~off:0 ~stop:(len list)));
    S.zero_alloc "if_none_match" (fun () -> ignore (Etag.if_none_match list ~off:0 ~len:(len list) ~etag));
    S.zero_alloc "if_none_match Invalid" (fun () -> ignore (Etag.if_none_match bad ~off:0 ~len:(len bad) ~etag));
    S.zero_alloc "if_none_match *" (fun () -> ignore (Etag.if_none_match star ~off:0 ~len:(len star) ~etag));
    S.zero_alloc "if_match" (fun () -> ignore (Etag.if_match list ~off:0 ~len:(len list) ~etag));
    S.zero_alloc "if_range" (fun () -> ignore (Etag.if_range one ~off:0 ~len:(len one) ~etag));
    S.zero_alloc "weak_equal / strong_equal" (fun () ->
        ignore (Sys.opaque_identity (Etag.weak_equal etag "W/\"5f5e1000-4d2\""));
        ignore (Sys.opaque_identity (Etag.strong_equal etag "\"5f5e1000-4d2\"")));
    S.zero_alloc "write" (fun () -> ignore (Etag.write out ~off:1 ~mtime:1_600_000_000 ~nsec:0 ~size:1234));
    S.zero_alloc "write with nsec" (fun () ->
        ignore (Etag.write out ~off:1 ~mtime:(-1) ~nsec:999_999_999 ~size:max_int)) ]

let () =
  Alcotest.run "etag"
    [ ( "syntax",
        [ Alcotest.test_case "parse" `Quick test_parse;
          Alcotest.test_case "scan" `Quick test_scan;
          Alcotest.test_case "RFC 9110 8.8.3.2 comparison table" `Quick test_comparison_table ] );
      ( "preconditions",
        [ Alcotest.test_case "If-None-Match / If-Match" `Quick test_preconditions;
          Alcotest.test_case "If-Range" `Quick test_if_range ] );
      ("writer", [ Alcotest.test_case "write / to_string" `Quick test_write ]);
      ("properties", [ S.qcheck prop_write_injective; S.qcheck prop_model ]);
      ("zero-alloc", zero_alloc_tests) ]
