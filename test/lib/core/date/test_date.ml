(* Tests for Httpz.Date: the three HTTP-date formats of RFC 9110 §5.6.7,
   calendar validation, the two-digit-year window, the IMF-fixdate writer
   against Unix.gmtime, and the per-second cache. *)

open Httpz
module S = Httpz_test_support

(* 2025-01-01T00:00:00Z: the "now" of the rfc850 vectors. *)
let now_2025 = 1735689600

(* ---------- independent references ---------- *)

let short_days = [| "Sun"; "Mon"; "Tue"; "Wed"; "Thu"; "Fri"; "Sat" |]
let long_days = [| "Sunday"; "Monday"; "Tuesday"; "Wednesday"; "Thursday"; "Friday"; "Saturday" |]

let months =
  [| "Jan"; "Feb"; "Mar"; "Apr"; "May"; "Jun"; "Jul"; "Aug"; "Sep"; "Oct"; "Nov"; "Dec" |]

let gm t = Unix.gmtime (float_of_int t)

let ref_imf t =
  let tm = gm t in
  Printf.sprintf "%s, %02d %s %04d %02d:%02d:%02d GMT" short_days.(tm.tm_wday) tm.tm_mday
    months.(tm.tm_mon) (tm.tm_year + 1900) tm.tm_hour tm.tm_min tm.tm_sec

let ref_rfc850 t =
  let tm = gm t in
  Printf.sprintf "%s, %02d-%s-%02d %02d:%02d:%02d GMT" long_days.(tm.tm_wday) tm.tm_mday
    months.(tm.tm_mon) ((tm.tm_year + 1900) mod 100) tm.tm_hour tm.tm_min tm.tm_sec

let ref_asctime t =
  let tm = gm t in
  Printf.sprintf "%s %s %2d %02d:%02d:%02d %04d" short_days.(tm.tm_wday) months.(tm.tm_mon)
    tm.tm_mday tm.tm_hour tm.tm_min tm.tm_sec (tm.tm_year + 1900)

(* Unix time of a civil date by counting days year by year: slow, and
   obviously right, unlike the closed form under test. *)
let timegm y mo d h mi s =
  let leap y = (y mod 4 = 0 && y mod 100 <> 0) || y mod 400 = 0 in
  let mdays = [| 31; 28; 31; 30; 31; 30; 31; 31; 30; 31; 30; 31 |] in
  let days = ref 0 in
  if y >= 1970 then for yy = 1970 to y - 1 do days := !days + if leap yy then 366 else 365 done
  else for yy = y to 1969 do days := !days - if leap yy then 366 else 365 done;
  for m = 1 to mo - 1 do
    days := !days + mdays.(m - 1) + if m = 2 && leap y then 1 else 0
  done;
  days := !days + d - 1;
  (!days * 86400) + (h * 3600) + (mi * 60) + s

(* ---------- parsing vectors ---------- *)

