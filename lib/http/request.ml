type limits = {
  max_head : int;
  max_headers : int;
  max_target : int;
  max_content_length : int;
}

let default_limits =
  { max_head = 32 * 1024; max_headers = 100; max_target = 8 * 1024;
    max_content_length = 1 lsl 30 }

type status = Complete | Partial | Error

type t = {
  limits : limits;
  simd : bool;  (* field lines through the C kernel (Simd) first *)
  names : Header_name.t array;
  name_spans : int array;
  value_spans : int array;
  mutable count : int;
  mutable meth : Meth.t;
  mutable meth_span : Span.t;
  mutable target : Span.t;
  mutable version : Version.t;
  mutable content_length : int;
  mutable chunked : bool;
  mutable keep_alive : bool;
  mutable expect_continue : bool;
  mutable host : Span.t;
  mutable host_count : int;
  mutable host_from_target : bool;  (** [host] is an absolute-form target's authority *)
  mutable upgrade : bool;
  mutable head_length : int;
  mutable error : Parse_error.t;
  (* Transfer-Encoding bookkeeping, across field lines. *)
  mutable te_seen : bool;
  mutable te_chunked_last : bool;
  mutable te_other : bool;
  mutable conn_close : bool;
  mutable conn_keep_alive : bool;
  (* Resumption: the last status, where the head started and how many of
     its bytes have been looked at. *)
  mutable last : status;
  mutable start_off : int;
  mutable scanned : int;
}

let create ?(limits = default_limits) ?(simd = Simd.available) () =
  if limits.max_head <= 0 || limits.max_headers <= 0 || limits.max_target <= 0
     || limits.max_content_length < 0
  then invalid_arg "Httpz.Request.create: limits must be positive";
  (* Spans hold offsets and lengths below 2^31. *)
  if limits.max_head >= 1 lsl 31 || limits.max_target >= 1 lsl 31 then
    invalid_arg "Httpz.Request.create: max_head and max_target must be below 2^31";
  { limits; simd;
    names = Array.make limits.max_headers Header_name.Other;
    name_spans = Array.make limits.max_headers 0;
    value_spans = Array.make limits.max_headers 0;
    count = 0; meth = Meth.Other; meth_span = Span.empty; target = Span.empty;
    version = Version.Http_1_1; content_length = -1; chunked = false; keep_alive = false;
    expect_continue = false; host = Span.empty; host_count = 0; host_from_target = false; upgrade = false;
    head_length = 0; error = Parse_error.Bad_request_line;
    te_seen = false; te_chunked_last = false; te_other = false;
    conn_close = false; conn_keep_alive = false;
    last = Complete; start_off = 0; scanned = 0 }

let limits t = t.limits
let simd t = t.simd

let reset t =
  t.last <- Complete;
  t.scanned <- 0

let clear t =
  t.count <- 0; t.meth <- Meth.Other; t.meth_span <- Span.empty; t.target <- Span.empty;
  t.version <- Version.Http_1_1; t.content_length <- -1; t.chunked <- false;
  t.keep_alive <- false; t.expect_continue <- false; t.host <- Span.empty;
  t.host_count <- 0; t.host_from_target <- false; t.upgrade <- false; t.head_length <- 0;
  t.te_seen <- false; t.te_chunked_last <- false; t.te_other <- false;
  t.conn_close <- false; t.conn_keep_alive <- false

(* Constant exceptions: raising one allocates nothing, and [raise_notrace]
   skips the backtrace. [Fail] carries its reason in [t.error]. *)
exception Need_more
exception Fail

let[@inline never] fail t e =
  t.error <- e;
  raise_notrace Fail

let[@inline] get b i = Bigstring.unsafe_get b i

(* RFC 9112 §2.2 asks servers to ignore "at least one" empty line before
   the request-line (clients have sent a stray CRLF after a POST body).
   Allowing a few, not any number, keeps a byte-at-a-time stream of empty
   lines from turning each resumption into a rescan. *)
let max_leading_empty_lines = 4

(* --- Field value semantics ------------------------------------------- *)



let connection_option t b off len =
  if Bigstring.equal_caseless b ~off ~len "close" then t.conn_close <- true
  else if Bigstring.equal_caseless b ~off ~len "keep-alive" then t.conn_keep_alive <- true

(* A transfer-coding element may carry parameters ("gzip;q=1" is not valid
   for TE in requests, but parameters are grammatical): only the coding name
   before ';' decides. *)
let transfer_coding t b off len =
  let name_end = ref off in
  let stop = off + len in
  while !name_end < stop && Charset.is_tchar (get b !name_end) do incr name_end done;
  let nlen = !name_end - off in
  if nlen = 0 then fail t Parse_error.Chunked_not_final;
  t.te_seen <- true;
  if nlen = len && Bigstring.equal_caseless b ~off ~len:nlen "chunked" then begin
    (* RFC 9112 §6.1: a sender MUST NOT apply chunked more than once. *)
    if t.chunked then fail t Parse_error.Chunked_not_final;
    t.chunked <- true;
    t.te_chunked_last <- true
  end else begin
    t.te_chunked_last <- false;
    t.te_other <- true
  end

(* Walks a comma-separated list (RFC 9110 §5.6.1) in [pos, stop), handing
   each non-empty element, trimmed of OWS, to the Transfer-Encoding or the
   Connection handler; returns how many there were. A flag rather than a
   function argument: passing a closure would allocate. *)
let[@inline] list_elements t b pos stop ~te =
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

let content_length_field t b voff vlen =
  let n = Span.parse_decimal b (Span.make ~off:voff ~len:vlen) in
  if n < 0 then fail t Parse_error.Bad_content_length;
  if t.content_length >= 0 && t.content_length <> n then
    fail t Parse_error.Conflicting_content_length;
  t.content_length <- n

(* Host: one per request (RFC 9112 §3.2), and an invalid value MUST be
   answered 400. *)
(* A name of letters, digits, '-' and '.', then nothing or ":" and
   digits: what Authority.valid_host accepts, in one scan of the name (a
   port sends its fast path to the byte loop). Anything else is its to
   judge. *)
let plain_host t b voff vlen =
  let stop = voff + vlen in
  vlen > 0 && get b voff <> '['
  &&
  let p = if t.simd then Simd.hostname_end b voff stop else Swar.skip_hostname b voff stop in
  p = stop
  || get b p = ':'
     &&
     let i = ref (p + 1) in
     while !i < stop && get b !i >= '0' && get b !i <= '9' do incr i done;
     !i = stop

let host_field t b voff vlen =
  t.host_count <- t.host_count + 1;
  if t.host_count > 1 then fail t Parse_error.Duplicate_host;
  if not (plain_host t b voff vlen || Authority.valid_host ~simd:t.simd b ~off:voff ~len:vlen) then
    fail t Parse_error.Bad_host;
  if not t.host_from_target then t.host <- Span.make ~off:voff ~len:vlen

let field_semantics t b id voff vlen =
  match (id : Header_name.t) with
  | Content_length -> content_length_field t b voff vlen
  | Transfer_encoding ->
    (* A Transfer-Encoding line naming no coding at all is not a valid list. *)
    if list_elements t b voff (voff + vlen) ~te:true = 0 then
      fail t Parse_error.Chunked_not_final
  | Connection ->
    (* Mostly one of the two options alone: no list walk for them. *)
    if Bigstring.equal_caseless b ~off:voff ~len:vlen "keep-alive" then t.conn_keep_alive <- true
    else ignore (list_elements t b voff (voff + vlen) ~te:false : int)
  | Host -> host_field t b voff vlen
  | Expect ->
    if Bigstring.equal_caseless b ~off:voff ~len:vlen "100-continue" then
      t.expect_continue <- true
  | Upgrade -> t.upgrade <- true
  | _ -> ()

(* --- The head ---------------------------------------------------------- *)

(* [eol t b pos stop] checks for CRLF at [pos] and returns the position after it. *)
let[@inline] eol t b pos stop =
  if pos >= stop then raise_notrace Need_more;
  match get b pos with
  | '\r' ->
    if pos + 1 >= stop then raise_notrace Need_more;
    if get b (pos + 1) <> '\n' then fail t Parse_error.Bare_cr;
    pos + 2
  | '\n' -> fail t Parse_error.Bare_lf
  | _ -> fail t Parse_error.Bad_request_line

(* The HTTP-version at [v] and the CRLF after it; returns the position
   after them. *)
let version t b v stop =
  if v + 8 > stop then begin
    (* Refuse early what can never become a version. *)
    let prefix = "HTTP/" in
    for i = 0 to min (stop - v) 5 - 1 do
      if get b (v + i) <> String.unsafe_get prefix i then fail t Parse_error.Bad_version
    done;
    raise_notrace Need_more
  end;
  if not (Bigstring.equal_string b ~off:v ~len:5 "HTTP/")
  || get b (v + 6) <> '.'
  || (let c = get b (v + 5) in c < '0' || c > '9')
  || (let c = get b (v + 7) in c < '0' || c > '9')
  then fail t Parse_error.Bad_version;
  if get b (v + 5) <> '1' then fail t Parse_error.Unsupported_version;
  t.version <- (if get b (v + 7) = '0' then Version.Http_1_0 else Version.Http_1_1);
  eol t b (v + 8) stop

(* Little-endian words of the request-line's common spellings. [word]
   drops bit 63 (the top bit of the eighth byte), so it may only be
   compared under a mask that excludes that byte; a whole word is compared
   as an [int64] ("HTTP/1.\xb1" must not pass for "HTTP/1.1"). *)
let[@inline] word b i = Int64.to_int (Bigstring.unsafe_get64 b i)
let get_sp = 0x20544547 (* "GET " *)
let post_sp = 0x2054534f50 (* "POST " *)
let http_1_1 = 0x312e312f50545448L (* "HTTP/1.1" *)

(* An absolute-form target with an authority ("scheme://host...") names
   the host: the server MUST use it and ignore Host (RFC 9112 §3.2.2), so
   [host] becomes the target's authority (between "//" and the next '/',
   '?' or the end), checked as a Host value is; one with userinfo
   ("user@host", RFC 9110 §4.2.4) is refused. An absolute-URI without an
   authority ("urn:a") or with an empty one leaves Host as it is.
   Origin-form targets (a '/' first) do not come here. *)
