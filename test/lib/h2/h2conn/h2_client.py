# Client peer for test_h2conn's cross-check against Python's h2 (Debian
# python3-h2). argv[1] names a scenario. The OCaml test runs our
# H2_connection as the server at the other end of a pipe; the two take
# turns: we write "OUT <hex>" (bytes for the server, maybe none) and read
# one line of hex (everything the server sent back). At the end we write
# "DONE ok" or "DONE <what went wrong>".
import sys

import h2.config
import h2.connection
import h2.errors
import h2.events

BIG = 200_000
UPLOAD = 100_000


def big_body(n):
    return bytes(i % 251 for i in range(n))


def exchange(data):
    sys.stdout.write("OUT " + data.hex() + "\n")
    sys.stdout.flush()
    line = sys.stdin.readline()
    if not line:
        raise SystemExit("the server closed the pipe")
    return bytes.fromhex(line.strip())


def main():
    scenario = sys.argv[1]
    conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True, header_encoding="utf-8"))
    conn.initiate_connection()
    expected = {}  # stream id -> expected body
    bodies, statuses, ended, resets = {}, {}, set(), set()
    uploads = {}  # stream id -> bytes still to send

    def get(path, extra=()):
        sid = conn.get_next_available_stream_id()
        conn.send_headers(sid, [(":method", "GET"), (":scheme", "http"), (":path", path),
                                (":authority", "localhost")] + list(extra), end_stream=True)
        return sid

    if scenario == "concurrent":
        for i in range(5):
            sid = get("/%d" % i, [("priority", "u=%d" % (i % 3))])
            expected[sid] = b"hello /%d 0" % i
    elif scenario == "large":
        sid = get("/big")
        expected[sid] = big_body(BIG)
    elif scenario == "post":
        sid = conn.get_next_available_stream_id()
        conn.send_headers(sid, [(":method", "POST"), (":scheme", "http"), (":path", "/up"),
                                (":authority", "localhost"), ("content-length", str(UPLOAD))])
        uploads[sid] = big_body(UPLOAD)
        expected[sid] = b"hello /up %d" % UPLOAD
    elif scenario == "reset":
        sid = conn.get_next_available_stream_id()
        conn.send_headers(sid, [(":method", "POST"), (":scheme", "http"), (":path", "/gone"),
                                (":authority", "localhost")])
        conn.reset_stream(sid, error_code=h2.errors.ErrorCodes.CANCEL)
        resets.add(sid)
        sid2 = get("/kept")
        expected[sid2] = b"hello /kept 0"
    else:
        raise SystemExit("unknown scenario " + scenario)

    def pump_uploads():
        for sid in list(uploads):
            data = uploads[sid]
            while data:
                room = min(conn.local_flow_control_window(sid), conn.max_outbound_frame_size)
                if room <= 0:
                    break
                chunk, data = data[:room], data[room:]
                conn.send_data(sid, chunk, end_stream=not data)
            if data:
                uploads[sid] = data
            else:
                del uploads[sid]

    for _ in range(2000):
        pump_uploads()
        reply = exchange(conn.data_to_send())
        for ev in conn.receive_data(reply):
            if isinstance(ev, h2.events.ResponseReceived):
                statuses[ev.stream_id] = dict(ev.headers)[":status"]
            elif isinstance(ev, h2.events.DataReceived):
                bodies[ev.stream_id] = bodies.get(ev.stream_id, b"") + ev.data
                conn.acknowledge_received_data(ev.flow_controlled_length, ev.stream_id)
            elif isinstance(ev, h2.events.StreamEnded):
                ended.add(ev.stream_id)
            elif isinstance(ev, (h2.events.StreamReset, h2.events.ConnectionTerminated)):
                sys.stdout.write("DONE unexpected %r\n" % ev)
                return
        if all(sid in ended for sid in expected):
            break
    problems = []
    for sid, body in expected.items():
        if statuses.get(sid) != "200":
            problems.append("stream %d status %r" % (sid, statuses.get(sid)))
        if bodies.get(sid, b"") != body:
            problems.append("stream %d body of %d bytes, expected %d" % (sid, len(bodies.get(sid, b"")), len(body)))
    for sid in resets:
        if sid in statuses:
            problems.append("reset stream %d got a response" % sid)
    sys.stdout.write("DONE " + ("; ".join(problems) if problems else "ok") + "\n")
    sys.stdout.flush()


main()
