(* Constants are written inline so ocamlopt emits them as immediates.
   The scanners are [@inline never] leaf functions on purpose: OCaml has no
   callee-saved registers, so a loop inlined into a function that also makes
   calls keeps its induction variable on the stack; alone, it stays in a
   register. Comparisons are typed [int64] so they compile inline rather
   than to a polymorphic compare. *)

(* [flags] has 0x80 set in (at least) the first matching byte of the word
   and in no byte before it. The bit tricks below guarantee that: a borrow
   can only mark bytes above a true match. Returns that byte's index 0-7:
   (lowest flag bit >> 7) - 1 has 8k one bits; keep one per byte and sum
   the bytes with a multiply. Little-endian order: byte 0 is the lowest. *)
let[@inline] first_flagged (flags : int64) =
  let low = Int64.logand flags (Int64.neg flags) in
  let below = Int64.pred (Int64.shift_right_logical low 7) in
  Int64.to_int
    (Int64.shift_right_logical
       (Int64.mul (Int64.logand below 0x0101010101010101L) 0x0101010101010101L)
       56)

(* Bytes < 0x20 (HTAB included) or = 0x7F. *)
let[@inline] ctl_flags x =
  let y = Int64.logxor x 0x7f7f7f7f7f7f7f7fL in
  Int64.logand
    (Int64.logor
       (Int64.logand (Int64.sub x 0x2020202020202020L) (Int64.lognot x))
       (Int64.logand (Int64.sub y 0x0101010101010101L) (Int64.lognot y)))
    0x8080808080808080L

(* Bytes <= 0x20, = 0x7F or = '#'. *)
let[@inline] target_flags x =
  let y = Int64.logxor x 0x7f7f7f7f7f7f7f7fL in
  let z = Int64.logxor x 0x2323232323232323L in
  Int64.logand
    (Int64.logor
       (Int64.logand (Int64.sub x 0x2121212121212121L) (Int64.lognot x))
       (Int64.logor
          (Int64.logand (Int64.sub y 0x0101010101010101L) (Int64.lognot y))
          (Int64.logand (Int64.sub z 0x0101010101010101L) (Int64.lognot z))))
    0x8080808080808080L

let[@inline] lf_flags x =
  let y = Int64.logxor x 0x0a0a0a0a0a0a0a0aL in
  Int64.logand (Int64.logand (Int64.sub y 0x0101010101010101L) (Int64.lognot y))
    0x8080808080808080L

let[@inline] is_ctl c = c < 0x20 || c = 0x7f

(* Each scanner: whole words while they fit, then bytes. On big-endian
   hosts [first_flagged] would count from the wrong end, so there the word
   loop only detects and the byte loop locates. *)

(* Two words per step while they fit: one test and one branch per 16
   bytes on long values (User-Agent, Cookie, Authorization). *)
let[@inline never] skip_field_value b pos stop =
  let i = ref pos and found = ref false in
  if not Sys.big_endian then begin
    while not !found && !i + 16 <= stop do
      let f0 = ctl_flags (Bigstring.unsafe_get64 b !i) in
      let f1 = ctl_flags (Bigstring.unsafe_get64 b (!i + 8)) in
      if (Int64.logor f0 f1 : int64) = 0L then i := !i + 16
      else begin
        found := true;
        i := !i + (if (f0 : int64) <> 0L then first_flagged f0 else 8 + first_flagged f1)
      end
    done;
    while not !found && !i + 8 <= stop do
      let f = ctl_flags (Bigstring.unsafe_get64 b !i) in
      if (f : int64) = 0L then i := !i + 8
      else begin found := true; i := !i + first_flagged f end
    done
  end;
  if not !found then
    while !i < stop && not (is_ctl (Char.code (Bigstring.unsafe_get b !i))) do incr i done;
  !i

