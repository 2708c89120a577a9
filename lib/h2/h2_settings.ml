type id =
  | Header_table_size
  | Enable_push
  | Max_concurrent_streams
  | Initial_window_size
  | Max_frame_size
  | Max_header_list_size
  | Enable_connect_protocol
  | No_rfc7540_priorities
  | Unknown

let id_of_int = function
  | 0x1 -> Header_table_size
  | 0x2 -> Enable_push
  | 0x3 -> Max_concurrent_streams
  | 0x4 -> Initial_window_size
  | 0x5 -> Max_frame_size
  | 0x6 -> Max_header_list_size
  | 0x8 -> Enable_connect_protocol
  | 0x9 -> No_rfc7540_priorities
  | _ -> Unknown

let id_to_int = function
  | Header_table_size -> 0x1
  | Enable_push -> 0x2
  | Max_concurrent_streams -> 0x3
  | Initial_window_size -> 0x4
  | Max_frame_size -> 0x5
  | Max_header_list_size -> 0x6
  | Enable_connect_protocol -> 0x8
  | No_rfc7540_priorities -> 0x9
  | Unknown -> -1

let id_to_string = function
  | Header_table_size -> "SETTINGS_HEADER_TABLE_SIZE"
  | Enable_push -> "SETTINGS_ENABLE_PUSH"
  | Max_concurrent_streams -> "SETTINGS_MAX_CONCURRENT_STREAMS"
  | Initial_window_size -> "SETTINGS_INITIAL_WINDOW_SIZE"
  | Max_frame_size -> "SETTINGS_MAX_FRAME_SIZE"
  | Max_header_list_size -> "SETTINGS_MAX_HEADER_LIST_SIZE"
  | Enable_connect_protocol -> "SETTINGS_ENABLE_CONNECT_PROTOCOL"
  | No_rfc7540_priorities -> "SETTINGS_NO_RFC7540_PRIORITIES"
  | Unknown -> "UNKNOWN"

let default_header_table_size = 4096
let default_initial_window_size = 65535
let default_max_frame_size = 16384
let max_max_frame_size = 0xFF_FFFF
let max_window_size = 0x7FFF_FFFF

let[@inline] is_flag v = v = 0 || v = 1

let check id v : H2_error.t =
  match id with
  | Enable_push | Enable_connect_protocol | No_rfc7540_priorities ->
      if is_flag v then No_error else Protocol_error
  | Initial_window_size -> if v <= max_window_size then No_error else Flow_control_error
  | Max_frame_size ->
      if v >= default_max_frame_size && v <= max_max_frame_size then No_error
      else Protocol_error
  | Header_table_size | Max_concurrent_streams | Max_header_list_size | Unknown -> No_error

type t = {
  mutable header_table_size : int;
  mutable enable_push : bool;
  mutable max_concurrent_streams : int;
  mutable initial_window_size : int;
  mutable max_frame_size : int;
  mutable max_header_list_size : int;
  mutable enable_connect_protocol : bool;
  mutable no_rfc7540_priorities : bool;
}

let reset t =
  t.header_table_size <- default_header_table_size;
  t.enable_push <- true;
  t.max_concurrent_streams <- max_int;
  t.initial_window_size <- default_initial_window_size;
  t.max_frame_size <- default_max_frame_size;
  t.max_header_list_size <- max_int;
  t.enable_connect_protocol <- false;
  t.no_rfc7540_priorities <- false

let create () =
  let t =
    { header_table_size = 0; enable_push = true; max_concurrent_streams = 0;
      initial_window_size = 0; max_frame_size = 0; max_header_list_size = 0;
      enable_connect_protocol = false; no_rfc7540_priorities = false }
  in
  reset t;
  t

let apply t id v =
  match id with
  | Header_table_size -> t.header_table_size <- v
  | Enable_push -> t.enable_push <- v = 1
  | Max_concurrent_streams -> t.max_concurrent_streams <- v
  | Initial_window_size -> t.initial_window_size <- v
  | Max_frame_size -> t.max_frame_size <- v
  | Max_header_list_size -> t.max_header_list_size <- v
  | Enable_connect_protocol -> t.enable_connect_protocol <- v = 1
  | No_rfc7540_priorities -> t.no_rfc7540_priorities <- v = 1
  | Unknown -> ()