let[@inline never] absolute_host t b off stop =
  let colon = Bigstring.index_from b ~off ~stop ':' in
  let a = colon + 3 in
  if colon >= 0 && a <= stop && get b (colon + 1) = '/' && get b (colon + 2) = '/' then begin
    let e = ref a in
    while !e < stop && (match get b !e with '/' | '?' -> false | _ -> true) do
      if get b !e = '@' then fail t Parse_error.Bad_target;
      incr e
    done;
    let n = !e - a in
    if n > 0 then begin
      if not (plain_host t b a n || Authority.valid_host ~simd:t.simd b ~off:a ~len:n) then
        fail t Parse_error.Bad_target;
      t.host <- Span.make ~off:a ~len:n;
      t.host_from_target <- true
    end
  end

(* The request-target [b\[t_start, t_stop)] (no SP, CTL, DEL or '#' in
   it) has a form the method allows. *)
let[@inline] target_form t b t_start t_stop =
  let tlen = t_stop - t_start in
  let first = get b t_start in
  match t.meth with
  | Meth.Connect ->
    (* authority-form only (RFC 9112 §3.2.3). *)
    if not (Authority.valid_connect_target b ~off:t_start ~len:tlen) then
      fail t Parse_error.Bad_target
  | Meth.Options when first = '*' ->
    if tlen <> 1 then fail t Parse_error.Bad_target
  | _ ->
    if first <> '/' then begin
      (* absolute-form: scheme ":" ... (RFC 3986 §3.1) *)
      let i = ref t_start in
      while !i < t_stop
            && (match get b !i with
                | 'a' .. 'z' | 'A' .. 'Z' -> true
                | '0' .. '9' | '+' | '-' | '.' -> !i > t_start
                | _ -> false)
      do incr i done;
      if !i = t_start || !i >= t_stop || get b !i <> ':' then fail t Parse_error.Bad_target;
      absolute_host t b t_start t_stop
    end

