(* Tests for Httpz.Range: RFC 9110 §14.1.2 examples, invalid fields, the
   range bound, resolution against lengths 0 .. max_int, coalescing,
   Content-Range writers, properties against a model, zero allocation. *)

open Httpz
module S = Httpz_test_support

let show_parse = function
  | Range.Valid -> "Valid"
  | Range.Invalid -> "Invalid"
  | Range.Too_many -> "Too_many"
  | Range.Not_bytes -> "Not_bytes"

let show_resolution = function
  | Range.Satisfiable -> "Satisfiable"
  | Range.Unsatisfiable -> "Unsatisfiable"
  | Range.Empty -> "Empty"

let parse_result = Alcotest.testable (fun ppf r -> Format.pp_print_string ppf (show_parse r)) ( = )

let resolution =
  Alcotest.testable (fun ppf r -> Format.pp_print_string ppf (show_resolution r)) ( = )

let intervals t = List.init (Range.count t) (fun i -> (Range.start t i, Range.stop t i))
let ivs = Alcotest.(list (pair int int))

(* Each vector runs at offset 0 and embedded in garbage: digits, commas and
   dashes right after the value would change the answer of a parser that
   read past [len]. *)
let placements = [ (0, '\r'); (5, '9'); (11, ','); (3, '-'); (1, ' ') ]

type expect =
  | P of Range.parse_result  (** parse fails with this *)
  | R of int * Range.resolution * (int * int) list
      (** parse is [Valid]; [resolve ~length] gives this *)

let check_vector ?(max_ranges = Range.default_max_ranges) name input expect =
  List.iter
    (fun (off, garbage) ->
      let where = Printf.sprintf "%s (off %d, garbage %C)" name off garbage in
      let t = Range.create ~max_ranges () in
      let buf = S.bigstring_at ~garbage ~off input in
      let r = Range.parse t buf ~off ~len:(String.length input) in
      match expect with
      | P e ->
        Alcotest.check parse_result (where ^ ": parse") e r;
        Alcotest.(check int) (where ^ ": no spec kept") 0 (Range.spec_count t);
        Alcotest.check resolution (where ^ ": resolve after failure") Range.Unsatisfiable
          (Range.resolve t ~length:1000);
        Alcotest.(check int) (where ^ ": count") 0 (Range.count t)
      | R (length, res, expected) ->
        Alcotest.check parse_result (where ^ ": parse") Range.Valid r;
        Alcotest.check resolution (where ^ ": resolve") res (Range.resolve t ~length);
        Alcotest.check ivs (where ^ ": intervals") expected (intervals t))
    placements

