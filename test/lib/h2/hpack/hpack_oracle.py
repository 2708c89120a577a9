# Python's hpack (Debian python3-hpack) as an oracle for test_hpack.ml.
# Reads cases from the file named by argv[1], one per line, writes one
# answer line per case to the file named by argv[2]. Bytes travel as hex.
#   E <table_size> <huffman 0|1> <block>|<block>...   one encoder, several blocks
#       a block is space-separated name_hex:value_hex (may be empty)
#       answer: the encoded blocks' hex, space-separated
#   D <block_hex> <block_hex> ...                      one decoder, several blocks
#       answer: the decoded blocks, '|'-separated, each as space-separated
#       name_hex:value_hex; or ERR <exception class> on a decoding error
import sys
from hpack import Encoder, Decoder


def parse_block(s):
    fields = []
    for item in s.split(" "):
        if item:
            n, v = item.split(":")
            fields.append((bytes.fromhex(n), bytes.fromhex(v)))
    return fields


def encode_case(rest):
    size, huff, blocks = rest.split(" ", 2) if rest.count(" ") >= 2 else (rest.split(" ") + [""])[:3]
    enc = Encoder()
    if int(size) != 4096:
        enc.header_table_size = int(size)
    out = []
    for b in blocks.split("|"):
        out.append(enc.encode(parse_block(b), huffman=(huff == "1")).hex())
    return " ".join(out)


def decode_case(rest):
    dec = Decoder(max_header_list_size=1 << 30)
    out = []
    try:
        for b in rest.split(" "):
            fields = dec.decode(bytes.fromhex(b), raw=True)
            out.append(" ".join(n.hex() + ":" + v.hex() for n, v in fields))
    except Exception as e:  # any decoding error is an answer
        return "ERR " + type(e).__name__
    return "|".join(out)


def main():
    with open(sys.argv[1]) as f, open(sys.argv[2], "w") as g:
        for line in f:
            line = line.rstrip("\n")
            kind, rest = line[0], line[2:]
            g.write((encode_case(rest) if kind == "E" else decode_case(rest)) + "\n")


main()
