type error =
  | Bad_char
  | Fragment
  | Bad_form
  | Bad_authority
  | Bad_escape
  | Nul_byte
  | Above_root
  | Too_long
  | Not_absolute

let error_status (_ : error) = 400

let error_to_string = function
  | Bad_char -> "bad_char"
  | Fragment -> "fragment"
  | Bad_form -> "bad_form"
  | Bad_authority -> "bad_authority"
  | Bad_escape -> "bad_escape"
  | Nul_byte -> "nul_byte"
  | Above_root -> "above_root"
  | Too_long -> "too_long"
  | Not_absolute -> "not_absolute"

type kind = Origin | Absolute | Asterisk | Error

type t = {
  mutable kind : kind;
  mutable error : error;
  mutable path : Span.t;
  mutable query : Span.t;
  mutable has_query : bool;
  mutable authority : Span.t;
}

let create () =
  { kind = Error; error = Bad_form; path = Span.empty; query = Span.empty;
    has_query = false; authority = Span.empty }

let kind t = t.kind
let error t = t.error
let path t = t.path
let query t = t.query
let has_query t = t.has_query
let authority t = t.authority

let fail t e = t.error <- e; t.kind <- Error; Error

(* RFC 9112 §3.2: request-target bytes are visible ASCII or (leniently,
   left to the request parser) obs-text; never CTL, SP or DEL. *)
let[@inline] is_ctl_or_space c = c <= ' ' || c = '\127'

(* What [split] makes of a byte: '\000' nothing, '\001' CTL, SP or DEL,
   '\002' '#', '\003' '?'. *)
let split_class =
  String.init 256 (fun i ->
      let c = Char.chr i in
      if is_ctl_or_space c then '\001' else if c = '#' then '\002' else if c = '?' then '\003' else '\000')

let[@inline] split_class_of buf i = String.unsafe_get split_class (Char.code (Bigstring.unsafe_get buf i))

(* {1 Eight bytes at a time}

   The common target is plain bytes: no CTL, SP, DEL, '#', '?', '%' or
   '/' for a run of several bytes. Such runs are tested a 64-bit word at
   a time (little-endian lanes, as [unsafe_get64] reads them); a word that
   may hold one of those bytes goes back to the byte loop, which decides.
   The int64s stay unboxed: every helper is inlined into its caller. *)

(* A lane of [x] is 0x00 iff its high bit is set in
   [zero_lanes x land 0x80..80]. Only "some lane is" is exact: a borrow
   may also mark a lane above a zero one, which is all these tests need.
   The high bits are masked once, by the caller of the tests combined. *)
let[@inline] zero_lanes x = Int64.logand (Int64.sub x 0x0101010101010101L) (Int64.lognot x)

let[@inline] lanes_equal x c = zero_lanes (Int64.logxor x c)

(* Some lane of [x] is below 0x21 (CTL or SP; not one with its high bit
   set) or is DEL. *)
let[@inline] ctl_lanes x =
  Int64.logor
    (Int64.logand (Int64.sub x 0x2121212121212121L) (Int64.lognot x))
    (lanes_equal x 0x7f7f7f7f7f7f7f7fL)

(* The lanes that hold the bytes [0 .. k-1] of a word ([0 < k < 8]). *)
let[@inline] first_lanes k = Int64.pred (Int64.shift_left 1L (8 * k))

(* A short run is read as a whole word, which needs the bytes after it
   in the buffer, and lanes in memory order (little-endian). *)
let[@inline] short_word_fits buf i = (not Sys.big_endian) && i + 8 <= Bigstring.length buf

(* Bytes [0 .. k-1] of the word at [i] ([0 < k < 8]), the others 'a', a
   byte every test here passes; [short_word_fits buf i]. *)
let[@inline] head_lanes buf i k =
  let keep = first_lanes k in
  Int64.logor (Int64.logand (Bigstring.unsafe_get64 buf i) keep)
    (Int64.logand 0x6161616161616161L (Int64.lognot keep))

(* No lane of [x] is CTL, SP, DEL or the byte repeated in [a] or in [b]. *)
let[@inline] plain_but x a b =
  Int64.logand (Int64.logor (ctl_lanes x) (Int64.logor (lanes_equal x a) (lanes_equal x b))) 0x8080808080808080L
  = 0L

(* The word holds none of the bytes that end a [split] run ('#', '?'). *)
let[@inline] split_plain x = plain_but x 0x2323232323232323L 0x3f3f3f3f3f3f3f3fL

(* The word is bytes [run] copies as they are (no '%', '/'). *)
let[@inline] decode_plain x = plain_but x 0x2525252525252525L 0x2f2f2f2f2f2f2f2fL

(* Past the plain words from [i] (before [stop]): where the byte loop
   starts. A short last run is tested too when [buf] has 8 bytes there. *)