let vectors name cases =
  Alcotest.test_case name `Quick (fun () ->
      List.iter (fun (input, expect) -> check_vector (String.escaped input) input expect) cases)

(* RFC 9110 §14.1.2, representation of 10000 bytes. *)
let rfc_examples =
  let n = 10000 in
  [ "bytes=0-499", R (n, Satisfiable, [ (0, 499) ]);
    "bytes=500-999", R (n, Satisfiable, [ (500, 999) ]);
    "bytes=-500", R (n, Satisfiable, [ (9500, 9999) ]);
    "bytes=9500-", R (n, Satisfiable, [ (9500, 9999) ]);
    "bytes=0-0,-1", R (n, Satisfiable, [ (0, 0); (9999, 9999) ]);
    "bytes= 0-999, 4500-5499, -1000",
    R (n, Satisfiable, [ (0, 999); (4500, 5499); (9000, 9999) ]);
    (* "Other valid (but not canonical) specifications of the second 500
       bytes": coalesced into the one interval they describe. *)
    "bytes=500-600,601-999", R (n, Satisfiable, [ (500, 999) ]);
    "bytes=500-700,601-999", R (n, Satisfiable, [ (500, 999) ]) ]

let resolution_cases =
  let n = 10000 in
  [ (* last-pos past the end is clamped to length - 1 *)
    "bytes=0-20000", R (n, Satisfiable, [ (0, 9999) ]);
    "bytes=9999-9999", R (n, Satisfiable, [ (9999, 9999) ]);
    "bytes=0-", R (n, Satisfiable, [ (0, 9999) ]);
    (* suffix longer than the representation: the whole of it *)
    "bytes=-20000", R (n, Satisfiable, [ (0, 9999) ]);
    "bytes=-10000", R (n, Satisfiable, [ (0, 9999) ]);
    (* unsatisfiable: first-pos at or past the end, zero suffix *)
    "bytes=10000-", R (n, Unsatisfiable, []);
    "bytes=10000-20000", R (n, Unsatisfiable, []);
    "bytes=-0", R (n, Unsatisfiable, []);
    "bytes=-0,10000-,20000-30000", R (n, Unsatisfiable, []);
    (* one unsatisfiable spec among satisfiable ones is dropped *)
    "bytes=20000-,0-9", R (n, Satisfiable, [ (0, 9) ]);
    "bytes=-0,5-", R (n, Satisfiable, [ (5, 9999) ]);
    (* disjoint ranges keep the request's order (RFC 9110 §15.3.7.2) *)
    "bytes=500-599,0-99", R (n, Satisfiable, [ (500, 599); (0, 99) ]);
    "bytes=-1,0-0", R (n, Satisfiable, [ (9999, 9999); (0, 0) ]);
    "bytes=0-0,2-2,4-4", R (n, Satisfiable, [ (0, 0); (2, 2); (4, 4) ]);
    (* overlapping / touching ranges merge, at the earliest one's place *)
    "bytes=0-10,5-15,12-20", R (n, Satisfiable, [ (0, 20) ]);
    "bytes=500-599,0-99,100-499", R (n, Satisfiable, [ (0, 599) ]);
    "bytes=900-999,0-9,500-599,100-499",
    R (n, Satisfiable, [ (900, 999); (0, 9); (100, 599) ]);
    "bytes=0-0,2-2,1-1", R (n, Satisfiable, [ (0, 2) ]);
    "bytes=0-,-1,5-6", R (n, Satisfiable, [ (0, 9999) ]);
    "bytes=0-0,0-0,0-0", R (n, Satisfiable, [ (0, 0) ]);
    (* a range flood of overlapping whole-file ranges cannot amplify *)
    ("bytes=" ^ String.concat "," (List.init 16 (fun _ -> "0-")), R (n, Satisfiable, [ (0, 9999) ]));
    (* lexical leniencies *)
    "BYTES=0-1", R (n, Satisfiable, [ (0, 1) ]);
    "Bytes=0-1", R (n, Satisfiable, [ (0, 1) ]);
    "bytes=0-1 , 5-6", R (n, Satisfiable, [ (0, 1); (5, 6) ]);
    "bytes=0-1,\t5-6\t", R (n, Satisfiable, [ (0, 1); (5, 6) ]);
    " bytes=0-1 ", R (n, Satisfiable, [ (0, 1) ]);
    "bytes=0-1,,5-6", R (n, Satisfiable, [ (0, 1); (5, 6) ]);
    "bytes=,0-1,", R (n, Satisfiable, [ (0, 1) ]);
    "bytes=, ,0-1", R (n, Satisfiable, [ (0, 1) ]);
    (* leading zeros are DIGITs and are not counted against any cap *)
    "bytes=000000000000000000000000500-0999", R (n, Satisfiable, [ (500, 999) ]);
    "bytes=-00000000000000000000001", R (n, Satisfiable, [ (9999, 9999) ]) ]

let invalid_cases =
  [ "bytes=5-1", P Invalid;
    "bytes=", P Invalid;
    "bytes= ", P Invalid;
    "bytes=,", P Invalid;
    "bytes=, ,", P Invalid;
    "bytes=a-b", P Invalid;
    "bytes=0-b", P Invalid;
    "bytes=-", P Invalid;
    "bytes=1", P Invalid;
    "bytes=--1", P Invalid;
    "bytes=1--2", P Invalid;
    "bytes=0--1", P Invalid;
    "bytes=+1-2", P Invalid;
    "bytes=1-+2", P Invalid;
    "bytes=-+1", P Invalid;
    "bytes=-1-2", P Invalid;
    "bytes=1 -2", P Invalid;
    "bytes=1- 2", P Invalid;
    "bytes=- 1", P Invalid;
    "bytes=1 2-3", P Invalid;
    "bytes=0-1 2-3", P Invalid;
    "bytes=0-1;2-3", P Invalid;
    "bytes=0x10-20", P Invalid;
    "bytes=1_000-2000", P Invalid;
    "bytes=1.5-2", P Invalid;
    "bytes=0-1,5-1", P Invalid;
    "bytes=0-1,x", P Invalid;
    "bytes=0-1\r\n", P Invalid;
    "bytes=0-1\x00", P Invalid;
    "bytes =0-1", P Invalid;
    "bytes= =0-1", P Invalid;
    "=0-1", P Invalid;
    "", P Invalid;
    " ", P Invalid;
    "bytes", P Invalid;
    "bytes:0-1", P Invalid;
    "b ytes=0-1", P Invalid;
    "\"bytes\"=0-1", P Invalid;
    (* huge numbers: more than max_int (4611686018427387903) is refused *)
    "bytes=0-99999999999999999999", P Invalid;
    "bytes=99999999999999999999-", P Invalid;
    "bytes=-99999999999999999999", P Invalid;
    "bytes=4611686018427387904-", P Invalid;
    "bytes=0-4611686018427387904", P Invalid;
    "bytes=-4611686018427387904", P Invalid;
    "bytes=0-18446744073709551616", P Invalid;
    (* other units: a valid token that is not "bytes" *)
    "items=0-1", P Not_bytes;
    "byte=0-1", P Not_bytes;
    "bytesx=0-1", P Not_bytes;
    "none=", P Not_bytes;
    "x=", P Not_bytes ]

let boundary_numbers =
  let mx = max_int in
  [ (* max_int itself is accepted *)
    "bytes=4611686018427387903-", R (mx, Unsatisfiable, []);
    "bytes=0-4611686018427387903", R (mx, Satisfiable, [ (0, mx - 1) ]);
    "bytes=-4611686018427387903", R (mx, Satisfiable, [ (0, mx - 1) ]);
    "bytes=4611686018427387902-4611686018427387903", R (mx, Satisfiable, [ (mx - 1, mx - 1) ]);
    "bytes=-1", R (mx, Satisfiable, [ (mx - 1, mx - 1) ]) ]

(* Files above 4 GiB: no 32-bit truncation anywhere. *)
let large_lengths =
  let five_g = 5_000_000_000 in
  [ "bytes=4294967296-4294967300", R (five_g, Satisfiable, [ (4294967296, 4294967300) ]);
    "bytes=-1", R (five_g, Satisfiable, [ (4999999999, 4999999999) ]);
    "bytes=4294967295-", R (five_g, Satisfiable, [ (4294967295, 4999999999) ]);
    "bytes=0-0,4999999999-", R (five_g, Satisfiable, [ (0, 0); (4999999999, 4999999999) ]);
    "bytes=5000000000-", R (five_g, Unsatisfiable, []);
    "bytes=-4294967297", R (five_g, Satisfiable, [ (five_g - 4294967297, 4999999999) ]) ]

(* RFC 9110 §14.1.2: "If the selected representation has zero length, the
   only satisfiable form of range-spec is a suffix-range with a non-zero
   suffix-length" -- and no first-last pair can name zero bytes. *)
let zero_length =
  [ "bytes=0-", R (0, Unsatisfiable, []);
    "bytes=0-0", R (0, Unsatisfiable, []);
    "bytes=-0", R (0, Unsatisfiable, []);
    "bytes=-1", R (0, Empty, []);
    "bytes=0-0,-5", R (0, Empty, []);
    "bytes=-0,-0", R (0, Unsatisfiable, []) ]

let one_byte =
  [ "bytes=0-", R (1, Satisfiable, [ (0, 0) ]);
    "bytes=-1", R (1, Satisfiable, [ (0, 0) ]);
    "bytes=-2", R (1, Satisfiable, [ (0, 0) ]);
    "bytes=1-", R (1, Unsatisfiable, []);
    "bytes=0-5", R (1, Satisfiable, [ (0, 0) ]) ]

let ranges n = "bytes=" ^ String.concat "," (List.init n (fun i -> Printf.sprintf "%d-%d" (3 * i) (3 * i)))

let test_bound () =
  let at16 = List.init 16 (fun i -> (3 * i, 3 * i)) in
  check_vector "16 ranges, default bound" (ranges 16) (R (1000, Satisfiable, at16));
  check_vector "17 ranges, default bound" (ranges 17) (P Too_many);
  check_vector "1000 ranges" (ranges 1000) (P Too_many);
  check_vector ~max_ranges:2 "2 of 2" "bytes=0-1,3-4" (R (10, Satisfiable, [ (0, 1); (3, 4) ]));
  check_vector ~max_ranges:2 "3 of 2" "bytes=0-1,3-4,6-7" (P Too_many);
  (* empty elements are not range-specs *)
  check_vector ~max_ranges:2 "empties do not count" "bytes=,0-1,,3-4,," (R (10, Satisfiable, [ (0, 1); (3, 4) ]));
  check_vector ~max_ranges:1 "1 of 1" "bytes=0-1" (R (10, Satisfiable, [ (0, 1) ]));
  check_vector ~max_ranges:1 "2 of 1" "bytes=0-1,3-4" (P Too_many);
  (* a malformed element before the bound wins; after it is not read *)
  check_vector ~max_ranges:2 "malformed first" "bytes=0-1,x,6-7" (P Invalid);
  check_vector ~max_ranges:2 "malformed after bound" "bytes=0-1,3-4,6-7,x" (P Too_many);
  check_vector ~max_ranges:2 "malformed third" "bytes=0-1,3-4,6-7x" (P Invalid);
  (* the bound counts specs, before coalescing *)
  check_vector ~max_ranges:2 "overlaps still count" "bytes=0-,0-,0-" (P Too_many);
  let t = Range.create ~max_ranges:256 () in
  Alcotest.(check int) "max_ranges" 256 (Range.max_ranges t);
  Alcotest.(check int) "default" 16 (Range.max_ranges (Range.create ()));
  List.iter
    (fun m ->
      Alcotest.check_raises (Printf.sprintf "create %d" m)
        (Invalid_argument "Httpz.Range.create: max_ranges") (fun () ->
          ignore (Range.create ~max_ranges:m ())))
    [ 0; -1; 257; max_int ];
  let buf = Bigstring.of_string (ranges 256) in
  Alcotest.check parse_result "256 of 256" Range.Valid
    (Range.parse t buf ~off:0 ~len:(Bigstring.length buf));
  Alcotest.(check int) "256 specs" 256 (Range.spec_count t);
  Alcotest.check resolution "256 resolve" Range.Satisfiable (Range.resolve t ~length:max_int);
  Alcotest.(check int) "256 intervals" 256 (Range.count t)

let test_spec_count_and_reuse () =
  let t = Range.create () in
  let parse s =
    let b = Bigstring.of_string s in
    Range.parse t b ~off:0 ~len:(String.length s)
  in
  Alcotest.check parse_result "three" Range.Valid (parse "bytes=0-1,,-5, 7-");
  Alcotest.(check int) "three specs" 3 (Range.spec_count t);
  Alcotest.(check int) "no resolve yet" 0 (Range.count t);
  (* resolve does not consume the specs: another length, another answer *)
  Alcotest.check resolution "len 100" Range.Satisfiable (Range.resolve t ~length:100);
  (* 7- overlaps the suffix 95-99: merged, at the suffix's place *)
  Alcotest.check ivs "len 100" [ (0, 1); (7, 99) ] (intervals t);
  Alcotest.check resolution "len 1000" Range.Satisfiable (Range.resolve t ~length:1000);
  Alcotest.check ivs "len 1000" [ (0, 1); (7, 999) ] (intervals t);
  Alcotest.check resolution "len 8" Range.Satisfiable (Range.resolve t ~length:8);
  Alcotest.check ivs "len 8" [ (0, 1); (3, 7) ] (intervals t);
  Alcotest.check resolution "len 3" Range.Satisfiable (Range.resolve t ~length:3);
  Alcotest.check ivs "len 3" [ (0, 2) ] (intervals t);
  Alcotest.check resolution "len 0" Range.Empty (Range.resolve t ~length:0);
  Alcotest.(check int) "len 0 count" 0 (Range.count t);
  Alcotest.check_raises "negative length" (Invalid_argument "Httpz.Range.resolve: negative length")
    (fun () -> ignore (Range.resolve t ~length:(-1)));
  (* a failed parse clears the previous one *)
  Alcotest.check parse_result "invalid" Range.Invalid (parse "bytes=0-1,junk");
  Alcotest.(check int) "cleared" 0 (Range.spec_count t);
  Alcotest.(check int) "count cleared" 0 (Range.count t);
  Alcotest.check parse_result "valid again" Range.Valid (parse "bytes=5-");
  Alcotest.check resolution "valid again" Range.Satisfiable (Range.resolve t ~length:10);
  Alcotest.check ivs "valid again" [ (5, 9) ] (intervals t)

(* -- Content-Range writers ----------------------------------------------- *)

let written f =
  let b = Bigstring.create 100 in
  Bigarray.Array1.fill b '#';
  let stop = f b 7 in
  Alcotest.(check char) "byte before untouched" '#' (Bigstring.unsafe_get b 6);
  Alcotest.(check char) "byte after untouched" '#' (Bigstring.unsafe_get b stop);
  Bigstring.sub_string b ~off:7 ~len:(stop - 7)

let test_write_content_range () =
  let cr first last length =
    written (fun b off -> Range.write_content_range b ~off ~first ~last ~length)
  in
  Alcotest.(check string) "rfc" "bytes 0-499/1234" (cr 0 499 1234);
  Alcotest.(check string) "rfc 2" "bytes 21010-47021/47022" (cr 21010 47021 47022);
  Alcotest.(check string) "one byte" "bytes 0-0/1" (cr 0 0 1);
  Alcotest.(check string) "> 4 GiB" "bytes 4294967296-4999999999/5000000000"
    (cr 4294967296 4999999999 5000000000);
  let m = string_of_int max_int and m1 = string_of_int (max_int - 1) in
  Alcotest.(check string) "max" (Printf.sprintf "bytes %s-%s/%s" m1 m1 m) (cr (max_int - 1) (max_int - 1) max_int);
  Alcotest.(check int) "max length" Range.content_range_max_length
    (String.length (Printf.sprintf "bytes %d-%d/%d" max_int max_int max_int));
  List.iter
    (fun (first, last, length) ->
      Alcotest.check_raises
        (Printf.sprintf "refuses %d-%d/%d" first last length)
        (Invalid_argument "Httpz.Range.write_content_range: need 0 <= first <= last < length")
        (fun () -> ignore (cr first last length)))
    [ (5, 4, 10); (-1, 4, 10); (0, 10, 10); (0, 0, 0); (0, 11, 10) ];
  (* exact fit at the end of a buffer, and one byte short *)
  let b = Bigstring.create 16 in
  Alcotest.(check int) "exact fit" 16 (Range.write_content_range b ~off:0 ~first:0 ~last:499 ~length:1234);
  Alcotest.(check string) "exact fit text" "bytes 0-499/1234" (Bigstring.to_string b);
  Alcotest.check_raises "one short" (Invalid_argument "Httpz.Range.write_content_range: buffer too small")
    (fun () -> ignore (Range.write_content_range b ~off:1 ~first:0 ~last:499 ~length:1234));
  Alcotest.check_raises "negative off" (Invalid_argument "Httpz.Range.write_content_range: buffer too small")
    (fun () -> ignore (Range.write_content_range b ~off:(-1) ~first:0 ~last:0 ~length:1))

let test_write_unsatisfied () =
  let un length = written (fun b off -> Range.write_unsatisfied b ~off ~length) in
  Alcotest.(check string) "rfc" "bytes */1234" (un 1234);
  Alcotest.(check string) "zero" "bytes */0" (un 0);
  Alcotest.(check string) "> 4 GiB" "bytes */5000000000" (un 5000000000);
  Alcotest.(check string) "max" ("bytes */" ^ string_of_int max_int) (un max_int);
  Alcotest.check_raises "negative" (Invalid_argument "Httpz.Range.write_unsatisfied: negative length")
    (fun () -> ignore (un (-1)));
  let b = Bigstring.create 12 in
  Alcotest.(check int) "exact fit" 12 (Range.write_unsatisfied b ~off:0 ~length:1234);
  Alcotest.check_raises "one short" (Invalid_argument "Httpz.Range.write_unsatisfied: buffer too small")
    (fun () -> ignore (Range.write_unsatisfied b ~off:1 ~length:1234))

(* -- Model ----------------------------------------------------------------- *)

(* A slow, obviously correct reading of RFC 9110 §14.1.2 with the
   leniencies Range.mli documents, on OCaml strings. *)
module Model = struct
  type spec = Int of int * int option | Suffix of int

  let is_ows c = c = ' ' || c = '\t'
  let is_digit c = c >= '0' && c <= '9'

  let is_tchar c =
    match c with
    | '0' .. '9' | 'a' .. 'z' | 'A' .. 'Z'
    | '!' | '#' | '$' | '%' | '&' | '\'' | '*' | '+' | '-' | '.' | '^' | '_' | '`' | '|' | '~' -> true
    | _ -> false

  let trim s =
    let n = String.length s in
    let i = ref 0 and j = ref n in
    while !i < n && is_ows s.[!i] do incr i done;
    while !j > !i && is_ows s.[!j - 1] do decr j done;
    String.sub s !i (!j - !i)

  let all p s = String.length s > 0 && String.for_all p s

  (* [Some n] for 1*DIGIT within max_int, [None] otherwise *)
  let number s =
    if not (all is_digit s) then None
    else begin
      let i = ref 0 in
      while !i < String.length s - 1 && s.[!i] = '0' do incr i done;
      let d = String.sub s !i (String.length s - !i) in
      let m = string_of_int max_int in
      if String.length d > String.length m || (String.length d = String.length m && d > m) then None
      else Some (int_of_string d)
    end

  let spec e =
    match String.index_opt e '-' with
    | None -> None
    | Some 0 -> Option.map (fun n -> Suffix n) (number (String.sub e 1 (String.length e - 1)))
    | Some i -> (
      let f = number (String.sub e 0 i) and rest = String.sub e (i + 1) (String.length e - i - 1) in
      match f with
      | None -> None
      | Some f ->
        if rest = "" then Some (Int (f, None))
        else (
          match number rest with Some l when l >= f -> Some (Int (f, Some l)) | _ -> None))

  let parse ~max_ranges s =
    (* OWS before the unit; trailing OWS belongs to the last element *)
    let s =
      let i = ref 0 in
      while !i < String.length s && is_ows s.[!i] do incr i done;
      String.sub s !i (String.length s - !i)
    in
    match String.index_opt s '=' with
    | None -> (Range.Invalid, [])
    | Some i ->
      let unit = String.sub s 0 i in
      if not (all is_tchar unit) then (Range.Invalid, [])
      else if String.lowercase_ascii unit <> "bytes" then (Range.Not_bytes, [])
      else begin
        let elems = String.split_on_char ',' (String.sub s (i + 1) (String.length s - i - 1)) in
        let rec go acc n = function
          | [] -> if n = 0 then (Range.Invalid, []) else (Range.Valid, List.rev acc)
          | e :: rest -> (
            let e = trim e in
            if e = "" then go acc n rest
            else
              match spec e with
              | None -> (Range.Invalid, [])
              | Some sp -> if n = max_ranges then (Range.Too_many, []) else go (sp :: acc) (n + 1) rest)
        in
        go [] 0 elems
      end

  (* Raw intervals in request order, then merge touching pairs, keeping
     the earlier position, until none touch. *)
  let resolve ~length specs =
    let raw =
      List.filter_map
        (function
          | Int (f, l) ->
            if f >= length then None
            else Some (f, match l with Some l when l < length -> l | _ -> length - 1)
          | Suffix n -> if n = 0 || length = 0 then None else Some (max 0 (length - n), length - 1))
        specs
    in
    let touch (a, b) (c, d) = a <= d + 1 && c <= b + 1 in
    let rec merge l =
      let a = Array.of_list l in
      let n = Array.length a in
      let found = ref None in
      for i = n - 1 downto 0 do
        for j = n - 1 downto i + 1 do
          if touch a.(i) a.(j) then found := Some (i, j)
        done
      done;
      match !found with
      | None -> l
      | Some (i, j) ->
        let (s1, e1) = a.(i) and (s2, e2) = a.(j) in
        a.(i) <- (min s1 s2, max e1 e2);
        merge (List.filteri (fun k _ -> k <> j) (Array.to_list a))
    in
    let out = merge raw in
    if out <> [] then (Range.Satisfiable, out)
    else if length = 0 && List.exists (function Suffix n -> n > 0 | _ -> false) specs then (Range.Empty, [])
    else (Range.Unsatisfiable, [])