let request_line t b off stop =
  let lim = t.limits in
  let pos = ref off in
  (* Leading empty lines. *)
  let empties = ref 0 in
  while !pos < stop && (get b !pos = '\r' || get b !pos = '\n') do
    pos := eol t b !pos stop;
    incr empties;
    if !empties > max_leading_empty_lines then fail t Parse_error.Bad_request_line
  done;
  (* method = token; "GET " and "POST " are recognised by one word. *)
  let m_start = !pos in
  let w = if m_start + 8 <= stop && not Sys.big_endian then word b m_start else 0 in
  if w land 0xFFFF_FFFF = get_sp then begin
    t.meth_span <- Span.make ~off:m_start ~len:3;
    t.meth <- Meth.Get;
    pos := m_start + 4
  end else if w land 0xFF_FFFF_FFFF = post_sp then begin
    t.meth_span <- Span.make ~off:m_start ~len:4;
    t.meth <- Meth.Post;
    pos := m_start + 5
  end else begin
    pos := Swar.skip_tchars b m_start stop;
    if !pos >= stop then raise_notrace Need_more;
    if get b !pos <> ' ' || !pos = m_start then fail t Parse_error.Bad_method;
    let mlen = !pos - m_start in
    t.meth_span <- Span.make ~off:m_start ~len:mlen;
    t.meth <- Meth.of_buffer b ~off:m_start ~len:mlen;
    incr pos
  end;
  (* request-target: everything up to the next SP, checked for bytes no
     form of request-target can contain. *)
  let t_start = !pos in
  let t_stop =
    if t.simd then Simd.target_end b t_start stop else Swar.skip_target b t_start stop
  in
  let tlen = t_stop - t_start in
  if tlen > lim.max_target then fail t Parse_error.Target_too_long;
  if t_stop >= stop then raise_notrace Need_more;
  (match get b t_stop with
   | ' ' -> ()
   | '\r' | '\n' -> fail t Parse_error.Bad_request_line (* HTTP/0.9-style line *)
   | _ -> fail t Parse_error.Bad_target);
  if tlen = 0 then fail t Parse_error.Bad_request_line;
  t.target <- Span.make ~off:t_start ~len:tlen;
  target_form t b t_start t_stop;
  pos := t_stop + 1;
  (* HTTP-version = "HTTP/" DIGIT "." DIGIT; "HTTP/1.1" is one word. *)
  let v = !pos in
  if v + 8 <= stop && (not Sys.big_endian) && (Bigstring.unsafe_get64 b v : int64) = http_1_1 then begin
    t.version <- Version.Http_1_1;
    eol t b (v + 8) stop
  end
  else version t b v stop

