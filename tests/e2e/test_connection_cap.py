"""Issue 13, connections at the cap (MAX_CONNECTIONS): the longest-idle keep-alive connection
is closed, cleanly, to admit a new client; only when every connection is mid-request does a
new client get 503 too_many_connections."""

from __future__ import annotations

import socket

REQUEST = b"GET /healthz HTTP/1.1\r\nHost: e2e\r\n\r\n"


def connect(sk) -> socket.socket:
    s = socket.create_connection(("127.0.0.1", sk.port), timeout=10)
    return s


def read_response(s: socket.socket) -> tuple[int, bytes]:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = s.recv(65536)
        assert chunk, f"closed before a response: {data!r}"
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    while len(body) < length:
        chunk = s.recv(65536)
        assert chunk, "closed inside a body"
        body += chunk
    return int(head.split(b" ")[1]), body


def get(s: socket.socket) -> int:
    s.sendall(REQUEST)
    status, _ = read_response(s)
    return status


def test_the_longest_idle_connection_makes_room_for_a_new_client(launcher):
    # One event loop: each loop closes its own longest-idle connection first (as each nginx
    # worker does), so "the oldest" is only well defined with one.
    sk = launcher.storekeeper(MAX_CONNECTIONS="3", EVENT_LOOPS="1")
    held = [connect(sk) for _ in range(3)]
    for s in held:
        assert get(s) == 200
    newcomer = connect(sk)
    assert get(newcomer) == 200
    # The oldest idle one was closed with an orderly FIN (recv gives b""), not a reset, and
    # after its response had been read in full.
    oldest = held[0]
    assert oldest.recv(1) == b""
    for s in held[1:] + [newcomer]:
        assert get(s) == 200


def test_a_new_client_gets_503_only_when_every_connection_is_mid_request(launcher):
    sk = launcher.storekeeper(MAX_CONNECTIONS="2", EVENT_LOOPS="2")
    slow = [connect(sk) for _ in range(2)]
    for s in slow:
        assert get(s) == 200  # surely accepted
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: e2e\r\n")  # a head left unfinished
    refused = connect(sk)
    status, body = read_response(refused)
    assert status == 503
    assert b"too_many_connections" in body
    for s in slow:
        s.sendall(b"\r\n")
        assert read_response(s)[0] == 200
