type error =
  | Bad_status_line
  | Bad_version
  | Unsupported_version
  | Bad_status
  | Reason_too_long
  | Bare_cr
  | Bare_lf
  | Obs_fold
  | Bad_header_name
  | Space_before_colon
  | Bad_header_value
  | Too_many_headers
  | Head_too_large
  | Bad_content_length
  | Conflicting_content_length
  | Content_too_large
  | Bad_transfer_encoding
  | Unsupported_transfer_coding
  | Length_and_chunked
  | Transfer_encoding_http10
  | Too_many_interim

let error_to_string = function
  | Bad_status_line -> "bad_status_line"
  | Bad_version -> "bad_version"
  | Unsupported_version -> "unsupported_version"
  | Bad_status -> "bad_status"
  | Reason_too_long -> "reason_too_long"
  | Bare_cr -> "bare_cr"
  | Bare_lf -> "bare_lf"
  | Obs_fold -> "obs_fold"
  | Bad_header_name -> "bad_header_name"
  | Space_before_colon -> "space_before_colon"
  | Bad_header_value -> "bad_header_value"
  | Too_many_headers -> "too_many_headers"
  | Head_too_large -> "head_too_large"
  | Bad_content_length -> "bad_content_length"
  | Conflicting_content_length -> "conflicting_content_length"
  | Content_too_large -> "content_too_large"
  | Bad_transfer_encoding -> "bad_transfer_encoding"
  | Unsupported_transfer_coding -> "unsupported_transfer_coding"
  | Length_and_chunked -> "length_and_chunked"
  | Transfer_encoding_http10 -> "transfer_encoding_http10"
  | Too_many_interim -> "too_many_interim"

type limits = {
  max_head : int;
  max_headers : int;
  max_reason : int;
  max_interim : int;
  max_content_length : int;
}

let default_limits =
  { max_head = 64 * 1024; max_headers = 100; max_reason = 1024; max_interim = 8;
    max_content_length = 1 lsl 50 }

type status = Complete | Interim | Partial | Error

type framing = No_body | Length | Chunked | Until_close | Tunnel

let framing_to_string = function
  | No_body -> "no_body" | Length -> "length" | Chunked -> "chunked"
  | Until_close -> "until_close" | Tunnel -> "tunnel"

type t = {
  limits : limits;
  simd : bool;
  names : Header_name.t array;
  name_spans : int array;
  value_spans : int array;
  mutable count : int;
  mutable version : Version.t;
  mutable status : int;
  mutable reason : Span.t;
  mutable content_length : int;
  mutable framing : framing;
  mutable keep_alive : bool;
  mutable head_length : int;
  mutable error : error;
  mutable interim : int;  (* 1xx heads since the last final one or reset *)
  mutable te_seen : bool;
  mutable te_chunked_last : bool;
  mutable te_other : bool;
  mutable chunked_count : int;
  mutable conn_close : bool;
  mutable conn_keep_alive : bool;
  mutable last : status;
  mutable start_off : int;
  mutable scanned : int;
}

let create ?(limits = default_limits) ?(simd = Simd.available) () =
  if limits.max_head <= 0 || limits.max_headers <= 0 || limits.max_reason < 0
     || limits.max_interim < 0 || limits.max_content_length < 0
  then invalid_arg "Httpz.Response_head.create: limits must be positive";
  if limits.max_head >= 1 lsl 31 then
    invalid_arg "Httpz.Response_head.create: max_head must be below 2^31";
  { limits; simd;
    names = Array.make limits.max_headers Header_name.Other;
    name_spans = Array.make limits.max_headers 0;
    value_spans = Array.make limits.max_headers 0;
    count = 0; version = Version.Http_1_1; status = 0; reason = Span.empty;
    content_length = -1; framing = No_body; keep_alive = false; head_length = 0;
    error = Bad_status_line; interim = 0;
    te_seen = false; te_chunked_last = false; te_other = false; chunked_count = 0;
    conn_close = false; conn_keep_alive = false;
    last = Complete; start_off = 0; scanned = 0 }

let limits t = t.limits

(* Everything a head sets, so that nothing of the last one (parsed, failed
   or abandoned) shows through the next. *)
let clear t =
  t.count <- 0; t.version <- Version.Http_1_1; t.status <- 0; t.reason <- Span.empty;
  t.content_length <- -1; t.framing <- No_body; t.keep_alive <- false; t.head_length <- 0;
  t.te_seen <- false; t.te_chunked_last <- false; t.te_other <- false; t.chunked_count <- 0;
  t.conn_close <- false; t.conn_keep_alive <- false

