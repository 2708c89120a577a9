module B = Bigstring

(* Calendar arithmetic after Howard Hinnant's "chrono-Compatible Low-Level
   Date Algorithms": the year is shifted to start in March, so the leap day
   is the last day of the shifted year and month lengths follow the
   (153 * m + 2) / 5 pattern. Exact for every proleptic Gregorian date, on
   plain ints, with no table and no allocation. *)
let[@inline] days_from_civil y m d =
  let y = if m <= 2 then y - 1 else y in
  let era = (if y >= 0 then y else y - 399) / 400 in
  let yoe = y - (era * 400) in
  let mp = if m > 2 then m - 3 else m + 9 in
  let doy = (((153 * mp) + 2) / 5) + d - 1 in
  let doe = (yoe * 365) + (yoe / 4) - (yoe / 100) + doy in
  (era * 146097) + doe - 719468

let[@inline] floor_div a b = if a >= 0 then a / b else ((a + 1) / b) - 1

(* The year of Unix time [t]: the year part of civil_from_days. *)
let year_of_time t =
  let z = floor_div t 86400 + 719468 in
  let era = (if z >= 0 then z else z - 146096) / 146097 in
  let doe = z - (era * 146097) in
  let yoe = (doe - (doe / 1460) + (doe / 36524) - (doe / 146096)) / 365 in
  let doy = doe - ((365 * yoe) + (yoe / 4) - (yoe / 100)) in
  let mp = ((5 * doy) + 2) / 153 in
  let y = yoe + (era * 400) in
  if mp >= 10 then y + 1 else y

let is_leap y = (y mod 4 = 0 && y mod 100 <> 0) || y mod 400 = 0

let days_in_month y m =
  match m with
  | 2 -> if is_leap y then 29 else 28
  | 4 | 6 | 9 | 11 -> 30
  | _ -> 31

let imf_fixdate_length = 29
let min_time = days_from_civil 0 1 1 * 86400
let max_time = (days_from_civil 9999 12 31 * 86400) + 86399

(* {1 Reading} *)

let[@inline] byte b i = Char.code (B.unsafe_get b i)
let[@inline] is b i c = B.unsafe_get b i = c

let[@inline] digit b i =
  let c = byte b i - 48 in
  if c >= 0 && c <= 9 then c else -1

let[@inline] num2 b i =
  let d0 = digit b i and d1 = digit b (i + 1) in
  if d0 < 0 || d1 < 0 then -1 else (d0 * 10) + d1

let num4 b i =
  let hi = num2 b i and lo = num2 b (i + 2) in
  if hi < 0 || lo < 0 then -1 else (hi * 100) + lo

(* Three bytes packed into one int, so a name is recognised by a single
   match on integer constants (a jump table or binary search), with no
   string compare. The constants are "Jan" = 0x4a616e and so on. *)
let[@inline] key3 b i = (byte b i lsl 16) lor (byte b (i + 1) lsl 8) lor byte b (i + 2)

let month b i =
  match key3 b i with
  | 0x4a616e -> 1 | 0x466562 -> 2 | 0x4d6172 -> 3 | 0x417072 -> 4
  | 0x4d6179 -> 5 | 0x4a756e -> 6 | 0x4a756c -> 7 | 0x417567 -> 8
  | 0x536570 -> 9 | 0x4f6374 -> 10 | 0x4e6f76 -> 11 | 0x446563 -> 12
  | _ -> -1

(* Sun = 0 ... Sat = 6. *)
let wkday b i =
  match key3 b i with
  | 0x53756e -> 0 | 0x4d6f6e -> 1 | 0x547565 -> 2 | 0x576564 -> 3
  | 0x546875 -> 4 | 0x467269 -> 5 | 0x536174 -> 6
  | _ -> -1

(* What follows the three-letter abbreviation in each day-name-l. *)
let long_suffix = [| "day"; "day"; "sday"; "nesday"; "rsday"; "day"; "urday" |]

