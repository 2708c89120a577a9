open Httpz

type escape = Escape_default | Escape_json | Escape_none

type var =
  | Remote_addr | Remote_user | Time_local | Time_iso8601 | Msec | Request | Request_method
  | Request_uri | Args | Server_protocol | Scheme | Https | Status | Body_bytes_sent | Bytes_sent
  | Request_time | Host | Http_host | Server_name | Request_id | Pid | Ssl_protocol
  | Request_completion | Http_referer | Http_user_agent | Http of string

type seg = Lit of string | Var of var
type custom = { name : string; escape : escape; segs : seg array; need : int }
type format = Common | Combined | Json | Vhost_combined | Custom of custom

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

(* {1 Custom formats} *)

let variables =
  [ ("remote_addr", Remote_addr); ("remote_user", Remote_user); ("time_local", Time_local);
    ("time_iso8601", Time_iso8601); ("msec", Msec); ("request", Request); ("request_method", Request_method);
    ("request_uri", Request_uri); ("args", Args); ("query_string", Args); ("server_protocol", Server_protocol);
    ("scheme", Scheme); ("https", Https); ("status", Status); ("body_bytes_sent", Body_bytes_sent);
    ("bytes_sent", Bytes_sent); ("request_time", Request_time); ("host", Host); ("http_host", Http_host);
    ("server_name", Server_name); ("request_id", Request_id); ("pid", Pid); ("ssl_protocol", Ssl_protocol);
    ("request_completion", Request_completion); ("http_referer", Http_referer);
    ("http_user_agent", Http_user_agent) ]

let variable_names =
  String.concat ", " (List.map (fun (n, _) -> "$" ^ n) variables) ^ ", $http_NAME"

(* What a variable may write, escaped. *)
let var_need = function
  | Request -> (max_escape * max_request_line) + 8
  | Remote_addr -> 64
  | Time_local | Time_iso8601 | Msec | Status | Body_bytes_sent | Bytes_sent | Request_time | Pid
  | Ssl_protocol | Request_completion | Scheme | Https | Server_protocol ->
      32
  | Remote_user | Request_method | Request_uri | Args | Host | Http_host | Server_name | Request_id
  | Http_referer | Http_user_agent | Http _ ->
      (max_escape * max_field) + 8

let is_name_char = function 'a' .. 'z' | 'A' .. 'Z' | '0' .. '9' | '_' -> true | _ -> false

let compile ~name ~escape text =
  let n = String.length text in
  let segs = ref [] and lit = Buffer.create 64 in
  let flush_lit () =
    if Buffer.length lit > 0 then begin
      segs := Lit (Buffer.contents lit) :: !segs;
      Buffer.clear lit
    end
  in
  let rec go i =
    if i >= n then Ok ()
    else
      let ch = text.[i] in
      if ch < ' ' || ch = '\127' then Error "a log format holds no control character (a line is one line)"
      else if ch <> '$' then (Buffer.add_char lit ch; go (i + 1))
      else
        let braced = i + 1 < n && text.[i + 1] = '{' in
        let start = if braced then i + 2 else i + 1 in
        let j = ref start in
        while !j < n && is_name_char text.[!j] do incr j done;
        let v = String.sub text start (!j - start) in
        if braced && (!j >= n || text.[!j] <> '}') then Error (Printf.sprintf "${%s: the closing } is missing" v)
        else if v = "" then Error "a lone $: give a variable name ($status) or ${name}"
        else
          let next = if braced then !j + 1 else !j in
          let lv = String.lowercase_ascii v in
          let var =
            match List.assoc_opt lv variables with
            | Some var -> Ok var
            | None ->
                if String.length lv > 5 && String.sub lv 0 5 = "http_" then
                  Ok (Http (String.map (fun c -> if c = '_' then '-' else c) (String.sub lv 5 (String.length lv - 5))))
                else if String.length lv > 9 && String.sub lv 0 9 = "upstream_" then
                  Error (Printf.sprintf "$%s has no meaning here: httpz proxies to no upstream" v)
                else Error (Printf.sprintf "unknown variable $%s (give %s)" v variable_names)
          in
          match var with
          | Error _ as e -> e
          | Ok var ->
              flush_lit ();
              segs := Var var :: !segs;
              go next
  in
  match go 0 with
  | Error e -> Error e
  | Ok () ->
      flush_lit ();
      let segs = Array.of_list (List.rev !segs) in
      let need =
        Array.fold_left
          (fun acc s -> acc + match s with Lit l -> String.length l | Var v -> var_need v)
          0 segs
      in
      Ok { name; escape; segs; need }

