open Httpz

type format = Common | Combined | Json | Vhost_combined

type 'r line_fields =
  now:int -> peer:Bigstring.t -> peer_len:int -> src:Bigstring.t -> req_off:int -> req_len:int -> status:int ->
  bytes:int -> ref_off:int -> ref_len:int -> ua_off:int -> ua_len:int -> elapsed_us:int -> complete:bool -> 'r

let formats = [ ("common", Common); ("combined", Combined); ("json", Json); ("vhost_combined", Vhost_combined) ]
let format_of_string s = List.assoc_opt s formats
let format_names = "common, combined, vhost_combined or json"

let size = 131072
let max_request_line = 8192
let max_field = 2048

(* Worst case per byte: JSON's \u00XX. *)
let max_escape = 6

type t = {
  fd : int;
  format : format;
  buf : Bigstring.t;
  mutable len : int;
  time : Bigstring.t; (* the formatted time of [time_s]: CLF, or ISO 8601 for JSON *)
  mutable time_s : int;
}

let time_length = function Json -> 20 | Common | Combined | Vhost_combined -> Date.common_log_length

let create ~fd ~format =
  {
    fd;
    format;
    buf = Bigstring.create (if fd >= 0 then size else 0);
    len = 0;
    time = Bigstring.create Date.common_log_length;
    time_s = -1;
  }

let enabled t = t.fd >= 0

let pending t = t.len > 0

let flush t =
  let off = ref 0 in
  while !off < t.len do
    let n = Syscall.write t.fd t.buf !off (t.len - !off) in
    if n > 0 then off := !off + n
    else if n = - Syscall.eintr then ()
    else off := t.len (* lost: never let the log stop the server *)
  done;
  t.len <- 0

let reopen t path =
  if t.fd < 0 then Error "no access log"
  else
    match Unix.openfile path [ Unix.O_WRONLY; Unix.O_APPEND; Unix.O_CREAT; Unix.O_CLOEXEC ] 0o644 with
    | exception Unix.Unix_error (e, _, _) -> Error (path ^ ": " ^ Unix.error_message e)
    | fd ->
        flush t;
        (* The new file takes the old one's descriptor number: whoever
           holds [t.fd] (every worker has its own) writes to the new file. *)
        Unix.dup2 ~cloexec:true fd (Syscall.unix_of_fd t.fd);
        Unix.close fd;
        Ok ()

(* {1 Time} *)

let months = "JanFebMarAprMayJunJulAugSepOctNovDec"

(* "[10/Oct/2000:13:55:36 +0000]" (in [t.time]) rewritten in place as
   "2000-10-10T13:55:36Z": the CLF writer is the one date formatter. *)
let iso_of_clf (b : Bigstring.t) =
  (* No local closures: they would be allocated on each call. *)
  let d1 = Bigstring.unsafe_get b 1 and d2 = Bigstring.unsafe_get b 2 in
  let m = ref 0 in
  for k = 0 to 11 do
    if String.unsafe_get months (3 * k) = Bigstring.unsafe_get b 4
       && String.unsafe_get months ((3 * k) + 1) = Bigstring.unsafe_get b 5
       && String.unsafe_get months ((3 * k) + 2) = Bigstring.unsafe_get b 6
    then m := k + 1
  done;
  (* Year, then hh:mm:ss, move left; the day goes after the month. *)
  Bigstring.blit ~src:b ~src_off:8 ~dst:b ~dst_off:0 ~len:4;
  Bigstring.blit ~src:b ~src_off:13 ~dst:b ~dst_off:11 ~len:8;
  Bigstring.unsafe_set b 4 '-';
  Bigstring.unsafe_set b 5 (Char.unsafe_chr (48 + (!m / 10)));
  Bigstring.unsafe_set b 6 (Char.unsafe_chr (48 + (!m mod 10)));
  Bigstring.unsafe_set b 7 '-';
  Bigstring.unsafe_set b 8 d1;
  Bigstring.unsafe_set b 9 d2;
  Bigstring.unsafe_set b 10 'T';
  Bigstring.unsafe_set b 19 'Z'

let set_time t now =
  if now <> t.time_s then begin
    ignore (Date.write_common_log t.time ~off:0 (if now < 0 then 0 else now) : int);
    if t.format = Json then iso_of_clf t.time;
    t.time_s <- now
  end

(* {1 Escaping} *)

let hex = "0123456789ABCDEF"

(* [src.{off .. off+len-1}] escaped into [b] at [pos]; the end.
   CLF and combined, as nginx's default escaping: double quote, backslash
   and bytes outside 0x20-0x7E become \xHH. JSON ([json]): double quote
   and backslash behind a backslash, and every byte outside 0x20-0x7E as
   \u00HH, so a line is valid JSON (and ASCII) whatever bytes the client
   sent; a byte b >= 0x80 reads back as the code point U+00b. *)
let escape ~json (b : Bigstring.t) pos (src : Bigstring.t) off len =
  let pos = ref pos in
  for i = off to off + len - 1 do
    let ch = Bigstring.unsafe_get src i in
    if json && (ch = '"' || ch = '\\') then begin
      Bigstring.unsafe_set b !pos '\\';
      Bigstring.unsafe_set b (!pos + 1) ch;
      pos := !pos + 2
    end
    else if ch < ' ' || ch > '~' || ch = '"' || ch = '\\' then begin
      let k = Char.code ch in
      pos := Response.write_string b ~off:!pos (if json then "\\u00" else "\\x");
      Bigstring.unsafe_set b !pos (String.unsafe_get hex (k lsr 4));
      Bigstring.unsafe_set b (!pos + 1) (String.unsafe_get hex (k land 15));
      pos := !pos + 2
    end
    else begin
      Bigstring.unsafe_set b !pos ch;
      incr pos
    end
  done;
  !pos

(* A quoted field: the escaped bytes, or [absent] when [len < 0]. *)
let field t pos src off len ~absent =
  let b = t.buf in
  if len < 0 then Response.write_string b ~off:pos absent
  else begin
    let len = if len > max_field then max_field else len in
    Bigstring.unsafe_set b pos '"';
    let pos = escape ~json:(t.format = Json) b (pos + 1) src off len in
    Bigstring.unsafe_set b pos '"';
    pos + 1
  end

(* {1 The exchange's fields} *)

(* [tls]: the TLS version as the protocol numbers it (0x0304: TLS 1.3);
   [0]: plain; [-1]: TLS, version unknown. *)
let tls_name tls =
  match tls with
  | 0x0304 -> "\"TLSv1.3\""
  | 0x0303 -> "\"TLSv1.2\""
  | 0x0302 -> "\"TLSv1.1\""
  | 0x0301 -> "\"TLSv1\""
  | _ -> "null"

(* [protocol]: major * 10 + minor ([11]: HTTP/1.1, [20]: HTTP/2.0); [0]:
   unknown. *)
let write_protocol b pos protocol =
  if protocol <= 0 then Response.write_string b ~off:pos "null"
  else begin
    let pos = Response.write_string b ~off:pos "\"HTTP/" in
    let pos = Response.write_int b ~off:pos (protocol / 10) in
    Bigstring.unsafe_set b pos '.';
    let pos = Response.write_int b ~off:(pos + 1) (protocol mod 10) in
    Bigstring.unsafe_set b pos '"';
    pos + 1
  end

(* {1 Lines} *)

let clf_line t ~peer ~peer_len ~src ~req_off ~req_len ~status ~bytes ~ref_off ~ref_len
    ~ua_off ~ua_len ~elapsed_us ~complete ~host_off ~host_len =
  let b = t.buf in
  let pos = ref t.len in
  if t.format = Vhost_combined then begin
    (* The Host first, as Apache's vhost_combined: "-" without one. *)
    if host_len > 0 then
      pos := escape ~json:false b !pos src host_off (if host_len > max_field then max_field else host_len)
    else pos := Response.write_string b ~off:!pos "-";
    Bigstring.unsafe_set b !pos ' ';
    incr pos
  end;
  if peer_len > 0 then begin
    Bigstring.blit ~src:peer ~src_off:0 ~dst:b ~dst_off:!pos ~len:peer_len;
    pos := !pos + peer_len
  end
  else pos := Response.write_string b ~off:!pos "-";
  pos := Response.write_string b ~off:!pos " - - ";
  Bigstring.blit ~src:t.time ~src_off:0 ~dst:b ~dst_off:!pos ~len:Date.common_log_length;
  pos := !pos + Date.common_log_length;
  pos := Response.write_string b ~off:!pos " \"";
  if req_len < 0 then pos := Response.write_string b ~off:!pos "-"
  else pos := escape ~json:false b !pos src req_off req_len;
  pos := Response.write_string b ~off:!pos "\" ";
  pos := Response.write_int b ~off:!pos status;
  Bigstring.unsafe_set b !pos ' ';
  incr pos;
  if bytes > 0 then pos := Response.write_int b ~off:!pos bytes
  else pos := Response.write_string b ~off:!pos "-";
  if t.format = Combined || t.format = Vhost_combined then begin
    Bigstring.unsafe_set b !pos ' ';
    pos := field t (!pos + 1) src ref_off ref_len ~absent:"\"-\"";
    Bigstring.unsafe_set b !pos ' ';
    pos := field t (!pos + 1) src ua_off ua_len ~absent:"\"-\""
  end;
  Bigstring.unsafe_set b !pos ' ';
  pos := Response.write_int b ~off:(!pos + 1) elapsed_us;
  if not complete then pos := Response.write_string b ~off:!pos " cut";
  !pos

let json_line t ~peer ~peer_len ~src ~req_off ~req_len ~status ~bytes ~ref_off ~ref_len
    ~ua_off ~ua_len ~elapsed_us ~complete ~host_off ~host_len ~tls ~protocol =
  let b = t.buf in
  let pos = ref (Response.write_string b ~off:t.len "{\"time\":\"") in
  Bigstring.blit ~src:t.time ~src_off:0 ~dst:b ~dst_off:!pos ~len:(time_length Json);
  pos := !pos + time_length Json;
  pos := Response.write_string b ~off:!pos "\",\"remote_addr\":";
  pos := field t !pos peer 0 (if peer_len > 0 then peer_len else -1) ~absent:"null";
  pos := Response.write_string b ~off:!pos ",\"request\":";
  pos := field t !pos src req_off req_len ~absent:"null";
  pos := Response.write_string b ~off:!pos ",\"host\":";
  pos := field t !pos src host_off host_len ~absent:"null";
  pos := Response.write_string b ~off:!pos (if tls <> 0 then ",\"scheme\":\"https\",\"tls\":" else ",\"scheme\":\"http\",\"tls\":");
  pos := Response.write_string b ~off:!pos (tls_name tls);
  pos := Response.write_string b ~off:!pos ",\"protocol\":";
  pos := write_protocol b !pos protocol;
  pos := Response.write_string b ~off:!pos ",\"status\":";
  pos := Response.write_int b ~off:!pos status;
  pos := Response.write_string b ~off:!pos ",\"body_bytes_sent\":";
  pos := Response.write_int b ~off:!pos (if bytes > 0 then bytes else 0);
  pos := Response.write_string b ~off:!pos ",\"referer\":";
  pos := field t !pos src ref_off ref_len ~absent:"null";
  pos := Response.write_string b ~off:!pos ",\"user_agent\":";
  pos := field t !pos src ua_off ua_len ~absent:"null";
  pos := Response.write_string b ~off:!pos ",\"request_time_us\":";
  pos := Response.write_int b ~off:!pos elapsed_us;
  pos := Response.write_string b ~off:!pos (if complete then ",\"complete\":true" else ",\"complete\":false");
  Bigstring.unsafe_set b !pos '}';
  !pos + 1

let exchange_line t ~now ~peer ~peer_len ~src ~req_off ~req_len ~status ~bytes ~ref_off ~ref_len
    ~ua_off ~ua_len ~elapsed_us ~complete ~host_off ~host_len ~tls ~protocol =
  if t.fd >= 0 then begin
    let req_len = if req_len > max_request_line then max_request_line else req_len in
    let pos0 x = if x > 0 then x else 0 in
    let need =
      256 + Date.common_log_length + pos0 peer_len
      + (max_escape * (pos0 req_len + max_field + max_field + max_field))
    in
    if t.len + need > size then flush t;
    set_time t now;
    let elapsed_us = if elapsed_us < 0 then 0 else elapsed_us in
    let pos =
      match t.format with
      | Json ->
          json_line t ~peer ~peer_len ~src ~req_off ~req_len ~status ~bytes ~ref_off ~ref_len
            ~ua_off ~ua_len ~elapsed_us ~complete ~host_off ~host_len ~tls ~protocol
      | Common | Combined | Vhost_combined ->
          clf_line t ~peer ~peer_len ~src ~req_off ~req_len ~status ~bytes ~ref_off ~ref_len
            ~ua_off ~ua_len ~elapsed_us ~complete ~host_off ~host_len
    in
    Bigstring.unsafe_set t.buf pos '\n';
    t.len <- pos + 1
  end

let line t ~now ~peer ~peer_len ~src ~req_off ~req_len ~status ~bytes ~ref_off ~ref_len ~ua_off
    ~ua_len ~elapsed_us ~complete =
  exchange_line t ~now ~peer ~peer_len ~src ~req_off ~req_len ~status ~bytes ~ref_off ~ref_len ~ua_off
    ~ua_len ~elapsed_us ~complete ~host_off:0 ~host_len:(-1) ~tls:0 ~protocol:0

(* What left of the body: all of it when the response completed; else
   what was handed to the socket after the head (chunk framing included),
   never more than the body. *)
let body_sent (c : Slot.t) ~complete =
  if complete then c.resp_bytes
  else
    (* HTTP/2: [sent] counts body bytes only (H2_exchange.account); the
       head went as HEADERS. *)
    let n = if c.mode = Slot.H2_stream then c.sent else c.sent - c.head_len in
    if n <= 0 then 0 else if n > c.resp_bytes then c.resp_bytes else n

let request t (c : Slot.t) ~parsed ~complete =
  if t.fd >= 0 then begin
    let req_len =
      if parsed then
        let cr = Bigstring.index_from c.rbuf ~off:c.rpos ~stop:c.body_start '\r' in
        if cr < 0 then -1 else cr - c.rpos
      else -1
    in
    let combined = t.format <> Common in
    let req = Slot.req c in
    let h = if parsed && Request.has_host req then Request.host req else Span.empty in
    let protocol =
      if not parsed then 0
      else match Request.version req with Version.Http_1_0 -> 10 | Http_1_1 -> 11 | Http_2 -> 20
    in
    let r = if parsed && combined then Request.find (Slot.req c) Header_name.Referer else -1 in
    let u = if parsed && combined then Request.find (Slot.req c) Header_name.User_agent else -1 in
    let rv = if r >= 0 then Request.header_value (Slot.req c) r else Span.empty in
    let uv = if u >= 0 then Request.header_value (Slot.req c) u else Span.empty in
    let elapsed_us =
      if c.started_ns > 0 then (Syscall.clock_monotonic_ns () - c.started_ns) / 1000 else 0
    in
    exchange_line t ~now:c.sh.now ~peer:c.peer ~peer_len:c.peer_len ~src:c.rbuf ~req_off:c.rpos ~req_len
      ~status:(Status.code c.status) ~bytes:(body_sent c ~complete) ~ref_off:(Span.off rv)
      ~ref_len:(if r >= 0 then Span.len rv else -1)
      ~ua_off:(Span.off uv)
      ~ua_len:(if u >= 0 then Span.len uv else -1)
      ~elapsed_us ~complete ~host_off:(Span.off h)
      ~host_len:(if parsed && Request.has_host req then Span.len h else -1)
      ~tls:c.tls_version ~protocol
  end