(* "HH:MM:SS" as seconds of the day, or -1. Second 60 (a leap second) is
   allowed by the grammar and counts as the next minute's second 0. *)
let time_of_day b i =
  let h = num2 b i and m = num2 b (i + 3) and s = num2 b (i + 6) in
  if h < 0 || h > 23 || m < 0 || m > 59 || s < 0 || s > 60
     || not (is b (i + 2) ':') || not (is b (i + 5) ':')
  then -1
  else (h * 3600) + (m * 60) + s

let[@inline] is_gmt b i = is b i 'G' && is b (i + 1) 'M' && is b (i + 2) 'T'

let finish y m d sod =
  if y < 0 || m < 1 || d < 1 || d > days_in_month y m || sod < 0 then -1
  else
    let t = (days_from_civil y m d * 86400) + sod in
    (* A leap second on 9999-12-31, or a two-digit year resolved past 9999,
       would leave the documented range. *)
    if t < 0 || t > max_time then -1 else t

(* Sun, 06 Nov 1994 08:49:37 GMT
   0123456789012345678901234567 *)
let parse_imf b o =
  if wkday b o < 0
     || not (is b (o + 3) ',' && is b (o + 4) ' ' && is b (o + 7) ' '
             && is b (o + 11) ' ' && is b (o + 16) ' ' && is b (o + 25) ' '
             && is_gmt b (o + 26))
  then -1
  else finish (num4 b (o + 12)) (month b (o + 8)) (num2 b (o + 5)) (time_of_day b (o + 17))

(* Sun Nov  6 08:49:37 1994
   012345678901234567890123 *)
let parse_asctime b o =
  if wkday b o < 0
     || not (is b (o + 3) ' ' && is b (o + 7) ' ' && is b (o + 10) ' ' && is b (o + 19) ' ')
  then -1
  else begin
    let d = if is b (o + 8) ' ' then digit b (o + 9) else num2 b (o + 8) in
    finish (num4 b (o + 20)) (month b (o + 4)) d (time_of_day b (o + 11))
  end

(* Sunday, 06-Nov-94 08:49:37 GMT: the day name is [p] bytes, then a fixed
   24-byte tail.
   p: ", 06-Nov-94 08:49:37 GMT"
      012345678901234567890123 *)
let parse_rfc850 b o len ~now =
  let p = len - 24 in
  let w = wkday b o in
  if w < 0 then -1
  else begin
    let suffix = Array.unsafe_get long_suffix w in
    if p <> 3 + String.length suffix
       || not (B.equal_string b ~off:(o + 3) ~len:(String.length suffix) suffix)
    then -1
    else begin
      let o = o + p in
      if not (is b o ',' && is b (o + 1) ' ' && is b (o + 4) '-' && is b (o + 8) '-'
              && is b (o + 11) ' ' && is b (o + 20) ' ' && is_gmt b (o + 21))
      then -1
      else begin
        let yy = num2 b (o + 9) in
        if yy < 0 then -1
        else begin
          (* RFC 9110 §5.6.7: a year more than 50 years in the future is
             the most recent past year with the same two digits. Taking
             the one year ending in [yy] inside (Y - 50, Y + 50] does that,
             and also reaches into the next century when [now] is late in
             this one. *)
          let now_y = year_of_time now in
          let y = now_y - (now_y mod 100) + yy in
          let y = if y > now_y + 50 then y - 100 else if y <= now_y - 50 then y + 100 else y in
          finish y (month b (o + 5)) (num2 b (o + 2)) (time_of_day b (o + 12))
        end
      end
    end
  end

let parse b ~off ~len ~now =
  if off < 0 || len < 0 || off > B.length b - len then invalid_arg "Date.parse"
  else if len = 29 && is b (off + 3) ',' then parse_imf b off
  else if len = 24 && is b (off + 3) ' ' then parse_asctime b off
  else if len >= 30 && len <= 33 then parse_rfc850 b off len ~now
  else -1

let parse_span b s ~now = parse b ~off:(Span.off s) ~len:(Span.len s) ~now

let parse_string s ~now = parse (B.of_string s) ~off:0 ~len:(String.length s) ~now

(* {1 Writing} *)

let day_names = "SunMonTueWedThuFriSat"
let month_names = "JanFebMarAprMayJunJulAugSepOctNovDec"

let[@inline] put3 b i names k =
  B.unsafe_set b i (String.unsafe_get names (3 * k));
  B.unsafe_set b (i + 1) (String.unsafe_get names ((3 * k) + 1));
  B.unsafe_set b (i + 2) (String.unsafe_get names ((3 * k) + 2))

let[@inline] put2 b i n =
  B.unsafe_set b i (Char.unsafe_chr (48 + (n / 10)));
  B.unsafe_set b (i + 1) (Char.unsafe_chr (48 + (n mod 10)))

(* Civil date of a day count since the epoch (H. Hinnant's civil_from_days),
   packed as [y * 10000 + m * 100 + d] in one immediate int: returning
   (y, m, d) would be a heap-allocated tuple. *)
let[@inline] civil_of_days days =
  let z = days + 719468 in
  let era = (if z >= 0 then z else z - 146096) / 146097 in
  let doe = z - (era * 146097) in
  let yoe = (doe - (doe / 1460) + (doe / 36524) - (doe / 146096)) / 365 in
  let doy = doe - ((365 * yoe) + (yoe / 4) - (yoe / 100)) in
  let mp = ((5 * doy) + 2) / 153 in
  let d = doy - (((153 * mp) + 2) / 5) + 1 in
  let m = if mp < 10 then mp + 3 else mp - 9 in
  let y = yoe + (era * 400) + (if m <= 2 then 1 else 0) in
  (y * 10000) + (m * 100) + d

(* Unchecked: [t] in [min_time, max_time], 29 bytes available at [o]. *)
let unsafe_write b o t =
  let days = floor_div t 86400 in
  let sod = t - (days * 86400) in
  let ymd = civil_of_days days in
  let y = ymd / 10000 and m = ymd / 100 mod 100 and d = ymd mod 100 in
  (* 1970-01-01 was a Thursday (4); [days mod 7] may be negative. *)
  let wd = ((days mod 7) + 11) mod 7 in
  put3 b o day_names wd;
  B.unsafe_set b (o + 3) ',';
  B.unsafe_set b (o + 4) ' ';
  put2 b (o + 5) d;
  B.unsafe_set b (o + 7) ' ';
  put3 b (o + 8) month_names (m - 1);
  B.unsafe_set b (o + 11) ' ';
  put2 b (o + 12) (y / 100);
  put2 b (o + 14) (y mod 100);
  B.unsafe_set b (o + 16) ' ';
  put2 b (o + 17) (sod / 3600);
  B.unsafe_set b (o + 19) ':';
  put2 b (o + 20) (sod / 60 mod 60);
  B.unsafe_set b (o + 22) ':';
  put2 b (o + 23) (sod mod 60);
  B.unsafe_set b (o + 25) ' ';
  B.unsafe_set b (o + 26) 'G';
  B.unsafe_set b (o + 27) 'M';
  B.unsafe_set b (o + 28) 'T'

let check name b off t =
  if t < min_time || t > max_time || off < 0 || off > B.length b - 29 then invalid_arg name

let write_imf_fixdate b ~off t =
  check "Date.write_imf_fixdate" b off t;
  unsafe_write b off t;
  off + 29

module Cache = struct
  type t = { bytes : B.t; mutable second : int }

  let create () =
    let c = { bytes = B.create 29; second = 0 } in
    unsafe_write c.bytes 0 0;
    c

  (* 29 bytes as four 8-byte words at 0, 8, 16 and 21: the last two
     overlap, which costs nothing and saves a byte loop. *)
  let write c b ~off ~now =
    check "Date.Cache.write" b off now;
    if now <> c.second then begin
      unsafe_write c.bytes 0 now;
      c.second <- now
    end;
    let src = c.bytes in
    B.unsafe_set64 b off (B.unsafe_get64 src 0);
    B.unsafe_set64 b (off + 8) (B.unsafe_get64 src 8);
    B.unsafe_set64 b (off + 16) (B.unsafe_get64 src 16);
    B.unsafe_set64 b (off + 21) (B.unsafe_get64 src 21);
    off + 29
end

let common_log_length = 28

let write_common_log b ~off t =
  if t < 0 || t > max_time || off < 0 || off > B.length b - common_log_length then
    invalid_arg "Httpz.Date.write_common_log";
  let days = t / 86400 and sod = t mod 86400 in
  let ymd = civil_of_days days in
  let y = ymd / 10000 and m = ymd / 100 mod 100 and d = ymd mod 100 in
  B.unsafe_set b off '[';
  put2 b (off + 1) d;
  B.unsafe_set b (off + 3) '/';
  put3 b (off + 4) month_names (m - 1);
  B.unsafe_set b (off + 7) '/';
  put2 b (off + 8) (y / 100);
  put2 b (off + 10) (y mod 100);
  B.unsafe_set b (off + 12) ':';
  put2 b (off + 13) (sod / 3600);
  B.unsafe_set b (off + 15) ':';
  put2 b (off + 16) (sod / 60 mod 60);
  B.unsafe_set b (off + 18) ':';
  put2 b (off + 19) (sod mod 60);
  B.blit_from_string " +0000]" ~src_off:0 b ~dst_off:(off + 21) ~len:7;
  off + common_log_length
