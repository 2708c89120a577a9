module Frame = Ws_frame
module Reader = Ws_reader
module Close = Ws_close
module Handshake = Ws_handshake
module Extension = Ws_extension
