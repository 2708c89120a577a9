type role = Server | Client

type error =
  | Unmasked_frame
  | Masked_frame
  | Reserved_bits
  | Reserved_opcode
  | Control_too_long
  | Control_fragmented
  | Unexpected_continuation
  | Expected_continuation
  | Non_minimal_length
  | Length_top_bit
  | Message_too_big
  | Invalid_utf8
  | Bad_close_length
  | Bad_close_code
  | Bad_close_reason

let error_close_code = function
  | Message_too_big -> Ws_close.message_too_big
  | Invalid_utf8 | Bad_close_reason -> Ws_close.invalid_payload
  | Unmasked_frame | Masked_frame | Reserved_bits | Reserved_opcode | Control_too_long
  | Control_fragmented | Unexpected_continuation | Expected_continuation | Non_minimal_length
  | Length_top_bit | Bad_close_length | Bad_close_code -> Ws_close.protocol_error

let error_to_string = function
  | Unmasked_frame -> "unmasked_frame"
  | Masked_frame -> "masked_frame"
  | Reserved_bits -> "reserved_bits"
  | Reserved_opcode -> "reserved_opcode"
  | Control_too_long -> "control_too_long"
  | Control_fragmented -> "control_fragmented"
  | Unexpected_continuation -> "unexpected_continuation"
  | Expected_continuation -> "expected_continuation"
  | Non_minimal_length -> "non_minimal_length"
  | Length_top_bit -> "length_top_bit"
  | Message_too_big -> "message_too_big"
  | Invalid_utf8 -> "invalid_utf8"
  | Bad_close_length -> "bad_close_length"
  | Bad_close_code -> "bad_close_code"
  | Bad_close_reason -> "bad_close_reason"

type status = Data | Message_end | Control | Need_more | Closed | Error

