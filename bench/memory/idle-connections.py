"""Opens N keep-alive connections to 127.0.0.1:PORT, sends one GET on each and reads its answer,
then holds them all open until stdin closes. Prints "ready" once every connection is idle."""

import socket
import sys

port, count, path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
request = f"GET {path} HTTP/1.1\r\nHost: bench\r\n\r\n".encode()
held = []
for _ in range(count):
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(request)
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = s.recv(65536)
        if not chunk:
            sys.exit(f"connection closed after {len(held)} connections")
        data += chunk
    held.append(s)
print("ready", flush=True)
sys.stdin.read()
