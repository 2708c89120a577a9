open Httpz

(* One worker writes one line at a time: a buffer per process. Every
   variable part stops at [limit] (and says so with [...]): the fixed text
   after the last one (quotes, ", host: \"", the newline, at most three
   marks) fits in what is left. *)
let size = 12288
let buf = Bigstring.create size
let limit = size - 256
let mark pos = Response.write_string buf ~off:pos "..."
let clf = Bigstring.create Date.common_log_length
let clf_s = ref (-1)

let months = "JanFebMarAprMayJunJulAugSepOctNovDec"

(* "2026-11-28T19:00:00.123Z" at [pos] (24 bytes), from the CLF writer. *)
let write_time pos =
  let ns = Syscall.clock_realtime_ns () in
  let s = ns / 1_000_000_000 in
  if s <> !clf_s then begin
    ignore (Date.write_common_log clf ~off:0 s : int);
    clf_s := s
  end;
  let m = ref 0 in
  for k = 0 to 11 do
    if String.unsafe_get months (3 * k) = Bigstring.unsafe_get clf 4
       && String.unsafe_get months ((3 * k) + 1) = Bigstring.unsafe_get clf 5
       && String.unsafe_get months ((3 * k) + 2) = Bigstring.unsafe_get clf 6
    then m := k + 1
  done;
  Bigstring.blit ~src:clf ~src_off:8 ~dst:buf ~dst_off:pos ~len:4;
  Bigstring.unsafe_set buf (pos + 4) '-';
  Bigstring.unsafe_set buf (pos + 5) (Char.unsafe_chr (48 + (!m / 10)));
  Bigstring.unsafe_set buf (pos + 6) (Char.unsafe_chr (48 + (!m mod 10)));
  Bigstring.unsafe_set buf (pos + 7) '-';
  Bigstring.unsafe_set buf (pos + 8) (Bigstring.unsafe_get clf 1);
  Bigstring.unsafe_set buf (pos + 9) (Bigstring.unsafe_get clf 2);
  Bigstring.unsafe_set buf (pos + 10) 'T';
  Bigstring.blit ~src:clf ~src_off:13 ~dst:buf ~dst_off:(pos + 11) ~len:8;
  Bigstring.unsafe_set buf (pos + 19) '.';
  let ms = ns / 1_000_000 mod 1000 in
  Bigstring.unsafe_set buf (pos + 20) (Char.unsafe_chr (48 + (ms / 100)));
  Bigstring.unsafe_set buf (pos + 21) (Char.unsafe_chr (48 + (ms / 10 mod 10)));
  Bigstring.unsafe_set buf (pos + 22) (Char.unsafe_chr (48 + (ms mod 10)));
  Bigstring.unsafe_set buf (pos + 23) 'Z';
  pos + 24

let hex = "0123456789abcdef"

(* The client's address as text (IPv4, or IPv6 as RFC 5952 writes it:
   lower case, the longest run of two or more zero groups as ::). *)
(* No local closures: they would be allocated per call. *)
let byte (ip : Bytes.t) i = Char.code (Bytes.unsafe_get ip i)
let group ip g = (byte ip (2 * g) lsl 8) lor byte ip ((2 * g) + 1)

let write_addr pos (ip : Bytes.t) =
  let mapped = ref true in
  for i = 0 to 9 do if byte ip i <> 0 then mapped := false done;
  if !mapped && byte ip 10 = 0xff && byte ip 11 = 0xff then begin
    let p = ref pos in
    for i = 12 to 15 do
      p := Response.write_int buf ~off:!p (byte ip i);
      if i < 15 then (Bigstring.unsafe_set buf !p '.'; incr p)
    done;
    !p
  end
  else begin
    (* The longest run of zero groups, of two or more. *)
    let best = ref (-1) and best_len = ref 1 and run = ref (-1) in
    for g = 0 to 7 do
      if group ip g = 0 then begin
        if !run < 0 then run := g;
        if g - !run + 1 > !best_len then (best := !run; best_len := g - !run + 1)
      end
      else run := -1
    done;
    let p = ref pos and g = ref 0 in
    while !g < 8 do
      if !g = !best then begin
        if !g = 0 then (Bigstring.unsafe_set buf !p ':'; incr p);
        Bigstring.unsafe_set buf !p ':';
        incr p;
        g := !g + !best_len
      end
      else begin
        let v = group ip !g in
        let started = ref false in
        for k = 3 downto 0 do
          let d = (v lsr (4 * k)) land 15 in
          if d <> 0 || !started || k = 0 then begin
            started := true;
            Bigstring.unsafe_set buf !p (String.unsafe_get hex d);
            incr p
          end
        done;
        if !g < 7 then (Bigstring.unsafe_set buf !p ':'; incr p);
        incr g
      end
    done;
    !p
  end

(* Quoted fields: nginx's escaping ("\xHH" for a double quote, a
   backslash, a control byte or a byte past 0x7E), at most 2 KiB. *)
(* One byte at [p], escaped; the end. Past [limit]: the mark, and
   [-1 - end] to say stop. *)
let put p ch =
  if p + 4 > limit then -1 - mark p
  else if ch < ' ' || ch > '~' || ch = '"' || ch = '\\' then begin
    let p = Response.write_string buf ~off:p "\\x" in
    Bigstring.unsafe_set buf p (String.unsafe_get hex (Char.code ch lsr 4));
    Bigstring.unsafe_set buf (p + 1) (String.unsafe_get hex (Char.code ch land 15));
    p + 2
  end
  else (Bigstring.unsafe_set buf p ch; p + 1)

