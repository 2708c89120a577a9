(* How a response goes out on an HTTP/2 stream: the protocol of an
   exchange's Ctx (see the .mli), and the queueing of its body as DATA. *)

open Httpz
open Slot
module C = H2_connection

let session x = match x.h2 with Some s -> s | None -> invalid_arg "H2_exchange: not an HTTP/2 exchange"

(* {1 The response head} [out] holds the handler's fields already
   HPACK-encoded, written there as Ctx gives them: literals without
   indexing, never Huffman-coded, which depend on no table and change
   none, so they are right whenever the head is sent, on whatever state
   the connection's encoder is in by then (a handler may wait between
   Ctx.start and the end of its head while other streams answer). Only
   what touches the dynamic table is left to [end_head]: Date, the
   server's own fields and the handler's prepared sets, through the
   connection's {!Hpack_mirror}. *)

let begin_head x _status =
  x.out_len <- 0;
  x.nsets <- 0

(* [need] more bytes at [out_len]: an exchange's head starts in a small
   buffer, enlarged as a field needs; past a full one, No_space with
   nothing written. *)
let room x need =
  if need > x.out_limit - x.out_len then begin
    if small_out x then grow_out x (x.out_len + need);
    if need > x.out_limit - x.out_len then raise_notrace Response.No_space
  end

(* An HPACK integer (RFC 7541 §5.1) whose first byte's other bits are 0
   (a literal without indexing, a raw string's length). *)
let put_int b o ~prefix v =
  let mask = (1 lsl prefix) - 1 in
  if v < mask then begin
    Bigstring.unsafe_set b o (Char.unsafe_chr v);
    o + 1
  end
  else begin
    Bigstring.unsafe_set b o (Char.unsafe_chr mask);
    let o = ref (o + 1) and v = ref (v - mask) in
    while !v >= 128 do
      Bigstring.unsafe_set b !o (Char.unsafe_chr (0x80 lor (!v land 0x7f)));
      incr o;
      v := !v lsr 7
    done;
    Bigstring.unsafe_set b !o (Char.unsafe_chr !v);
    !o + 1
  end

(* The bytes of a length or index: at most 5 for what fits a buffer. *)
let int_room = 5

let[@inline] lower ch = if ch >= 'A' && ch <= 'Z' then Char.unsafe_chr (Char.code ch + 32) else ch

(* A literal name, lower-cased (RFC 9113 §8.2.1). *)
let put_name b o name =
  let n = String.length name in
  Bigstring.unsafe_set b o '\000';
  let o = put_int b (o + 1) ~prefix:7 n in
  for i = 0 to n - 1 do
    Bigstring.unsafe_set b (o + i) (lower (String.unsafe_get name i))
  done;
  o + n

(* The name of a literal without indexing: the static table's index,
   else the name itself. *)
let name_part b o name =
  let sidx = Hpack_static.index_of_name name in
  if sidx > 0 then put_int b o ~prefix:4 sidx else put_name b o (Header_name.to_string name)

let[@inline] name_room name = String.length (Header_name.to_string name) + 1 + int_room

(* Fields HTTP/2 forbids in a response (RFC 9113 §8.2.2): checked as
   any field, then left out. *)
let connection_specific = function
  | Header_name.Connection | Keep_alive | Transfer_encoding | Upgrade -> true
  | _ -> false

let equal_lower name l =
  let r = ref true in
  for i = 0 to String.length l - 1 do
    if lower (String.unsafe_get name i) <> String.unsafe_get l i then r := false
  done;
  !r

(* The same, for a name given as a string (Proxy-Connection has no
   Header_name). *)
let connection_specific_s name =
  match String.length name with
  | 7 -> equal_lower name "upgrade"
  | 10 -> equal_lower name "connection" || equal_lower name "keep-alive"
  | 16 -> equal_lower name "proxy-connection"
  | 17 -> equal_lower name "transfer-encoding"
  | _ -> false

let known name = match name with Header_name.Other -> raise_notrace Response.Invalid_field | _ -> ()

(* Starts a field of a known name whose value takes [vlen] bytes: the
   offset where the value goes. *)
let start_field x name vlen =
  room x (name_room name + int_room + vlen);
  put_int x.out (name_part x.out x.out_len name) ~prefix:7 vlen

let field x name v =
  known name;
  if not (Response.is_field_value v) then raise_notrace Response.Invalid_field;
  if not (connection_specific name) then begin
    let len = String.length v in
    let o = start_field x name len in
    Bigstring.unsafe_blit_from_string v ~src_off:0 x.out ~dst_off:o ~len;
    x.out_len <- o + len
  end

let field_s x name v =
  if not (Response.is_token name && Response.is_field_value v) then raise_notrace Response.Invalid_field;
  if not (connection_specific_s name) then begin
    let len = String.length v in
    room x (String.length name + 1 + (2 * int_room) + len);
    let o = put_int x.out (put_name x.out x.out_len name) ~prefix:7 len in
    Bigstring.unsafe_blit_from_string v ~src_off:0 x.out ~dst_off:o ~len;
    x.out_len <- o + len
  end

let decimal_digits n =
  let d = ref 1 and n = ref n in
  while !n >= 10 do
    n := !n / 10;
    incr d
  done;
  !d

let field_int x name n =
  known name;
  if n < 0 then raise_notrace Response.Invalid_field;
  if not (connection_specific name) then begin
    let digits = decimal_digits n in
    let o = start_field x name digits in
    let n = ref n in
    for i = o + digits - 1 downto o do
      Bigstring.unsafe_set x.out i (Char.unsafe_chr (48 + (!n mod 10)));
      n := !n / 10
    done;
    x.out_len <- o + digits
  end

let date_field x name t =
  known name;
  if t < Date.min_time || t > Date.max_time then raise_notrace Response.Invalid_field;
  if connection_specific name then -1 else start_field x name Date.imf_fixdate_length

let field_date x name t =
  let o = date_field x name t in
  if o >= 0 then x.out_len <- Date.write_imf_fixdate x.out ~off:o t

let field_date_cached x name cache t =
  let o = date_field x name t in
  if o >= 0 then x.out_len <- Date.Cache.write cache x.out ~off:o ~now:t

(* As Response checks a value from a buffer: no OWS at either end, no
   control byte but HTAB. *)
let is_field_value_b b off n =
  n = 0
  || (not (Charset.is_ows (Bigstring.unsafe_get b off)))
     && (not (Charset.is_ows (Bigstring.unsafe_get b (off + n - 1))))
     &&
     let stop = off + n in
     let i = ref (Swar.skip_field_value b off stop) in
     while !i < stop && Bigstring.unsafe_get b !i = '\t' do
       i := Swar.skip_field_value b (!i + 1) stop
     done;
     !i = stop

let field_span x name src s =
  known name;
  let so = Span.off s and len = Span.len s in
  if so < 0 || len < 0 || so > Bigstring.length src - len then invalid_arg "Response.header_span";
  if not (is_field_value_b src so len) then raise_notrace Response.Invalid_field;
  if not (connection_specific name) then begin
    let o = start_field x name len in
    Bigstring.blit ~src ~src_off:so ~dst:x.out ~dst_off:o ~len;
    x.out_len <- o + len
  end

(* A prepared set: its literals are copied (the set may change once
   Ctx.fields returns) and the set noted, so that [end_head] sends it
   through the connection's mirror while it is unchanged. *)
let fields x p =
  let len = Prepared_fields.hpack_length p in
  room x len;
  let start = x.out_len in
  Bigstring.blit ~src:(Prepared_fields.hpack p) ~src_off:0 ~dst:x.out ~dst_off:start ~len;
  x.out_len <- start + len;
  let i = x.nsets in
  if i = 0 && Array.length x.sets = 0 then begin
    (* The exchange's first set, once in its life (exchanges are pooled). *)
    x.sets <- Array.make 8 no_set;
    x.set_marks <- Array.make 24 0
  end;
  (* Past the room for notes, the literals stand alone. *)
  if i < Array.length x.sets then begin
    if Array.unsafe_get x.sets i != p then Array.unsafe_set x.sets i p;
    let m = x.set_marks in
    Array.unsafe_set m (3 * i) start;
    Array.unsafe_set m ((3 * i) + 1) (start + len);
    Array.unsafe_set m ((3 * i) + 2) (Prepared_fields.version p);
    x.nsets <- i + 1
  end

(* Date and the server's own fields of a listener (Server and the
   configured ones: [server_lines], "Name: value\r\n" text), as one
   prepared set: inserted into each connection's HPACK table once a
   second (Date changes), an index per field after that. The lines are
   split once (at a listener's first stream, and again when they change,
   on reload); the set is refilled from them once a second, which
   allocates nothing. *)
type head_set = {
  set : Prepared_fields.t;
  mutable second : int;  (** the Date in [set] *)
  lines : string;  (** the [server_lines] [set] was made from *)
  names : Header_name.t array;
  others : string array;  (** the name of an [Other] *)
  values : string array;
}

let no_head = { set = no_set; second = -1; lines = ""; names = [||]; others = [||]; values = [||] }
let head_sets = ref [||]

let split_lines lines =
  let fields =
    List.filter_map
      (fun line ->
        let line = if String.ends_with ~suffix:"\r" line then String.sub line 0 (String.length line - 1) else line in
        match String.index_opt line ':' with
        | Some i when i > 0 -> (
            let name = String.sub line 0 i
            and value = String.trim (String.sub line (i + 1) (String.length line - i - 1)) in
            match Header_name.of_string name with
            | Header_name.Other -> if connection_specific_s name then None else Some (Header_name.Other, name, value)
            | n -> if connection_specific n then None else Some (n, name, value))
        | _ -> None)
      (String.split_on_char '\n' lines)
  in
  let f = Array.of_list fields in
  { set = Prepared_fields.create_server ~capacity:(String.length lines + 64) ();
    second = -1; lines;
    names = Array.map (fun (n, _, _) -> n) f;
    others = Array.map (fun (_, o, _) -> o) f;
    values = Array.map (fun (_, _, v) -> v) f }

let refill h now =
  let p = h.set in
  Prepared_fields.clear p;
  Prepared_fields.add_date p Header_name.Date now;
  for i = 0 to Array.length h.names - 1 do
    match Array.unsafe_get h.names i with
    | Header_name.Other -> Prepared_fields.add_s p (Array.unsafe_get h.others i) (Array.unsafe_get h.values i)
    | n -> Prepared_fields.add p n (Array.unsafe_get h.values i)
  done;
  h.second <- now

let server_head x =
  let lines = x.sh.server_lines.(x.listener) and l = x.listener in
  if l >= Array.length !head_sets then begin
    let a = Array.make (max (l + 1) (Array.length x.sh.server_lines)) no_head in
    Array.blit !head_sets 0 a 0 (Array.length !head_sets);
    head_sets := a
  end;
  let h = Array.unsafe_get !head_sets l in
  let h =
    if h == no_head || h.lines != lines then begin
      let h = split_lines lines in
      !head_sets.(l) <- h;
      h
    end
    else h
  in
  if h.second <> x.sh.now then refill h x.sh.now;
  h.set

(* The handler's fields: the bytes of [out] as they are, but for the
   prepared sets still unchanged, which go through the mirror (a set
   changed since: its copied literals stand). *)
let handler_fields x h2c =
  let out = x.out and m = x.set_marks and pos = ref 0 in
  for i = 0 to x.nsets - 1 do
    let p = Array.unsafe_get x.sets i in
    if Prepared_fields.version p = Array.unsafe_get m ((3 * i) + 2) then begin
      let start = Array.unsafe_get m (3 * i) in
      if start > !pos then C.header_encoded h2c out ~off:!pos ~len:(start - !pos);
      C.header_prepared h2c p;
      pos := Array.unsafe_get m ((3 * i) + 1)
    end
  done;
  if x.out_len > !pos then C.header_encoded h2c out ~off:!pos ~len:(x.out_len - !pos)

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
  C.header_prepared h2c (server_head x);
  handler_fields x h2c;
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
let chunk x len =
  if x.out_len - x.out_sent + len > max_unflushed then invalid_arg unflushed;
  if x.out_len + len > Bigstring.length x.out then grow_out x (x.out_len + len)
let last_chunk _ = ()
let switch _ = invalid_arg "Ctx.upgrade: not over HTTP/2 (RFC 9113 §8.6 has no Upgrade)"
let protocol =
  { begin_head; field; field_s; field_int; field_date; field_date_cached; field_span; fields; end_head; chunk;
    last_chunk; switch }

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
