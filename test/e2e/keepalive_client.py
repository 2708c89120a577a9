"""HTTP/2 side of test_keepalive_requests.py, run with /usr/bin/python3
(python3-h2 lives there): up to N streams one after the other on one
connection, then what the server did: the statuses answered, the GOAWAY
(its code and last stream id) and whether the connection closed.

Usage: keepalive_client.py PORT TLS(0|1) N
Prints one JSON object.
"""

import json
import os
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import h2.events  # noqa: E402
from h2_client import Client  # noqa: E402


class Recording(Client):
    """A Client that also keeps the GOAWAY's last stream id."""

    last_stream_id = None

    def receive(self, data):
        events = self.conn.receive_data(data)
        for ev in events:
            if isinstance(ev, h2.events.ResponseReceived):
                self.heads[ev.stream_id] = dict(ev.headers)
            elif isinstance(ev, h2.events.DataReceived):
                self.bodies[ev.stream_id] = self.bodies.get(ev.stream_id, b"") + ev.data
                self.conn.acknowledge_received_data(ev.flow_controlled_length, ev.stream_id)
            elif isinstance(ev, h2.events.StreamEnded):
                self.ended.add(ev.stream_id)
            elif isinstance(ev, h2.events.ConnectionTerminated):
                self.goaway = int(ev.error_code)
                self.last_stream_id = ev.last_stream_id
        self.flush()


def main():
    port, tls, n = int(sys.argv[1]), sys.argv[2] == "1", int(sys.argv[3])
    c = Recording(port, tls)
    answered = []
    for _ in range(n):
        if c.goaway is not None:
            break
        sid = c.get("/a.txt")
        c.pump(lambda: sid in c.ended or c.goaway is not None, timeout=5)
        if sid in c.ended:
            answered.append(c.heads.get(sid, {}).get(":status"))
    # What follows the last answer: the GOAWAY, then the close (or nothing).
    closed = False
    c.sock.settimeout(0.25)
    deadline = time.monotonic() + 2
    while time.monotonic() < deadline:
        try:
            data = c.sock.recv(65536)
        except socket.timeout:
            continue
        except OSError:
            closed = True
            break
        if not data:
            closed = True
            break
        try:
            c.receive(data)
        except Exception:  # the h2 state machine after GOAWAY: only the close matters now
            pass
    print(json.dumps({"answered": answered, "goaway": c.goaway, "last_stream_id": c.last_stream_id,
                      "closed": closed}))


main()