end

(* -- Properties ---------------------------------------------------------- *)

let tokens =
  [ "bytes="; "BYTES="; "items="; "bytes"; "="; "-"; "-"; "-"; ","; ","; " "; "\t"; "0"; "1"; "5"; "9";
    "12"; "00"; "99999999999999999999"; "4611686018427387903"; "4611686018427387904"; "a"; "+";
    ";"; "\r"; "\n"; "\000"; "\255"; "\"" ]

let gen_header =
  let open QCheck2.Gen in
  let toks = map (String.concat "") (list_size (int_range 0 14) (oneofl tokens)) in
  frequency [ (5, map (fun s -> "bytes=" ^ s) toks); (2, toks); (2, string); (1, string_size (int_range 0 8)) ]

let lengths = [ 0; 1; 2; 7; 13; 100; 5_000_000_000; max_int ]

let check_invariants t ~length =
  let l = intervals t in
  List.iter (fun (s, e) -> if not (0 <= s && s <= e && e < length) then QCheck2.Test.fail_reportf "interval %d-%d outside [0,%d)" s e length) l;
  List.iteri
    (fun i (a, b) ->
      List.iteri
        (fun j (c, d) -> if i < j && a <= d + 1 && c <= b + 1 then QCheck2.Test.fail_reportf "intervals %d-%d and %d-%d touch" a b c d)
        l)
    l;
  let total = List.fold_left (fun acc (s, e) -> acc + (e - s + 1)) 0 l in
  if total > length then QCheck2.Test.fail_reportf "total %d > length %d" total length