let[@inline never] skip_target b pos stop =
  let i = ref pos and go = ref true in
  while !go && !i + 8 <= stop do
    let f = target_flags (Bigstring.unsafe_get64 b !i) in
    if (f : int64) = 0L then i := !i + 8
    else begin
      go := false;
      if not Sys.big_endian then i := !i + first_flagged f
    end
  done;
  if !go || Sys.big_endian then
    while !i < stop
          && (let c = Char.code (Bigstring.unsafe_get b !i) in
              not (c <= 0x20 || c = 0x7f || c = 0x23))
    do incr i done;
  !i

let[@inline never] find_lf b pos stop =
  let i = ref pos and go = ref true in
  while !go && !i + 8 <= stop do
    let f = lf_flags (Bigstring.unsafe_get64 b !i) in
    if (f : int64) = 0L then i := !i + 8
    else begin
      go := false;
      if not Sys.big_endian then i := !i + first_flagged f
    end
  done;
  if !go || Sys.big_endian then
    while !i < stop && Bigstring.unsafe_get b !i <> '\n' do incr i done;
  !i

(* For bytes below 0x80, adding (0x80 - k) sets a byte's high bit exactly
   when the byte is >= k, and never carries into the next byte: eight
   range tests for the price of one add. *)
let[@inline] ge x k = Int64.add x k

(* 0x80 in each byte that is a letter, a digit or '-': what almost every
   field name is made of. *)
let[@inline] alnum_dash_flags x =
  let y = Int64.logor x 0x2020202020202020L in
  let letter = Int64.logand (ge y 0x1f1f1f1f1f1f1f1fL) (Int64.lognot (ge y 0x0505050505050505L)) in
  let digit = Int64.logand (ge x 0x5050505050505050L) (Int64.lognot (ge x 0x4646464646464646L)) in
  let dash = Int64.logand (ge x 0x5353535353535353L) (Int64.lognot (ge x 0x5252525252525252L)) in
  Int64.logand (Int64.logor letter (Int64.logor digit dash)) 0x8080808080808080L

(* 0x80 in each byte that is '.'. *)
let[@inline] dot_flags x =
  Int64.logand (Int64.logand (ge x 0x5252525252525252L) (Int64.lognot (ge x 0x5151515151515151L)))
    0x8080808080808080L

let[@inline never] skip_hostname b pos stop =
  let i = ref pos in
  while !i + 8 <= stop
        && (let x = Bigstring.unsafe_get64 b !i in
            (Int64.logand x 0x8080808080808080L : int64) = 0L
            && (Int64.logor (alnum_dash_flags x) (dot_flags x) : int64) = 0x8080808080808080L)
  do i := !i + 8 done;
  while !i < stop
        && (match Bigstring.unsafe_get b !i with
            | 'a' .. 'z' | 'A' .. 'Z' | '0' .. '9' | '-' | '.' -> true
            | _ -> false)
  do incr i done;
  !i

(* 0x80 in each byte that is not a letter, digit or '-', bytes >= 0x80
   included: their high bit is cleared before the range tests (so no add
   carries into the next byte) and then flagged directly. Exact per byte,
   so [first_flagged] can locate the first. *)
let[@inline] not_alnum_dash_flags x =
  let high = Int64.logand x 0x8080808080808080L in
  Int64.logor high
    (Int64.logxor (alnum_dash_flags (Int64.logxor x high)) 0x8080808080808080L)

(* One pass: whole words of letters, digits and '-' go eight bytes at a
   time; the first other byte of a word is looked up in the table, and if
   it is one of the rarer tchars ('_', '.', '!', ...) the scan goes on by
   words after it. *)
let[@inline never] skip_tchars b pos stop =
  let i = ref pos and go = ref (not Sys.big_endian) in
  while !go && !i + 8 <= stop do
    let f = not_alnum_dash_flags (Bigstring.unsafe_get64 b !i) in
    if (f : int64) = 0L then i := !i + 8
    else begin
      i := !i + first_flagged f;
      if Charset.is_tchar (Bigstring.unsafe_get b !i) then incr i else go := false
    end
  done;
  if !go || Sys.big_endian then
    while !i < stop && Charset.is_tchar (Bigstring.unsafe_get b !i) do incr i done;
  !i