(* (input, now, expected) *)
let valid =
  [ (* RFC 9110 §5.6.7: the same instant in all three formats. *)
    "Sun, 06 Nov 1994 08:49:37 GMT", now_2025, 784111777;
    "Sunday, 06-Nov-94 08:49:37 GMT", now_2025, 784111777;
    "Sun Nov  6 08:49:37 1994", now_2025, 784111777;
    (* asctime also takes a two-digit day *)
    "Sun Nov 06 08:49:37 1994", now_2025, 784111777;
    "Thu, 01 Jan 1970 00:00:00 GMT", now_2025, 0;
    "Thursday, 01-Jan-70 00:00:00 GMT", timegm 1990 1 1 0 0 0, 0;
    (* ... but in 2025 "70" is 2070: 45 years ahead, not more than 50 *)
    "Thursday, 01-Jan-70 00:00:00 GMT", now_2025, timegm 2070 1 1 0 0 0;
    "Thu Jan  1 00:00:00 1970", now_2025, 0;
    "Tue, 19 Jan 2038 03:14:07 GMT", now_2025, 2147483647;
    "Tue, 19 Jan 2038 03:14:08 GMT", now_2025, 2147483648;
    "Fri, 31 Dec 9999 23:59:59 GMT", now_2025, 253402300799;
    "Fri Dec 31 23:59:59 9999", now_2025, 253402300799;
    (* leap years: 2000 (div by 400) and 2024 have Feb 29 *)
    "Tue, 29 Feb 2000 12:00:00 GMT", now_2025, timegm 2000 2 29 12 0 0;
    "Thu, 29 Feb 2024 00:00:00 GMT", now_2025, timegm 2024 2 29 0 0 0;
    "Sat, 29 Feb 2400 00:00:00 GMT", now_2025, timegm 2400 2 29 0 0 0;
    "Sat, 31 Dec 2022 23:59:59 GMT", now_2025, timegm 2022 12 31 23 59 59;
    "Sun, 30 Apr 2023 10:00:00 GMT", now_2025, timegm 2023 4 30 10 0 0;
    (* a leap second counts as the next minute's second 0 *)
    "Sat, 31 Dec 2016 23:59:60 GMT", now_2025, timegm 2017 1 1 0 0 0;
    (* the weekday is spelled right but wrong for the date: accepted *)
    "Mon, 06 Nov 1994 08:49:37 GMT", now_2025, 784111777;
    "Wednesday, 06-Nov-94 08:49:37 GMT", now_2025, 784111777;
    (* every long day name *)
    "Monday, 07-Nov-94 08:49:37 GMT", now_2025, 784111777 + 86400;
    "Tuesday, 08-Nov-94 08:49:37 GMT", now_2025, 784111777 + (2 * 86400);
    "Thursday, 10-Nov-94 08:49:37 GMT", now_2025, 784111777 + (4 * 86400);
    "Friday, 11-Nov-94 08:49:37 GMT", now_2025, 784111777 + (5 * 86400);
    "Saturday, 12-Nov-94 08:49:37 GMT", now_2025, 784111777 + (6 * 86400);
    (* two-digit years, now = 2025: the window is 1976 .. 2075 *)
    "Friday, 01-Jan-75 00:00:00 GMT", now_2025, timegm 2075 1 1 0 0 0;
    "Thursday, 01-Jan-76 00:00:00 GMT", now_2025, timegm 1976 1 1 0 0 0;
    "Saturday, 01-Jan-00 00:00:00 GMT", now_2025, timegm 2000 1 1 0 0 0;
    "Monday, 31-Dec-99 23:59:59 GMT", now_2025, timegm 1999 12 31 23 59 59;
    (* late in a century, the window reaches into the next one *)
    "Saturday, 01-Jan-01 00:00:00 GMT", timegm 2099 6 1 0 0 0, timegm 2101 1 1 0 0 0;
    "Saturday, 01-Jan-50 00:00:00 GMT", timegm 2099 6 1 0 0 0, timegm 2050 1 1 0 0 0;
    (* now = 1990: 40 -> 2040 (50 years ahead, not more) *)
    "Sunday, 01-Jan-40 00:00:00 GMT", timegm 1990 1 1 0 0 0, timegm 2040 1 1 0 0 0;
    (* all twelve months *)
    "Wed, 15 Jan 2020 00:00:00 GMT", now_2025, timegm 2020 1 15 0 0 0;
    "Sat, 15 Feb 2020 00:00:00 GMT", now_2025, timegm 2020 2 15 0 0 0;
    "Sun, 15 Mar 2020 00:00:00 GMT", now_2025, timegm 2020 3 15 0 0 0;
    "Wed, 15 Apr 2020 00:00:00 GMT", now_2025, timegm 2020 4 15 0 0 0;
    "Fri, 15 May 2020 00:00:00 GMT", now_2025, timegm 2020 5 15 0 0 0;
    "Mon, 15 Jun 2020 00:00:00 GMT", now_2025, timegm 2020 6 15 0 0 0;
    "Wed, 15 Jul 2020 00:00:00 GMT", now_2025, timegm 2020 7 15 0 0 0;
    "Sat, 15 Aug 2020 00:00:00 GMT", now_2025, timegm 2020 8 15 0 0 0;
    "Tue, 15 Sep 2020 00:00:00 GMT", now_2025, timegm 2020 9 15 0 0 0;
    "Thu, 15 Oct 2020 00:00:00 GMT", now_2025, timegm 2020 10 15 0 0 0;
    "Sun, 15 Nov 2020 00:00:00 GMT", now_2025, timegm 2020 11 15 0 0 0;
    "Tue, 15 Dec 2020 00:00:00 GMT", now_2025, timegm 2020 12 15 0 0 0;
  ]

let invalid =
  [ "";
    "Sun, 06 Nov 1994 08:49:37 UTC";
    "Sun, 06 Nov 1994 08:49:37 gmt";
    "sun, 06 Nov 1994 08:49:37 GMT" (* HTTP-date is case-sensitive *);
    "SUN, 06 Nov 1994 08:49:37 GMT";
    "Sun, 06 nov 1994 08:49:37 GMT";
    "Sun, 06 NOV 1994 08:49:37 GMT";
    "Sux, 06 Nov 1994 08:49:37 GMT";
    "Sun, 06 Nox 1994 08:49:37 GMT";
    "Sun,  6 Nov 1994 08:49:37 GMT" (* IMF day is 2DIGIT *);
    "Sun, 6 Nov 1994 08:49:37 GMT";
    "Sun, 06 Nov 94 08:49:37 GMT";
    "Sun, 06 Nov 1994 8:49:37 GMT";
    "Sun, 06 Nov 1994 08:49 GMT";
    "Sun, 06 Nov 1994 08:49:37";
    "Sun, 06 Nov 1994 08:49:37 GMT " (* no trailing whitespace *);
    " Sun, 06 Nov 1994 08:49:37 GMT";
    "Sun 06 Nov 1994 08:49:37 GMT";
    "Sun, 06-Nov-1994 08:49:37 GMT";
    "Sun, 06 Nov 1994 08.49.37 GMT";
    "Sun, 06 Nov 1994T08:49:37 GMT";
    "Sun, 06 Nov +994 08:49:37 GMT";
    "Sun, 0x Nov 1994 08:49:37 GMT";
    (* ranges *)
    "Sun, 00 Nov 1994 08:49:37 GMT";
    "Sun, 31 Nov 1994 08:49:37 GMT";
    "Sun, 32 Jan 1994 08:49:37 GMT";
    "Wed, 31 Apr 2024 00:00:00 GMT";
    "Wed, 29 Feb 2023 00:00:00 GMT" (* 2023 is not a leap year *);
    "Mon, 29 Feb 2100 00:00:00 GMT" (* nor is 2100 *);
    "Mon, 30 Feb 2024 00:00:00 GMT";
    "Sun, 06 Nov 1994 24:00:00 GMT";
    "Sun, 06 Nov 1994 08:60:00 GMT";
    "Sun, 06 Nov 1994 08:49:61 GMT";
    "Sun, 06 Nov 1994 99:49:37 GMT";
    (* before the epoch *)
    "Wed, 31 Dec 1969 23:59:59 GMT";
    "Mon, 01 Jan 0001 00:00:00 GMT";
    "Mon, 01 Jan 1900 00:00:00 GMT";
    (* rfc850 *)
    "Sun, 06-Nov-94 08:49:37 GMT" (* short name with rfc850 body *);
    "Sunday, 06 Nov 1994 08:49:37 GMT";
    "Sundax, 06-Nov-94 08:49:37 GMT";
    "Sunnyday, 06-Nov-94 08:49:37 GMT";
    "sunday, 06-Nov-94 08:49:37 GMT";
    "Sunday, 06-Nov-94 08:49:37 UTC";
    "Sunday,06-Nov-94 08:49:37 GMT ";
    "Sunday, 6-Nov-94 08:49:37 GMT";
    "Sunday, 06-Nov-994 08:49:37 GMT";
    "Sunday, 06-Nov-9x 08:49:37 GMT";
    "Sunday, 31-Sep-94 08:49:37 GMT";
    "Wednesday, 06/Nov/94 08:49:37 GMT";
    (* asctime *)
    "Sun Nov 6 08:49:37 1994";
    "Sun Nov  6 08:49:37 94";
    "Sun Nov  0 08:49:37 1994";
    "Sun Nov 31 08:49:37 1994";
    "Sun Nov  6 08:49:37 1994 ";
    "Sun Nov _6 08:49:37 1994";
    "Sun Nov  6 08:49:37 1969";
    "Sun Nov  6 08:49:37 GMT ";
    "Sun, Nov  6 08:49:37 199";
    (* wrong lengths near the dispatch boundaries *)
    "Sun, 06 Nov 1994 08:49:37 GM";
    "Sun, 06 Nov 1994 08:49:37 GMTT";
    "Sun Nov  6 08:49:37 19944";
  ]

let now_1990 = timegm 1990 1 1 0 0 0

let check_at name s ~now expected =
  Alcotest.(check int) (name ^ " (string)") expected (Date.parse_string s ~now);
  List.iter
    (fun off ->
      List.iter
        (fun garbage ->
          let b = S.bigstring_at ~garbage ~off s in
          Alcotest.(check int)
            (Printf.sprintf "%s at %d garbage %C" name off garbage)
            expected
            (Date.parse b ~off ~len:(String.length s) ~now))
        [ '\r'; '0'; ' '; 'G' ])
    [ 0; 1; 13 ]

let test_valid () =
  List.iter (fun (s, now, expected) -> check_at (String.escaped s) s ~now expected) valid

let test_invalid () = List.iter (fun s -> check_at (String.escaped s) s ~now:now_2025 (-1)) invalid

let test_window () =
  (* RFC 9110 §5.6.7: "more than 50 years in the future" becomes the past. *)
  check_at "now 1990, yy=41 is 1941: before 1970" "Monday, 01-Jan-41 00:00:00 GMT" ~now:now_1990 (-1);
  check_at "now 1990, yy=40 is 2040" "Sunday, 01-Jan-40 00:00:00 GMT" ~now:now_1990
    (timegm 2040 1 1 0 0 0);
  check_at "now 2025, yy=41 is 2041" "Tuesday, 01-Jan-41 00:00:00 GMT" ~now:now_2025
    (timegm 2041 1 1 0 0 0);
  (* Every two-digit year, for several "now"s: the year lands in (Y-50, Y+50]. *)
  List.iter
    (fun y_now ->
      let now = timegm y_now 7 1 12 0 0 in
      for yy = 0 to 99 do
        let s = Printf.sprintf "Monday, 01-Jan-%02d 00:00:00 GMT" yy in
        let got = Date.parse_string s ~now in
        let year = if got < 0 then -1 else (Unix.gmtime (float_of_int got)).tm_year + 1900 in
        let expected_year =
          let c = y_now - (y_now mod 100) + yy in
          if c > y_now + 50 then c - 100 else if c <= y_now - 50 then c + 100 else c
        in
        Alcotest.(check bool) (s ^ " in window") true (expected_year > y_now - 50 && expected_year <= y_now + 50);
        Alcotest.(check int) (Printf.sprintf "%s now=%d" s y_now)
          (if expected_year < 1970 then -1 else expected_year)
          year
      done)
    [ 1995; 2000; 2025; 2049; 2050; 2051; 2099; 2150; 9000 ]

(* ---------- writing ---------- *)

let write t =
  let b = Bigstring.create 29 in
  let o = Date.write_imf_fixdate b ~off:0 t in
  Alcotest.(check int) "returns off + 29" 29 o;
  Bigstring.to_string b

let interesting =
  [ 0; 1; 59; 60; 3599; 3600; 86399; 86400; 784111777;
    timegm 1972 2 29 0 0 0; timegm 2000 2 28 23 59 59; timegm 2000 2 29 0 0 0;
    timegm 2000 3 1 0 0 0; timegm 2100 2 28 23 59 59; timegm 2100 3 1 0 0 0;
    timegm 2400 2 29 0 0 0; 2147483647; 2147483648; 4294967295; 4294967296;
    Date.max_time; Date.max_time - 86400;
    -1; -86400; -86401; timegm 1969 12 31 0 0 0; timegm 1900 1 1 0 0 0;
    timegm 1600 2 29 0 0 0; timegm 1 1 1 0 0 0; Date.min_time; Date.min_time + 1 ]

let test_write_vectors () =
  Alcotest.(check string) "RFC 9110 example" "Sun, 06 Nov 1994 08:49:37 GMT" (write 784111777);
  Alcotest.(check string) "epoch" "Thu, 01 Jan 1970 00:00:00 GMT" (write 0);
  Alcotest.(check string) "max" "Fri, 31 Dec 9999 23:59:59 GMT" (write Date.max_time);
  Alcotest.(check string) "min" "Sat, 01 Jan 0000 00:00:00 GMT" (write Date.min_time);
  Alcotest.(check int) "min_time" (-62167219200) Date.min_time;
  Alcotest.(check int) "max_time" 253402300799 Date.max_time;
  Alcotest.(check int) "length" 29 Date.imf_fixdate_length;
  List.iter (fun t -> Alcotest.(check string) (string_of_int t) (ref_imf t) (write t)) interesting

(* A sweep of ~40k days from 1820 to 2500, each at a different time of
   day, against the C library. *)
let test_write_sweep () =
  let b = Bigstring.create 29 in
  let d = ref (-55000) in
  while !d < 195000 do
    let t = (!d * 86400) + (!d * 7919 mod 86400) in
    ignore (Date.write_imf_fixdate b ~off:0 t);
    let got = Bigstring.to_string b in
    if got <> ref_imf t then Alcotest.failf "t=%d: got %S, gmtime says %S" t got (ref_imf t);
    if t >= 0 && Date.parse b ~off:0 ~len:29 ~now:0 <> t then Alcotest.failf "t=%d: no round trip" t;
    d := !d + 6
  done

let test_write_offset () =
  let b = S.bigstring_at ~garbage:'#' ~off:0 (String.make 40 '#') in
  let o = Date.write_imf_fixdate b ~off:5 784111777 in
  Alcotest.(check int) "offset" 34 o;
  Alcotest.(check string) "bytes around untouched"
    "#####Sun, 06 Nov 1994 08:49:37 GMT######"
    (Bigstring.sub_string b ~off:0 ~len:40)

let test_write_errors () =
  let b = Bigstring.create 40 in
  Bigarray.Array1.fill b '#';
  let refuses name f =
    (match f () with
     | _ -> Alcotest.failf "%s: accepted" name
     | exception Invalid_argument _ -> ());
    Alcotest.(check string) (name ^ ": nothing written") (String.make 40 '#') (Bigstring.to_string b)
  in
  refuses "too late" (fun () -> Date.write_imf_fixdate b ~off:0 (Date.max_time + 1));
  refuses "too early" (fun () -> Date.write_imf_fixdate b ~off:0 (Date.min_time - 1));
  refuses "no room" (fun () -> Date.write_imf_fixdate b ~off:12 0);
  refuses "negative offset" (fun () -> Date.write_imf_fixdate b ~off:(-1) 0);
  Alcotest.(check int) "exactly fits" 40 (Date.write_imf_fixdate b ~off:11 0);
  (match Date.parse b ~off:35 ~len:29 ~now:0 with
   | _ -> Alcotest.fail "parse outside the buffer accepted"
   | exception Invalid_argument _ -> ())

(* ---------- cache ---------- *)

let test_cache () =
  let c = Date.Cache.create () in
  let b = Bigstring.create 64 in
  let at off now =
    Bigarray.Array1.fill b '#';
    let o = Date.Cache.write c b ~off ~now in
    Alcotest.(check int) "offset" (off + 29) o;
    Alcotest.(check string) "before untouched" (String.make off '#') (Bigstring.sub_string b ~off:0 ~len:off);
    Alcotest.(check string) "after untouched" (String.make (64 - o) '#')
      (Bigstring.sub_string b ~off:o ~len:(64 - o));
    Bigstring.sub_string b ~off ~len:29
  in
  Alcotest.(check string) "epoch first (the initial content)" (ref_imf 0) (at 0 0);
  Alcotest.(check string) "new second" (ref_imf 784111777) (at 3 784111777);
  Alcotest.(check string) "same second" (ref_imf 784111777) (at 35 784111777);
  Alcotest.(check string) "next second" (ref_imf 784111778) (at 7 784111778);
  Alcotest.(check string) "back in time" (ref_imf 784111777) (at 0 784111777);
  Alcotest.(check string) "far future" (ref_imf Date.max_time) (at 1 Date.max_time);
  Alcotest.(check string) "epoch again" (ref_imf 0) (at 0 0);
  (match Date.Cache.write c b ~off:36 ~now:0 with
   | _ -> Alcotest.fail "no room accepted"
   | exception Invalid_argument _ -> ())

(* ---------- properties ---------- *)

let gen_time = QCheck2.Gen.int_range 0 Date.max_time
let gen_any_time = QCheck2.Gen.int_range Date.min_time Date.max_time

let prop_round_trip =
  QCheck2.Test.make ~count:2000 ~name:"write then parse is the identity" ~print:string_of_int gen_time
    (fun t ->
      let b = S.bigstring_at ~off:3 (String.make 29 ' ') in
      ignore (Date.write_imf_fixdate b ~off:3 t);
      Date.parse b ~off:3 ~len:29 ~now:t = t)

let prop_gmtime =
  QCheck2.Test.make ~count:2000 ~name:"write agrees with Unix.gmtime" ~print:string_of_int gen_any_time
    (fun t -> write t = ref_imf t)

let prop_obsolete =
  QCheck2.Test.make ~count:2000 ~name:"rfc850 and asctime renderings parse back"
    ~print:string_of_int gen_time (fun t ->
      Date.parse_string (ref_asctime t) ~now:0 = t
      && Date.parse_string (ref_rfc850 t) ~now:t = t
      && Date.parse_string (ref_imf t) ~now:0 = t)

(* Totality: any bytes of a plausible length give -1 or a time in range,
   never an exception. The generator mutates a real date so that it gets
   deep into the parsers. *)
let prop_total =
  let open QCheck2.Gen in
  let gen =
    let* t = gen_time in
    let* fmt = int_range 0 2 in
    let s = match fmt with 0 -> ref_imf t | 1 -> ref_rfc850 t | _ -> ref_asctime t in
    let* edits = list_size (int_range 1 3) (pair (int_range 0 (String.length s - 1)) char) in
    let b = Bytes.of_string s in
    List.iter (fun (i, c) -> Bytes.set b i c) edits;
    return (Bytes.to_string b)
  in
  QCheck2.Test.make ~count:3000 ~name:"parse is total" ~print:String.escaped gen (fun s ->
      let r = Date.parse_string s ~now:now_2025 in
      r = -1 || (r >= 0 && r <= Date.max_time))

(* ---------- allocation ---------- *)

let alloc_tests =
  let imf = S.bigstring_at ~off:7 "Sun, 06 Nov 1994 08:49:37 GMT" in
  let rfc850 = S.bigstring_at ~off:7 "Sunday, 06-Nov-94 08:49:37 GMT" in
  let asctime = S.bigstring_at ~off:7 "Sun Nov  6 08:49:37 1994" in
  let bad = S.bigstring_at ~off:7 "Sun, 31 Nov 1994 08:49:37 GMT" in
  let out = Bigstring.create 64 in
  let c = Date.Cache.create () in
  let tick = ref 0 in
  let sink = ref 0 in
  [ S.zero_alloc "parse IMF-fixdate" (fun () -> sink := Date.parse imf ~off:7 ~len:29 ~now:now_2025);
    S.zero_alloc "parse rfc850" (fun () -> sink := Date.parse rfc850 ~off:7 ~len:30 ~now:now_2025);
    S.zero_alloc "parse asctime" (fun () -> sink := Date.parse asctime ~off:7 ~len:24 ~now:now_2025);
    S.zero_alloc "parse invalid" (fun () -> sink := Date.parse bad ~off:7 ~len:29 ~now:now_2025);
    S.zero_alloc "parse_span" (fun () ->
        sink := Date.parse_span imf (Span.make ~off:7 ~len:29) ~now:now_2025);
    S.zero_alloc "write_imf_fixdate" (fun () ->
        incr tick;
        sink := Date.write_imf_fixdate out ~off:3 (784111777 + (!tick * 86399)));
    S.zero_alloc "Cache.write (hit)" (fun () -> sink := Date.Cache.write c out ~off:5 ~now:784111777);
    S.zero_alloc "Cache.write (new second each call)" (fun () ->
        incr tick;
        sink := Date.Cache.write c out ~off:5 ~now:(784111777 + !tick));
    S.zero_alloc "write_common_log" (fun () ->
        incr tick;
        sink := Date.write_common_log out ~off:2 (971211336 + (!tick * 86399)));
  ]

let test_common_log () =
  let b = Bigstring.create 28 in
  List.iter (fun (t, want) ->
      ignore (Date.write_common_log b ~off:0 t : int);
      Alcotest.(check string) (string_of_int t) want (Bigstring.to_string b))
    [ (0, "[01/Jan/1970:00:00:00 +0000]"); (971211336, "[10/Oct/2000:20:55:36 +0000]");
      (951782400, "[29/Feb/2000:00:00:00 +0000]"); (Date.max_time, "[31/Dec/9999:23:59:59 +0000]") ];
  Alcotest.check_raises "negative time" (Invalid_argument "Httpz.Date.write_common_log")
    (fun () -> ignore (Date.write_common_log b ~off:0 (-1) : int))

let () =
  Alcotest.run "date"
    [ ( "parse",
        [ Alcotest.test_case "valid vectors" `Quick test_valid;
          Alcotest.test_case "invalid vectors" `Quick test_invalid;
          Alcotest.test_case "two-digit year window" `Quick test_window;
        ] );
      ( "write",
        [ Alcotest.test_case "vectors vs gmtime" `Quick test_write_vectors;
          Alcotest.test_case "sweep vs gmtime" `Quick test_write_sweep;
          Alcotest.test_case "common log format" `Quick test_common_log;
          Alcotest.test_case "at an offset" `Quick test_write_offset;
          Alcotest.test_case "errors write nothing" `Quick test_write_errors;
        ] );
      "cache", [ Alcotest.test_case "per-second cache" `Quick test_cache ];
      "properties", List.map S.qcheck [ prop_round_trip; prop_gmtime; prop_obsolete; prop_total ];
      "allocation", alloc_tests;
    ]
