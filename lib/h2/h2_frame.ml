module B = Bigstring

type frame_type =
  | Data
  | Headers
  | Priority
  | Rst_stream
  | Settings
  | Push_promise
  | Ping
  | Goaway
  | Window_update
  | Continuation
  | Priority_update
  | Unknown

let frame_type_of_int = function
  | 0x0 -> Data
  | 0x1 -> Headers
  | 0x2 -> Priority
  | 0x3 -> Rst_stream
  | 0x4 -> Settings
  | 0x5 -> Push_promise
  | 0x6 -> Ping
  | 0x7 -> Goaway
  | 0x8 -> Window_update
  | 0x9 -> Continuation
  | 0x10 -> Priority_update
  | _ -> Unknown

let frame_type_to_int = function
  | Data -> 0x0
  | Headers -> 0x1
  | Priority -> 0x2
  | Rst_stream -> 0x3
  | Settings -> 0x4
  | Push_promise -> 0x5
  | Ping -> 0x6
  | Goaway -> 0x7
  | Window_update -> 0x8
  | Continuation -> 0x9
  | Priority_update -> 0x10
  | Unknown -> -1

let frame_type_to_string = function
  | Data -> "DATA"
  | Headers -> "HEADERS"
  | Priority -> "PRIORITY"
  | Rst_stream -> "RST_STREAM"
  | Settings -> "SETTINGS"
  | Push_promise -> "PUSH_PROMISE"
  | Ping -> "PING"
  | Goaway -> "GOAWAY"
  | Window_update -> "WINDOW_UPDATE"
  | Continuation -> "CONTINUATION"
  | Priority_update -> "PRIORITY_UPDATE"
  | Unknown -> "UNKNOWN"

let flag_end_stream = 0x1
let flag_ack = 0x1
let flag_end_headers = 0x4
let flag_padded = 0x8
let flag_priority = 0x20

let header_size = 9

(* {1 Integers} *)

let[@inline] byte b i = Char.code (B.unsafe_get b i)

external bswap64 : int64 -> int64 = "%bswap_int64"

(* Eight bytes from [i] as a big-endian word ([i + 8] within [b]). *)
let[@inline] be64 b i = if Sys.big_endian then B.unsafe_get64 b i else bswap64 (B.unsafe_get64 b i)
let[@inline] get_u16 b i = (byte b i lsl 8) lor byte b (i + 1)
let[@inline] get_u24 b i = (byte b i lsl 16) lor (byte b (i + 1) lsl 8) lor byte b (i + 2)
let[@inline] get_u32 b i = (byte b i lsl 24) lor get_u24 b (i + 1)
let[@inline] get_u31 b i = ((byte b i land 0x7f) lsl 24) lor get_u24 b (i + 1)

(* {1 Preface} *)

let preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

type preface_check = Preface | Not_preface | Need_more

let check_preface buf ~off ~len =
  B.check_range "Httpz.H2_frame.check_preface" buf ~off ~len;
  let n = if len < 24 then len else 24 in
  let i = ref 0 in
  while !i < n && B.unsafe_get buf (off + !i) = String.unsafe_get preface !i do incr i done;
  if !i < n then Not_preface else if n = 24 then Preface else Need_more

(* {1 Reader} *)

type result = Frame | Partial | Stream_error | Connection_error

type t = {
  mutable max_frame_size : int;
  mutable length : int;
  mutable frame_type : frame_type;
  mutable type_code : int;
  mutable flags : int;
  mutable stream_id : int;
  mutable consumed : int;
  mutable needed : int;
  mutable payload_off : int;
  mutable payload_len : int;
  mutable pad_length : int;
  mutable exclusive : bool;
  mutable dependency : int;
  mutable weight : int;
  mutable promised : int;
  mutable last_stream : int;
  mutable prioritized : int;
  mutable code_raw : int;
  mutable increment : int;
  mutable error : H2_error.t;
  mutable reason : string;
}

let check_max_frame_size fn n =
  if n < H2_settings.default_max_frame_size || n > H2_settings.max_max_frame_size then
    invalid_arg fn

let create ?(max_frame_size = H2_settings.default_max_frame_size) () =
  check_max_frame_size "Httpz.H2_frame.create" max_frame_size;
  { max_frame_size; length = 0; frame_type = Unknown; type_code = 0; flags = 0; stream_id = 0;
    consumed = 0; needed = header_size; payload_off = 0; payload_len = 0; pad_length = 0;
    exclusive = false; dependency = 0; weight = 16; promised = 0; last_stream = 0;
    prioritized = 0; code_raw = 0; increment = 0; error = No_error; reason = "" }

let set_max_frame_size t n =
  check_max_frame_size "Httpz.H2_frame.set_max_frame_size" n;
  t.max_frame_size <- n

