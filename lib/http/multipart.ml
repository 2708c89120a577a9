type error =
  | No_boundary
  | Malformed_delimiter
  | Malformed_header
  | Truncated
  | Too_many_parts
  | Header_too_large
  | Too_large

let error_to_string = function
  | No_boundary -> "no multipart boundary in the body"
  | Malformed_delimiter -> "malformed multipart delimiter line"
  | Malformed_header -> "malformed multipart part header"
  | Truncated -> "multipart body ends before its closing delimiter"
  | Too_many_parts -> "too many multipart parts"
  | Header_too_large -> "multipart part header too large"
  | Too_large -> "multipart body too large"

type event = Part | Data | Part_end | End | Await | Error

type limits = { max_parts : int; max_header_bytes : int; max_total : int }

let default_limits = { max_parts = 1000; max_header_bytes = 16384; max_total = max_int }

(* Where the parser is. Constant constructors: immediates, no allocation. *)
type mode =
  | Preamble  (* before the first delimiter: bytes are dropped *)
  | Body  (* inside a part's data *)
  | Ad_start  (* just after a delimiter *)
  | Ad_dash  (* after a delimiter and one '-' *)
  | Ad_pad  (* after a delimiter and transport padding *)
  | Ad_cr  (* after a delimiter, padding and CR *)
  | Headers  (* copying a part's header block *)
  | Epilogue
  | Failed

let max_boundary = 70

type t = {
  limits : limits;
  delim : Bigstring.t;  (* CRLF "--" boundary *)
  mutable dlen : int;
  hold : Bigstring.t;  (* a proper prefix of [delim] seen at the end of a piece *)
  mutable held : int;
  hbuf : Bigstring.t;  (* the current part's header block *)
  mutable hlen : int;
  mutable line_start : int;  (* in [hbuf]: where the line being copied starts *)
  mutable mode : mode;
  mutable err : error;
  mutable eof : bool;
  mutable input : Bigstring.t;
  mutable pos : int;
  mutable stop : int;
  mutable data_buf : Bigstring.t;
  mutable data_span : Span.t;
  mutable parts : int;
  mutable total : int;
  mutable disposition : Span.t;
  mutable name : Span.t;
  mutable filename : Span.t;
  mutable has_filename : bool;
  mutable content_type : Span.t;
  mutable headers : Span.t;
}

let create ?(limits = default_limits) () =
  let delim = Bigstring.create (max_boundary + 4) in
  let hbuf = Bigstring.create (max 1 limits.max_header_bytes) in
  {
    limits; delim; dlen = 0; hold = Bigstring.create (max_boundary + 4); held = 0; hbuf; hlen = 0;
    line_start = 0; mode = Failed; err = No_boundary; eof = false; input = delim; pos = 0; stop = 0;
    data_buf = delim; data_span = Span.empty; parts = 0; total = 0; disposition = Span.empty;
    name = Span.empty; filename = Span.empty; has_filename = false; content_type = Span.empty;
    headers = Span.empty;
  }

(* RFC 2046 §5.1.1 bchars. *)
let is_bchar = function
  | '0' .. '9' | 'a' .. 'z' | 'A' .. 'Z' | '\'' | '(' | ')' | '+' | '_' | ',' | '-' | '.' | '/' | ':'
  | '=' | '?' | ' ' ->
      true
  | _ -> false

let valid_boundary buf s =
  let off = Span.off s and len = Span.len s in
  if len < 1 || len > max_boundary || off + len > Bigstring.length buf then false
  else if Bigstring.unsafe_get buf (off + len - 1) = ' ' then false
  else begin
    let ok = ref true in
    for i = off to off + len - 1 do
      if not (is_bchar (Bigstring.unsafe_get buf i)) then ok := false
    done;
    !ok
  end

let clear_part t =
  t.disposition <- Span.empty;
  t.name <- Span.empty;
  t.filename <- Span.empty;
  t.has_filename <- false;
  t.content_type <- Span.empty;
  t.headers <- Span.empty

let start t =
  t.held <- 2;
  (* The body's start counts as the CRLF before a first delimiter. *)
  Bigstring.unsafe_set t.hold 0 '\r';
  Bigstring.unsafe_set t.hold 1 '\n';
  t.hlen <- 0;
  t.line_start <- 0;
  t.mode <- Preamble;
  t.err <- No_boundary;
  t.eof <- false;
  t.input <- t.delim;
  t.pos <- 0;
  t.stop <- 0;
  t.data_buf <- t.delim;
  t.data_span <- Span.empty;
  t.parts <- 0;
  t.total <- 0;
  clear_part t

let fail t e =
  t.mode <- Failed;
  t.err <- e;
  Error

let reset t buf s =
  start t;
  if not (valid_boundary buf s) then begin
    ignore (fail t No_boundary : event);
    false
  end
  else begin
    let len = Span.len s in
    Bigstring.unsafe_set t.delim 0 '\r';
    Bigstring.unsafe_set t.delim 1 '\n';
    Bigstring.unsafe_set t.delim 2 '-';
    Bigstring.unsafe_set t.delim 3 '-';
    Bigstring.blit ~src:buf ~src_off:(Span.off s) ~dst:t.delim ~dst_off:4 ~len;
    t.dlen <- len + 4;
    true
  end

let reset_string t s =
  start t;
  let len = String.length s in
  if len < 1 || len > max_boundary then begin
    ignore (fail t No_boundary : event);
    false
  end
  else begin
    Bigstring.blit_from_string s ~src_off:0 t.delim ~dst_off:4 ~len;
    reset t t.delim (Span.make ~off:4 ~len)
  end

let feed t buf ~off ~len =
  if t.mode <> Failed then begin
    t.input <- buf;
    t.pos <- off;
    t.stop <- off + len;
    t.total <- t.total + len;
    if t.total > t.limits.max_total then ignore (fail t Too_large : event)
  end

let finish t = t.eof <- true

let emit t buf off len =
  t.data_buf <- buf;
  t.data_span <- Span.make ~off ~len;
  Data

(* A delimiter was just consumed. *)
let after_delimiter t =
  let was_body = t.mode = Body in
  t.held <- 0;
  t.mode <- Ad_start;
  if was_body then Part_end else Await (* caller loops: see [next] *)

(* How many bytes of [input] from [i] (at most [stop]) agree with [delim]
   from [d]. *)
let agree t i d =
  let n = min (t.stop - i) (t.dlen - d) in
  let k = ref 0 in
  while !k < n && Bigstring.unsafe_get t.input (i + !k) = Bigstring.unsafe_get t.delim (d + !k) do
    incr k
  done;
  !k

(* Preamble or Body with nothing held: find the next delimiter in the piece. *)
let rec scan t from =
  let i = Simd.find_byte t.input from t.stop 13 in
  let pos = t.pos in
  if i >= t.stop then begin
    t.pos <- t.stop;
    if t.mode = Body && t.stop > pos then emit t t.input pos (t.stop - pos) else Await
  end
  else begin
    let k = agree t i 0 in
    if k = t.dlen then
      if i > pos && t.mode = Body then begin
        t.pos <- i;
        emit t t.input pos (i - pos)
      end
      else begin
        t.pos <- i + k;
        after_delimiter t
      end
    else if i + k = t.stop then
      (* The piece ends inside what may be a delimiter: hold it back. *)
      if i > pos && t.mode = Body then begin
        t.pos <- i;
        emit t t.input pos (i - pos)
      end
      else begin
        Bigstring.blit ~src:t.input ~src_off:i ~dst:t.hold ~dst_off:0 ~len:k;
        t.held <- k;
        t.pos <- t.stop;
        Await
      end
    else scan t (i + 1)
  end

(* Preamble or Body with [held] bytes of a possible delimiter. *)
let continue_held t =
  let k = agree t t.pos t.held in
  if t.held + k = t.dlen then begin
    t.pos <- t.pos + k;
    after_delimiter t
  end
  else if t.pos + k = t.stop then begin
    Bigstring.blit ~src:t.input ~src_off:t.pos ~dst:t.hold ~dst_off:t.held ~len:k;
    t.held <- t.held + k;
    t.pos <- t.stop;
    Await
  end
  else begin
    (* Not a delimiter: the held bytes were data. No delimiter starts inside
       them, since only their first byte is a CR (bchars hold none). *)
    let h = t.held in
    t.held <- 0;
    if t.mode = Body then emit t t.hold 0 h else scan t t.pos
  end

let is_tchar c = Charset.is_tchar c

let is_ows c = c = ' ' || c = '\t'

(* Parse one Content-Disposition value in hbuf [a, b). *)
let disposition_params t a b =
  let buf = t.hbuf in
  let i = ref a in
  while !i < b && is_tchar (Bigstring.unsafe_get buf !i) do incr i done;
  t.disposition <- Span.make ~off:a ~len:(!i - a);
  let ok = ref (!i > a) in
  while !ok && !i < b do
    while !i < b && is_ows (Bigstring.unsafe_get buf !i) do incr i done;
    if !i < b then begin
      if Bigstring.unsafe_get buf !i <> ';' then ok := false
      else begin
        incr i;
        while !i < b && is_ows (Bigstring.unsafe_get buf !i) do incr i done;
        let ns = !i in
        while !i < b && is_tchar (Bigstring.unsafe_get buf !i) do incr i done;
        let ne = !i in
        while !i < b && is_ows (Bigstring.unsafe_get buf !i) do incr i done;
        if ne = ns then (if !i < b then ok := false)
        else if !i >= b || Bigstring.unsafe_get buf !i <> '=' then ok := false
        else begin
          incr i;
          while !i < b && is_ows (Bigstring.unsafe_get buf !i) do incr i done;
          let vs = ref !i and ve = ref !i in
          if !i < b && Bigstring.unsafe_get buf !i = '"' then begin
            incr i;
            vs := !i;
            let closed = ref false in
            while (not !closed) && !i < b do
              let c = Bigstring.unsafe_get buf !i in
              if c = '"' then closed := true
              else if c = '\\' && !i + 1 < b then i := !i + 2
              else incr i
            done;
            if not !closed then ok := false
            else begin
              ve := !i;
              incr i
            end
          end
          else begin
            while !i < b && (let c = Bigstring.unsafe_get buf !i in c <> ';' && not (is_ows c)) do incr i done;
            ve := !i
          end;
          let v = Span.make ~off:!vs ~len:(!ve - !vs) in
          let nspan = Span.make ~off:ns ~len:(ne - ns) in
          if Span.equal_caseless buf nspan "name" then t.name <- v
          else if Span.equal_caseless buf nspan "filename" then begin
            t.filename <- v;
            t.has_filename <- true
          end
        end
      end
    end
  done;
  !ok

(* The header block hbuf [0, line_start) is complete: lines ending in CRLF. *)
let parse_headers t =
  let buf = t.hbuf in
  let stop = t.line_start in
  t.headers <- Span.make ~off:0 ~len:stop;
  let seen_cd = ref false and seen_ct = ref false in
  let ok = ref true and a = ref 0 in
  while !ok && !a < stop do
    let eol = Bigstring.index_from buf ~off:!a ~stop '\n' - 1 in
    (* eol is the CR: every line was checked to end in CRLF while copied *)
    let i = ref !a in
    while !i < eol && is_tchar (Bigstring.unsafe_get buf !i) do incr i done;
    if !i = !a || !i >= eol || Bigstring.unsafe_get buf !i <> ':' then ok := false
    else begin
      let nspan = Span.make ~off:!a ~len:(!i - !a) in
      incr i;
      while !i < eol && is_ows (Bigstring.unsafe_get buf !i) do incr i done;
      let vs = !i in
      let ve = ref eol in
      while !ve > vs && is_ows (Bigstring.unsafe_get buf (!ve - 1)) do decr ve done;
      for j = vs to !ve - 1 do
        let c = Bigstring.unsafe_get buf j in
        if (c < ' ' && c <> '\t') || c = '\127' then ok := false
      done;
      if !ok then
        if (not !seen_cd) && Span.equal_caseless buf nspan "content-disposition" then begin
          seen_cd := true;
          if not (disposition_params t vs !ve) then ok := false
        end
        else if (not !seen_ct) && Span.equal_caseless buf nspan "content-type" then begin
          seen_ct := true;
          t.content_type <- Span.make ~off:vs ~len:(!ve - vs)
        end
    end;
    a := eol + 2
  done;
  !ok

(* Copy header bytes up to the next LF; the block ends at an empty line. *)
let rec headers t =
  if t.pos >= t.stop then Await
  else begin
    let lf = Simd.find_byte t.input t.pos t.stop 10 in
    let upto = if lf < t.stop then lf + 1 else t.stop in
    let n = upto - t.pos in
    if t.hlen + n > t.limits.max_header_bytes then fail t Header_too_large
    else begin
      Bigstring.blit ~src:t.input ~src_off:t.pos ~dst:t.hbuf ~dst_off:t.hlen ~len:n;
      t.hlen <- t.hlen + n;
      t.pos <- upto;
      if lf >= t.stop then Await
      else begin
        let ls = t.line_start in
        let e = t.hlen in
        (* [e - 1] is the LF *)
        if e - ls < 2 || Bigstring.unsafe_get t.hbuf (e - 2) <> '\r' then fail t Malformed_header
        else if e - ls = 2 then begin
          (* the empty line *)
          if parse_headers t then begin
            t.mode <- Body;
            Part
          end
          else fail t Malformed_header
        end
        else if is_ows (Bigstring.unsafe_get t.hbuf ls) then fail t Malformed_header (* obs-fold *)
        else begin
          t.line_start <- e;
          headers t
        end
      end
    end
  end

let new_part t =
  t.parts <- t.parts + 1;
  if t.parts > t.limits.max_parts then fail t Too_many_parts
  else begin
    clear_part t;
    t.hlen <- 0;
    t.line_start <- 0;
    t.mode <- Headers;
    headers t
  end

let at_end t =
  if not t.eof then Await
  else
    match t.mode with
    | Epilogue -> End
    | Failed -> Error
    | Preamble -> fail t No_boundary
    | _ -> fail t Truncated

let rec next t =
  match t.mode with
  | Failed -> Error
  | Epilogue ->
      t.pos <- t.stop;
      End
  | Preamble | Body ->
      if t.pos >= t.stop then at_end t
      else begin
        let ev = if t.held > 0 then continue_held t else scan t t.pos in
        (* A delimiter after the preamble has nothing to report: go on. *)
        if ev = Await && t.mode = Ad_start then next t else ev
      end
  | Headers -> if t.pos >= t.stop then at_end t else headers t
  | Ad_start | Ad_dash | Ad_pad | Ad_cr ->
      if t.pos >= t.stop then at_end t
      else begin
        let c = Bigstring.unsafe_get t.input t.pos in
        t.pos <- t.pos + 1;
        match t.mode, c with
        | Ad_start, '-' -> t.mode <- Ad_dash; next t
        | Ad_dash, '-' ->
            t.mode <- Epilogue;
            t.pos <- t.stop;
            End
        | (Ad_start | Ad_pad), (' ' | '\t') -> t.mode <- Ad_pad; next t
        | (Ad_start | Ad_pad), '\r' -> t.mode <- Ad_cr; next t
        | Ad_cr, '\n' -> new_part t
        | _ -> fail t Malformed_delimiter
      end

let error t = t.err
let header_buffer t = t.hbuf
let disposition t = t.disposition
let name t = t.name
let has_filename t = t.has_filename
let filename t = t.filename
let content_type t = t.content_type
let headers t = t.headers
let data_buffer t = t.data_buf
let data t = t.data_span
let parts t = t.parts
let total t = t.total
