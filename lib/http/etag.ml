type kind = Strong | Weak | Not_entity_tag
type condition = Match | No_match | Invalid

(* etagc = %x21 / %x23-7E / obs-text  (RFC 9110 §8.8.3)
   that is, field-vchar (VCHAR / obs-text, §5.5) minus DQUOTE. *)
let[@inline] is_etagc c = Charset.is_field_vchar c && c <> '"'

let scan (buf : Bigstring.t) ~off ~stop =
  let p = ref off in
  if !p + 1 < stop && Bigstring.unsafe_get buf !p = 'W'
     && Bigstring.unsafe_get buf (!p + 1) = '/'
  then p := !p + 2;
  if !p >= stop || Bigstring.unsafe_get buf !p <> '"' then -1
  else begin
    incr p;
    while !p < stop && is_etagc (Bigstring.unsafe_get buf !p) do incr p done;
    if !p < stop && Bigstring.unsafe_get buf !p = '"' then !p + 1 else -1
  end

let parse buf ~off ~len =
  Bigstring.check_range "Httpz.Etag.parse" buf ~off ~len;
  if len > 0 && scan buf ~off ~stop:(off + len) = off + len then
    if Bigstring.unsafe_get buf off = 'W' then Weak else Strong
  else Not_entity_tag

(* The same checks on a string: the server's own tag. [opaque_start s] is
   where the opaque-tag of [s] begins (0 or 2), or -1 when [s] is not an
   entity-tag; computed per call rather than cached because tags are a few
   dozen bytes and a cache would need state. *)
let opaque_start s =
  let n = String.length s in
  let o = if n >= 2 && String.unsafe_get s 0 = 'W' && String.unsafe_get s 1 = '/' then 2 else 0 in
  if n - o < 2 || String.unsafe_get s o <> '"' || String.unsafe_get s (n - 1) <> '"' then -1
  else begin
    let i = ref (o + 1) in
    while !i < n - 1 && is_etagc (String.unsafe_get s !i) do incr i done;
    if !i = n - 1 then o else -1
  end

let is_weak s = String.length s >= 2 && String.unsafe_get s 0 = 'W' && String.unsafe_get s 1 = '/'

let opaque_equal a oa b ob =
  let la = String.length a - oa in
  la = String.length b - ob
  && begin
    let i = ref 0 in
    while !i < la && String.unsafe_get a (oa + !i) = String.unsafe_get b (ob + !i) do incr i done;
    !i = la
  end

let weak_equal a b =
  let oa = opaque_start a and ob = opaque_start b in
  oa >= 0 && ob >= 0 && opaque_equal a oa b ob

let strong_equal a b = opaque_start a = 0 && opaque_start b = 0 && opaque_equal a 0 b 0

(* Does the entity-tag at [s, e) of [buf] (already validated by [scan])
   match [etag], whose opaque-tag starts at [eo] (>= 0)? *)
let element_matches (buf : Bigstring.t) s e etag eo ~strong =
  let weak_el = Bigstring.unsafe_get buf s = 'W' in
  let os = if weak_el then s + 2 else s in
  let n = e - os in
  (not strong || (not weak_el && eo = 0))
  && n = String.length etag - eo
  && begin
    let i = ref 0 in
    while !i < n && Bigstring.unsafe_get buf (os + !i) = String.unsafe_get etag (eo + !i) do
      incr i
    done;
    !i = n
  end

(* "*" / #entity-tag, with OWS around elements and empty elements
   (RFC 9110 §5.6.1.2: a recipient MUST accept them). The whole list is
   validated before answering, so a malformed element anywhere gives
   [Invalid] even after a match. *)
