(** Limits and window sizes of an HTTP/2 server connection
    ({!H2_connection}): what it advertises in its SETTINGS, how much it
    buffers, and the abuse limits, each ending the connection with GOAWAY
    ENHANCE_YOUR_CALM when passed. Counters count per [window_ms] ticks of
    the clock the caller passes to {!H2_connection.received}.

    Change a default with [{ H2_config.default with max_resets = 50 }]. *)

type t = {
  max_concurrent_streams : int;
      (** advertised SETTINGS_MAX_CONCURRENT_STREAMS and the number of stream
          slots; default 128 *)
  initial_window_size : int;
      (** advertised SETTINGS_INITIAL_WINDOW_SIZE, each stream's receive
          window; at least 65535 (so the peer's use of the default before it
          sees our SETTINGS is always within it); default 65535 *)
  connection_window : int;  (** the connection receive window; default 1 MiB *)
  max_header_list_size : int;
      (** advertised SETTINGS_MAX_HEADER_LIST_SIZE: HPACK's header-list
          limit (the bomb defence) and the cap on an assembled header
          block; default 16 KiB *)
  max_continuations : int;  (** CONTINUATION frames per header block; default 16 *)
  pending_size : int;  (** bytes of the frame queue ({!H2_output}); default 64 KiB *)
  response_header_block_size : int;  (** largest encoded response head; default 16 KiB *)
  window_ms : int;  (** the abuse counters' time window, in the caller's ticks; default 1000 *)
  max_resets : int;  (** open streams reset by the peer per window; default 100 *)
  max_settings : int;  (** SETTINGS frames per window; default 100 *)
  max_pings : int;  (** PING frames per window; default 100 *)
  max_empty_data : int;  (** empty DATA frames without END_STREAM per window; default 100 *)
  max_window_updates : int;  (** WINDOW_UPDATE frames per window; default 10000 *)
  max_refused : int;
      (** streams refused for concurrency per window; default 100 (plus twice
          [max_concurrent_streams] before the client acknowledged our SETTINGS:
          its first flight could not know the limit) *)
}

val default : t