(* The line at [n_start] does not start with a name and its colon: the
   name scan stopped at [n_end], on a byte that is no tchar. Either this is
   the empty line ending the head (returns the position after it), or an
   error. Off the hot path. *)
let[@inline never] not_a_field t b n_start n_end stop =
  if n_end = n_start then
    match get b n_start with
    | '\r' ->
      if n_start + 1 >= stop then raise_notrace Need_more;
      if get b (n_start + 1) <> '\n' then fail t Parse_error.Bare_cr;
      n_start + 2
    | '\n' -> fail t Parse_error.Bare_lf
    | ' ' | '\t' ->
      (* A line starting with whitespace continues the previous one
         (obs-fold), or, before any field, is whitespace after the
         request-line; RFC 9112 §2.2 and §5.2 let a server reject both. *)
      fail t Parse_error.Obs_fold
    | _ -> fail t Parse_error.Bad_header_name
  else
    match get b n_end with
    | ' ' | '\t' ->
      (* A token, whitespace, then a colon is RFC 9112 §5.1's case.
         Whitespace followed by anything else ("Ho st: x", a line of
         words) is a bad name. *)
      let w = ref (n_end + 1) in
      while !w < stop && Charset.is_ows (get b !w) do incr w done;
      if !w >= stop then raise_notrace Need_more;
      if get b !w = ':' then fail t Parse_error.Space_before_colon
      else fail t Parse_error.Bad_header_name
    | _ -> fail t Parse_error.Bad_header_name

