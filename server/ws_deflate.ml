(* permessage-deflate (RFC 7692) for one WebSocket connection: raw deflate
   streams (Zstream) with the negotiated parameters, and the buffers the
   (in|de)flated messages are written into, from the worker's body pool. *)

open Httpz

type t = {
  pool : Buffer_pool.t;
  client_reset : bool;  (* client_no_context_takeover: each message inflates alone *)
  server_wbits : int;
  mutable inf : Zstream.t;
  mutable ibuf : Bigstring.t;
  mutable ilen : int;
  mutable obuf : Bigstring.t;
  mutable olen : int;
  mutable scratch : Bigstring.t;
}

let empty = Bigstring.create 0

let create ext pool =
  (* Every message is compressed alone (negotiated by Ws.accept), so one
     compressor per window size serves the whole worker. *)
  Ws_extension.forgo_server_context ext;
  { pool; client_reset = Ws_extension.client_no_context_takeover ext;
    server_wbits = Ws_extension.server_max_window_bits ext; inf = Zstream.none;
    ibuf = empty; ilen = 0; obuf = empty; olen = 0; scratch = empty }

(* The worker's compressors, by window bits (one loop per process); reset
   after each message. *)
let deflaters = Array.make 16 Zstream.none

let deflater wbits =
  if deflaters.(wbits) = Zstream.none then
    (* zlib has no raw deflate with a 256-byte window: stored blocks (level
       0) reference nothing, so they fit any window. *)
    deflaters.(wbits) <-
      (if wbits <= 8 then Zstream.deflater ~wbits:9 ~level:0 else Zstream.deflater ~wbits ~level:1);
  if deflaters.(wbits) = Zstream.none then raise Out_of_memory;
  deflaters.(wbits)

let min_length = 32

(* The empty stored block a sync flush ends with: removed by the sender,
   appended by the receiver (RFC 7692 §7.2.1, §7.2.2). *)
let tail =
  let b = Bigstring.create 4 in
  Bigstring.blit_from_string "\x00\x00\xff\xff" ~src_off:0 b ~dst_off:0 ~len:4;
  b

let give t b = if Bigstring.length b > 0 then Buffer_pool.give t.pool b

type inflated = Inflated | Too_big | Corrupt

exception Stop of inflated

(* Inflates [src\[off, off+len)] after what [ibuf] holds, never past
   [limit] bytes of output; [true] when the stream ended (BFINAL). *)
let inflate_part t src ~off ~len ~limit =
  let off = ref off and len = ref len and fin = ref false and go = ref true in
  while !go do
    if t.ilen >= Bigstring.length t.ibuf then begin
      if t.ilen >= limit then raise_notrace (Stop Too_big);
      t.ibuf <- Buffer_pool.grow t.pool t.ibuf ~keep:t.ilen (t.ilen + 1)
    end;
    let room = min (Bigstring.length t.ibuf) limit - t.ilen in
    let r = Zstream.step t.inf src ~off:!off ~len:!len t.ibuf ~dst_off:t.ilen ~dst_len:room ~flush:Zstream.sync_flush in
    let used = Zstream.used r and written = Zstream.written r in
    off := !off + used;
    len := !len - used;
    t.ilen <- t.ilen + written;
    match Zstream.status r with
    | Zstream.Error -> raise_notrace (Stop Corrupt)
    | Zstream.Stream_end ->
        fin := true;
        go := false
    | Zstream.Ok | Zstream.No_progress ->
        if written < room then go := false (* all input used, output flushed *)
        else if t.ilen >= limit then raise_notrace (Stop Too_big)
  done;
  !fin

let inflate t src ~off ~len ~max =
  if t.inf = Zstream.none then t.inf <- Zstream.inflater ~wbits:15;
  if t.inf = Zstream.none then raise Out_of_memory;
  t.ilen <- 0;
  (* One byte past [max] tells a message over the limit. *)
  let limit = max + 1 in
  match
    let fin = inflate_part t src ~off ~len ~limit in
    let fin = fin || inflate_part t tail ~off:0 ~len:4 ~limit in
    if t.ilen > max then Too_big
    else begin
      if t.client_reset then begin
        (* Nothing carries over: an idle connection keeps no inflater. *)
        Zstream.free t.inf;
        t.inf <- Zstream.none
      end
      else if fin then Zstream.reset t.inf;
      Inflated
    end
  with
  | r -> r
  | exception Stop r ->
      Zstream.reset t.inf;
      t.ilen <- 0;
      r

let output_inflated t = t.ibuf
let inflated_length t = t.ilen

let deflate t src ~off ~len =
  let def = deflater t.server_wbits in
  t.olen <- 0;
  let off = ref off and len = ref len and go = ref true in
  while !go do
    if Bigstring.length t.obuf - t.olen < 64 then
      t.obuf <- Buffer_pool.grow t.pool t.obuf ~keep:t.olen (t.olen + 64 + (!len / 2));
    let room = Bigstring.length t.obuf - t.olen in
    let r = Zstream.step def src ~off:!off ~len:!len t.obuf ~dst_off:t.olen ~dst_len:room ~flush:Zstream.sync_flush in
    off := !off + Zstream.used r;
    len := !len - Zstream.used r;
    t.olen <- t.olen + Zstream.written r;
    (match Zstream.status r with
     | Zstream.Error -> failwith "deflate failed"
     | _ -> ());
    if !len = 0 && Zstream.written r < room then go := false
  done;
  (* Ends with 00 00 ff ff: the receiver adds it back. *)
  if t.olen >= 4 then t.olen <- t.olen - 4;
  Zstream.reset def

let deflate_string t s =
  let n = String.length s in
  if Bigstring.length t.scratch < n then t.scratch <- Buffer_pool.grow t.pool t.scratch ~keep:0 n;
  Bigstring.blit_from_string s ~src_off:0 t.scratch ~dst_off:0 ~len:n;
  deflate t t.scratch ~off:0 ~len:n

let output_deflated t = t.obuf
let deflated_length t = t.olen

(* The buffers go back after each message: an idle connection holds none
   (the pool keeps spares, so this costs no system call). *)
let trim_deflated t =
  give t t.obuf;
  give t t.scratch;
  t.obuf <- empty;
  t.scratch <- empty

let trim t =
  give t t.ibuf;
  t.ibuf <- empty;
  trim_deflated t

let release t =
  Zstream.free t.inf;
  t.inf <- Zstream.none;
  trim t
