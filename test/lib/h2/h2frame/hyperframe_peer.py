# Peer for test_h2frame's cross-check against Python's hyperframe.
# stdin: one frame per line, in hex, written by httpz's H2_write.
# stdout: for each input line, hyperframe's description of the frame; then
#   "G<TAB>hex<TAB>description" for frames hyperframe built and serialized
#   itself (argv[1] of them, from a fixed seed), for httpz to read.
# Descriptions use the format test_h2frame.ml's [describe] prints.
import random
import sys

from hyperframe.frame import (
    ContinuationFrame, DataFrame, ExtensionFrame, Frame, GoAwayFrame, HeadersFrame,
    PingFrame, PriorityFrame, PushPromiseFrame, RstStreamFrame, SettingsFrame,
    WindowUpdateFrame)

ORDER = ["END_STREAM", "ACK", "END_HEADERS", "PADDED", "PRIORITY"]


def flags(f):
    return "|".join(n for n in ORDER if n in f.flags)


def prio(f):
    return "excl=%d dep=%d weight=%d" % (int(f.exclusive), f.depends_on, f.stream_weight + 1)


def describe(f):
    t = type(f).__name__
    head = "stream=%d flags=%s" % (f.stream_id, flags(f))
    pad = getattr(f, "pad_length", 0) if "PADDED" in f.flags else 0
    if isinstance(f, DataFrame):
        return "DATA %s data=%s pad=%d" % (head, f.data.hex(), pad)
    if isinstance(f, HeadersFrame):
        p = (" " + prio(f)) if "PRIORITY" in f.flags else ""
        return "HEADERS %s block=%s pad=%d%s" % (head, f.data.hex(), pad, p)
    if isinstance(f, PriorityFrame):
        return "PRIORITY %s %s" % (head, prio(f))
    if isinstance(f, RstStreamFrame):
        return "RST_STREAM %s code=%d" % (head, f.error_code)
    if isinstance(f, SettingsFrame):
        es = ",".join("%d:%d" % (k, v) for k, v in sorted(f.settings.items()))
        return "SETTINGS %s entries=%s" % (head, es)
    if isinstance(f, PushPromiseFrame):
        return "PUSH_PROMISE %s promised=%d block=%s pad=%d" % (
            head, f.promised_stream_id, f.data.hex(), pad)
    if isinstance(f, PingFrame):
        return "PING %s data=%s" % (head, f.opaque_data.hex())
    if isinstance(f, GoAwayFrame):
        return "GOAWAY %s last=%d code=%d debug=%s" % (
            head, f.last_stream_id, f.error_code, f.additional_data.hex())
    if isinstance(f, WindowUpdateFrame):
        return "WINDOW_UPDATE %s inc=%d" % (head, f.window_increment)
    if isinstance(f, ContinuationFrame):
        return "CONTINUATION %s block=%s" % (head, f.data.hex())
    if isinstance(f, ExtensionFrame):
        return "EXT type=%d stream=%d flags=%d body=%s" % (
            f.type, f.stream_id, f.flag_byte, f.body.hex())
    return "OTHER " + t


def parse(data):
    f, length = Frame.parse_frame_header(memoryview(data[:9]))
    assert length == len(data) - 9, (length, len(data))
    f.parse_body(memoryview(data[9:9 + length]))
    return f


def blob(r, n):
    return bytes(r.randrange(256) for _ in range(r.randrange(n + 1)))


def sid(r):
    return r.choice([1, 3, 0x7FFFFFFF, r.randrange(1, 1 << 31)])


def some_flags(r, names):
    return {n for n in names if r.random() < 0.5}


def generate(r):
    k = r.randrange(12)
    if k == 0:
        fl = some_flags(r, ["END_STREAM", "PADDED"])
        return DataFrame(sid(r), data=blob(r, 40), flags=fl, pad_length=r.randrange(256) if "PADDED" in fl else 0)
    if k == 1:
        fl = some_flags(r, ["END_STREAM", "END_HEADERS", "PADDED", "PRIORITY"])
        s = sid(r)
        dep = r.choice([0, r.randrange(1 << 31)])
        if dep == s:
            dep = 0
        # never an empty block with padding: hyperframe refuses to read it
        return HeadersFrame(s, data=b"h" + blob(r, 40), flags=fl,
                            pad_length=r.randrange(256) if "PADDED" in fl else 0,
                            depends_on=dep, stream_weight=r.randrange(256),
                            exclusive=r.random() < 0.5)
    if k == 2:
        s = sid(r)
        dep = r.randrange(1 << 31)
        if dep == s:
            dep = 0
        return PriorityFrame(s, depends_on=dep, stream_weight=r.randrange(256), exclusive=r.random() < 0.5)
    if k == 3:
        return RstStreamFrame(sid(r), error_code=r.choice([0, 1, 8, 13, 0xFFFFFFFF]))
    if k == 4:
        if r.random() < 0.2:
            return SettingsFrame(0, flags={"ACK"})
        ids = r.sample([1, 3, 6, 7, 0x10, 0xFFFF], r.randrange(5))
        settings = {i: r.randrange(1 << 32) for i in ids}
        if r.random() < 0.5:
            settings[4] = r.randrange(1 << 31)
        if r.random() < 0.5:
            settings[5] = r.randrange(16384, 1 << 24)
        if r.random() < 0.5:
            settings[2] = r.randrange(2)
        return SettingsFrame(0, settings=settings)
    if k == 5:
        fl = some_flags(r, ["END_HEADERS", "PADDED"])
        return PushPromiseFrame(sid(r), promised_stream_id=2 * r.randrange(1, 1 << 30), data=blob(r, 30),
                                flags=fl, pad_length=r.randrange(256) if "PADDED" in fl else 0)
    if k == 6:
        return PingFrame(0, opaque_data=bytes(r.randrange(256) for _ in range(8)),
                         flags=some_flags(r, ["ACK"]))
    if k == 7:
        return GoAwayFrame(0, last_stream_id=r.randrange(1 << 31), error_code=r.randrange(1 << 32),
                           additional_data=blob(r, 30))
    if k == 8:
        return WindowUpdateFrame(r.choice([0, sid(r)]), window_increment=r.randrange(1, 1 << 31))
    if k == 9:
        return ContinuationFrame(sid(r), data=blob(r, 40), flags=some_flags(r, ["END_HEADERS"]))
    if k == 10:
        # RFC 9218 PRIORITY_UPDATE, which hyperframe knows only as an extension
        body = r.randrange(1, 1 << 31).to_bytes(4, "big") + r.choice([b"", b"u=1", b"u=5, i"])
        return ExtensionFrame(0x10, 0, flag_byte=0, body=body)
    t = r.choice([0x0B, 0x20, 0x7F, 0xFF])
    return ExtensionFrame(t, r.randrange(1 << 31), flag_byte=r.randrange(256), body=blob(r, 20))


def main():
    for line in sys.stdin:
        line = line.strip()
        if line:
            try:
                print(describe(parse(bytes.fromhex(line))))
            except Exception as e:  # reported, so the OCaml side shows it
                print("ERROR %s: %s" % (type(e).__name__, e))
    r = random.Random(9113)
    for _ in range(int(sys.argv[1])):
        f = generate(r)
        if isinstance(f, ExtensionFrame):
            f.body_len = len(f.body)  # serialize() reads it; only parsing sets it
        data = f.serialize()
        print("G\t%s\t%s" % (data.hex(), describe(parse(data))))


main()