(* What the portable loop below does after each line's syntax, for the
   lines the kernel recorded at [first, first + lines): name ids, count and
   field semantics, in line order, so the first error is the one the
   portable loop would raise. *)
let record_kernel_lines t b first lines =
  for i = first to first + lines - 1 do
    let ns = Span.unsafe_of_int (Array.unsafe_get t.name_spans i) in
    let id = Header_name.of_token b ~off:(Span.off ns) ~len:(Span.len ns) in
    Array.unsafe_set t.names i id;
    t.count <- i + 1;
    match id with
    | Content_length | Transfer_encoding | Connection | Host | Expect | Upgrade ->
      let vs = Span.unsafe_of_int (Array.unsafe_get t.value_spans i) in
      field_semantics t b id (Span.off vs) (Span.len vs)
    | _ -> ()
  done

(* One line at [n_start] by the portable scanners, in one pass: the name
   scan stops at the first byte that is no tchar, which must be the colon
   (so the name is proved a token as it is found); the value scan at the
   first control byte, which must be the CR of CRLF (HTAB excepted). A
   field line is recorded with its semantics, and the result is the
   position after it; the empty line ending the head gives
   [-1 - the position after it]; anything else raises. *)
let[@inline] portable_line t b n_start stop =
  let n_end = Swar.skip_tchars b n_start stop in
  if n_end >= stop then raise_notrace Need_more;
  if n_end = n_start || get b n_end <> ':' then -1 - not_a_field t b n_start n_end stop
  else begin
    let nlen = n_end - n_start in
    let id = Header_name.of_token b ~off:n_start ~len:nlen in
    let v = ref (n_end + 1) in
    while !v < stop && Charset.is_ows (get b !v) do incr v done;
    let v_start = !v in
    (* The value runs to CR; HTAB is the one control byte allowed inside. *)
    let p = ref (Swar.skip_field_value b v_start stop) in
    while !p < stop && get b !p = '\t' do p := Swar.skip_field_value b (!p + 1) stop done;
    let v_end = !p in
    if v_end >= stop then raise_notrace Need_more;
    (match get b v_end with
     | '\r' ->
       if v_end + 1 >= stop then raise_notrace Need_more;
       if get b (v_end + 1) <> '\n' then fail t Parse_error.Bare_cr
     | '\n' -> fail t Parse_error.Bare_lf
     | _ -> fail t Parse_error.Bad_header_value);
    let e = ref v_end in
    while !e > v_start && Charset.is_ows (get b (!e - 1)) do decr e done;
    let vlen = !e - v_start in
    let i = t.count in
    if i >= t.limits.max_headers then fail t Parse_error.Too_many_headers;
    Array.unsafe_set t.names i id;
    Array.unsafe_set t.name_spans i (Span.make ~off:n_start ~len:nlen :> int);
    Array.unsafe_set t.value_spans i (Span.make ~off:v_start ~len:vlen :> int);
    t.count <- i + 1;
    (match id with
     | Content_length | Transfer_encoding | Connection | Host | Expect | Upgrade ->
       field_semantics t b id v_start vlen
     | _ -> ());
    v_end + 2
  end