let agrees_with_model ~max_ranges s =
  let t = Range.create ~max_ranges () in
  let off = 3 in
  let buf = S.bigstring_at ~garbage:'1' ~off s in
  let r = Range.parse t buf ~off ~len:(String.length s) in
  let mr, specs = Model.parse ~max_ranges s in
  if r <> mr then QCheck2.Test.fail_reportf "parse %s, model %s" (show_parse r) (show_parse mr);
  if r = Range.Valid && Range.spec_count t <> List.length specs then
    QCheck2.Test.fail_reportf "spec_count %d, model %d" (Range.spec_count t) (List.length specs);
  if r <> Range.Valid && Range.spec_count t <> 0 then QCheck2.Test.fail_report "specs kept after failure";
  List.iter
    (fun length ->
      let res = Range.resolve t ~length in
      let mres, mivs = Model.resolve ~length specs in
      if res <> mres then
        QCheck2.Test.fail_reportf "length %d: resolve %s, model %s" length (show_resolution res) (show_resolution mres);
      if intervals t <> mivs then QCheck2.Test.fail_reportf "length %d: intervals differ from model" length;
      check_invariants t ~length)
    lengths;
  true

let prop_model =
  QCheck2.Test.make ~name:"parse and resolve agree with the model; never raise" ~count:3000
    ~print:String.escaped gen_header (agrees_with_model ~max_ranges:4)