let max_frame_size t = t.max_frame_size
let consumed t = t.consumed
let needed t = t.needed
let length t = t.length
let frame_type t = t.frame_type
let type_code t = t.type_code
let flags t = t.flags
let stream_id t = t.stream_id
let[@inline] has_flag t bit = t.flags land bit <> 0
let error t = t.error
let reason t = t.reason
let payload_off t = t.payload_off
let payload_len t = t.payload_len
let pad_length t = t.pad_length
let priority_exclusive t = t.exclusive
let priority_dependency t = t.dependency
let priority_weight t = t.weight
let promised_stream_id t = t.promised
let last_stream_id t = t.last_stream
let prioritized_stream_id t = t.prioritized
let error_code_raw t = t.code_raw
let window_increment t = t.increment

let settings_count t = t.length / 6
let setting_code buf t i = get_u16 buf (t.payload_off + (6 * i))
let setting_id buf t i = H2_settings.id_of_int (setting_code buf t i)
let setting_value buf t i = get_u32 buf (t.payload_off + (6 * i) + 2)

let connection_error t code reason =
  t.error <- code;
  t.reason <- reason;
  t.consumed <- 0;
  Connection_error

let stream_error t code reason =
  t.error <- code;
  t.reason <- reason;
  Stream_error

(* Rules that the 9 header bytes settle; [Frame] means none is broken. *)
let check_header t : result =
  let sid = t.stream_id and len = t.length in
  let padded = if t.flags land flag_padded <> 0 then 1 else 0 in
  match t.frame_type with
  | Data ->
      if sid = 0 then connection_error t Protocol_error "DATA on stream 0"
      else if len < padded then connection_error t Frame_size_error "DATA too short for its pad length"
      else Frame
  | Headers ->
      let prio = if t.flags land flag_priority <> 0 then 5 else 0 in
      if sid = 0 then connection_error t Protocol_error "HEADERS on stream 0"
      else if len < padded + prio then
        connection_error t Frame_size_error "HEADERS too short for its pad length and priority"
      else Frame
  | Priority ->
      if sid = 0 then connection_error t Protocol_error "PRIORITY on stream 0" else Frame
  | Rst_stream ->
      if sid = 0 then connection_error t Protocol_error "RST_STREAM on stream 0"
      else if len <> 4 then connection_error t Frame_size_error "RST_STREAM length is not 4"
      else Frame
  | Settings ->
      if sid <> 0 then connection_error t Protocol_error "SETTINGS on a stream"
      else if t.flags land flag_ack <> 0 && len <> 0 then
        connection_error t Frame_size_error "SETTINGS ACK with a payload"
      else if len mod 6 <> 0 then
        connection_error t Frame_size_error "SETTINGS length is not a multiple of 6"
      else Frame
  | Push_promise ->
      if sid = 0 then connection_error t Protocol_error "PUSH_PROMISE on stream 0"
      else if len < padded + 4 then
        connection_error t Frame_size_error "PUSH_PROMISE too short for its promised stream"
      else Frame
  | Ping ->
      if sid <> 0 then connection_error t Protocol_error "PING on a stream"
      else if len <> 8 then connection_error t Frame_size_error "PING length is not 8"
      else Frame
  | Goaway ->
      if sid <> 0 then connection_error t Protocol_error "GOAWAY on a stream"
      else if len < 8 then connection_error t Frame_size_error "GOAWAY shorter than 8"
      else Frame
  | Window_update ->
      if len <> 4 then connection_error t Frame_size_error "WINDOW_UPDATE length is not 4"
      else Frame
  | Continuation ->
      if sid = 0 then connection_error t Protocol_error "CONTINUATION on stream 0" else Frame
  | Priority_update ->
      if sid <> 0 then connection_error t Protocol_error "PRIORITY_UPDATE on a stream"
      else if len < 4 then connection_error t Frame_size_error "PRIORITY_UPDATE shorter than 4"
      else Frame
  | Unknown -> Frame

(* The 5 priority bytes at [p]: E bit, 31-bit dependency, weight - 1. *)
let read_priority t buf p =
  t.exclusive <- byte buf p land 0x80 <> 0;
  t.dependency <- get_u31 buf p;
  t.weight <- byte buf (p + 4) + 1

(* Padding and the field block (or data) after [skip] bytes of fixed
   fields; the pad length byte, when present, is at [p]. *)
let padded_content t buf p skip : result =
  let len = t.length in
  if t.flags land flag_padded <> 0 then begin
    let pad = byte buf p in
    t.pad_length <- pad;
    if pad > len - 1 - skip then connection_error t Protocol_error "padding as long as the payload"
    else begin
      t.payload_off <- p + 1 + skip;
      t.payload_len <- len - 1 - skip - pad;
      Frame
    end
  end
  else begin
    t.payload_off <- p + skip;
    t.payload_len <- len - skip;
    Frame
  end