(* The field lines from [pos] and the empty line after them; returns the
   position after the head. *)
let fields_portable t b pos stop =
  let pos = ref pos and fin = ref false in
  while not !fin do
    let r = portable_line t b !pos stop in
    if r >= 0 then pos := r
    else begin pos := -1 - r; fin := true end
  done;
  !pos

(* The same with the kernel: it takes every line it can (all well-formed
   ones), [portable_line] the one it stops at, mostly the empty line (an
   error or an incomplete line otherwise), then the kernel goes on. *)
let fields_kernel t b pos stop =
  let pos = ref pos and fin = ref false in
  while not !fin do
    let first = t.count in
    let r = Simd.field_lines b !pos stop t.name_spans t.value_spans first t.limits.max_headers in
    let lines = r lsr 32 in
    if lines > 0 then record_kernel_lines t b first lines;
    let n_start = r land 0xFFFF_FFFF in
    if n_start + 1 < stop && get b n_start = '\r' && get b (n_start + 1) = '\n' then begin
      pos := n_start + 2;
      fin := true
    end else begin
      let r = portable_line t b n_start stop in
      if r >= 0 then pos := r
      else begin pos := -1 - r; fin := true end
    end
  done;
  !pos

let fields t b pos stop = if t.simd then fields_kernel t b pos stop else fields_portable t b pos stop

let finish t =
  if t.te_seen then begin
    if t.version = Version.Http_1_0 then fail t Parse_error.Transfer_encoding_http10;
    if not t.te_chunked_last then fail t Parse_error.Chunked_not_final;
    if t.te_other then fail t Parse_error.Unsupported_transfer_coding;
    if t.content_length >= 0 then fail t Parse_error.Length_and_chunked
  end;
  if t.content_length > t.limits.max_content_length then fail t Parse_error.Content_too_large;
  (match t.version with
   | Version.Http_1_1 | Version.Http_2 ->
     if t.host_count = 0 then fail t Parse_error.Missing_host;
     t.keep_alive <- not t.conn_close
   | Version.Http_1_0 ->
     t.keep_alive <- t.conn_keep_alive && not t.conn_close;
     t.expect_continue <- false)

let parse_head t b off stop =
  clear t;
  let pos = fields t b (request_line t b off stop) stop in
  finish t;
  pos - off

(* Is there an empty line (the end of a head) ending in [from, stop)? Looks
   for LF preceded by LF or CRLF; the full parse then validates it all. *)
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

let parse t b ~off ~len =
  if off < 0 || len < 0 || off > Bigstring.length b - len then
    invalid_arg "Httpz.Request.parse: range outside the buffer";
  if off + (if len < t.limits.max_head then len else t.limits.max_head) >= 1 lsl 31 then
    invalid_arg "Httpz.Request.parse: offsets must stay below 2^31";
  let max_head = t.limits.max_head in
  let stop = off + (if len < max_head then len else max_head) in
  let resuming = t.last = Partial && t.start_off = off && len >= t.scanned in
  if resuming
  && not (head_may_end b ~base:off (off + (if t.scanned > 3 then t.scanned - 3 else 0)) stop)
  then begin
    t.scanned <- len;
    if len >= max_head then begin
      t.error <- Parse_error.Head_too_large; t.last <- Error; Error
    end else Partial
  end else begin
    t.start_off <- off;
    match parse_head t b off stop with
    | n -> t.head_length <- n; t.last <- Complete; Complete
    | exception Need_more ->
      if len >= max_head then begin
        t.error <- Parse_error.Head_too_large; t.last <- Error; Error
      end else begin
        t.scanned <- len; t.last <- Partial; Partial
      end
    | exception Fail -> t.last <- Error; Error
  end

(* --- A head given as fields (HTTP/2) ------------------------------------ *)

