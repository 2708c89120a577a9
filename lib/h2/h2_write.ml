module B = Bigstring

exception No_space
exception Invalid_frame

let header_size = H2_frame.header_size
let max_length = 0xFF_FFFF
let max_stream_id = 0x7FFF_FFFF
let max_u32 = 0xFFFF_FFFF

(* Capacity checked once, up front: what makes each writer all or nothing.
   [need > length - off] cannot overflow where [off + need] could. *)
let[@inline] space buf off need =
  if off < 0 || need > B.length buf - off then raise_notrace No_space

let[@inline] require cond = if not cond then raise_notrace Invalid_frame

let[@inline] set_u8 buf i n = B.unsafe_set buf i (Char.unsafe_chr (n land 0xff))

let[@inline] set_u16 buf i n =
  set_u8 buf i (n lsr 8);
  set_u8 buf (i + 1) n

let[@inline] set_u24 buf i n =
  set_u8 buf i (n lsr 16);
  set_u16 buf (i + 1) n

let[@inline] set_u32 buf i n =
  set_u8 buf i (n lsr 24);
  set_u24 buf (i + 1) n

external bswap64 : int64 -> int64 = "%bswap_int64"

(* Fields already validated, space already checked. The first eight bytes
   (length, type, flags, the stream id's upper three bytes) as one
   big-endian word, then the id's low byte: two stores, not nine. *)
let[@inline] put_header buf off length type_code flags stream_id =
  let top = (length lsl 16) lor (type_code lsl 8) lor flags in
  let w = Int64.logor (Int64.shift_left (Int64.of_int top) 24) (Int64.of_int (stream_id lsr 8)) in
  B.unsafe_set64 buf off (if Sys.big_endian then w else bswap64 w);
  set_u8 buf (off + 8) stream_id

let[@inline] valid_stream s = s >= 0 && s <= max_stream_id
let[@inline] valid_length n = n >= 0 && n <= max_length

let frame_header buf ~off ~length ~type_code ~flags ~stream_id =
  require (valid_length length && valid_stream stream_id);
  require (type_code >= 0 && type_code <= 0xff && flags >= 0 && flags <= 0xff);
  space buf off header_size;
  put_header buf off length type_code flags stream_id;
  off + header_size

let[@inline] bit cond flag = if cond then flag else 0

(* A frame header on a stream (not 0), for the types that need one. *)
let stream_frame_header buf off length type_code flags stream_id =
  require (valid_length length && stream_id > 0 && stream_id <= max_stream_id);
  space buf off header_size;
  put_header buf off length type_code flags stream_id;
  off + header_size

let data_header buf ~off ~stream_id ~length ~end_stream =
  stream_frame_header buf off length 0x0 (bit end_stream H2_frame.flag_end_stream) stream_id

let headers_header buf ~off ~stream_id ~length ~end_stream ~end_headers =
  stream_frame_header buf off length 0x1
    (bit end_stream H2_frame.flag_end_stream lor bit end_headers H2_frame.flag_end_headers)
    stream_id

let[@inline] headers_header_unchecked buf ~off ~stream_id ~length ~end_stream =
  put_header buf off length 0x1 (bit end_stream H2_frame.flag_end_stream lor H2_frame.flag_end_headers) stream_id;
  off + header_size

let continuation_header buf ~off ~stream_id ~length ~end_headers =
  stream_frame_header buf off length 0x9 (bit end_headers H2_frame.flag_end_headers) stream_id

let settings buf ~off ~ids ~values =
  let n = Array.length ids in
  require (Array.length values = n && 6 * n <= max_length);
  for i = 0 to n - 1 do
    let id = Array.unsafe_get ids i and v = Array.unsafe_get values i in
    require (id >= 0 && id <= 0xffff && v >= 0 && v <= max_u32)
  done;
  space buf off (header_size + (6 * n));
  put_header buf off (6 * n) 0x4 0 0;
  for i = 0 to n - 1 do
    let e = off + header_size + (6 * i) in
    set_u16 buf e (Array.unsafe_get ids i);
    set_u32 buf (e + 2) (Array.unsafe_get values i)
  done;
  off + header_size + (6 * n)

let settings_ack buf ~off =
  space buf off header_size;
  put_header buf off 0 0x4 H2_frame.flag_ack 0;
  off + header_size

let ping buf ~off ~ack src ~src_off =
  B.check_range "Httpz.H2_write.ping" src ~off:src_off ~len:8;
  space buf off (header_size + 8);
  put_header buf off 8 0x6 (bit ack H2_frame.flag_ack) 0;
  B.unsafe_set64 buf (off + header_size) (B.unsafe_get64 src src_off);
  off + header_size + 8

let ping_int buf ~off ~ack n =
  space buf off (header_size + 8);
  put_header buf off 8 0x6 (bit ack H2_frame.flag_ack) 0;
  set_u32 buf (off + header_size) (n asr 32);
  set_u32 buf (off + header_size + 4) n;
  off + header_size + 8

let goaway buf ~off ~last_stream_id ~code ~debug =
  let dlen = String.length debug in
  require (valid_stream last_stream_id && 8 + dlen <= max_length);
  space buf off (header_size + 8 + dlen);
  put_header buf off (8 + dlen) 0x7 0 0;
  set_u32 buf (off + header_size) last_stream_id;
  set_u32 buf (off + header_size + 4) (H2_error.to_int code);
  B.unsafe_blit_from_string debug ~src_off:0 buf ~dst_off:(off + header_size + 8) ~len:dlen;
  off + header_size + 8 + dlen

let rst_stream buf ~off ~stream_id ~code =
  require (stream_id > 0 && stream_id <= max_stream_id);
  space buf off (header_size + 4);
  put_header buf off 4 0x3 0 stream_id;
  set_u32 buf (off + header_size) (H2_error.to_int code);
  off + header_size + 4

(* One check covers header and payload, so the frame is all or nothing. *)
let window_update buf ~off ~stream_id ~increment =
  require (valid_stream stream_id && increment >= 1 && increment <= max_stream_id);
  space buf off (header_size + 4);
  put_header buf off 4 0x8 0 stream_id;
  set_u32 buf (off + header_size) increment;
  off + header_size + 4

let priority buf ~off ~stream_id ~exclusive ~dependency ~weight =
  require (valid_stream dependency && weight >= 1 && weight <= 256);
  require (stream_id > 0 && stream_id <= max_stream_id);
  space buf off (header_size + 5);
  put_header buf off 5 0x2 0 stream_id;
  set_u32 buf (off + header_size) (dependency lor bit exclusive 0x8000_0000);
  set_u8 buf (off + header_size + 4) (weight - 1);
  off + header_size + 5

let priority_update buf ~off ~prioritized_stream_id value =
  let vlen = String.length value in
  require (prioritized_stream_id > 0 && prioritized_stream_id <= max_stream_id);
  require (4 + vlen <= max_length);
  space buf off (header_size + 4 + vlen);
  put_header buf off (4 + vlen) 0x10 0 0;
  set_u32 buf (off + header_size) prioritized_stream_id;
  B.unsafe_blit_from_string value ~src_off:0 buf ~dst_off:(off + header_size + 4) ~len:vlen;
  off + header_size + 4 + vlen
