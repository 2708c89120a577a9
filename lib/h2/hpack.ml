type pseudo = Hpack_static.pseudo =
  | Regular | Authority | Method | Path | Scheme | Status | Protocol | Unknown_pseudo

module Static = Hpack_static
module Table = Hpack_table
module Decoder = Hpack_decoder
module Encoder = Hpack_encoder