let prop_model_default =
  QCheck2.Test.make ~name:"model agreement, default bound" ~count:1000 ~print:String.escaped gen_header
    (agrees_with_model ~max_ranges:Range.default_max_ranges)

(* Well-formed headers rendered from random specs, with random OWS and
   empty elements, over lengths around the numbers used. *)
let gen_specs =
  let open QCheck2.Gen in
  let num = frequency [ (4, int_range 0 60); (1, int_range 0 max_int); (1, int_range 4_294_967_000 4_294_968_000) ] in
  let spec =
    frequency
      [ (3, map2 (fun a b -> (a, Some (a + b))) num (int_range 0 30));
        (1, map (fun a -> (a, None)) num);
        (2, map (fun n -> (-1, Some n)) num) ]
  in
  let ws = oneofl [ ""; ""; " "; "\t"; "  " ] in
  let elem = map2 (fun (f, l) (w1, w2) ->
      let core = match (f, l) with
        | -1, Some n -> Printf.sprintf "-%d" n
        | f, None -> Printf.sprintf "%d-" f
        | f, Some l -> Printf.sprintf "%d-%d" f l
      in
      w1 ^ core ^ w2) spec (pair ws ws)
  in
  let elems = list_size (int_range 1 16) (frequency [ (8, elem); (1, ws) ]) in
  map2 (fun es u -> u ^ String.concat "," es) elems (oneofl [ "bytes="; "Bytes="; "bytes= " ])

