let normal = 1000
let going_away = 1001
let protocol_error = 1002
let unsupported_data = 1003
let no_status = 1005
let abnormal = 1006
let invalid_payload = 1007
let policy_violation = 1008
let message_too_big = 1009
let mandatory_extension = 1010
let internal_error = 1011

let is_valid_code c =
  (c >= 1000 && c <= 1003) || (c >= 1007 && c <= 1014) || (c >= 3000 && c <= 4999)

type check = Valid | Bad_length | Bad_code | Bad_reason

let code buf ~off ~len =
  if len < 2 then no_status
  else (Char.code (Bigstring.unsafe_get buf off) lsl 8) lor Char.code (Bigstring.unsafe_get buf (off + 1))

let check buf ~off ~len =
  if len = 0 then Valid
  else if len = 1 then Bad_length
  else if not (is_valid_code (code buf ~off ~len)) then Bad_code
  else if Utf8.is_complete (Utf8.feed Utf8.accept buf ~off:(off + 2) ~len:(len - 2)) then Valid
  else Bad_reason

let check_close_code = function
  | Valid -> normal
  | Bad_length | Bad_code -> protocol_error
  | Bad_reason -> invalid_payload

let max_reason = Ws_frame.max_control_payload - 2

let write buf ~off ~code ~reason =
  let rlen = String.length reason in
  if code = no_status then begin
    if rlen <> 0 then invalid_arg "Httpz.Ws_close.write";
    Ws_frame.write_header buf ~off ~fin:true ~rsv1:false Close ~len:0
  end
  else begin
    if not (is_valid_code code) || rlen > max_reason then invalid_arg "Httpz.Ws_close.write";
    let len = 2 + rlen in
    Bigstring.check_range "Httpz.Ws_close.write" buf ~off ~len:(2 + len);
    let p = off + 2 in
    (* the reason is checked where it lands, before the header makes it a frame *)
    Bigstring.unsafe_blit_from_string reason ~src_off:0 buf ~dst_off:(p + 2) ~len:rlen;
    if not (Utf8.is_complete (Utf8.feed Utf8.accept buf ~off:(p + 2) ~len:rlen)) then
      invalid_arg "Httpz.Ws_close.write";
    ignore (Ws_frame.write_header buf ~off ~fin:true ~rsv1:false Close ~len : int);
    Bigstring.unsafe_set buf p (Char.unsafe_chr (code lsr 8));
    Bigstring.unsafe_set buf (p + 1) (Char.unsafe_chr (code land 0xFF));
    p + len
  end
