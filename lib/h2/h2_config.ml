type t = {
  max_concurrent_streams : int;
  initial_window_size : int;
  connection_window : int;
  max_header_list_size : int;
  max_continuations : int;
  pending_size : int;
  response_header_block_size : int;
  window_ms : int;
  max_resets : int;
  max_settings : int;
  max_pings : int;
  max_empty_data : int;
  max_window_updates : int;
  max_refused : int;
}

let default =
  {
    max_concurrent_streams = 128;
    initial_window_size = 65535;
    connection_window = 1 lsl 20;
    max_header_list_size = 16384;
    max_continuations = 16;
    pending_size = 65536;
    response_header_block_size = 16384;
    window_ms = 1000;
    max_resets = 100;
    max_settings = 100;
    max_pings = 100;
    max_empty_data = 100;
    max_window_updates = 10_000;
    max_refused = 100;
  }