let eval_list (buf : Bigstring.t) ~off ~len ~etag ~strong =
  let eo = opaque_start etag in
  let stop = ref (off + len) and pos = ref off in
  while !pos < !stop && Charset.is_ows (Bigstring.unsafe_get buf !pos) do incr pos done;
  while !stop > !pos && Charset.is_ows (Bigstring.unsafe_get buf (!stop - 1)) do decr stop done;
  if !stop - !pos = 1 && Bigstring.unsafe_get buf !pos = '*' then Match
  else begin
    let matched = ref false and invalid = ref false in
    while (not !invalid) && !pos < !stop do
      let c = Bigstring.unsafe_get buf !pos in
      if Charset.is_ows c then incr pos
      else if c = ',' then incr pos
      else begin
        let e = scan buf ~off:!pos ~stop:!stop in
        if e < 0 then invalid := true
        else begin
          if eo >= 0 && element_matches buf !pos e etag eo ~strong then matched := true;
          pos := e;
          while !pos < !stop && Charset.is_ows (Bigstring.unsafe_get buf !pos) do incr pos done;
          if !pos < !stop then
            if Bigstring.unsafe_get buf !pos = ',' then incr pos else invalid := true
        end
      end
    done;
    if !invalid then Invalid else if !matched then Match else No_match
  end

let if_none_match buf ~off ~len ~etag =
  Bigstring.check_range "Httpz.Etag.if_none_match" buf ~off ~len;
  eval_list buf ~off ~len ~etag ~strong:false
let if_match buf ~off ~len ~etag =
  Bigstring.check_range "Httpz.Etag.if_match" buf ~off ~len;
  eval_list buf ~off ~len ~etag ~strong:true

let if_range (buf : Bigstring.t) ~off ~len ~etag =
  Bigstring.check_range "Httpz.Etag.if_range" buf ~off ~len;
  let stop = ref (off + len) and pos = ref off in
  while !pos < !stop && Charset.is_ows (Bigstring.unsafe_get buf !pos) do incr pos done;
  while !stop > !pos && Charset.is_ows (Bigstring.unsafe_get buf (!stop - 1)) do decr stop done;
  if !pos = !stop || scan buf ~off:!pos ~stop:!stop <> !stop then Invalid
  else begin
    let eo = opaque_start etag in
    if eo >= 0 && element_matches buf !pos !stop etag eo ~strong:true then Match
    else No_match
  end

let max_length = 44

(* Hex digits of [n] read as an unsigned 63-bit number: 1 to 16. *)
let[@inline] hex_digits n =
  let d = ref 1 and x = ref (n lsr 4) in
  while !x <> 0 do x := !x lsr 4; incr d done;
  !d

let hex = "0123456789abcdef"

let[@inline] put_hex (buf : Bigstring.t) off nd n =
  let x = ref n in
  for i = off + nd - 1 downto off do
    Bigstring.unsafe_set buf i (String.unsafe_get hex (!x land 15));
    x := !x lsr 4
  done

let write buf ~off ~mtime ~nsec ~size =
  if size < 0 then invalid_arg "Httpz.Etag.write: negative size";
  if nsec < 0 || nsec > 999_999_999 then invalid_arg "Httpz.Etag.write: nsec";
  let nm = hex_digits mtime and ns = if nsec = 0 then 0 else hex_digits nsec
  and nz = hex_digits size in
  let total = 1 + nm + (if ns = 0 then 0 else 1 + ns) + 1 + nz + 1 in
  if off < 0 || off > Bigstring.length buf - total then
    invalid_arg "Httpz.Etag.write: buffer too small";
  Bigstring.unsafe_set buf off '"';
  put_hex buf (off + 1) nm mtime;
  let p = off + 1 + nm in
  let p =
    if ns = 0 then p
    else begin
      Bigstring.unsafe_set buf p '.';
      put_hex buf (p + 1) ns nsec;
      p + 1 + ns
    end
  in
  Bigstring.unsafe_set buf p '-';
  put_hex buf (p + 1) nz size;
  let p = p + 1 + nz in
  Bigstring.unsafe_set buf p '"';
  p + 1

let to_string ~mtime ~nsec ~size =
  let b = Bigstring.create max_length in
  let n = write b ~off:0 ~mtime ~nsec ~size in
  Bigstring.sub_string b ~off:0 ~len:n