let settings_reason : H2_settings.id -> string = function
  | Enable_push -> "SETTINGS_ENABLE_PUSH is not 0 or 1"
  | Initial_window_size -> "SETTINGS_INITIAL_WINDOW_SIZE above 2^31-1"
  | Max_frame_size -> "SETTINGS_MAX_FRAME_SIZE outside [2^14, 2^24-1]"
  | Enable_connect_protocol -> "SETTINGS_ENABLE_CONNECT_PROTOCOL is not 0 or 1"
  | No_rfc7540_priorities -> "SETTINGS_NO_RFC7540_PRIORITIES is not 0 or 1"
  | Header_table_size | Max_concurrent_streams | Max_header_list_size | Unknown ->
      "SETTINGS value out of range"

(* Every entry is checked before the frame is returned, so a session can
   apply them one by one without undoing anything. *)
let check_settings t buf p : result =
  let n = t.length / 6 in
  let i = ref 0 and failed = ref (-1) in
  while !failed < 0 && !i < n do
    let e = p + (6 * !i) in
    let id = H2_settings.id_of_int (get_u16 buf e) in
    if H2_settings.check id (get_u32 buf (e + 2)) != H2_error.No_error then failed := e;
    incr i
  done;
  if !failed < 0 then Frame
  else begin
    let e = !failed in
    let id = H2_settings.id_of_int (get_u16 buf e) in
    connection_error t (H2_settings.check id (get_u32 buf (e + 2))) (settings_reason id)
  end

(* Rules that need the payload; the whole frame is at [p - 9 ..]. *)
let check_payload t buf p : result =
  match t.frame_type with
  | Data -> if t.flags land flag_padded = 0 then Frame else padded_content t buf p 0
  | Continuation | Ping | Unknown -> Frame
  | Headers ->
      if t.flags land flag_priority = 0 then padded_content t buf p 0
      else begin
        let pad = if t.flags land flag_padded <> 0 then 1 else 0 in
        read_priority t buf (p + pad);
        match padded_content t buf p 5 with
        | Frame when t.dependency = t.stream_id ->
            stream_error t Protocol_error "HEADERS stream depends on itself"
        | r -> r
      end
  | Priority ->
      if t.length <> 5 then stream_error t Frame_size_error "PRIORITY length is not 5"
      else begin
        read_priority t buf p;
        if t.dependency = t.stream_id then
          stream_error t Protocol_error "PRIORITY stream depends on itself"
        else Frame
      end
  | Rst_stream -> t.code_raw <- get_u32 buf p; Frame
  | Settings -> check_settings t buf p
  | Push_promise ->
      let pad = if t.flags land flag_padded <> 0 then 1 else 0 in
      t.promised <- get_u31 buf (p + pad);
      padded_content t buf p 4
  | Goaway ->
      t.last_stream <- get_u31 buf p;
      t.code_raw <- get_u32 buf (p + 4);
      t.payload_off <- p + 8;
      t.payload_len <- t.length - 8;
      Frame
  | Window_update ->
      let inc = get_u31 buf p in
      t.increment <- inc;
      if inc <> 0 then Frame
      else if t.stream_id = 0 then
        connection_error t Protocol_error "WINDOW_UPDATE of 0 on the connection"
      else stream_error t Protocol_error "WINDOW_UPDATE of 0 on a stream"
  | Priority_update ->
      let s = get_u31 buf p in
      t.prioritized <- s;
      t.payload_off <- p + 4;
      t.payload_len <- t.length - 4;
      if s = 0 then connection_error t Protocol_error "PRIORITY_UPDATE for stream 0" else Frame

let read t buf ~off ~len =
  B.check_range "Httpz.H2_frame.read" buf ~off ~len;
  t.consumed <- 0;
  if len < header_size then begin
    t.needed <- header_size;
    Partial
  end
  else begin
    (* The header's first eight bytes in one load, as a big-endian word
       (the ninth is the stream id's low byte). *)
    let w = be64 buf off in
    let length = Int64.to_int (Int64.shift_right_logical w 40) in
    let code = Int64.to_int (Int64.shift_right_logical w 32) land 0xff in
    t.length <- length;
    t.type_code <- code;
    t.frame_type <- frame_type_of_int code;
    t.flags <- Int64.to_int (Int64.shift_right_logical w 24) land 0xff;
    t.stream_id <- ((Int64.to_int w land 0x7f_ffff) lsl 8) lor byte buf (off + 8);
    t.needed <- header_size + length;
    t.payload_off <- off + header_size;
    t.payload_len <- length;
    t.pad_length <- 0;
    t.exclusive <- false;
    t.dependency <- 0;
    t.weight <- 16;
    if length > t.max_frame_size then
      connection_error t Frame_size_error "frame larger than SETTINGS_MAX_FRAME_SIZE"
    else
      match check_header t with
      | Frame ->
          if len < header_size + length then Partial
          else begin
            t.consumed <- header_size + length;
            check_payload t buf (off + header_size)
          end
      | r -> r
  end