type t = {
  fd : int;
  format : format;
  buf : Bigstring.t;
  mutable len : int;
  clf : Bigstring.t; (* "[10/Oct/2000:13:55:36 +0000]" of [time_s] *)
  iso : Bigstring.t; (* "2000-10-10T13:55:36Z" of [time_s] *)
  mutable time_s : int;
  mutable pid : int;
  syslog : Log_dest.syslog option;
  scratch : Bytes.t; (* a Basic credential decoded, for $remote_user *)
  (* The line being written: set by [exchange_line] or [request]. *)
  mutable peer : Bigstring.t;
  mutable peer_len : int;
  mutable src : Bigstring.t;
  mutable req_off : int;
  mutable req_len : int;
  mutable status : int;
  mutable bytes : int;
  mutable sent : int;
  mutable ref_off : int;
  mutable ref_len : int;
  mutable ua_off : int;
  mutable ua_len : int;
  mutable elapsed_us : int;
  mutable complete : bool;
  mutable host_off : int;
  mutable host_len : int;
  mutable tls : int;
  mutable protocol : int;
  mutable req : Request.t; (* [has_req]: the parsed request, in [src] *)
  mutable has_req : bool;
  mutable request_id : string;
  mutable server_name : string;
}

let time_length = 20
let no_request = Request.create ()
let empty = Bigstring.create 0

let create ~fd ~format =
  let need = match format with Custom c -> c.need + 512 | _ -> 0 in
  let syslog = Log_dest.syslog_of fd in
  {
    fd;
    format;
    buf = Bigstring.create (if fd >= 0 then max size (2 * need) else 0);
    len = 0;
    clf = Bigstring.create Date.common_log_length;
    iso = Bigstring.create Date.common_log_length;
    time_s = -1;
    pid = 0;
    syslog;
    scratch = Bytes.create 256;
    peer = empty; peer_len = 0; src = empty; req_off = 0; req_len = -1; status = 0; bytes = 0; sent = 0;
    ref_off = 0; ref_len = -1; ua_off = 0; ua_len = -1; elapsed_us = 0; complete = true; host_off = 0;
    host_len = -1; tls = 0; protocol = 0; req = no_request; has_req = false; request_id = ""; server_name = "";
  }

(* {1 Routes: per-site and per-location logs} *)

type route = { log : t; main : bool; server : string }

let main_route = { log = create ~fd:(-1) ~format:Common; main = true; server = "" }
let routes : route array ref = ref [||]
let use_routes r = if !routes != r then routes := r
let route c = let r = c.Slot.log_route in if r <= 0 || r > Array.length !routes then main_route else Array.unsafe_get !routes (r - 1)
let route_server c = (route c).server