let reset t =
  clear t;
  t.error <- Bad_status_line;
  t.interim <- 0;
  t.last <- Complete;
  t.start_off <- 0;
  t.scanned <- 0

exception Need_more
exception Fail

let[@inline never] fail t e =
  t.error <- e;
  raise_notrace Fail

let[@inline] get b i = Bigstring.unsafe_get b i

(* --- Field semantics ---------------------------------------------------- *)

let connection_option t b off len =
  if Bigstring.equal_caseless b ~off ~len "close" then t.conn_close <- true
  else if Bigstring.equal_caseless b ~off ~len "keep-alive" then t.conn_keep_alive <- true

let transfer_coding t b off len =
  let stop = off + len in
  let name_end = Swar.skip_tchars b off stop in
  let nlen = name_end - off in
  if nlen = 0 then fail t Bad_transfer_encoding;
  t.te_seen <- true;
  if nlen = len && Bigstring.equal_caseless b ~off ~len:nlen "chunked" then begin
    t.chunked_count <- t.chunked_count + 1;
    t.te_chunked_last <- true
  end else begin
    t.te_chunked_last <- false;
    t.te_other <- true
  end

(* A comma-separated list (RFC 9110 §5.6.1): empty elements skipped, each
   other one trimmed and handed on. A flag, not a function argument: a
   closure would allocate. *)
let list_elements t b pos stop ~te =
  let i = ref pos and n = ref 0 in
  while !i < stop do
    while !i < stop && (Charset.is_ows (get b !i) || get b !i = ',') do incr i done;
    let start = !i in
    while !i < stop && get b !i <> ',' do incr i done;
    let e = ref !i in
    while !e > start && Charset.is_ows (get b (!e - 1)) do decr e done;
    if !e > start then begin
      incr n;
      if te then transfer_coding t b start (!e - start)
      else connection_option t b start (!e - start)
    end
  done;
  !n

(* One value per field line; a list ("5, 5") is refused rather than
   reduced, as is any value differing from an earlier one. *)
let content_length_field t b voff vlen =
  let n = Span.parse_decimal b (Span.make ~off:voff ~len:vlen) in
  if n < 0 then fail t Bad_content_length;
  if t.content_length >= 0 && t.content_length <> n then fail t Conflicting_content_length;
  t.content_length <- n

let field_semantics t b (id : Header_name.t) voff vlen =
  match id with
  | Content_length -> content_length_field t b voff vlen
  | Transfer_encoding ->
    if list_elements t b voff (voff + vlen) ~te:true = 0 then fail t Bad_transfer_encoding
  | Connection -> ignore (list_elements t b voff (voff + vlen) ~te:false : int)
  | _ -> ()

(* --- Status line ----------------------------------------------------------- *)

let[@inline] digit b i = let c = get b i in c >= '0' && c <= '9'

(* status-line = HTTP-version SP status-code SP [ reason-phrase ] CRLF.
   The SP before an empty reason is often left out: accepted. *)
let status_line t b off stop =
  if off + 12 > stop then begin
    let prefix = "HTTP/" in
    for i = 0 to min (stop - off) 5 - 1 do
      if get b (off + i) <> String.unsafe_get prefix i then fail t Bad_version
    done;
    raise_notrace Need_more
  end;
  if not (Bigstring.equal_string b ~off ~len:5 "HTTP/") || get b (off + 6) <> '.'
     || not (digit b (off + 5)) || not (digit b (off + 7))
  then fail t Bad_version;
  if get b (off + 5) <> '1' then fail t Unsupported_version;
  t.version <- (if get b (off + 7) = '0' then Version.Http_1_0 else Version.Http_1_1);
  if get b (off + 8) <> ' ' then fail t Bad_status_line;
  if not (digit b (off + 9) && digit b (off + 10) && digit b (off + 11)) then fail t Bad_status;
  let code =
    (Char.code (get b (off + 9)) - 48) * 100 + (Char.code (get b (off + 10)) - 48) * 10
    + (Char.code (get b (off + 11)) - 48)
  in
  (* RFC 9110 §15: values outside 100..599 are invalid. *)
  if code < 100 || code > 599 then fail t Bad_status;
  t.status <- code;
  let p = off + 12 in
  if p >= stop then raise_notrace Need_more;
  let r_start =
    match get b p with
    | ' ' -> p + 1
    | '\r' | '\n' -> p
    | _ -> fail t Bad_status
  in
  (* reason-phrase = 1*( HTAB / SP / VCHAR / obs-text ): no other control. *)
  let r_stop = stop in
  let q = ref (Swar.skip_field_value b r_start r_stop) in
  while !q < r_stop && get b !q = '\t' do q := Swar.skip_field_value b (!q + 1) r_stop done;
  let r_end = !q in
  if r_end - r_start > t.limits.max_reason then fail t Reason_too_long;
  if r_end >= stop then raise_notrace Need_more;
  (match get b r_end with
   | '\r' ->
     if r_end + 1 >= stop then raise_notrace Need_more;
     if get b (r_end + 1) <> '\n' then fail t Bare_cr
   | '\n' -> fail t Bare_lf
   | _ -> fail t Bad_status_line);
  t.reason <- Span.make ~off:r_start ~len:(r_end - r_start);
  r_end + 2

