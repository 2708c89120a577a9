(* Parsed specs use one pair of int arrays with this encoding, so that
   [parse] never allocates and [resolve] can run again for another length:
     first-last  -> spec_first = first (>= 0), spec_last = last (>= first)
     first-      -> spec_first = first (>= 0), spec_last = -1
     -n          -> spec_first = -1,           spec_last = n (>= 0)
   Resolved intervals live in two further arrays (start, inclusive stop). *)
type t = {
  max_ranges : int;
  spec_first : int array;
  spec_last : int array;
  mutable specs : int;
  res_start : int array;
  res_stop : int array;
  mutable count : int;
  mutable num : int;  (* [read_number]'s value: no tuple, no ref argument *)
}

type parse_result = Valid | Invalid | Too_many | Not_bytes
type resolution = Satisfiable | Unsatisfiable | Empty

let default_max_ranges = 16
let max_max_ranges = 256

let create ?(max_ranges = default_max_ranges) () =
  if max_ranges < 1 || max_ranges > max_max_ranges then
    invalid_arg "Httpz.Range.create: max_ranges";
  { max_ranges;
    spec_first = Array.make max_ranges 0;
    spec_last = Array.make max_ranges 0;
    specs = 0;
    res_start = Array.make max_ranges 0;
    res_stop = Array.make max_ranges 0;
    count = 0;
    num = 0 }

let max_ranges t = t.max_ranges
let spec_count t = t.specs
let count t = t.count
let start t i = t.res_start.(i)
let stop t i = t.res_stop.(i)

let[@inline] is_digit c = c >= '0' && c <= '9'

(* Out-of-band values of [read_number], negative so that one [< 0] test
   rejects both. *)
let no_digits = -1
let too_large = -2

(* [read_number t buf pos stop] reads 1*DIGIT at [pos], stores the value
   (or [no_digits] / [too_large]) in [t.num] and is the position of the
   first non-digit. The value must fit OCaml's [int]: RFC 9110 §14.1.2
   warns that "recipients MUST anticipate potentially large decimal
   numerals and prevent parsing errors due to integer conversion
   overflows"; we prevent them by refusing (the header is then ignored,
   which §14.2 always allows) rather than by wrapping. Leading zeros are
   valid DIGITs and cost nothing, so they are not capped. *)
let read_number t (buf : Bigstring.t) start stop =
  let pos = ref start in
  let acc = ref 0 and ovf = ref false in
  while !pos < stop && is_digit (Bigstring.unsafe_get buf !pos) do
    let d = Char.code (Bigstring.unsafe_get buf !pos) - 48 in
    if !acc > max_int / 10 || (!acc = max_int / 10 && d > max_int mod 10)
    then ovf := true
    else acc := (!acc * 10) + d;
    incr pos
  done;
  t.num <- (if !pos = start then no_digits else if !ovf then too_large else !acc);
  !pos

let[@inline] fail t r = t.specs <- 0; r

