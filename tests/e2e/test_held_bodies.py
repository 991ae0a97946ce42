"""Request bodies held at once are bounded (SECURITY.md, "Memory exhaustion by held bodies"):
past the first 64 KiB of each, bodies share 128 MiB per listener. A client that sends a nearly
complete 1 MiB body and stalls is not answered until the rest arrives; past the budget such a
body is refused 503 with Retry-After and closed, while small bodies still go through."""

from __future__ import annotations

import socket
import time

from test_connection_cap import read_response, server_side, settle

MIB = 1 << 20
BUDGET = 128 * MIB
FREE = 64 * 1024


def stalled_body(port: int) -> socket.socket:
    """A connection whose 1 MiB body lacks its last byte, sent whole before returning."""
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.sendall(
        b"POST /v1/receipts HTTP/1.1\r\nHost: e2e\r\nContent-Type: application/json\r\n"
        b"Content-Length: %d\r\n\r\n" % MIB
    )
    s.sendall(b" " * (MIB - 1))
    return s


def answered(s: socket.socket, port: int) -> bool:
    """Whether the server answered this connection, once it has read what was sent to it."""
    local = s.getsockname()[1]
    settle(lambda: server_side(port).get(local, 0) == 0, "the server did not read the body")
    s.setblocking(False)
    try:
        return bool(s.recv(1, socket.MSG_PEEK))
    except BlockingIOError:
        return False
    finally:
        s.setblocking(True)


def test_stalled_bodies_past_the_budget_are_refused_and_small_ones_go_on(launcher):
    sk = launcher.storekeeper()
    fits = BUDGET // (MIB - 1 - FREE)
    held, refused = [], []
    for _ in range(fits + 5):
        s = stalled_body(sk.port)
        (refused if answered(s, sk.port) else held).append(s)
    assert len(held) == fits, (len(held), len(refused))
    for s in refused:
        status, body = read_response(s)
        assert status == 503
        assert b'"code":"overloaded"' in body
        assert s.recv(1) == b""  # closed after the answer

    # A small body is admitted whatever the large ones hold: the request is read whole and
    # judged (here for its missing token).
    small = socket.create_connection(("127.0.0.1", sk.port), timeout=10)
    small.sendall(
        b"POST /v1/orders HTTP/1.1\r\nHost: e2e\r\nContent-Type: application/json\r\n"
        b"Content-Length: 2\r\n\r\n{}"
    )
    assert read_response(small)[0] == 401

    # A client that gives up returns its bytes: the next large body fits.
    held.pop().close()
    deadline = time.monotonic() + 20
    while True:
        s = stalled_body(sk.port)
        if not answered(s, sk.port):
            break
        assert time.monotonic() < deadline, "the closed connection's bytes were not given back"
        s.close()
    s.sendall(b" ")
    status, _ = read_response(s)
    assert status not in (413, 503), status