(* Each step answers false once the head is refused ([error] says why);
   the checks are the parser's, so a head is refused alike whichever way
   it came. *)
let refused t = t.last <- Error; false

(* After the method: the target's length, bytes and form. *)
let start_target t b ~meth ~known ~target =
  let t_off = Span.off target and t_len = Span.len target in
  if t_len = 0 then begin
    t.error <- Parse_error.Bad_request_line; refused t
  end
  else if t_len > t.limits.max_target then begin
    t.error <- Parse_error.Target_too_long; refused t
  end
  else begin
    t.meth_span <- meth;
    t.meth <- known;
    t.target <- target;
    let t_stop = t_off + t_len in
    let stop = if t.simd then Simd.target_end b t_off t_stop else Swar.skip_target b t_off t_stop in
    if stop <> t_stop then begin
      t.error <- Parse_error.Bad_target; refused t
    end
    else match target_form t b t_off t_stop with () -> true | exception Fail -> refused t
  end

let build_start t b ~version ~meth ~target =
  clear t;
  t.version <- version;
  t.last <- Partial;
  let m_off = Span.off meth and m_len = Span.len meth in
  if m_len = 0 || Swar.skip_tchars b m_off (m_off + m_len) <> m_off + m_len then begin
    t.error <- Parse_error.Bad_method; refused t
  end
  else start_target t b ~meth ~known:(Meth.of_buffer b ~off:m_off ~len:m_len) ~target

let build_start_known t b ~version ~meth ~known ~target =
  match (known : Meth.t) with
  | Other -> build_start t b ~version ~meth ~target
  | _ ->
    (* A known method's bytes are one of its names: a token. *)
    clear t;
    t.version <- version;
    t.last <- Partial;
    start_target t b ~meth ~known ~target

let rec build_field t b id ~name ~value =
  let n_off = Span.off name and n_len = Span.len name in
  let v_off = Span.off value and v_len = Span.len value in
  let v_stop = v_off + v_len in
  let p = ref (Swar.skip_field_value b v_off v_stop) in
  while !p < v_stop && get b !p = '\t' do p := Swar.skip_field_value b (!p + 1) v_stop done;
  if n_len = 0 || Swar.skip_tchars b n_off (n_off + n_len) <> n_off + n_len then begin
    t.error <- Parse_error.Bad_header_name; refused t
  end
  else if !p <> v_stop then begin
    t.error <- Parse_error.Bad_header_value; refused t
  end
  else build_field_checked t b id ~name ~value

and build_field_checked t b id ~name ~value =
  if t.count >= t.limits.max_headers then begin
    t.error <- Parse_error.Too_many_headers; refused t
  end
  else begin
    let i = t.count in
    Array.unsafe_set t.names i id;
    Array.unsafe_set t.name_spans i (name :> int);
    Array.unsafe_set t.value_spans i (value :> int);
    t.count <- i + 1;
    match id with
    | Content_length | Transfer_encoding | Connection | Host | Expect | Upgrade ->
      (match field_semantics t b id (Span.off value) (Span.len value) with () -> true | exception Fail -> refused t)
    | _ -> true
  end

let build_end t ~head_length =
  match finish t with
  | () -> t.head_length <- head_length; t.last <- Complete; Complete
  | exception Fail -> t.last <- Error; Error

let meth t = t.meth
let meth_span t = t.meth_span
let target t = t.target
let version t = t.version
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
    if Span.equal_caseless b (header_name_span t !i) name then begin
      r := !i; i := t.count
    end else incr i
  done;
  !r

let content_length t = t.content_length
let is_chunked t = t.chunked
let has_body t = t.chunked || t.content_length > 0
let keep_alive t = t.keep_alive
let expect_continue t = t.expect_continue
let host t = t.host
let has_host t = t.host_count > 0 || t.host_from_target
let has_upgrade t = t.upgrade
let head_length t = t.head_length
let error t = t.error
