"""Holds connections open to 127.0.0.1:PORT: IDLE keep-alive ones (one GET each, answered,
then nothing) and SLOW ones (a request head left unfinished, as a slow client trickles it).
Prints "ready" once all are open. Then each line on stdin "probe" opens one more connection,
GETs PATH on it and prints what happened to it and to the held ones:
  probe status=200 ms=1.2 idle_closed=1 idle_reset=0 slow_closed=0 slow_reset=0
(a held connection the server closed with FIN is "closed", with RST "reset"). Ends when stdin
closes."""

import errno
import socket
import sys
import time

port, idle, slow, path = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
request = f"GET {path} HTTP/1.1\r\nHost: bench\r\n\r\n".encode()


def read_head(s):
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = s.recv(65536)
        if not chunk:
            return None
        data += chunk
    return data


idle_held, slow_held = [], []
for _ in range(idle):
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(request)
    if read_head(s) is None:
        sys.exit(f"connection closed after {len(idle_held)} idle connections")
    idle_held.append(s)
for _ in range(slow):
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(f"GET {path} HTTP/1.1\r\nHost: bench\r\n".encode())
    slow_held.append(s)
print("ready", flush=True)


def count_ended(held):
    closed = reset = 0
    for s in held:
        s.setblocking(False)
        try:
            if s.recv(65536) == b"":
                closed += 1
        except BlockingIOError:
            pass
        except ConnectionResetError:
            reset += 1
        s.setblocking(True)
    return closed, reset


for line in sys.stdin:
    if line.strip() != "probe":
        continue
    started = time.monotonic()
    try:
        s = socket.create_connection(("127.0.0.1", port))
        s.settimeout(5)
        s.sendall(request)
        head = read_head(s)
        status = head.split(b" ", 2)[1].decode() if head else "closed"
        s.close()
    except OSError as e:
        status = errno.errorcode.get(e.errno, "error") if e.errno else type(e).__name__
    ms = (time.monotonic() - started) * 1000
    time.sleep(0.2)  # let a close of a held connection arrive
    idle_closed, idle_reset = count_ended(idle_held)
    slow_closed, slow_reset = count_ended(slow_held)
    print(
        f"probe status={status} ms={ms:.1f} idle_closed={idle_closed} idle_reset={idle_reset}"
        f" slow_closed={slow_closed} slow_reset={slow_reset}",
        flush=True,
    )