let skip_plain_words buf i stop =
  let i = ref i in
  while !i + 8 <= stop && split_plain (Bigstring.unsafe_get64 buf !i) do i := !i + 8 done;
  let k = stop - !i in
  if k > 0 && k < 8 && short_word_fits buf !i && split_plain (head_lanes buf !i k) then stop
  else !i

let split t buf span =
  Bigstring.check_range "Httpz.Target.split" buf ~off:(Span.off span) ~len:(Span.len span);
  let off = Span.off span and len = Span.len span in
  let stop = off + len in
  t.path <- Span.empty; t.query <- Span.empty; t.has_query <- false;
  t.authority <- Span.empty;
  (* One pass validates every byte and finds the first '?': most bytes
     are none of those, one table load each. *)
  let i = ref (skip_plain_words buf off stop) and q = ref (-1) and bad = ref 0 in
  while !i < stop && split_class_of buf !i = '\000' do incr i done;
  while !bad = 0 && !i < stop do
    let k = split_class_of buf !i in
    if k = '\001' then bad := 1
    else if k = '\002' then bad := 2
    else if k = '\003' && !q < 0 then q := !i;
    incr i
  done;
  if !bad = 1 then fail t Bad_char
  else if !bad = 2 then fail t Fragment
  else if len = 0 then fail t Bad_form
  else begin
    let path_end = if !q >= 0 then !q else stop in
    if !q >= 0 then begin
      t.has_query <- true;
      t.query <- Span.make ~off:(!q + 1) ~len:(stop - !q - 1)
    end;
    let c0 = Bigstring.unsafe_get buf off in
    if c0 = '/' then begin
      t.path <- Span.make ~off ~len:(path_end - off);
      t.kind <- Origin; Origin
    end
    else if len = 1 && c0 = '*' then begin t.kind <- Asterisk; Asterisk end
    else begin
      (* absolute-form: only the schemes a static server can be the origin
         of; "urn:x" or "ftp://x" are well-formed URIs but not ours. *)
      let a =
        if path_end - off >= 7 && Bigstring.equal_caseless buf ~off ~len:7 "http://"
        then off + 7
        else if path_end - off >= 8 && Bigstring.equal_caseless buf ~off ~len:8 "https://"
        then off + 8
        else -1
      in
      if a < 0 then fail t Bad_form
      else begin
        let e = ref a and at = ref false in
        while !e < path_end && Bigstring.unsafe_get buf !e <> '/' do
          if Bigstring.unsafe_get buf !e = '@' then at := true;
          incr e
        done;
        if !e = a || !at then fail t Bad_authority
        else begin
          t.authority <- Span.make ~off:a ~len:(!e - a);
          t.path <- Span.make ~off:!e ~len:(path_end - !e);
          t.kind <- Absolute; Absolute
        end
      end
    end
  end

(* Negative result codes of [decode_path]/[normalize]. *)
let c_bad_char = -1
let c_bad_escape = -2
let c_nul = -3
let c_above_root = -4
let c_too_long = -5
let c_not_absolute = -6

let decode_error r =
  if r = c_bad_char then Bad_char
  else if r = c_bad_escape then Bad_escape
  else if r = c_nul then Nul_byte
  else if r = c_above_root then Above_root
  else if r = c_too_long then Too_long
  else if r = c_not_absolute then Not_absolute
  else invalid_arg "Target.decode_error"

let[@inline] hex_value c =
  match c with
  | '0' .. '9' -> Char.code c - 48
  | 'a' .. 'f' -> Char.code c - 87
  | 'A' .. 'F' -> Char.code c - 55
  | _ -> -1

let[@inline] percent_byte buf i stop =
  if i + 2 < stop then begin
    let h = hex_value (Bigstring.unsafe_get buf (i + 1))
    and l = hex_value (Bigstring.unsafe_get buf (i + 2)) in
    if h < 0 || l < 0 then -1 else (h lsl 4) lor l
  end
  else -1

(* Ends the segment [dst.{seg .. w-1}] (which follows a '/'), applying
   RFC 3986 §5.2.4 to it at once instead of in a second pass: a "." is
   dropped, a ".." also drops the segment before it, an empty one (from
   "//") is merged away. Returns the new write position, or an error code.
   Working segment by segment on the output keeps it one pass, in place,
   and makes "%2e%2e" a dot segment because decoding already happened. *)
let finish_segment dst w seg at_end cap =
  let n = w - seg in
  if n = 0 then w
  else if n = 1 && Bigstring.unsafe_get dst seg = '.' then seg
  else if n = 2 && Bigstring.unsafe_get dst seg = '.'
          && Bigstring.unsafe_get dst (seg + 1) = '.' then begin
    if seg = 1 then c_above_root
    else begin
      (* dst.{seg-1} is the '/' ending the previous, non-empty segment;
         dst.{0} = '/' stops the walk. *)
      let j = ref (seg - 1) in
      while Bigstring.unsafe_get dst (!j - 1) <> '/' do decr j done;
      !j
    end
  end
  else if at_end then w
  else if w >= cap then c_too_long
  else begin Bigstring.unsafe_set dst w '/'; w + 1 end

