(* How a response goes out on an HTTP/2 stream: the protocol of an
   exchange's Ctx (see the .mli), and the queueing of its body as DATA. *)

open Httpz
open Slot
module C = H2_connection

let session x = match x.h2 with Some s -> s | None -> invalid_arg "H2_exchange: not an HTTP/2 exchange"

(* {1 The response head} *)

let begin_head x _status =
  let pos = Response.date x.out ~off:0 x.sh.date ~now:x.sh.now in
  x.out_len <- Response.write_string x.out ~off:pos x.sh.server_lines.(x.listener)

let[@inline] is_space ch = ch = ' ' || ch = '\t'

(* Fields HTTP/2 forbids in a response (RFC 9113 §8.2.2). *)
let connection_specific out ~off ~len = function
  | Header_name.Connection | Keep_alive | Transfer_encoding | Upgrade -> true
  | Other -> Bigstring.equal_caseless out ~off ~len "proxy-connection"
  | _ -> false

(* Names outside Header_name's table, lower-cased (HPACK wants lower
   case), as strings the encoder takes: made the first time a name is met
   and kept (a server writes few such names: X-Content-Type-Options, the
   application's own), so a response head allocates nothing. *)
let names = Array.make 64 ""
let nnames = ref 0

let lower_name out ~off ~len =
  let found = ref (-1) and i = ref 0 in
  while !found < 0 && !i < !nnames do
    let n = names.(!i) in
    if String.length n = len && Bigstring.equal_caseless out ~off ~len n then found := !i;
    incr i
  done;
  if !found >= 0 then names.(!found)
  else begin
    let n = String.lowercase_ascii (Bigstring.sub_string out ~off ~len) in
    if !nnames < Array.length names then begin
      names.(!nnames) <- n;
      incr nnames
    end;
    n
  end

(* The lines [out\[0, out_len)] ("Name: value\r\n", written by Ctx and
   begin_head) as HPACK fields of the head being built. *)
let encode_fields x h2c =
  let out = x.out and stop = x.out_len in
  let pos = ref 0 in
  while !pos < stop do
    let line = !pos in
    let eol = ref line in
    while !eol < stop - 1 && not (Bigstring.unsafe_get out !eol = '\r' && Bigstring.unsafe_get out (!eol + 1) = '\n') do
      incr eol
    done;
    if !eol >= stop - 1 then eol := stop;
    let colon = ref line in
    while !colon < !eol && Bigstring.unsafe_get out !colon <> ':' do
      incr colon
    done;
    if !colon < !eol && !colon > line then begin
      let v = ref (!colon + 1) and e = ref !eol in
      while !v < !e && is_space (Bigstring.unsafe_get out !v) do incr v done;
      while !e > !v && is_space (Bigstring.unsafe_get out (!e - 1)) do decr e done;
      let nlen = !colon - line in
      let name = Header_name.of_buffer out ~off:line ~len:nlen in
      if not (connection_specific out ~off:line ~len:nlen name) then
        match name with
        | Header_name.Other ->
            C.header_s_span h2c (lower_name out ~off:line ~len:nlen) out (Span.make ~off:!v ~len:(!e - !v))
        | n -> C.header_span h2c n out (Span.make ~off:!v ~len:(!e - !v))
    end;
    pos := !eol + 2
  done

let end_head x ~content_length ~chunked =
  let h2c = (session x).h2c in
  C.start_response h2c ~stream:x.stream ~status:(Status.code x.status);
  encode_fields x h2c;
  if (not x.no_content) && (not chunked) && content_length >= 0 then
    C.header_int h2c Header_name.Content_length content_length;
  let end_stream = x.suppress || ((not chunked) && content_length = 0) in
  (match C.send_headers h2c ~end_stream with
   | Queued -> x.fin_queued <- end_stream
   | Stream_closed | No_space ->
       (* Reset by the client meanwhile (or a queue the client does not
          drain): nothing more goes out for this stream. *)
       x.broken <- true;
       x.fin_queued <- true);
  x.out_len <- 0;
  x.out_sent <- 0

(* Streamed pieces collect in [out] until the handler flushes or ends. *)
let chunk x len = if x.out_len + len > Bigstring.length x.out then grow_out x (x.out_len + len)
let last_chunk _ = ()
let switch _ = invalid_arg "Ctx.upgrade: not over HTTP/2 (RFC 9113 §8.6 has no Upgrade)"
let protocol = { begin_head; end_head; chunk; last_chunk; switch }

(* {1 The response body} *)

(* A body the handler may reuse or the GC may move goes into [out] first:
   DATA leaves later, from a buffer that stays put. *)
let keep_body x =
  let len = x.ext_len in
  match x.ext with
  | Ext_string ->
      grow_out x (x.out_len + len);
      Bigstring.blit_from_string x.ext_str ~src_off:x.ext_off x.out ~dst_off:x.out_len ~len;
      x.out_len <- x.out_len + len;
      x.ext <- No_ext;
      x.ext_len <- 0
  | Ext_bigstring when not x.ext_stable ->
      grow_out x (x.out_len + len);
      Bigstring.blit ~src:x.ext_bs ~src_off:x.ext_off ~dst:x.out ~dst_off:x.out_len ~len;
      x.out_len <- x.out_len + len;
      x.ext <- No_ext;
      x.ext_len <- 0
  | Ext_bigstring | Ext_file | No_ext -> ()

let submitted x (r : C.submit) =
  match r with
  | Queued -> x.fin_queued <- true
  | Stream_closed ->
      x.broken <- true;
      x.fin_queued <- true
  | No_space -> () (* an earlier piece is pending: tried again when it left *)

(* The response is complete: what is left of it is queued, ending the
   stream. *)
let queue_rest x =
  if not x.fin_queued then begin
    let h2c = (session x).h2c and stream = x.stream in
    if C.body_pending h2c ~stream = 0 then
      if x.suppress || x.broken then submitted x (C.send_data h2c ~stream x.sh.empty ~off:0 ~len:0 ~end_stream:true)
      else begin
        keep_body x;
        match x.ext with
        | Ext_file when x.ext_len > 0 ->
            submitted x (C.send_data_external h2c ~stream ~offset:x.ext_off ~len:x.ext_len ~end_stream:true)
        | Ext_bigstring when x.ext_len > 0 ->
            submitted x (C.send_data h2c ~stream x.ext_bs ~off:x.ext_off ~len:x.ext_len ~end_stream:true)
        | Ext_bigstring | Ext_file | Ext_string | No_ext ->
            submitted x
              (C.send_data h2c ~stream x.out ~off:x.out_sent ~len:(x.out_len - x.out_sent) ~end_stream:true)
      end
  end

(* Ctx.flush: the pieces so far go out; the handler goes on once they
   left [out] (within the client's window). *)
let queue_piece x =
  let h2c = (session x).h2c in
  x.after <- Then_resume;
  if x.out_len > x.out_sent && not x.broken then
    match C.send_data h2c ~stream:x.stream x.out ~off:x.out_sent ~len:(x.out_len - x.out_sent) ~end_stream:false with
    | Queued | No_space -> ()
    | Stream_closed -> x.broken <- true
