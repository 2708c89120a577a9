module B = Bigstring

type t = int

let default_urgency = 3
let[@inline] pack u i = u lor (if i then 8 else 0)
let default = pack default_urgency false

let make ~urgency ~incremental =
  if urgency < 0 || urgency > 7 then invalid_arg "Httpz.H2_priority.make";
  pack urgency incremental

let urgency t = t land 7
let incremental t = t land 8 <> 0

(* Any syntax error: the whole field is ignored. Constant, raised with
   raise_notrace and caught in [parse], so failing allocates nothing. *)
exception Bad

let[@inline] get buf i = B.unsafe_get buf i
let[@inline] is_digit c = c >= '0' && c <= '9'
let[@inline] is_lcalpha c = c >= 'a' && c <= 'z'
let[@inline] is_alpha c = is_lcalpha c || (c >= 'A' && c <= 'Z')

let[@inline] is_key_char c =
  is_lcalpha c || is_digit c || c = '_' || c = '-' || c = '.' || c = '*'

(* RFC 8941 §3.3.4: token = ( ALPHA / "*" ) *( tchar / ":" / "/" ) *)
let[@inline] is_token_char c = Charset.is_tchar c || c = ':' || c = '/'

let[@inline] is_base64 c = is_alpha c || is_digit c || c = '+' || c = '/' || c = '='

(* Each skipper takes the position of the first byte and returns the
   position after what it read. *)

let skip_key buf i stop =
  if i >= stop || not (is_lcalpha (get buf i) || get buf i = '*') then raise_notrace Bad;
  let i = ref (i + 1) in
  while !i < stop && is_key_char (get buf !i) do incr i done;
  !i

(* §4.2.4: at most 15 integer digits, or 12 before a '.' and 1-3 after. *)
let skip_number buf i stop =
  let start = if get buf i = '-' then i + 1 else i in
  let i = ref start in
  while !i < stop && is_digit (get buf !i) do incr i done;
  let int_digits = !i - start in
  if int_digits = 0 then raise_notrace Bad;
  if !i < stop && get buf !i = '.' then begin
    if int_digits > 12 then raise_notrace Bad;
    let f = !i + 1 in
    i := f;
    while !i < stop && is_digit (get buf !i) do incr i done;
    if !i - f < 1 || !i - f > 3 then raise_notrace Bad
  end
  else if int_digits > 15 then raise_notrace Bad;
  !i

let skip_string buf i stop =
  let i = ref (i + 1) and closed = ref false in
  while not !closed do
    if !i >= stop then raise_notrace Bad;
    let c = get buf !i in
    if c = '"' then closed := true
    else if c = '\\' then begin
      if !i + 1 >= stop then raise_notrace Bad;
      let d = get buf (!i + 1) in
      if d <> '"' && d <> '\\' then raise_notrace Bad;
      incr i
    end
    else if c < ' ' || c > '~' then raise_notrace Bad;
    incr i
  done;
  !i

let skip_bare_item buf i stop =
  if i >= stop then raise_notrace Bad;
  let c = get buf i in
  if c = '-' || is_digit c then skip_number buf i stop
  else if c = '"' then skip_string buf i stop
  else if is_alpha c || c = '*' then begin
    let i = ref (i + 1) in
    while !i < stop && is_token_char (get buf !i) do incr i done;
    !i
  end
  else if c = ':' then begin
    let i = ref (i + 1) in
    while !i < stop && is_base64 (get buf !i) do incr i done;
    if !i >= stop || get buf !i <> ':' then raise_notrace Bad;
    !i + 1
  end
  else if c = '?' then begin
    if i + 1 >= stop || (get buf (i + 1) <> '0' && get buf (i + 1) <> '1') then raise_notrace Bad;
    i + 2
  end
  else raise_notrace Bad

(* parameters = *( ";" *SP param-key [ "=" param-value ] ) *)
let skip_parameters buf i stop =
  let i = ref i in
  while !i < stop && get buf !i = ';' do
    incr i;
    while !i < stop && get buf !i = ' ' do incr i done;
    i := skip_key buf !i stop;
    if !i < stop && get buf !i = '=' then i := skip_bare_item buf (!i + 1) stop
  done;
  !i

let skip_inner_list buf i stop =
  let i = ref (i + 1) and closed = ref false in
  while not !closed do
    while !i < stop && get buf !i = ' ' do incr i done;
    if !i >= stop then raise_notrace Bad;
    if get buf !i = ')' then closed := true
    else begin
      i := skip_parameters buf (skip_bare_item buf !i stop) stop;
      if !i >= stop || (get buf !i <> ' ' && get buf !i <> ')') then raise_notrace Bad
    end
  done;
  skip_parameters buf (!i + 1) stop

(* The Integer at [i .. j) (a number [skip_number] accepted) as an
   urgency, or -1 if it is a Decimal or outside 0..7. Leading zeros and
   "-0" are still Integers. *)
let urgency_value buf i j =
  let neg = get buf i = '-' in
  let k = ref (if neg then i + 1 else i) in
  while !k < j - 1 && get buf !k = '0' do incr k done;
  let c = get buf !k in
  if j - !k = 1 && c >= '0' && c <= '7' && ((not neg) || c = '0') then Char.code c - 48 else -1

let[@inline] is_ows c = c = ' ' || c = '\t'

let parse_exn buf off len =
  let stop = ref (off + len) and i = ref off in
  while !i < !stop && get buf !i = ' ' do incr i done;
  while !stop > !i && get buf (!stop - 1) = ' ' do decr stop done;
  let stop = !stop in
  (* -1: absent or ignored *)
  let u = ref (-1) and inc = ref (-1) in
  let fin = ref (!i >= stop) in
  while not !fin do
    let k = !i in
    i := skip_key buf k stop;
    let one_letter = !i - k = 1 in
    let is_u = one_letter && get buf k = 'u' and is_i = one_letter && get buf k = 'i' in
    if !i < stop && get buf !i = '=' then begin
      let v = !i + 1 in
      if v < stop && get buf v = '(' then begin
        i := skip_inner_list buf v stop;
        if is_u then u := -1;
        if is_i then inc := -1
      end
      else begin
        let e = skip_bare_item buf v stop in
        i := skip_parameters buf e stop;
        if is_u then u := urgency_value buf v e;
        if is_i then
          inc := (if e - v = 2 && get buf v = '?' then Char.code (get buf (v + 1)) - 48 else -1)
      end
    end
    else begin
      (* a key alone is Boolean true *)
      i := skip_parameters buf !i stop;
      if is_u then u := -1;
      if is_i then inc := 1
    end;
    while !i < stop && is_ows (get buf !i) do incr i done;
    if !i >= stop then fin := true
    else begin
      if get buf !i <> ',' then raise_notrace Bad;
      incr i;
      while !i < stop && is_ows (get buf !i) do incr i done;
      if !i >= stop then raise_notrace Bad
    end
  done;
  pack (if !u < 0 then default_urgency else !u) (!inc = 1)

let parse buf ~off ~len =
  B.check_range "Httpz.H2_priority.parse" buf ~off ~len;
  try parse_exn buf off len with Bad -> default