let prop_rendered =
  QCheck2.Test.make ~name:"rendered specs: model agreement and interval invariants" ~count:2000
    ~print:String.escaped gen_specs (fun s ->
      (* a+b may exceed max_int for huge a: the model then says Invalid *)
      agrees_with_model ~max_ranges:16 s)

(* Arbitrary bytes, any length, never an exception. *)
let prop_total =
  QCheck2.Test.make ~name:"parse never raises on arbitrary bytes" ~count:5000 ~print:String.escaped
    QCheck2.Gen.(string_size (int_range 0 64))
    (fun s ->
      let t = Range.create ~max_ranges:3 () in
      let buf = S.bigstring_at ~off:2 s in
      let r = Range.parse t buf ~off:2 ~len:(String.length s) in
      (match r with
       | Range.Valid -> assert (Range.spec_count t >= 1 && Range.spec_count t <= 3)
       | _ -> assert (Range.spec_count t = 0));
      List.iter (fun length -> ignore (Range.resolve t ~length); check_invariants t ~length) lengths;
      true)

(* -- Zero allocation ----------------------------------------------------- *)

let zero_alloc_tests =
  let t = Range.create () in
  let header = "bytes=0-499, 1000-, -500, 200-300,,9500-9999" in
  let buf = Bigstring.of_string header and len = String.length header in
  let inv = Bigstring.of_string "bytes=0-1,2-3,5-x" in
  let many = Bigstring.of_string (ranges 17) in
  let items = Bigstring.of_string "items=0-1" in
  let out = Bigstring.create 128 in
  ignore (Range.parse t buf ~off:0 ~len);
  [ S.zero_alloc "parse" (fun () -> ignore (Range.parse t buf ~off:0 ~len));
    S.zero_alloc "parse Invalid" (fun () -> ignore (Range.parse t inv ~off:0 ~len:(Bigstring.length inv)));
    S.zero_alloc "parse Too_many" (fun () -> ignore (Range.parse t many ~off:0 ~len:(Bigstring.length many)));
    S.zero_alloc "parse Not_bytes" (fun () -> ignore (Range.parse t items ~off:0 ~len:(Bigstring.length items)));
    S.zero_alloc "parse + resolve" (fun () ->
        ignore (Range.parse t buf ~off:0 ~len);
        ignore (Range.resolve t ~length:10000));
    S.zero_alloc "resolve (coalescing)" (fun () ->
        ignore (Range.parse t buf ~off:0 ~len);
        ignore (Range.resolve t ~length:600));
    S.zero_alloc "resolve > 4 GiB" (fun () ->
        ignore (Range.parse t buf ~off:0 ~len);
        ignore (Range.resolve t ~length:5_000_000_000));
    S.zero_alloc "count/start/stop" (fun () ->
        ignore (Range.parse t buf ~off:0 ~len);
        ignore (Range.resolve t ~length:10000);
        let acc = ref 0 in
        for i = 0 to Range.count t - 1 do
          acc := !acc + Range.stop t i - Range.start t i
        done;
        ignore (Sys.opaque_identity !acc));
    S.zero_alloc "write_content_range" (fun () ->
        ignore (Range.write_content_range out ~off:3 ~first:4294967296 ~last:4999999999 ~length:5000000000));
    S.zero_alloc "write_unsatisfied" (fun () -> ignore (Range.write_unsatisfied out ~off:3 ~length:max_int)) ]

let () =
  Alcotest.run "range"
    [ ( "parse+resolve",
        [ vectors "RFC 9110 14.1.2 examples" rfc_examples;
          vectors "resolution and coalescing" resolution_cases;
          vectors "invalid and other units" invalid_cases;
          vectors "numbers at max_int" boundary_numbers;
          vectors "lengths above 4 GiB" large_lengths;
          vectors "length 0" zero_length;
          vectors "length 1" one_byte;
          Alcotest.test_case "max_ranges bound" `Quick test_bound;
          Alcotest.test_case "spec_count, reuse, re-resolve" `Quick test_spec_count_and_reuse ] );
      ( "writers",
        [ Alcotest.test_case "write_content_range" `Quick test_write_content_range;
          Alcotest.test_case "write_unsatisfied" `Quick test_write_unsatisfied ] );
      ( "properties",
        [ S.qcheck prop_model; S.qcheck prop_model_default; S.qcheck prop_rendered; S.qcheck prop_total ] );
      ("zero-alloc", zero_alloc_tests) ]
