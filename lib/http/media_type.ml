(* Everything is written as top-level functions over (buffer, index, stop)
   returning ints, with local refs only: without flambda a local closure or
   a returned tuple would allocate on every call. *)

let get = Bigstring.unsafe_get
let sget = String.unsafe_get

let[@inline] lower c = if c >= 'A' && c <= 'Z' then Char.unsafe_chr (Char.code c + 32) else c

let rec skip_ows buf i stop = if i < stop && Charset.is_ows (get buf i) then skip_ows buf (i + 1) stop else i
let rec token_end buf i stop = if i < stop && Charset.is_tchar (get buf i) then token_end buf (i + 1) stop else i

(* qdtext and the byte after a backslash (RFC 9110 §5.6.4): HTAB, SP,
   VCHAR, obs-text. The quote and the backslash are the caller's. *)
let[@inline] quotable c = c = '\t' || (c >= ' ' && c <> '\127')

(* [i] is just after an opening quote: the index of the closing one, or -1. *)
let rec quoted_end buf i stop =
  if i >= stop then -1
  else
    match get buf i with
    | '"' -> i
    | '\\' -> if i + 1 < stop && quotable (get buf (i + 1)) then quoted_end buf (i + 2) stop else -1
    | c -> if quotable c then quoted_end buf (i + 1) stop else -1

(* [i] is at the start of a media type: the index just past its subtype
   when [type "/" subtype] is followed by OWS then [';'], [','] (when
   [comma], in a list) or [stop]; -1 otherwise. *)
let essence_end buf i stop comma =
  let t = token_end buf i stop in
  if t = i || t >= stop || get buf t <> '/' then -1
  else
    let s = token_end buf (t + 1) stop in
    if s = t + 1 then -1
    else
      let j = skip_ows buf s stop in
      if j = stop then s
      else
        let c = get buf j in
        if c = ';' || (comma && c = ',') then s else -1


let essence buf v =
  Bigstring.check_range "Media_type" buf ~off:(Span.off v) ~len:(Span.len v);
  let o = Span.off v in
  let stop = o + Span.len v in
  let i = skip_ows buf o stop in
  let e = essence_end buf i stop false in
  (* [i] fits in 31 bits, [e] too: one int carries both. *)
  if e < 0 then -1 else (i lsl 31) lor e

let matches buf v pattern =
  let x = essence buf v in
  x >= 0
  && (let i = x lsr 31 and e = x land 0x7FFF_FFFF in
      Bigstring.equal_caseless buf ~off:i ~len:(e - i) pattern)

let is_type buf v ty =
  let x = essence buf v in
  x >= 0
  &&
  let i = x lsr 31 and e = x land 0x7FFF_FFFF in
  let slash = Bigstring.index_from buf ~off:i ~stop:e '/' in
  Bigstring.equal_caseless buf ~off:i ~len:(slash - i) ty

let has_suffix buf v suffix =
  let x = essence buf v in
  x >= 0
  &&
  let i = x lsr 31 and e = x land 0x7FFF_FFFF in
  let n = String.length suffix in
  (* The '+' must sit in the subtype, after at least one byte of it. *)
  let slash = Bigstring.index_from buf ~off:i ~stop:e '/' in
  e - n - 1 > slash + 1
  && get buf (e - n - 1) = '+'
  && Bigstring.equal_caseless buf ~off:(e - n) ~len:n suffix

let is_json buf v = matches buf v "application/json" || matches buf v "text/json" || has_suffix buf v "json"

(* [i] is past the media type or a parameter: the span (as an int) of the
   value of the first parameter named [name] from there, or -1. *)
let rec find_param buf i stop name =
  let i = skip_ows buf i stop in
  if i >= stop || get buf i <> ';' then -1
  else
    let i = skip_ows buf (i + 1) stop in
    if i >= stop then -1
    else if get buf i = ';' then find_param buf i stop name
    else
      let n = token_end buf i stop in
      if n = i || n >= stop || get buf n <> '=' then -1
      else
        let v = n + 1 in
        if v < stop && get buf v = '"' then begin
          let q = quoted_end buf (v + 1) stop in
          if q < 0 then -1
          else if Bigstring.equal_caseless buf ~off:i ~len:(n - i) name then
            (Span.make ~off:(v + 1) ~len:(q - v - 1) :> int)
          else find_param buf (q + 1) stop name
        end
        else
          let e = token_end buf v stop in
          if e = v then -1
          else if Bigstring.equal_caseless buf ~off:i ~len:(n - i) name then (Span.make ~off:v ~len:(e - v) :> int)
          else find_param buf e stop name

let param_int buf v name =
  let x = essence buf v in
  if x < 0 then -1 else find_param buf (x land 0x7FFF_FFFF) (Span.off v + Span.len v) name

let param buf v name =
  let p = param_int buf v name in
  if p < 0 then Span.empty else Span.unsafe_of_int p

let param_present buf v name = param_int buf v name >= 0

(* {1 Accept} *)

(* The offered type is a string: the few scanners it needs, over strings. *)
let rec s_skip_ows s i stop = if i < stop && Charset.is_ows (sget s i) then s_skip_ows s (i + 1) stop else i
let rec s_token_end s i stop = if i < stop && Charset.is_tchar (sget s i) then s_token_end s (i + 1) stop else i

let rec s_quoted_end s i stop =
  if i >= stop then -1
  else
    match sget s i with
    | '"' -> i
    | '\\' -> if i + 1 < stop then s_quoted_end s (i + 2) stop else -1
    | _ -> s_quoted_end s (i + 1) stop

(* [buf] at [off] (of [len] bytes) equals [s] at [soff] ignoring case;
   the caller checked [soff + len <= String.length s]. *)
let rec eq_from buf off len s soff k =
  k >= len || (lower (get buf (off + k)) = lower (sget s (soff + k)) && eq_from buf off len s soff (k + 1))

let[@inline] eq_bs buf off len s soff = eq_from buf off len s soff 0

(* Does the offered type's parameter list (from [i]) hold the parameter
   named [buf.(no, no+nl)] with the value [buf.(vo, vo+vl)]? *)
let rec s_has_param s i stop buf no nl vo vl =
  let i = s_skip_ows s i stop in
  if i >= stop || sget s i <> ';' then false
  else
    let i = s_skip_ows s (i + 1) stop in
    if i >= stop then false
    else if sget s i = ';' then s_has_param s i stop buf no nl vo vl
    else
      let n = s_token_end s i stop in
      if n = i || n >= stop || sget s n <> '=' then false
      else
        let v = n + 1 in
        let quoted = v < stop && sget s v = '"' in
        let ve = if quoted then s_quoted_end s (v + 1) stop else s_token_end s v stop in
        if ve < 0 then false
        else
          let vs = if quoted then v + 1 else v in
          let named = n - i = nl && eq_bs buf no nl s i in
          if named then ve - vs = vl && eq_bs buf vo vl s vs
          else s_has_param s (if quoted then ve + 1 else ve) stop buf no nl vo vl

(* A qvalue (RFC 9110 §12.4.2) in thousandths, or -1. *)
let parse_q buf o n =
  if n = 0 then -1
  else
    let c0 = get buf o in
    if n = 1 then (if c0 = '0' then 0 else if c0 = '1' then 1000 else -1)
    else if n > 5 || get buf (o + 1) <> '.' then -1
    else begin
      let acc = ref 0 and ok = ref (c0 = '0' || c0 = '1') in
      for k = 0 to 2 do
        let d = if o + 2 + k < o + n then get buf (o + 2 + k) else '0' in
        if d < '0' || d > '9' then ok := false else acc := (!acc * 10) + (Char.code d - 48)
      done;
      if not !ok then -1
      else if c0 = '1' then (if !acc = 0 then 1000 else -1)
      else !acc
    end

(* From [i], the index of the next ',' outside a quoted-string, or [stop]. *)
let rec skip_element buf i stop =
  if i >= stop then stop
  else
    match get buf i with
    | ',' -> i
    | '"' -> skip_quoted buf (i + 1) stop
    | _ -> skip_element buf (i + 1) stop

and skip_quoted buf i stop =
  if i >= stop then stop
  else
    match get buf i with
    | '"' -> skip_element buf (i + 1) stop
    | '\\' -> skip_quoted buf (i + 2) stop
    | _ -> skip_quoted buf (i + 1) stop

(* How specifically the range [s, e) (its '/' at [sl]) names the offered
   type (its '/' at [osl], its essence ending at [oe]): 0 for [*/*], 1 for
   [type/*], 2 for [type/subtype], -1 when it does not match or is
   [*/subtype]. *)
let range_spec buf s sl e offered osl oe =
  let star_type = sl - s = 1 && get buf s = '*' in
  let star_sub = e - sl = 2 && get buf (sl + 1) = '*' in
  if star_type then (if star_sub then 0 else -1)
  else if not (sl - s = osl && eq_bs buf s osl offered 0) then -1
  else if star_sub then 1
  else if e - sl - 1 = oe - osl - 1 && eq_bs buf (sl + 1) (e - sl - 1) offered (osl + 1) then 2
  else -1

let rec s_index s i stop c = if i >= stop then -1 else if sget s i = c then i else s_index s (i + 1) stop c

let rec s_essence_end s i stop =
  if i >= stop then stop
  else
    let c = sget s i in
    if c = ';' || Charset.is_ows c then i else s_essence_end s (i + 1) stop

(* The deciding range's specificity and weight as one int,
   [((spec + 1) lsl 11) lor q], or 0 when no range matches: several
   Accept field lines are one list, so the most specific range over all
   of them decides. *)
let weigh buf v offered =
  Bigstring.check_range "Media_type.accepts" buf ~off:(Span.off v) ~len:(Span.len v);
  let olen = String.length offered in
  let oe = s_essence_end offered 0 olen in
  let osl = s_index offered 0 oe '/' in
  if osl <= 0 || osl >= oe - 1 then 0
  else begin
    let stop = Span.off v + Span.len v in
    let best_spec = ref (-1) and best_q = ref 0 in
    let i = ref (Span.off v) in
    while !i < stop do
      let s = skip_ows buf !i stop in
      if s >= stop then i := stop
      else if get buf s = ',' then i := s + 1
      else begin
        let e = essence_end buf s stop true in
        if e < 0 then i := skip_element buf s stop
        else begin
          let sl = Bigstring.index_from buf ~off:s ~stop:e '/' in
          let spec = range_spec buf s sl e offered osl oe in
          let j = ref e and q = ref 1000 and nparams = ref 0 and all_held = ref true in
          let bad = ref false and ext = ref false and fin = ref false in
          while not !fin do
            let k = skip_ows buf !j stop in
            if k >= stop || get buf k = ',' then (j := k; fin := true)
            else if get buf k <> ';' then (bad := true; fin := true)
            else begin
              let k = skip_ows buf (k + 1) stop in
              if k >= stop || get buf k = ',' || get buf k = ';' then j := k
              else begin
                let n = token_end buf k stop in
                if n = k || n >= stop || get buf n <> '=' then (bad := true; fin := true)
                else begin
                  let vs = n + 1 in
                  let quoted = vs < stop && get buf vs = '"' in
                  let ve = if quoted then quoted_end buf (vs + 1) stop else token_end buf vs stop in
                  if ve < 0 || ((not quoted) && ve = vs) then (bad := true; fin := true)
                  else begin
                    let vo = if quoted then vs + 1 else vs in
                    j := if quoted then ve + 1 else ve;
                    if not !ext then
                      if n - k = 1 && lower (get buf k) = 'q' then begin
                        ext := true;
                        q := if quoted then -1 else parse_q buf vo (ve - vo);
                        if !q < 0 then (bad := true; fin := true)
                      end
                      else begin
                        incr nparams;
                        if spec = 2 && not (s_has_param offered oe olen buf k (n - k) vo (ve - vo)) then
                          all_held := false
                      end
                  end
                end
              end
            end
          done;
          if !bad then i := skip_element buf !j stop
          else begin
            i := !j;
            if spec >= 0 && !all_held then begin
              let spec = if spec = 2 then 2 + !nparams else spec in
              if spec > !best_spec then (best_spec := spec; best_q := !q)
            end
          end
        end
      end
    done;
    if !best_spec < 0 then 0 else ((!best_spec + 1) lsl 11) lor !best_q
  end

let accepts buf v offered = weigh buf v offered land 2047

let best buf v offered =
  let bi = ref (-1) and bq = ref 0 in
  for k = 0 to Array.length offered - 1 do
    let q = accepts buf v (Array.unsafe_get offered k) in
    if q > !bq then (bi := k; bq := q)
  done;
  !bi

let accepts_request buf req offered =
  let i = ref (Request.find req Header_name.Accept) in
  if !i < 0 then 1000
  else begin
    let w = ref 0 in
    while !i >= 0 do
      let x = weigh buf (Request.header_value req !i) offered in
      if x lsr 11 > !w lsr 11 then w := x;
      i := Request.find_next req Header_name.Accept ~after:!i
    done;
    !w land 2047
  end

let best_request buf req offered =
  let bi = ref (-1) and bq = ref 0 in
  for k = 0 to Array.length offered - 1 do
    let q = accepts_request buf req (Array.unsafe_get offered k) in
    if q > !bq then (bi := k; bq := q)
  done;
  !bi

let content_type _buf req =
  let i = Request.find req Header_name.Content_type in
  if i < 0 then Span.empty else Request.header_value req i

let request_is buf req pattern =
  let i = Request.find req Header_name.Content_type in
  i >= 0 && matches buf (Request.header_value req i) pattern

let request_is_json buf req =
  let i = Request.find req Header_name.Content_type in
  i >= 0 && is_json buf (Request.header_value req i)