let write_escaped pos (src : Bigstring.t) off len =
  let len = if len > 2048 then 2048 else len in
  let p = ref pos and i = ref off in
  while !i < off + len do
    p := put !p (Bigstring.unsafe_get src !i);
    if !p < 0 then (p := -1 - !p; i := off + len) else incr i
  done;
  !p

let write_user pos (b : Bytes.t) n =
  let n = if n > 255 then 255 else n in
  let p = ref pos and i = ref 0 in
  while !i < n do
    p := put !p (Bytes.unsafe_get b !i);
    if !p < 0 then (p := -1 - !p; i := n) else incr i
  done;
  !p

(* Config-time text (a site's or zone's name, a path), at most 1 KiB,
   written as it is but for the bytes nginx escapes. *)
let write_str pos s =
  let n = if String.length s > 1024 then 1024 else String.length s in
  let p = ref pos and i = ref 0 in
  while !i < n do
    p := put !p (String.unsafe_get s !i);
    if !p < 0 then (p := -1 - !p; i := n) else incr i
  done;
  !p

(* ", client: ADDR, server: NAME, request: "LINE", host: "HOST"" and the
   newline; the line written. *)
let finish c pos =
  let conn = Ctx.to_conn c in
  let req = Ctx.request c and src = Ctx.buffer c in
  let pos = Response.write_string buf ~off:pos ", client: " in
  let pos = write_addr pos (Ctx.peer_ip c) in
  let pos = Response.write_string buf ~off:pos ", server: " in
  let server = Access_log.route_server conn in
  let has_host = Request.has_host req in
  let host = Request.host req in
  let pos =
    if server <> "" then write_str pos server
    else if has_host then begin
      (* No site name (a server without a configuration file): the Host
         without its port. *)
      let off = Span.off host and len = Span.len host in
      let colon = Bigstring.index_from src ~off ~stop:(off + len) ':' in
      let len = if colon > off && Bigstring.unsafe_get src off <> '[' then colon - off else len in
      write_escaped pos src off len
    end
    else Response.write_string buf ~off:pos "-"
  in
  let pos = Response.write_string buf ~off:pos ", request: \"" in
  let cr = Bigstring.index_from conn.rbuf ~off:conn.rpos ~stop:conn.body_start '\r' in
  let pos = if cr < 0 then pos else write_escaped pos conn.rbuf conn.rpos (min (cr - conn.rpos) 8192) in
  Bigstring.unsafe_set buf pos '"';
  let pos =
    if has_host then begin
      let pos = Response.write_string buf ~off:(pos + 1) ", host: \"" in
      let pos = write_escaped pos src (Span.off host) (Span.len host) in
      Bigstring.unsafe_set buf pos '"';
      pos + 1
    end
    else pos + 1
  in
  Bigstring.unsafe_set buf pos '\n';
  let len = pos + 1 in
  let off = ref 0 in
  while !off < len do
    let n = Syscall.write 2 buf !off (len - !off) in
    if n > 0 then off := !off + n else if n <> - Syscall.eintr then off := len
  done

(* "TIME [error] PID#0: *CONN " *)
let start c level =
  let pos = write_time 0 in
  let pos = Response.write_string buf ~off:pos level in
  let pos = Response.write_int buf ~off:pos (Syscall.getpid ()) in
  let pos = Response.write_string buf ~off:pos "#0: *" in
  let pos = Response.write_int buf ~off:pos (Slot.carrier (Ctx.to_conn c)).slot in
  Bigstring.unsafe_set buf pos ' ';
  pos + 1

let forbidden c =
  if Log.enabled Log.Error then finish c (Response.write_string buf ~off:(start c " [error] ") "access forbidden by rule")

let limited c ~wait ~zone =
  if Log.enabled Log.Error then begin
    let pos = Response.write_string buf ~off:(start c " [error] ") "limiting requests, excess: " in
    let pos = Response.write_int buf ~off:pos (if wait < 0 then 0 else wait) in
    let pos = Response.write_string buf ~off:pos ".000 by zone \"" in
    let pos = write_str pos zone in
    finish c (Response.write_string buf ~off:pos "\"")
  end

let unauthorized c (u : Basic_auth.t option) =
  match u with
  | None -> ()
  | Some u ->
      match Basic_auth.last_refusal u with
      | No_credentials | Malformed ->
        (* nginx's info level: a browser's first request carries no
           credentials; not a failed guess. *)
        if Log.enabled Log.Debug then
          finish c (Response.write_string buf ~off:(start c " [info] ") "no user/password was provided for basic authentication")
      | No_such_user | Mismatch ->
      if Log.enabled Log.Error then begin
        let pos = Response.write_string buf ~off:(start c " [error] ") "user \"" in
        let pos = write_user pos (Basic_auth.last_user u) (Basic_auth.last_user_length u) in
        match Basic_auth.last_refusal u with
        | No_such_user ->
            let pos = Response.write_string buf ~off:pos "\" was not found in \"" in
            let pos = write_str pos (Basic_auth.file u) in
            finish c (Response.write_string buf ~off:pos "\"")
        | Mismatch | Malformed | No_credentials -> finish c (Response.write_string buf ~off:pos "\": password mismatch")
      end

let address_text ip =
  let n = write_addr 0 ip in
  Bigstring.sub_string buf ~off:0 ~len:n