let run buf span dst pct =
  let off = Span.off span and len = Span.len span in
  let cap = Bigstring.length dst in
  if cap < 1 then c_too_long
  else if len > 0 && Bigstring.unsafe_get buf off <> '/' then c_not_absolute
  else begin
    Bigstring.unsafe_set dst 0 '/';
    let stop = off + len in
    let i = ref (if len = 0 then off else off + 1) in
    let w = ref 1 and seg = ref 1 and err = ref 0 in
    (* [words]: try a whole word first. Cleared when a word is not plain,
       set again after the byte that stopped it (a '/', a '%'): one failed
       try per segment, not per byte. *)
    let words = ref true in
    while !err = 0 && !i < stop do
      let k = stop - !i in
      if !words && !w + 8 <= cap && k >= 8 then begin
        let x = Bigstring.unsafe_get64 buf !i in
        if decode_plain x then begin
          Bigstring.unsafe_set64 dst !w x; i := !i + 8; w := !w + 8
        end
        else words := false
      end
      else if !words && !w + 8 <= cap && short_word_fits buf !i then begin
        let x = head_lanes buf !i k in
        if decode_plain x then begin
          (* [dst] past the result is left as it was. *)
          let keep = first_lanes k in
          Bigstring.unsafe_set64 dst !w
            (Int64.logor (Int64.logand x keep)
               (Int64.logand (Bigstring.unsafe_get64 dst !w) (Int64.lognot keep)));
          i := stop; w := !w + k
        end
        else words := false
      end
      else begin
      words := false;
      let c = Bigstring.unsafe_get buf !i in
      (* Most bytes are copied as they are: neither '%', '/', NUL, CTL,
         SP nor DEL, and room left. *)
      if c > ' ' && c <> '%' && c <> '/' && c < '\127' && !w < cap then begin
        Bigstring.unsafe_set dst !w c;
        incr w;
        incr i
      end
      else
      let b = ref (Char.code c) in
      words := true;
      if pct && c = '%' then begin
        let v = percent_byte buf !i stop in
        if v < 0 then err := c_bad_escape else begin b := v; i := !i + 3 end
      end
      else begin
        (* Raw control bytes cannot come from a request-target, so
           [decode_path] refuses them; [normalize] takes already decoded
           paths, where they are file-name bytes like the ones [%0a] gives,
           and refusing them there would break idempotence. *)
        if c = '\000' then err := c_nul
        else if pct && is_ctl_or_space c then err := c_bad_char;
        incr i
      end;
      if !err = 0 then begin
        if !b = 0 then err := c_nul
        else if !b = 0x2f then begin
          let r = finish_segment dst !w !seg false cap in
          if r < 0 then err := r else begin w := r; seg := r end
        end
        else if !w >= cap then err := c_too_long
        else begin
          Bigstring.unsafe_set dst !w (Char.unsafe_chr !b);
          incr w
        end
      end
      end
    done;
    if !err <> 0 then !err
    else finish_segment dst !w !seg true cap
  end

let decode_path buf span ~dst =
  Bigstring.check_range "Httpz.Target.decode_path" buf ~off:(Span.off span) ~len:(Span.len span);
  run buf span dst true

let normalize buf span ~dst =
  Bigstring.check_range "Httpz.Target.normalize" buf ~off:(Span.off span) ~len:(Span.len span);
  run buf span dst false

let ends_in_slash dst n = n > 0 && Bigstring.unsafe_get dst (n - 1) = '/'

(* One segment (or any span that is not a whole path): the same escapes as
   [decode_path], but ['/'] and [%2F] are ordinary bytes and nothing is
   resolved, so a router can split on raw ['/'] first and decode each piece
   after; and ['+'] is a ['+'] (only form encoding makes it a space). *)
let decode_segment buf span ~dst ~dst_off =
  Bigstring.check_range "Httpz.Target.decode_segment" buf ~off:(Span.off span) ~len:(Span.len span);
  let stop = Span.off span + Span.len span and cap = Bigstring.length dst in
  if dst_off < 0 || dst_off > cap then c_too_long
  else begin
    let i = ref (Span.off span) and w = ref dst_off and err = ref 0 in
    while !err = 0 && !i < stop do
      let c = Bigstring.unsafe_get buf !i in
      let b = ref (Char.code c) in
      if c = '%' then begin
        let v = percent_byte buf !i stop in
        if v < 0 then err := c_bad_escape else begin b := v; i := !i + 3 end
      end
      else begin
        if c = '\000' then err := c_nul else if is_ctl_or_space c then err := c_bad_char;
        incr i
      end;
      if !err = 0 then begin
        if !b = 0 then err := c_nul
        else if !w >= cap then err := c_too_long
        else begin Bigstring.unsafe_set dst !w (Char.unsafe_chr !b); incr w end
      end
    done;
    if !err <> 0 then !err else !w - dst_off
  end
