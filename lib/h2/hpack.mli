(** HPACK, header compression for HTTP/2 (RFC 7541), zero allocation per
    field.

    - {!Decoder}: caller-owned per-connection state; a header block is
      walked field by field, each field's name and value landing as spans
      in a caller-owned output buffer, with its {!Header_name.t} and
      pseudo-header kind; limits on the header list size and string
      lengths; every error a constant constructor (a COMPRESSION_ERROR).
    - {!Encoder}: writes representations into a bigstring; static-table
      indices, Huffman when shorter, an optional dynamic table.
    - {!Huffman} (its own module) is the §5.2 code.

    The §5.1 integer codec is {!Decoder.decode_integer} and
    {!Encoder.encode_integer}. *)

type pseudo = Hpack_static.pseudo =
  | Regular | Authority | Method | Path | Scheme | Status | Protocol | Unknown_pseudo

module Static = Hpack_static
module Table = Hpack_table
module Decoder = Hpack_decoder
module Encoder = Hpack_encoder
