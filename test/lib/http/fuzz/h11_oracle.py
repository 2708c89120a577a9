# Python's h11 as a differential oracle for Httpz.Request.parse.
#
# A long-lived subprocess of the fuzz harness (h11.ml embeds this file and
# runs a temporary copy of it). Protocol, one exchange per input:
#   stdin:  4-byte big-endian length, then that many bytes of request
#   stdout: one JSON line, {"v": "accept", ...facts} | {"v": "partial"} |
#           {"v": "reject", "why": "..."}
# Byte strings (method, target, header names and values) travel as latin-1
# decoded text, so every byte maps to one code point below 256.
# A length of 0xFFFFFFFF ends the process.
import json
import struct
import sys

import h11
from h11._connection import _keep_alive
from h11._headers import get_comma_header

# Above Httpz.Request's default max_head (32 KiB), so h11's own limit never
# decides a verdict the harness compares.
MAX_HEAD = 64 * 1024


def text(b):
    return bytes(b).decode("latin-1")


def verdict(data):
    if not data:
        # h11 reads b"" as end of stream; here it is only an empty input.
        return {"v": "partial"}
    conn = h11.Connection(h11.SERVER, max_incomplete_event_size=MAX_HEAD)
    try:
        conn.receive_data(data)
        ev = conn.next_event()
    except h11.RemoteProtocolError as e:
        return {"v": "reject", "why": str(e)}
    if ev is h11.NEED_DATA:
        return {"v": "partial"}
    if not isinstance(ev, h11.Request):
        return {"v": "reject", "why": "unexpected event " + type(ev).__name__}
    cl = get_comma_header(ev.headers, b"content-length")
    te = get_comma_header(ev.headers, b"transfer-encoding")
    rest, _closed = conn.trailing_data
    return {
        "v": "accept",
        "method": text(ev.method),
        "target": text(ev.target),
        "version": text(ev.http_version),
        # raw_items() keeps the names as sent; values are OWS-trimmed.
        "headers": [[text(n), text(v)] for n, v in ev.headers.raw_items()],
        "content_length": text(cl[0]) if cl else None,
        "chunked": te == [b"chunked"],
        "keep_alive": _keep_alive(ev),
        "head_length": len(data) - len(rest),
    }


def main():
    inp = sys.stdin.buffer
    out = sys.stdout
    while True:
        hdr = inp.read(4)
        if len(hdr) < 4:
            return
        (n,) = struct.unpack(">I", hdr)
        if n == 0xFFFFFFFF:
            return
        data = inp.read(n)
        try:
            r = verdict(data)
        except Exception as e:  # a crash of h11 itself: report, keep serving
            r = {"v": "crash", "why": type(e).__name__ + ": " + str(e)}
        out.write(json.dumps(r))
        out.write("\n")
        out.flush()


if __name__ == "__main__":
    main()