(* Whether a route's log holds lines. *)
let routes_pending = ref false
let routes_open = ref false

let enabled t = t.fd >= 0 || !routes_open

let pending t = t.len > 0 || !routes_pending

let send_all t =
  let off = ref 0 in
  while !off < t.len do
    let n = Syscall.write t.fd t.buf !off (t.len - !off) in
    if n > 0 then off := !off + n
    else if n = - Syscall.eintr then ()
    else off := t.len (* lost: never let the log stop the server *)
  done

(* Lines a syslog receiver did not take (its queue full: EAGAIN, ENOBUFS;
   gone: ECONNREFUSED), and when the error log last said so. *)
let dropped = ref 0
let dropped_said = ref 0
let dropped_said_at = ref 0.
let syslog_dropped () = !dropped

(* At most one line per 10 s; allocates, but only once lines are lost. *)
let say_dropped () =
  let now = Unix.gettimeofday () in
  if now -. !dropped_said_at >= 10. then begin
    Log.warn "syslog: %d access log lines dropped since start (the receiver is not taking them)" !dropped;
    dropped_said := !dropped;
    dropped_said_at := now
  end

(* Syslog: one datagram per line, without its newline (RFC 5426). The
   socket is non-blocking ({!Log_dest}): a receiver that stops reading
   costs lines, never the worker. *)
let send_lines t =
  let off = ref 0 in
  while !off < t.len do
    let nl = Bigstring.index_from t.buf ~off:!off ~stop:t.len '\n' in
    let stop = if nl < 0 then t.len else nl in
    let n = ref (Syscall.write t.fd t.buf !off (stop - !off)) in
    if !n = - Syscall.eintr then n := Syscall.write t.fd t.buf !off (stop - !off);
    if !n < 0 then incr dropped;
    off := stop + 1
  done;
  if !dropped > !dropped_said then say_dropped ()

let flush_one t =
  if t.len > 0 then begin
    (match t.syslog with None -> send_all t | Some _ -> send_lines t);
    t.len <- 0
  end

let flush t =
  flush_one t;
  if !routes_pending then begin
    routes_pending := false;
    let r = !routes in
    for i = 0 to Array.length r - 1 do
      let l = Array.unsafe_get r i in
      if not l.main then flush_one l.log
    done
  end

let reopen t path =
  if t.fd < 0 then Error "no access log"
  else
    match Log_dest.open_path path with
    | Error _ as e -> e
    | Ok fd ->
        flush t;
        (* The new file takes the old one's descriptor number: whoever
           holds [t.fd] (every worker has its own) writes to the new file. *)
        Unix.dup2 ~cloexec:true fd (Syscall.unix_of_fd t.fd);
        Unix.close fd;
        Ok ()

let reopen_all t =
  flush t;
  (* Every route's lines too, whatever [routes_pending] says. *)
  Array.iter (fun r -> if not r.main then flush_one r.log) !routes;
  let errors = Log_dest.reopen_files ~owner:None in
  List.iter (fun e -> Log.warn "SIGUSR1: reopening the access log: %s (keeping the old one)" e) errors;
  match Log.reopen () with
  | Ok () -> ()
  | Error e -> Log.warn "SIGUSR1: reopening the error log: %s (keeping the old one)" e

(* {1 Time} *)

let months = "JanFebMarAprMayJunJulAugSepOctNovDec"

(* "[10/Oct/2000:13:55:36 +0000]" rewritten into [iso] as
   "2000-10-10T13:55:36Z": the CLF writer is the one date formatter. *)
let iso_of_clf (b : Bigstring.t) (o : Bigstring.t) =
  (* No local closures: they would be allocated on each call. *)
  let m = ref 0 in
  for k = 0 to 11 do
    if String.unsafe_get months (3 * k) = Bigstring.unsafe_get b 4
       && String.unsafe_get months ((3 * k) + 1) = Bigstring.unsafe_get b 5
       && String.unsafe_get months ((3 * k) + 2) = Bigstring.unsafe_get b 6
    then m := k + 1
  done;
  Bigstring.blit ~src:b ~src_off:8 ~dst:o ~dst_off:0 ~len:4;
  Bigstring.blit ~src:b ~src_off:13 ~dst:o ~dst_off:11 ~len:8;
  Bigstring.unsafe_set o 4 '-';
  Bigstring.unsafe_set o 5 (Char.unsafe_chr (48 + (!m / 10)));
  Bigstring.unsafe_set o 6 (Char.unsafe_chr (48 + (!m mod 10)));
  Bigstring.unsafe_set o 7 '-';
  Bigstring.unsafe_set o 8 (Bigstring.unsafe_get b 1);
  Bigstring.unsafe_set o 9 (Bigstring.unsafe_get b 2);
  Bigstring.unsafe_set o 10 'T';
  Bigstring.unsafe_set o 19 'Z'

let set_time t now =
  if now <> t.time_s then begin
    ignore (Date.write_common_log t.clf ~off:0 (if now < 0 then 0 else now) : int);
    iso_of_clf t.clf t.iso;
    t.time_s <- now;
    (* Once a second: a log made before the fork learns its worker. *)
    t.pid <- Syscall.getpid ()
  end

(* {1 Escaping} *)

let hex = "0123456789ABCDEF"

let put_hex b pos k =
  Bigstring.unsafe_set b pos (String.unsafe_get hex (k lsr 4));
  Bigstring.unsafe_set b (pos + 1) (String.unsafe_get hex (k land 15))

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
      pos := Response.write_string b ~off:!pos (if json then "\\u00" else "\\x");
      put_hex b !pos (Char.code ch);
      pos := !pos + 2
    end
    else begin
      Bigstring.unsafe_set b !pos ch;
      incr pos
    end
  done;
  !pos

(* The length of the well-formed UTF-8 sequence (RFC 3629: no overlong
   form, no surrogate, nothing past U+10FFFF) of 2 to 4 bytes at [i], or
   0. *)
(* Not a local closure: it would be allocated per call. *)
let cont (s : Bigstring.t) i stop k = i + k < stop && Char.code (Bigstring.unsafe_get s (i + k)) land 0xC0 = 0x80

let utf8_length (s : Bigstring.t) i stop =
  let b0 = Char.code (Bigstring.unsafe_get s i) in
  let b1 = if i + 1 < stop then Char.code (Bigstring.unsafe_get s (i + 1)) else 0 in
  if b0 >= 0xC2 && b0 <= 0xDF && cont s i stop 1 then 2
  else if b0 >= 0xE0 && b0 <= 0xEF && cont s i stop 1 && cont s i stop 2
          && (b0 <> 0xE0 || b1 >= 0xA0) && (b0 <> 0xED || b1 < 0xA0) then 3
  else if b0 >= 0xF0 && b0 <= 0xF4 && cont s i stop 1 && cont s i stop 2 && cont s i stop 3
          && (b0 <> 0xF0 || b1 >= 0x90) && (b0 <> 0xF4 || b1 < 0x90) then 4
  else 0

(* A custom format's escape=json: as JSON wants it (quote, backslash and
   control bytes escaped), well-formed UTF-8 kept as it is, and each byte
   of a malformed sequence written \u00HH: a line is valid UTF-8 JSON
   whatever the client sent. *)
let escape_json_utf8 (b : Bigstring.t) pos (src : Bigstring.t) off len =
  let pos = ref pos and i = ref off and stop = off + len in
  while !i < stop do
    let ch = Bigstring.unsafe_get src !i in
    if ch = '"' || ch = '\\' then begin
      Bigstring.unsafe_set b !pos '\\';
      Bigstring.unsafe_set b (!pos + 1) ch;
      pos := !pos + 2;
      incr i
    end
    else if ch >= ' ' && ch < '\127' then begin
      Bigstring.unsafe_set b !pos ch;
      incr pos;
      incr i
    end
    else
      let k = if ch >= '\128' then utf8_length src !i stop else 0 in
      if k > 0 then begin
        Bigstring.blit ~src ~src_off:!i ~dst:b ~dst_off:!pos ~len:k;
        pos := !pos + k;
        i := !i + k
      end
      else begin
        pos := Response.write_string b ~off:!pos "\\u00";
        put_hex b !pos (Char.code ch);
        pos := !pos + 2;
        incr i
      end
  done;
  !pos

(* escape=none: the bytes as they are, but for C0 controls other than
   tab (CR, LF, NUL…) as \xHH: a client value never starts a line of its
   own in a file, nor a datagram of its own over syslog (split on LF). *)
let escape_controls (b : Bigstring.t) pos (src : Bigstring.t) off len =
  let pos = ref pos in
  for i = off to off + len - 1 do
    let ch = Bigstring.unsafe_get src i in
    if ch < ' ' && ch <> '\t' then begin
      pos := Response.write_string b ~off:!pos "\\x";
      put_hex b !pos (Char.code ch);
      pos := !pos + 2
    end
    else begin
      Bigstring.unsafe_set b !pos ch;
      incr pos
    end
  done;
  !pos

let escape_as esc b pos src off len =
  match esc with
  | Escape_default -> escape ~json:false b pos src off len
  | Escape_json -> escape_json_utf8 b pos src off len
  | Escape_none -> escape_controls b pos src off len

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

let clf_line t =
  let b = t.buf in
  let pos = ref t.len in
  let src = t.src in
  if t.format = Vhost_combined then begin
    (* The Host first, as Apache's vhost_combined: "-" without one. *)
    if t.host_len > 0 then
      pos := escape ~json:false b !pos src t.host_off (if t.host_len > max_field then max_field else t.host_len)
    else pos := Response.write_string b ~off:!pos "-";
    Bigstring.unsafe_set b !pos ' ';
    incr pos
  end;
  if t.peer_len > 0 then begin
    Bigstring.blit ~src:t.peer ~src_off:0 ~dst:b ~dst_off:!pos ~len:t.peer_len;
    pos := !pos + t.peer_len
  end
  else pos := Response.write_string b ~off:!pos "-";
  pos := Response.write_string b ~off:!pos " - - ";
  Bigstring.blit ~src:t.clf ~src_off:0 ~dst:b ~dst_off:!pos ~len:Date.common_log_length;
  pos := !pos + Date.common_log_length;
  pos := Response.write_string b ~off:!pos " \"";
  if t.req_len < 0 then pos := Response.write_string b ~off:!pos "-"
  else pos := escape ~json:false b !pos src t.req_off t.req_len;
  pos := Response.write_string b ~off:!pos "\" ";
  pos := Response.write_int b ~off:!pos t.status;
  Bigstring.unsafe_set b !pos ' ';
  incr pos;
  if t.bytes > 0 then pos := Response.write_int b ~off:!pos t.bytes
  else pos := Response.write_string b ~off:!pos "-";
  if t.format = Combined || t.format = Vhost_combined then begin
    Bigstring.unsafe_set b !pos ' ';
    pos := field t (!pos + 1) src t.ref_off t.ref_len ~absent:"\"-\"";
    Bigstring.unsafe_set b !pos ' ';
    pos := field t (!pos + 1) src t.ua_off t.ua_len ~absent:"\"-\""
  end;
  Bigstring.unsafe_set b !pos ' ';
  pos := Response.write_int b ~off:(!pos + 1) t.elapsed_us;
  if not t.complete then pos := Response.write_string b ~off:!pos " cut";
  !pos

let json_line t =
  let b = t.buf in
  let src = t.src in
  let pos = ref (Response.write_string b ~off:t.len "{\"time\":\"") in
  Bigstring.blit ~src:t.iso ~src_off:0 ~dst:b ~dst_off:!pos ~len:time_length;
  pos := !pos + time_length;
  pos := Response.write_string b ~off:!pos "\",\"remote_addr\":";
  pos := field t !pos t.peer 0 (if t.peer_len > 0 then t.peer_len else -1) ~absent:"null";
  pos := Response.write_string b ~off:!pos ",\"request\":";
  pos := field t !pos src t.req_off t.req_len ~absent:"null";
  pos := Response.write_string b ~off:!pos ",\"host\":";
  pos := field t !pos src t.host_off t.host_len ~absent:"null";
  pos := Response.write_string b ~off:!pos (if t.tls <> 0 then ",\"scheme\":\"https\",\"tls\":" else ",\"scheme\":\"http\",\"tls\":");
  pos := Response.write_string b ~off:!pos (tls_name t.tls);
  pos := Response.write_string b ~off:!pos ",\"protocol\":";
  pos := write_protocol b !pos t.protocol;
  pos := Response.write_string b ~off:!pos ",\"status\":";
  pos := Response.write_int b ~off:!pos t.status;
  pos := Response.write_string b ~off:!pos ",\"body_bytes_sent\":";
  pos := Response.write_int b ~off:!pos (if t.bytes > 0 then t.bytes else 0);
  pos := Response.write_string b ~off:!pos ",\"referer\":";
  pos := field t !pos src t.ref_off t.ref_len ~absent:"null";
  pos := Response.write_string b ~off:!pos ",\"user_agent\":";
  pos := field t !pos src t.ua_off t.ua_len ~absent:"null";
  pos := Response.write_string b ~off:!pos ",\"request_time_us\":";
  pos := Response.write_int b ~off:!pos t.elapsed_us;
  pos := Response.write_string b ~off:!pos (if t.complete then ",\"complete\":true" else ",\"complete\":false");
  Bigstring.unsafe_set b !pos '}';
  !pos + 1

(* {2 Custom formats} *)

(* [n] thousandths as "S.mmm". *)
let write_millis b pos n =
  let n = if n < 0 then 0 else n in
  let pos = Response.write_int b ~off:pos (n / 1000) in
  Bigstring.unsafe_set b pos '.';
  let m = n mod 1000 in
  Bigstring.unsafe_set b (pos + 1) (Char.unsafe_chr (48 + (m / 100)));
  Bigstring.unsafe_set b (pos + 2) (Char.unsafe_chr (48 + (m / 10 mod 10)));
  Bigstring.unsafe_set b (pos + 3) (Char.unsafe_chr (48 + (m mod 10)));
  pos + 4

(* A value of [len] bytes of [src] at [off] ([len < 0]: absent, written
   "-", or nothing with escape=json, as nginx). *)
let value esc b pos src off len =
  if len < 0 || (len = 0 && esc <> Escape_json) then
    if esc = Escape_json then pos else (Bigstring.unsafe_set b pos '-'; pos + 1)
  else escape_as esc b pos src off (if len > max_field then max_field else len)

let value_string esc b pos s =
  if s = "" then (if esc = Escape_json then pos else (Bigstring.unsafe_set b pos '-'; pos + 1))
  else begin
    (* Config-time strings (a site's name, an id the server made): no
       escaping needed beyond what their makers allow, but quoted bytes
       are still escaped for JSON. *)
    let p = ref pos in
    for i = 0 to String.length s - 1 do
      let ch = String.unsafe_get s i in
      if ch = '"' || ch = '\\' || ch < ' ' || ch > '~' then begin
        p := Response.write_string b ~off:!p (if esc = Escape_json then "\\u00" else "\\x");
        put_hex b !p (Char.code ch);
        p := !p + 2
      end
      else begin
        Bigstring.unsafe_set b !p ch;
        incr p
      end
    done;
    !p
  end

(* $remote_user: the user of a Basic credential, decoded into [scratch];
   its length, or -1. *)
let basic_user t =
  if not t.has_req then -1
  else
    let i = Request.find t.req Header_name.Authorization in
    if i < 0 then -1
    else
      let v = Request.header_value t.req i in
      let off = Span.off v and len = Span.len v in
      if len < 7 || not (Bigstring.equal_caseless t.src ~off ~len:6 "basic ") then -1
      else begin
        let n = ref 0 and acc = ref 0 and bits = ref 0 and stop = ref false in
        let i = ref (off + 6) in
        while (not !stop) && !i < off + len do
          let ch = Bigstring.unsafe_get t.src !i in
          let v =
            match ch with
            | 'A' .. 'Z' -> Char.code ch - 65
            | 'a' .. 'z' -> Char.code ch - 71
            | '0' .. '9' -> Char.code ch + 4
            | '+' -> 62
            | '/' -> 63
            | _ -> -1
          in
          if v < 0 then (if ch <> ' ' then stop := true)
          else begin
            acc := ((!acc lsl 6) lor v) land 0xFFFFFF;
            bits := !bits + 6;
            if !bits >= 8 then begin
              bits := !bits - 8;
              let byte = (!acc lsr !bits) land 0xff in
              if byte = Char.code ':' || !n >= Bytes.length t.scratch then stop := true
              else begin
                Bytes.unsafe_set t.scratch !n (Char.unsafe_chr byte);
                incr n
              end
            end
          end;
          incr i
        done;
        !n
      end

let write_var t esc b pos v =
  let src = t.src in
  match v with
  | Remote_addr -> value esc b pos t.peer 0 (if t.peer_len > 0 then t.peer_len else -1)
  | Remote_user ->
      let n = basic_user t in
      if n <= 0 then value esc b pos src 0 (-1)
      else begin
        (* Escaped from the scratch bytes, one at a time. *)
        let p = ref pos in
        for i = 0 to n - 1 do
          let ch = Bytes.unsafe_get t.scratch i in
          if ch = '"' || ch = '\\' || ch < ' ' || ch > '~' then begin
            if esc = Escape_none && (ch >= ' ' || ch = '\t') then (Bigstring.unsafe_set b !p ch; incr p)
            else begin
              p := Response.write_string b ~off:!p (if esc = Escape_json then "\\u00" else "\\x");
              put_hex b !p (Char.code ch);
              p := !p + 2
            end
          end
          else (Bigstring.unsafe_set b !p ch; incr p)
        done;
        !p
      end
  | Time_local ->
      Bigstring.blit ~src:t.clf ~src_off:1 ~dst:b ~dst_off:pos ~len:(Date.common_log_length - 2);
      pos + Date.common_log_length - 2
  | Time_iso8601 ->
      Bigstring.blit ~src:t.iso ~src_off:0 ~dst:b ~dst_off:pos ~len:19;
      Response.write_string b ~off:(pos + 19) "+00:00"
  | Msec -> write_millis b pos (Syscall.clock_realtime_ns () / 1_000_000)
  | Request -> if t.req_len < 0 then value esc b pos src 0 (-1) else escape_as esc b pos src t.req_off t.req_len
  | Request_method ->
      if not t.has_req then value esc b pos src 0 (-1)
      else let m = Request.meth_span t.req in value esc b pos src (Span.off m) (Span.len m)
  | Request_uri ->
      if not t.has_req then value esc b pos src 0 (-1)
      else let m = Request.target t.req in value esc b pos src (Span.off m) (Span.len m)
  | Args ->
      if not t.has_req then value esc b pos src 0 (-1)
      else
        let m = Request.target t.req in
        let q = Bigstring.index_from src ~off:(Span.off m) ~stop:(Span.off m + Span.len m) '?' in
        if q < 0 then value esc b pos src 0 (-1) else value esc b pos src (q + 1) (Span.off m + Span.len m - q - 1)
  | Server_protocol ->
      if t.protocol <= 0 then value esc b pos src 0 (-1)
      else begin
        let p = Response.write_string b ~off:pos "HTTP/" in
        let p = Response.write_int b ~off:p (t.protocol / 10) in
        Bigstring.unsafe_set b p '.';
        Response.write_int b ~off:(p + 1) (t.protocol mod 10)
      end
  | Scheme -> Response.write_string b ~off:pos (if t.tls <> 0 then "https" else "http")
  | Https -> if t.tls <> 0 then Response.write_string b ~off:pos "on" else value esc b pos src 0 (-1)
  | Ssl_protocol ->
      (match t.tls with
       | 0x0304 -> Response.write_string b ~off:pos "TLSv1.3"
       | 0x0303 -> Response.write_string b ~off:pos "TLSv1.2"
       | 0x0302 -> Response.write_string b ~off:pos "TLSv1.1"
       | 0x0301 -> Response.write_string b ~off:pos "TLSv1"
       | _ -> value esc b pos src 0 (-1))
  | Status -> Response.write_int b ~off:pos t.status
  | Body_bytes_sent -> Response.write_int b ~off:pos (if t.bytes > 0 then t.bytes else 0)
  | Bytes_sent -> Response.write_int b ~off:pos (if t.sent > 0 then t.sent else 0)
  | Request_time -> write_millis b pos (t.elapsed_us / 1000)
  | Host ->
      (* nginx's $host: the Host without its port, in lower case; else
         the site's name. *)
      if t.host_len > 0 then begin
        let stop = t.host_off + (if t.host_len > max_field then max_field else t.host_len) in
        let colon =
          if Bigstring.unsafe_get src t.host_off = '[' then
            let e = Bigstring.index_from src ~off:t.host_off ~stop ']' in
            if e < 0 then stop else e + 1
          else
            let c = Bigstring.index_from src ~off:t.host_off ~stop ':' in
            if c < 0 then stop else c
        in
        let p = escape_as esc b pos src t.host_off (colon - t.host_off) in
        for i = pos to p - 1 do
          let ch = Bigstring.unsafe_get b i in
          if ch >= 'A' && ch <= 'Z' then Bigstring.unsafe_set b i (Char.unsafe_chr (Char.code ch + 32))
        done;
        p
      end
      else value_string esc b pos t.server_name
  | Http_host -> value esc b pos src t.host_off t.host_len
  | Server_name -> value_string esc b pos t.server_name
  | Request_id -> value_string esc b pos t.request_id
  | Pid -> Response.write_int b ~off:pos t.pid
  | Request_completion -> if t.complete then Response.write_string b ~off:pos "OK" else pos
  | Http_referer -> value esc b pos src t.ref_off t.ref_len
  | Http_user_agent -> value esc b pos src t.ua_off t.ua_len
  | Http name ->
      let i = if t.has_req then Request.find_string t.req src name else -1 in
      if i < 0 then value esc b pos src 0 (-1)
      else let v = Request.header_value t.req i in value esc b pos src (Span.off v) (Span.len v)

let custom_line t (c : custom) =
  let b = t.buf in
  let pos = ref t.len in
  for i = 0 to Array.length c.segs - 1 do
    match Array.unsafe_get c.segs i with
    | Lit s -> pos := Response.write_string b ~off:!pos s
    | Var v -> pos := write_var t c.escape b !pos v
  done;
  !pos

let write t =
  let need =
    match t.format with
    | Custom c -> c.need + 256
    | Common | Combined | Json | Vhost_combined ->
        let pos0 x = if x > 0 then x else 0 in
        256 + Date.common_log_length + pos0 t.peer_len
        + (max_escape * (pos0 t.req_len + max_field + max_field + max_field))
  in
  if t.len + need > Bigstring.length t.buf then flush_one t;
  (match t.syslog with
   | None -> ()
   | Some s ->
       (* RFC 5424: <PRI>1 TIMESTAMP HOSTNAME APP-NAME PROCID MSGID SD MSG *)
       let b = t.buf in
       let pos = Response.write_string b ~off:t.len s.Log_dest.prefix in
       Bigstring.blit ~src:t.iso ~src_off:0 ~dst:b ~dst_off:pos ~len:time_length;
       let pos = Response.write_string b ~off:(pos + time_length) s.host_tag in
       let pos = Response.write_int b ~off:pos t.pid in
       t.len <- Response.write_string b ~off:pos " - - ");
  let pos =
    match t.format with
    | Json -> json_line t
    | Common | Combined | Vhost_combined -> clf_line t
    | Custom c -> custom_line t c
  in
  Bigstring.unsafe_set t.buf pos '\n';
  t.len <- pos + 1

let exchange_line t ~now ~peer ~peer_len ~src ~req_off ~req_len ~status ~bytes ~ref_off ~ref_len
    ~ua_off ~ua_len ~elapsed_us ~complete ~host_off ~host_len ~tls ~protocol =
  if t.fd >= 0 then begin
    set_time t now;
    t.peer <- peer;
    t.peer_len <- peer_len;
    t.src <- src;
    t.req_off <- req_off;
    t.req_len <- (if req_len > max_request_line then max_request_line else req_len);
    t.status <- status;
    t.bytes <- bytes;
    t.sent <- bytes;
    t.ref_off <- ref_off;
    t.ref_len <- ref_len;
    t.ua_off <- ua_off;
    t.ua_len <- ua_len;
    t.elapsed_us <- (if elapsed_us < 0 then 0 else elapsed_us);
    t.complete <- complete;
    t.host_off <- host_off;
    t.host_len <- host_len;
    t.tls <- tls;
    t.protocol <- protocol;
    t.has_req <- false;
    if t.request_id != "" then t.request_id <- "";
    if t.server_name != "" then t.server_name <- "";
    write t
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

let request w (c : Slot.t) ~parsed ~complete =
  (* No route and no main log: nothing to write (the common case of a
     server without an access log, kept to one test). *)
  if c.log_route <> 0 || w.fd >= 0 then
  let r = if parsed then route c else main_route in
  Slot.set_log_route c 0;
  let t = if r.main then w else r.log in
  if t.fd >= 0 then begin
    let req_len =
      if parsed then
        let cr = Bigstring.index_from c.rbuf ~off:c.rpos ~stop:c.body_start '\r' in
        if cr < 0 then -1 else cr - c.rpos
      else -1
    in
    let req = Slot.req c in
    let h = if parsed && Request.has_host req then Request.host req else Span.empty in
    let protocol =
      if not parsed then 0
      else match Request.version req with Version.Http_1_0 -> 10 | Http_1_1 -> 11 | Http_2 -> 20
    in
    let referer = if parsed then Request.find req Header_name.Referer else -1 in
    let agent = if parsed then Request.find req Header_name.User_agent else -1 in
    let rv = if referer >= 0 then Request.header_value req referer else Span.empty in
    let uv = if agent >= 0 then Request.header_value req agent else Span.empty in
    set_time t c.sh.now;
    t.peer <- c.peer;
    t.peer_len <- c.peer_len;
    t.src <- c.rbuf;
    t.req_off <- c.rpos;
    t.req_len <- (if req_len > max_request_line then max_request_line else req_len);
    t.status <- Status.code c.status;
    t.bytes <- body_sent c ~complete;
    t.sent <- c.sent;
    t.ref_off <- Span.off rv;
    t.ref_len <- (if referer >= 0 then Span.len rv else -1);
    t.ua_off <- Span.off uv;
    t.ua_len <- (if agent >= 0 then Span.len uv else -1);
    t.elapsed_us <-
      (if c.started_ns > 0 then max 0 ((Syscall.clock_monotonic_ns () - c.started_ns) / 1000) else 0);
    t.complete <- complete;
    t.host_off <- Span.off h;
    t.host_len <- (if parsed && Request.has_host req then Span.len h else -1);
    t.tls <- c.tls_version;
    t.protocol <- protocol;
    if t.req != req then t.req <- req;
    t.has_req <- parsed;
    let id = if parsed then c.mw.request_id else "" in
    if t.request_id != id then t.request_id <- id;
    if t.server_name != r.server then t.server_name <- r.server;
    write t;
    if t != w then routes_pending := true
  end