type phase =
  | Header  (** [hpos] bytes of a frame header read *)
  | Payload  (** in a data frame's payload, [remaining] bytes left *)
  | Control_payload  (** in a control frame's payload *)
  | Message_done  (** the last payload of a message was delivered: [Message_end] is due *)
  | Finished  (** a Close was reported *)
  | Failed

type t = {
  role : role;
  mutable deflate : bool;
  mutable max_message : int;
  mutable phase : phase;
  (* the frame *)
  mutable hpos : int;
  mutable hlen : int;  (** header length, known from its second byte *)
  mutable ext : int;  (** extended length bytes: 0, 2 or 8 *)
  mutable fin : bool;
  mutable rsv1 : bool;
  mutable opcode : int;
  mutable masked : bool;
  mutable key : int;
  mutable frame_len : int;
  mutable remaining : int;
  mutable frame_pos : int;  (** payload bytes of the frame read: the key phase *)
  (* the message *)
  mutable in_progress : bool;
  mutable msg_opcode : Ws_frame.opcode;
  mutable msg_declared : int;  (** sum of its frames' lengths, for the limit *)
  mutable msg_bytes : int;
  mutable compressed : bool;
  mutable check_utf8 : bool;
  mutable utf8 : int;
  (* a control frame *)
  control : Bigstring.t;
  mutable control_op : Ws_frame.opcode;
  mutable control_len : int;
  mutable close_code : int;
  (* the last call *)
  mutable consumed : int;
  mutable data_off : int;
  mutable data_len : int;
  mutable err : error;
}

let default_max_message = 16 lsl 20

let reset_header t = t.hpos <- 0; t.hlen <- 2; t.ext <- 0; t.frame_len <- 0; t.key <- 0

let reset t =
  t.phase <- Header; reset_header t;
  t.fin <- false; t.rsv1 <- false; t.opcode <- 0; t.masked <- false; t.remaining <- 0;
  t.frame_pos <- 0; t.in_progress <- false; t.msg_opcode <- Binary; t.msg_declared <- 0;
  t.msg_bytes <- 0; t.compressed <- false; t.check_utf8 <- false; t.utf8 <- Utf8.accept;
  t.control_op <- Close; t.control_len <- 0; t.close_code <- Ws_close.no_status;
  t.consumed <- 0; t.data_off <- 0; t.data_len <- 0

let create ?(role = Server) ?(deflate = false) ?(max_message = default_max_message) () =
  if max_message < 0 then invalid_arg "Httpz.Ws_reader.create";
  let t =
    { role; deflate; max_message; phase = Header; hpos = 0; hlen = 2; ext = 0; fin = false;
      rsv1 = false; opcode = 0; masked = false; key = 0; frame_len = 0; remaining = 0;
      frame_pos = 0; in_progress = false; msg_opcode = Binary; msg_declared = 0;
      msg_bytes = 0; compressed = false; check_utf8 = false; utf8 = Utf8.accept;
      control = Bigstring.create Ws_frame.max_control_payload; control_op = Close;
      control_len = 0; close_code = Ws_close.no_status; consumed = 0; data_off = 0;
      data_len = 0; err = Reserved_bits }
  in
  reset t; t

let set_deflate t on = t.deflate <- on
let set_max_message t n = t.max_message <- (if n < 0 then max_int else n)

let consumed t = t.consumed
let data_off t = t.data_off
let data_len t = t.data_len
let message_opcode t = t.msg_opcode
let message_bytes t = t.msg_bytes
let message_compressed t = t.compressed
let frame_fin t = t.fin
let control_opcode t = t.control_op
let control_buffer t = t.control
let control_length t = t.control_len
let close_code t = t.close_code
let close_reason_length t = if t.control_len >= 2 then t.control_len - 2 else 0
let error t = t.err

(* [header_byte] answers for one byte: consumed ([k_next]), consumed and
   the header is complete ([k_done]), or refused ([k_error]). *)
let k_next = 0
let k_done = 1
let k_error = 2

let fail t e = t.err <- e; t.phase <- Failed; k_error

let[@inline] is_control_op op = op >= 8

(* The first byte: FIN, RSV, opcode, and what they imply for the message. *)
let first_byte t b =
  let op = b land 0x0F in
  t.fin <- b land 0x80 <> 0;
  t.rsv1 <- b land 0x40 <> 0;
  t.opcode <- op;
  if b land 0x30 <> 0 then fail t Reserved_bits
  else if not (Ws_frame.is_known_opcode op) then fail t Reserved_opcode
  (* RFC 7692 §6: RSV1 marks a compressed message, on its first frame only. *)
  else if t.rsv1 && ((not t.deflate) || op = 0 || is_control_op op) then fail t Reserved_bits
  else if is_control_op op then (if t.fin then k_next else fail t Control_fragmented)
  else if op = 0 then (if t.in_progress then k_next else fail t Unexpected_continuation)
  else if t.in_progress then fail t Expected_continuation
  else k_next

let length_known t =
  let len = t.frame_len in
  if (t.ext = 2 && len < 126) || (t.ext = 8 && len < 0x10000) then fail t Non_minimal_length
  else if (not (is_control_op t.opcode))
          && len > t.max_message - (if t.opcode = 0 then t.msg_declared else 0)
  then fail t Message_too_big
  else if t.hpos + 1 = t.hlen then k_done
  else k_next

let header_byte t b =
  let pos = t.hpos in
  let k =
    if pos = 0 then first_byte t b
    else if pos = 1 then begin
      t.masked <- b land 0x80 <> 0;
      let l7 = b land 0x7F in
      if t.masked && t.role == Client then fail t Masked_frame
      else if (not t.masked) && t.role == Server then fail t Unmasked_frame
      else if is_control_op t.opcode && l7 > Ws_frame.max_control_payload then
        fail t Control_too_long
      else begin
        t.ext <- (if l7 = 126 then 2 else if l7 = 127 then 8 else 0);
        t.hlen <- 2 + t.ext + (if t.masked then 4 else 0);
        if t.ext = 0 then begin t.frame_len <- l7; length_known t end else k_next
      end
    end
    else if pos < 2 + t.ext then begin
      if pos = 2 && t.ext = 8 && b >= 0x80 then fail t Length_top_bit
      (* 2^62 or more: beyond any limit an OCaml int can state *)
      else if pos = 2 && t.ext = 8 && b >= 0x40 then fail t Message_too_big
      else begin
        t.frame_len <- (t.frame_len lsl 8) lor b;
        if pos = 1 + t.ext then length_known t else k_next
      end
    end
    else begin
      t.key <- (t.key lsl 8) lor b;
      if pos + 1 = t.hlen then k_done else k_next
    end
  in
  if k <> k_error then t.hpos <- pos + 1;
  k

(* What [read] reports, as ints so the loop tests them with one compare. *)
let r_none = 0
let r_data = 1
let r_message_end = 2
let r_control = 3
let r_error = 4

(* The end of a message (a FIN frame's last byte, at [at]): a text
   message must not stop inside a character. *)
let end_message t =
  t.in_progress <- false;
  if t.check_utf8 && not (Utf8.is_complete t.utf8) then begin
    ignore (fail t Invalid_utf8 : int); r_error
  end
  else r_none

let control_complete t =
  let op = t.control_op in
  if op == Ws_frame.Close then begin
    match Ws_close.check t.control ~off:0 ~len:t.control_len with
    | Valid ->
        t.close_code <- Ws_close.code t.control ~off:0 ~len:t.control_len;
        t.phase <- Finished; r_control
    | Bad_length -> ignore (fail t Bad_close_length : int); r_error
    | Bad_code -> ignore (fail t Bad_close_code : int); r_error
    | Bad_reason -> ignore (fail t Bad_close_reason : int); r_error
  end
  else begin t.phase <- Header; reset_header t; r_control end

(* A complete header: set up the payload, or report an empty frame. *)
let header_done t =
  let len = t.frame_len in
  t.remaining <- len;
  t.frame_pos <- 0;
  if is_control_op t.opcode then begin
    t.control_op <- Ws_frame.opcode_of_int t.opcode;
    t.control_len <- len;
    if len = 0 then control_complete t else begin t.phase <- Control_payload; r_none end
  end
  else begin
    if t.opcode <> 0 then begin
      t.in_progress <- true;
      t.msg_opcode <- (if t.opcode = 1 then Ws_frame.Text else Ws_frame.Binary);
      t.msg_declared <- 0;
      t.msg_bytes <- 0;
      t.compressed <- t.rsv1;
      t.check_utf8 <- t.opcode = 1 && not t.rsv1;
      t.utf8 <- Utf8.accept
    end;
    t.msg_declared <- t.msg_declared + len;
    if len > 0 then begin t.phase <- Payload; r_none end
    else begin
      reset_header t;
      if t.fin then (let r = end_message t in if r = r_none then r_message_end else r)
      else r_none
    end
  end

let read t buf ~off ~len =
  Bigstring.check_range "Httpz.Ws_reader.read" buf ~off ~len;
  t.consumed <- 0;
  t.data_off <- off;
  t.data_len <- 0;
  match t.phase with
  | Failed -> Error
  | Finished -> Closed
  | Message_done -> t.phase <- Header; Message_end
  | Header | Payload | Control_payload ->
      let stop = off + len in
      let i = ref off and r = ref r_none in
      while !r = r_none && !i < stop do
        match t.phase with
        | Header ->
            let k = header_byte t (Char.code (Bigstring.unsafe_get buf !i)) in
            if k = k_error then r := r_error
            else begin
              incr i;
              if k = k_done then begin
                let h = header_done t in
                if h = r_error then decr i;
                r := h
              end
            end
        | Payload ->
            let n = if t.remaining < stop - !i then t.remaining else stop - !i in
            let p = !i in
            if t.masked then Ws_frame.unmask buf ~off:p ~len:n ~key:t.key ~phase:(t.frame_pos land 3);
            let last = n = t.remaining && t.fin in
            let bad =
              if t.check_utf8 then begin
                let st = Utf8.feed t.utf8 buf ~off:p ~len:n in
                if Utf8.is_rejected st then begin
                  i := Utf8.first_invalid t.utf8 buf ~off:p ~len:n; true
                end
                else begin
                  t.utf8 <- st;
                  if last && not (Utf8.is_complete st) then begin i := p + n - 1; true end
                  else false
                end
              end
              else false
            in
            if bad then begin ignore (fail t Invalid_utf8 : int); r := r_error end
            else begin
              t.data_off <- p;
              t.data_len <- n;
              t.remaining <- t.remaining - n;
              t.frame_pos <- t.frame_pos + n;
              t.msg_bytes <- t.msg_bytes + n;
              i := p + n;
              if t.remaining = 0 then begin
                reset_header t;
                if t.fin then begin t.in_progress <- false; t.phase <- Message_done end
                else t.phase <- Header
              end;
              r := r_data
            end
        | Control_payload ->
            let n = if t.remaining < stop - !i then t.remaining else stop - !i in
            let p = !i in
            let filled = t.control_len - t.remaining in
            if t.masked then Ws_frame.unmask buf ~off:p ~len:n ~key:t.key ~phase:(filled land 3);
            for j = 0 to n - 1 do
              Bigstring.unsafe_set t.control (filled + j) (Bigstring.unsafe_get buf (p + j))
            done;
            t.remaining <- t.remaining - n;
            i := p + n;
            if t.remaining = 0 then begin
              let c = control_complete t in
              if c = r_error then decr i;
              r := c
            end
        | Message_done | Finished | Failed -> assert false
      done;
      t.consumed <- !i - off;
      let r = !r in
      if r = r_none then Need_more
      else if r = r_data then Data
      else if r = r_message_end then Message_end
      else if r = r_control then Control
      else Error
