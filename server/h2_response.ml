(* How a response goes out on an HTTP/2 stream: the protocol of an
   exchange's Ctx (see the .mli), and the queueing of its body as DATA. *)

open Httpz
open Slot
module C = H2_connection

let session x = match x.h2 with Some s -> s | None -> invalid_arg "H2_exchange: not an HTTP/2 exchange"

(* {1 The response head} Date and the server's own fields are not
   written as text: [end_head] adds them already encoded. [out] holds
   only the handler's fields, most of them noted by Ctx as it wrote them
   ([field_names]); the lines between are read back as text. *)

let begin_head x _status =
  x.out_len <- 0;
  x.nfields <- 0

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

(* The lines [src\[pos, stop)] ("Name: value\r\n") as fields, but for
   the connection-specific ones. *)
let text_fields ~known ~other target src ~pos ~stop =
  let pos = ref pos in
  while !pos < stop do
    let line = !pos in
    let eol = ref line in
    while !eol < stop - 1 && not (Bigstring.unsafe_get src !eol = '\r' && Bigstring.unsafe_get src (!eol + 1) = '\n') do
      incr eol
    done;
    if !eol >= stop - 1 then eol := stop;
    let colon = ref line in
    while !colon < !eol && Bigstring.unsafe_get src !colon <> ':' do
      incr colon
    done;
    if !colon < !eol && !colon > line then begin
      let v = ref (!colon + 1) and e = ref !eol in
      while !v < !e && is_space (Bigstring.unsafe_get src !v) do incr v done;
      while !e > !v && is_space (Bigstring.unsafe_get src (!e - 1)) do decr e done;
      let nlen = !colon - line in
      let name = Header_name.of_buffer src ~off:line ~len:nlen in
      if not (connection_specific src ~off:line ~len:nlen name) then
        match name with
        | Header_name.Other -> other target (lower_name src ~off:line ~len:nlen) src (Span.make ~off:!v ~len:(!e - !v))
        | n -> known target n src (Span.make ~off:!v ~len:(!e - !v))
    end;
    pos := !eol + 2
  done

(* The server's own fields of a listener (Server and the configured
   ones: [server_lines]), as a prepared set: inserted into each
   connection's HPACK table once, an index or two after that. *)
let server_sets = ref [||]
let server_sets_for = ref [||]

let prepare_lines lines =
  let src = Bigstring.of_string lines in
  let p = Prepared_fields.create_server ~capacity:(String.length lines + 64) () in
  text_fields p src ~pos:0 ~stop:(String.length lines)
    ~known:(fun p n src s -> Prepared_fields.add_bytes p n src ~off:(Span.off s) ~len:(Span.len s))
    ~other:(fun p n src s -> Prepared_fields.add_s p n (Span.to_string src s));
  p

let server_fields x =
  let lines = x.sh.server_lines.(x.listener) and l = x.listener in
  if l >= Array.length !server_sets_for then begin
    let n = max (l + 1) (Array.length x.sh.server_lines) in
    let f = Array.make n "" and e = Array.make n Slot.no_set in
    Array.blit !server_sets_for 0 f 0 (Array.length !server_sets_for);
    Array.blit !server_sets 0 e 0 (Array.length !server_sets);
    server_sets_for := f;
    server_sets := e
  end;
  if !server_sets_for.(l) != lines then begin
    !server_sets.(l) <- prepare_lines lines;
    !server_sets_for.(l) <- lines
  end;
  !server_sets.(l)

(* Date, a set of its own: made again once a second, inserted into each
   connection's table then. *)
let date_set = Prepared_fields.create_server ~capacity:64 ()
let date_second = ref (-1)

let date x =
  if !date_second <> x.sh.now then begin
    Prepared_fields.clear date_set;
    Prepared_fields.add_date date_set Header_name.Date x.sh.now;
    date_second := x.sh.now
  end;
  date_set

let text_fields_h2 h2c src ~pos ~stop =
  text_fields ~known:C.header_span ~other:C.header_s_span h2c src ~pos ~stop

(* The head's fields in [out]: the lines Ctx noted, encoded from where
   they are (those noted [Other] are a Prepared_fields set, encoded
   already); what lies between them as text. *)
let encode_fields x h2c =
  let out = x.out and pos = ref 0 in
  for i = 0 to x.nfields - 1 do
    let start = Array.unsafe_get x.field_lines (2 * i) and stop = Array.unsafe_get x.field_lines ((2 * i) + 1) in
    if start > !pos then text_fields_h2 h2c out ~pos:!pos ~stop:start;
    let name = Array.unsafe_get x.field_names i in
    (match name with
     | Header_name.Connection | Keep_alive | Transfer_encoding | Upgrade -> ()
     | Other ->
         let p = Array.unsafe_get x.field_sets i in
         if Prepared_fields.version p = Array.unsafe_get x.field_versions i then C.header_prepared h2c p
         else C.header_encoded h2c out ~off:start ~len:(stop - start)
     | _ ->
         let voff = start + String.length (Header_name.to_string name) + 2 in
         C.header_checked h2c name out ~off:voff ~len:(stop - 2 - voff));
    pos := stop
  done;
  if x.out_len > !pos then text_fields_h2 h2c out ~pos:!pos ~stop:x.out_len

(* Content-Length, encoded (a literal with the static name), for the
   length met last: a file answered again has the same. *)
let length_field = Bigstring.create 24
let length_field_len = ref 0
let length_value = ref (-1)

let length_encoder = Hpack_encoder.create ~huffman:false ()

let header_content_length h2c n =
  if n <> !length_value then begin
    length_field_len := Hpack_encoder.field_int length_encoder length_field ~off:0 Header_name.Content_length n;
    length_value := n
  end;
  C.header_encoded h2c length_field ~off:0 ~len:!length_field_len

let end_head x ~content_length ~chunked =
  let h2c = (session x).h2c in
  C.start_response h2c ~stream:x.h2s.stream ~status:(Status.code x.status);
  C.header_prepared h2c (date x);
  C.header_prepared h2c (server_fields x);
  encode_fields x h2c;
  if (not x.no_content) && (not chunked) && content_length >= 0 then
    header_content_length h2c content_length;
  let end_stream = x.suppress || ((not chunked) && content_length = 0) in
  (match C.send_headers h2c ~end_stream with
   | Queued -> x.h2s.fin_queued <- end_stream
   | Stream_closed | No_space ->
       (* Reset by the client meanwhile (or a queue the client does not
          drain): nothing more goes out for this stream. *)
       x.broken <- true;
       x.h2s.fin_queued <- true);
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
  | Queued -> x.h2s.fin_queued <- true
  | Stream_closed ->
      x.broken <- true;
      x.h2s.fin_queued <- true
  | No_space -> () (* an earlier piece is pending: tried again when it left *)

(* The response is complete: what is left of it is queued, ending the
   stream. *)
let queue_rest x =
  if not x.h2s.fin_queued then begin
    let h2c = (session x).h2c and stream = x.h2s.stream in
    (* Once nothing queued refers to [out] (the head was copied into the
       connection's queue; the body is elsewhere), it goes back to the
       pool at once rather than when the stream ends: thousands of
       streams in flight need not hold one each. *)
    if C.body_pending h2c ~stream = 0 then
      if x.suppress || x.broken then begin
        submitted x (C.send_data h2c ~stream x.sh.empty ~off:0 ~len:0 ~end_stream:true);
        give_out x
      end
      else begin
        keep_body x;
        match x.ext with
        | Ext_file when x.ext_len > 0 ->
            submitted x (C.send_data_external h2c ~stream ~offset:x.ext_off ~len:x.ext_len ~end_stream:true);
            give_out x
        | Ext_bigstring when x.ext_len > 0 ->
            (* Stable: [keep_body] copied any other. *)
            submitted x (C.send_data_stable h2c ~stream x.ext_bs ~off:x.ext_off ~len:x.ext_len ~end_stream:true);
            give_out x
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
    match C.send_data h2c ~stream:x.h2s.stream x.out ~off:x.out_sent ~len:(x.out_len - x.out_sent) ~end_stream:false with
    | Queued | No_space -> ()
    | Stream_closed -> x.broken <- true
