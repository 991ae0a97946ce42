"""Issue 13, connections at the cap (MAX_CONNECTIONS): the longest-idle keep-alive connection
is closed, cleanly, to admit a new client; only when every connection is mid-request does a
new client get 503 too_many_connections."""

from __future__ import annotations

import socket
import time

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


def server_side(port: int) -> dict[int, int]:
    """The server's end of each connection to `port` that it has not closed, from the kernel's
    table: client port -> bytes received but not yet read by the server."""
    sockets = {}
    with open("/proc/net/tcp") as table:
        for line in table.readlines()[1:]:
            fields = line.split()
            local, remote, state, queues = fields[1], fields[2], fields[3], fields[4]
            # 01 established, 08 closed by the client only: open on the server's side.
            if int(local.split(":")[1], 16) == port and state in ("01", "08"):
                sockets[int(remote.split(":")[1], 16)] = int(queues.split(":")[1], 16)
    return sockets


def settle(check, message: str) -> None:
    """Waits (bounded) for the kernel to show what the server has done with its sockets."""
    deadline = time.monotonic() + 20
    while not check():
        assert time.monotonic() < deadline, message
        time.sleep(0.01)


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
    # The launcher's readiness probe must be gone first, or it would hold one of the two places.
    settle(lambda: not server_side(sk.port), "the readiness probe's connection stayed open")
    slow = [connect(sk) for _ in range(2)]
    for s in slow:
        assert get(s) == 200  # surely accepted
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: e2e\r\n")  # a head left unfinished
        # Only once the server has read the partial head is this connection mid-request; until
        # then it is an idle keep-alive connection the next client may displace.
        port = s.getsockname()[1]
        settle(lambda: server_side(sk.port).get(port) == 0, "the server did not read the head")
    refused = connect(sk)
    status, body = read_response(refused)
    assert status == 503
    assert b"too_many_connections" in body
    for s in slow:
        s.sendall(b"\r\n")
        assert read_response(s)[0] == 200


def _limits(pid: int) -> tuple[str, str]:
    with open(f"/proc/{pid}/limits") as limits:
        line = next(l for l in limits if l.startswith("Max open files"))
    soft, hard = line.split()[3:5]
    return soft, hard


def _under_ulimit(sk, flags: str) -> None:
    sk.argv = ["bash", "-c", f'ulimit {flags}; exec "$@"', "bash"] + sk.argv


def test_a_low_soft_descriptor_limit_is_raised_to_the_hard_one(storekeeper):
    # A shell's soft limit (1,024, here 300) is far below MAX_CONNECTIONS (10,000): descriptors
    # ran out before the cap, and new clients were reset instead of idle ones evicted.
    with open("/proc/self/limits") as mine:
        hard = next(l for l in mine if l.startswith("Max open files")).split()[4]
    sk = storekeeper(start=False)
    _under_ulimit(sk, "-Sn 300")
    sk.start()
    soft, after_hard = _limits(sk.pid)
    assert soft == after_hard == hard, (soft, after_hard, hard)
    if hard == "unlimited" or int(hard) >= 11_000:
        assert not [l for l in sk.log_lines_json() if l.get("setting") == "MAX_CONNECTIONS"], sk.log_tail()


def test_a_hard_limit_below_max_connections_is_a_warning_naming_it(storekeeper):
    sk = storekeeper(start=False)
    _under_ulimit(sk, "-n 300")
    sk.start()
    warnings = [l for l in sk.log_lines_json()
                if l.get("level") == "warning" and l.get("setting") == "MAX_CONNECTIONS"]
    assert len(warnings) == 1, sk.log_tail()
    assert warnings[0]["limit"] == 300 and warnings[0]["max_connections"] == 10000, warnings
    # Enough for a small cap: no warning.
    small = storekeeper(start=False, MAX_CONNECTIONS="100")
    _under_ulimit(small, "-n 600")
    small.start()
    assert not [l for l in small.log_lines_json() if l.get("setting") == "MAX_CONNECTIONS"], small.log_tail()
