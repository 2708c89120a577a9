(* How an HTTP/1.1 response goes on the wire: the head's first lines, its
   framing fields (Content-Length or chunked, Connection), chunk framing,
   and the 101 hand-over. Ctx calls these through the slot's [proto] and
   knows no protocol; nothing here allocates, except [grow_out] when a
   chunked body outruns the buffer. Nothing here does I/O. *)

open Httpz
open Slot

let begin_head c status =
  let out = c.out in
  let pos = Response.status_line out ~off:0 Version.Http_1_1 status in
  let pos = Response.date out ~off:pos c.sh.date ~now:c.sh.now in
  c.out_len <- Response.write_string out ~off:pos c.sh.server_lines.(c.listener)

(* {1 The handler's fields} Text lines, by Response's writers (which
   check them). A line may run past [out_limit] into the reserve; it is
   then dropped (the position does not move) and the caller told
   No_space. *)

let[@inline] commit c pos =
  if pos > c.out_limit then raise_notrace Response.No_space;
  c.out_len <- pos

let field c name v = commit c (Response.header c.out ~off:c.out_len name v)
let field_s c name v = commit c (Response.header_s c.out ~off:c.out_len name v)
let field_int c name v = commit c (Response.header_int c.out ~off:c.out_len name v)
let field_date c name v = commit c (Response.header_date c.out ~off:c.out_len name v)

let field_date_cached c name cache v =
  commit c (Response.header_date_cached c.out ~off:c.out_len name cache v)

let field_span c name src s = commit c (Response.header_span c.out ~off:c.out_len name src s)

let fields c p =
  let len = Prepared_fields.text_length p and start = c.out_len in
  if len > c.out_limit - start then raise_notrace Response.No_space;
  Bigstring.blit ~src:(Prepared_fields.text p) ~src_off:0 ~dst:c.out ~dst_off:start ~len;
  c.out_len <- start + len

let connection_close = "Connection: close\r\n"
let connection_keep_alive = "Connection: keep-alive\r\n"
let transfer_chunked = "Transfer-Encoding: chunked\r\n"

(* The connection stays open after this response only if nothing forbids
   it: a body the handler did not ask for is not read, so the connection
   closes after this response instead (and lingers to drain it). Its last
   request by [keepalive_requests], and any while draining, close it too
   ([last_request]: one comparison for both). *)
let closes_after c =
  c.close || c.served >= c.sh.last_request
  || (match c.body with
      | Body_unread | Body_wanted | Body_streaming -> true
      | No_body | Body_ready | Body_streamed -> false)
  || not (Request.keep_alive (Slot.req c))

(* The server's own fields and the end of the head, into the reserve. *)
let end_head c ~content_length ~chunked =
  (* HTTP/1.0 has no chunked coding (RFC 9112 §7.1): the body is delimited
     by closing the connection instead. *)
  if chunked && Request.version (Slot.req c) = Version.Http_1_0 && not c.suppress then begin
    c.raw <- true;
    c.close <- true
  end;
  let out = c.out in
  let pos = ref c.out_len in
  if not c.no_content then begin
    if chunked && not c.raw then pos := Response.write_string out ~off:!pos transfer_chunked
    else if content_length >= 0 then
      pos := Response.header_int out ~off:!pos Header_name.Content_length content_length
  end;
  if closes_after c then begin
    c.close <- true;
    pos := Response.write_string out ~off:!pos connection_close
  end
  else if Request.version (Slot.req c) = Version.Http_1_0 then
    pos := Response.write_string out ~off:!pos connection_keep_alive;
  c.out_len <- Response.end_head out ~off:!pos

(* A streamed body's bytes wait in [out] until the handler returns or
   calls Ctx.flush: nothing is written while it runs (the backend writes
   what the protocol describes, after it). This many bytes at most may
   wait so: one handler call cannot make its connection hold more. *)
let max_unflushed = Slot.max_unflushed
let unflushed = Slot.unflushed

(* Make room for [n] more bytes at [out_len]: [out] grows, up to
   [max_unflushed] (beyond, the handler fails: a 500 when nothing of the
   response left yet, which is so unless it flushed before). *)
let room c n =
  if c.out_len + n > Bigstring.length c.out then begin
    compact_out c;
    if c.out_len + n > Bigstring.length c.out then begin
      (* [out] grows by doubling: the bound is on what waits, not on its
         capacity. *)
      if c.out_len - c.out_sent + n > max_unflushed then invalid_arg unflushed;
      grow_out c (c.out_len + n)
    end
  end

(* The CRLF + "0" CRLF CRLF that [last_chunk] may need. *)
let tail_room = 7

let chunk c len =
  if c.raw then room c len
  else begin
    room c (Response.max_chunk_header_length + len + tail_room);
    c.out_len <-
      (if c.chunks = 0 then Response.chunk_header c.out ~off:c.out_len len
       else Response.chunk_header_after_data c.out ~off:c.out_len len)
  end

let last_chunk c =
  if (not c.suppress) && (not c.raw) && not c.broken then begin
    room c tail_room;
    c.out_len <-
      (if c.chunks = 0 then Response.last_chunk c.out ~off:c.out_len
       else Response.last_chunk_after_data c.out ~off:c.out_len)
  end

let switch c =
  (* OpenSSL owns a TLS connection's bytes: the socket cannot be handed
     over. *)
  if c.tls <> No_tls then invalid_arg "Ctx.upgrade: not on a TLS connection";
  (* Not end_head: a 101 carries no framing and no Connection: close. *)
  let pos = Response.header c.out ~off:c.out_len Header_name.Connection "Upgrade" in
  c.out_len <- Response.end_head c.out ~off:pos;
  c.after <- Then_detach

let protocol =
  { begin_head; field; field_s; field_int; field_date; field_date_cached; field_span; fields; end_head; chunk;
    last_chunk; switch }