let parse t (buf : Bigstring.t) ~off ~len =
  Bigstring.check_range "Httpz.Range.parse" buf ~off ~len;
  t.specs <- 0;
  t.count <- 0;
  let stop = off + len in
  let pos = ref off in
  while !pos < stop && Charset.is_ows (Bigstring.unsafe_get buf !pos) do incr pos done;
  let unit_start = !pos in
  while !pos < stop && Charset.is_tchar (Bigstring.unsafe_get buf !pos) do incr pos done;
  let unit_len = !pos - unit_start in
  if unit_len = 0 || !pos >= stop || Bigstring.unsafe_get buf !pos <> '=' then Invalid
  else if not (Bigstring.equal_caseless buf ~off:unit_start ~len:unit_len "bytes")
  then Not_bytes
  else begin
    incr pos;
    (* [result] stays [Valid] until a spec is rejected; the loop walks one
       list element per iteration: OWS [range-spec] OWS ("," | end). *)
    let result = ref Valid in
    let continue = ref true in
    while !continue do
      while !pos < stop && Charset.is_ows (Bigstring.unsafe_get buf !pos) do incr pos done;
      if !pos < stop && Bigstring.unsafe_get buf !pos <> ',' then begin
        (* A non-empty element: a range-spec. [first = -1] marks a
           suffix-range, [last = -1] an open-ended int-range; [bad] any
           malformed or out-of-range spec. *)
        let first = ref (-1) and last = ref (-1) and bad = ref false in
        if Bigstring.unsafe_get buf !pos = '-' then begin
          incr pos;
          pos := read_number t buf !pos stop;
          last := t.num;
          if !last < 0 then bad := true
        end else begin
          pos := read_number t buf !pos stop;
          first := t.num;
          if !first < 0 || !pos >= stop || Bigstring.unsafe_get buf !pos <> '-' then
            bad := true
          else begin
            incr pos;
            if !pos < stop && is_digit (Bigstring.unsafe_get buf !pos) then begin
              pos := read_number t buf !pos stop;
              last := t.num;
              (* also catches [too_large], which is negative *)
              if !last < !first then bad := true
            end
          end
        end;
        if not !bad then begin
          while !pos < stop && Charset.is_ows (Bigstring.unsafe_get buf !pos) do incr pos done;
          if !pos < stop && Bigstring.unsafe_get buf !pos <> ',' then bad := true
        end;
        (* The element is judged whole (spec, OWS, then "," or the end)
           before it is counted, so [Too_many] never hides a malformed
           element: it means "the first [max_ranges + 1] elements were
           well-formed". *)
        if !bad then begin result := Invalid; continue := false end
        else if t.specs = t.max_ranges then begin
          result := Too_many; continue := false
        end else begin
          Array.unsafe_set t.spec_first t.specs !first;
          Array.unsafe_set t.spec_last t.specs !last;
          t.specs <- t.specs + 1
        end
      end;
      if !continue then begin
        if !pos >= stop then continue := false else incr pos (* the "," *)
      end
    done;
    (* 1#range-spec: at least one non-empty element. *)
    match !result with
    | Valid -> if t.specs = 0 then fail t Invalid else Valid
    | r -> fail t r
  end

(* [touches a_lo a_hi b_lo b_hi]: the intervals overlap or are adjacent.
   Both highs are below [max_int], so [+ 1] cannot overflow. *)
let[@inline] touches a_lo a_hi b_lo b_hi = a_lo <= b_hi + 1 && b_lo <= a_hi + 1

(* Insert [lo, hi] keeping the kept intervals pairwise non-touching and in
   request order: absorb every kept interval that touches the growing one
   (rescanning after each absorption, since growth can reach intervals
   that did not touch before), then put the union where the earliest
   absorbed interval was, or at the end. *)
let insert t lo hi =
  let lo = ref lo and hi = ref hi in
  let pos = ref (-1) in
  let j = ref 0 in
  while !j < t.count do
    let s = Array.unsafe_get t.res_start !j and e = Array.unsafe_get t.res_stop !j in
    if touches !lo !hi s e then begin
      if s < !lo then lo := s;
      if e > !hi then hi := e;
      for k = !j to t.count - 2 do
        Array.unsafe_set t.res_start k (Array.unsafe_get t.res_start (k + 1));
        Array.unsafe_set t.res_stop k (Array.unsafe_get t.res_stop (k + 1))
      done;
      t.count <- t.count - 1;
      if !pos < 0 || !j < !pos then pos := !j;
      j := 0
    end
    else incr j
  done;
  let p = if !pos < 0 then t.count else !pos in
  for k = t.count downto p + 1 do
    Array.unsafe_set t.res_start k (Array.unsafe_get t.res_start (k - 1));
    Array.unsafe_set t.res_stop k (Array.unsafe_get t.res_stop (k - 1))
  done;
  Array.unsafe_set t.res_start p !lo;
  Array.unsafe_set t.res_stop p !hi;
  t.count <- t.count + 1

let resolve t ~length =
  if length < 0 then invalid_arg "Httpz.Range.resolve: negative length";
  t.count <- 0;
  let empty_ok = ref false in
  for i = 0 to t.specs - 1 do
    let f = Array.unsafe_get t.spec_first i and l = Array.unsafe_get t.spec_last i in
    if f >= 0 then begin
      if f < length then insert t f (if l < 0 || l >= length then length - 1 else l)
    end
    else if l > 0 then begin
      if length = 0 then empty_ok := true
      else insert t (if l >= length then 0 else length - l) (length - 1)
    end
  done;
  if t.count > 0 then Satisfiable
  else if !empty_ok then Empty
  else Unsatisfiable

(* Decimal digits of a non-negative int: at most 19 for max_int. *)
let[@inline] digits n =
  let d = ref 1 and x = ref n in
  while !x >= 10 do x := !x / 10; incr d done;
  !d

(* Writes [n >= 0] right to left into the [nd] bytes ending before [off + nd]. *)
let[@inline] put_decimal (buf : Bigstring.t) off nd n =
  let x = ref n in
  for i = off + nd - 1 downto off do
    Bigstring.unsafe_set buf i (Char.unsafe_chr (48 + (!x mod 10)));
    x := !x / 10
  done

let[@inline] put_bytes_sp (buf : Bigstring.t) off =
  Bigstring.unsafe_set buf off 'b';
  Bigstring.unsafe_set buf (off + 1) 'y';
  Bigstring.unsafe_set buf (off + 2) 't';
  Bigstring.unsafe_set buf (off + 3) 'e';
  Bigstring.unsafe_set buf (off + 4) 's';
  Bigstring.unsafe_set buf (off + 5) ' '

let content_range_max_length = 65

let write_content_range buf ~off ~first ~last ~length =
  if first < 0 || last < first || length <= last then
    invalid_arg "Httpz.Range.write_content_range: need 0 <= first <= last < length";
  let nf = digits first and nl = digits last and nn = digits length in
  let total = 6 + nf + 1 + nl + 1 + nn in
  if off < 0 || off > Bigstring.length buf - total then
    invalid_arg "Httpz.Range.write_content_range: buffer too small";
  put_bytes_sp buf off;
  let p = off + 6 in
  put_decimal buf p nf first;
  let p = p + nf in
  Bigstring.unsafe_set buf p '-';
  let p = p + 1 in
  put_decimal buf p nl last;
  let p = p + nl in
  Bigstring.unsafe_set buf p '/';
  let p = p + 1 in
  put_decimal buf p nn length;
  p + nn

let write_unsatisfied buf ~off ~length =
  if length < 0 then invalid_arg "Httpz.Range.write_unsatisfied: negative length";
  let nn = digits length in
  let total = 8 + nn in
  if off < 0 || off > Bigstring.length buf - total then
    invalid_arg "Httpz.Range.write_unsatisfied: buffer too small";
  put_bytes_sp buf off;
  Bigstring.unsafe_set buf (off + 6) '*';
  Bigstring.unsafe_set buf (off + 7) '/';
  put_decimal buf (off + 8) nn length;
  off + total
