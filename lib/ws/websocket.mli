(** WebSocket (RFC 6455) codec, sans-IO: one entry point for its parts.

    - {!Frame}: opcodes, in-place unmasking, frame header writers.
    - {!Reader}: the caller-owned, incremental frame reader (protocol
      rules, fragmentation, UTF-8 of text messages, control frames).
    - {!Close}: close codes, Close payload validation and writer.
    - {!Handshake}: the opening handshake's checks and 101 answer.
    - {!Extension}: permessage-deflate negotiation (RFC 7692).

    The incremental UTF-8 validator is {!Utf8}, SHA-1 is {!Sha1}. Reading
    a message and writing frames allocate nothing; see each module. *)

module Frame = Ws_frame
module Reader = Ws_reader
module Close = Ws_close
module Handshake = Ws_handshake
module Extension = Ws_extension
