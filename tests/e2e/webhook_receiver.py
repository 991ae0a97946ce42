"""A webhook receiver run as its own process (issue 12's "real receiver process"): it checks each
delivery's Storekeeper-Signature as docs/EVENTS_AND_WEBHOOKS.md tells receivers to, answers, and appends one JSON
line per request it got to a record file, so a test can read what arrived across restarts.

Usage: webhook_receiver.py --secret S --record FILE [--port N] [--fail-every-other]
Prints "listening <port>" once it accepts connections. With --fail-every-other it answers 500 to
every second request it gets (the 2nd, 4th, ...), counted from its own start. A request whose
signature does not verify is answered 401 (and recorded with "verified": false)."""

from __future__ import annotations

import argparse
import hashlib
import hmac
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

TOLERANCE_SECONDS = 300


def verifies(header: str, body: bytes, secret: str) -> bool:
    try:
        parts = [p.split("=", 1) for p in header.split(",")]
        stamps = [int(v) for k, v in parts if k == "t"]
        candidates = [v for k, v in parts if k == "v1"]
    except ValueError:
        return False
    if len(stamps) != 1 or abs(time.time() - stamps[0]) > TOLERANCE_SECONDS:
        return False
    expected = hmac.new(secret.encode(), f"{stamps[0]}.".encode() + body, hashlib.sha256).hexdigest()
    return any(hmac.compare_digest(expected, c) for c in candidates)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--secret", required=True)
    parser.add_argument("--record", required=True)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--fail-every-other", action="store_true")
    args = parser.parse_args()
    lock = threading.Lock()
    count = [0]
    record = open(args.record, "a", encoding="utf-8")

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self):  # noqa: N802 (the stdlib's name)
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            verified = verifies(self.headers.get("Storekeeper-Signature", ""), body, args.secret)
            try:
                event = json.loads(body)
            except ValueError:
                event = None
            # Numbered, decided and written down under one lock, before answering: the record's
            # order is the order in which answers were decided.
            with lock:
                count[0] += 1
                if not verified:
                    status = 401
                elif args.fail_every_other and count[0] % 2 == 0:
                    status = 500
                else:
                    status = 204
                record.write(json.dumps({"n": count[0], "status": status, "verified": verified,
                                         "event_id_header": self.headers.get("Storekeeper-Event-Id"),
                                         "event": event}) + "\n")
                record.flush()
            self.send_response(status)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    server.daemon_threads = True
    print(f"listening {server.server_address[1]}", flush=True)
    try:
        server.serve_forever()
    finally:
        record.close()


if __name__ == "__main__":
    sys.exit(main())