(* --- Field lines (as Request's: the SIMD kernel, then the portable line) -- *)

let[@inline never] not_a_field t b n_start n_end stop =
  if n_end = n_start then
    match get b n_start with
    | '\r' ->
      if n_start + 1 >= stop then raise_notrace Need_more;
      if get b (n_start + 1) <> '\n' then fail t Bare_cr;
      n_start + 2
    | '\n' -> fail t Bare_lf
    | ' ' | '\t' -> fail t Obs_fold
    | _ -> fail t Bad_header_name
  else
    match get b n_end with
    | ' ' | '\t' ->
      let w = ref (n_end + 1) in
      while !w < stop && Charset.is_ows (get b !w) do incr w done;
      if !w >= stop then raise_notrace Need_more;
      if get b !w = ':' then fail t Space_before_colon else fail t Bad_header_name
    | _ -> fail t Bad_header_name

let[@inline] semantic (id : Header_name.t) =
  match id with Content_length | Transfer_encoding | Connection -> true | _ -> false

let record_kernel_lines t b first lines =
  for i = first to first + lines - 1 do
    let ns = Span.unsafe_of_int (Array.unsafe_get t.name_spans i) in
    let id = Header_name.of_token b ~off:(Span.off ns) ~len:(Span.len ns) in
    Array.unsafe_set t.names i id;
    t.count <- i + 1;
    if semantic id then begin
      let vs = Span.unsafe_of_int (Array.unsafe_get t.value_spans i) in
      field_semantics t b id (Span.off vs) (Span.len vs)
    end
  done

let portable_line t b n_start stop =
  let n_end = Swar.skip_tchars b n_start stop in
  if n_end >= stop then raise_notrace Need_more;
  if n_end = n_start || get b n_end <> ':' then -1 - not_a_field t b n_start n_end stop
  else begin
    let nlen = n_end - n_start in
    let id = Header_name.of_token b ~off:n_start ~len:nlen in
    let v = ref (n_end + 1) in
    while !v < stop && Charset.is_ows (get b !v) do incr v done;
    let v_start = !v in
    let p = ref (Swar.skip_field_value b v_start stop) in
    while !p < stop && get b !p = '\t' do p := Swar.skip_field_value b (!p + 1) stop done;
    let v_end = !p in
    if v_end >= stop then raise_notrace Need_more;
    (match get b v_end with
     | '\r' ->
       if v_end + 1 >= stop then raise_notrace Need_more;
       if get b (v_end + 1) <> '\n' then fail t Bare_cr
     | '\n' -> fail t Bare_lf
     | _ -> fail t Bad_header_value);
    let e = ref v_end in
    while !e > v_start && Charset.is_ows (get b (!e - 1)) do decr e done;
    let vlen = !e - v_start in
    let i = t.count in
    if i >= t.limits.max_headers then fail t Too_many_headers;
    Array.unsafe_set t.names i id;
    Array.unsafe_set t.name_spans i (Span.make ~off:n_start ~len:nlen :> int);
    Array.unsafe_set t.value_spans i (Span.make ~off:v_start ~len:vlen :> int);
    t.count <- i + 1;
    if semantic id then field_semantics t b id v_start vlen;
    v_end + 2
  end

let fields_portable t b pos stop =
  let pos = ref pos and fin = ref false in
  while not !fin do
    let r = portable_line t b !pos stop in
    if r >= 0 then pos := r else begin pos := -1 - r; fin := true end
  done;
  !pos

let fields_kernel t b pos stop =
  let pos = ref pos and fin = ref false in
  while not !fin do
    let first = t.count in
    let r = Simd.field_lines b !pos stop t.name_spans t.value_spans first t.limits.max_headers in
    let lines = r lsr 32 in
    if lines > 0 then record_kernel_lines t b first lines;
    let n_start = r land 0xFFFF_FFFF in
    if n_start + 1 < stop && get b n_start = '\r' && get b (n_start + 1) = '\n' then begin
      pos := n_start + 2; fin := true
    end else begin
      let r = portable_line t b n_start stop in
      if r >= 0 then pos := r else begin pos := -1 - r; fin := true end
    end
  done;
  !pos

(* --- Framing (RFC 9112 §6.3) ---------------------------------------------- *)

let finish t ~meth =
  (* Framing fields are checked whatever the status: a head that a
     different request method would have framed otherwise must not be
     read two ways by two components. *)
  if t.te_seen then begin
    if t.version = Version.Http_1_0 then fail t Transfer_encoding_http10;
    if t.te_other || t.chunked_count <> 1 || not t.te_chunked_last then
      fail t Unsupported_transfer_coding;
    if t.content_length >= 0 then fail t Length_and_chunked
  end;
  let s = t.status in
  if s < 200 then begin
    if s <> 101 then begin
      t.interim <- t.interim + 1;
      if t.interim > t.limits.max_interim then fail t Too_many_interim
    end
  end;
  let framing =
    if s = 101 then Tunnel
    else if s < 200 || s = 204 || s = 304 || (meth : Meth.t) = Head then No_body
    else if meth = Connect && s < 300 then Tunnel
    else if t.te_seen then Chunked
    else if t.content_length >= 0 then begin
      if t.content_length > t.limits.max_content_length then fail t Content_too_large;
      Length
    end
    else Until_close
  in
  t.framing <- framing;
  t.keep_alive <-
    (match framing with
     | Until_close | Tunnel -> false
     | No_body | Length | Chunked ->
       (match t.version with
        | Version.Http_1_1 | Version.Http_2 -> not t.conn_close (* never parsed: 1.x only *)
        | Version.Http_1_0 -> t.conn_keep_alive && not t.conn_close))

let parse_head t b off stop ~meth =
  clear t;
  let pos = status_line t b off stop in
  let pos = if t.simd then fields_kernel t b pos stop else fields_portable t b pos stop in
  finish t ~meth;
  pos - off

let head_may_end b ~base from stop =
  let p = ref (Swar.find_lf b from stop) in
  let found = ref false in
  while not !found && !p < stop do
    let q = !p in
    if (q - 1 >= base && get b (q - 1) = '\n')
    || (q - 2 >= base && get b (q - 1) = '\r' && get b (q - 2) = '\n')
    then found := true
    else p := Swar.find_lf b (q + 1) stop
  done;
  !found

let too_large t = t.error <- Head_too_large; t.last <- Error; Error

let parse t b ~off ~len ~meth =
  if off < 0 || len < 0 || off > Bigstring.length b - len then
    invalid_arg "Httpz.Response_head.parse: range outside the buffer";
  let max_head = t.limits.max_head in
  if off + (if len < max_head then len else max_head) >= 1 lsl 31 then
    invalid_arg "Httpz.Response_head.parse: offsets must stay below 2^31";
  let stop = off + (if len < max_head then len else max_head) in
  let resuming = t.last = Partial && t.start_off = off && len >= t.scanned in
  if resuming
  && not (head_may_end b ~base:off (off + (if t.scanned > 3 then t.scanned - 3 else 0)) stop)
  then begin
    t.scanned <- len;
    if len >= max_head then too_large t else Partial
  end else begin
    t.start_off <- off;
    match parse_head t b off stop ~meth with
    | n ->
      t.head_length <- n;
      let st = if t.status < 200 && t.status <> 101 then Interim else begin
          t.interim <- 0; Complete end in
      t.last <- st; st
    | exception Need_more ->
      if len >= max_head then too_large t else begin
        t.scanned <- len; t.last <- Partial; Partial
      end
    | exception Fail -> t.last <- Error; Error
  end

let version t = t.version
let status t = t.status
let reason t = t.reason
let header_count t = t.count
let header_name t i = Array.unsafe_get t.names i
let header_name_span t i = Span.unsafe_of_int (Array.unsafe_get t.name_spans i)
let header_value t i = Span.unsafe_of_int (Array.unsafe_get t.value_spans i)

let find_next t n ~after =
  let i = ref (after + 1) and r = ref (-1) in
  while !i < t.count do
    if Array.unsafe_get t.names !i == n then begin r := !i; i := t.count end else incr i
  done;
  !r

let find t n = find_next t n ~after:(-1)

let find_string t b name =
  let i = ref 0 and r = ref (-1) in
  while !i < t.count do
    if Span.equal_caseless b (header_name_span t !i) name then begin r := !i; i := t.count end
    else incr i
  done;
  !r

let content_length t = t.content_length
let framing t = t.framing
let keep_alive t = t.keep_alive
let head_length t = t.head_length
let error t = t.error
let interim_count t = t.interim
