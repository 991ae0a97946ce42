#!/usr/bin/env python3
"""Releases N prepared reports at once and prints what came back (bench/reports/burst).

Every connection is opened first and left idle; then every request is written in one pass of
the event loop, so the server sees the whole burst within a few milliseconds, as it would when
many clients report at the same moment. Each report is a different order with its own signed
transaction (prepare.py), sent once. Connections are dealt round-robin over the URLs (one per
instance). Prints the count of each answer (status and error code), whether every 503 carried
Retry-After, and p50/p99/max of the answers' times from the release.

Usage: burst.py REPORTS_FILE N URL [URL...]"""

from __future__ import annotations

import asyncio
import collections
import json
import sys
import time
from urllib.parse import urlsplit


async def one(host: str, port: int, body: bytes, release: asyncio.Event, started: list[float]):
    reader, writer = await asyncio.open_connection(host, port)
    request = (f"POST /v1/trade-reports HTTP/1.1\r\nHost: {host}:{port}\r\n"
               f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
               "Connection: close\r\n\r\n").encode() + body
    await release.wait()
    writer.write(request)
    try:
        await writer.drain()
        head = await reader.readuntil(b"\r\n\r\n")
        elapsed = time.monotonic() - started[0]
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split(" ")[1])
        headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:] if line)}
        payload = await reader.readexactly(int(headers.get("content-length", "0")))
        code = ""
        if status >= 400:
            try:
                code = json.loads(payload).get("code", "")
            except ValueError:
                code = "?"
        return status, code, "retry-after" in headers, elapsed
    except (OSError, asyncio.IncompleteReadError) as e:
        return "cut", type(e).__name__, False, time.monotonic() - started[0]
    finally:
        writer.close()


async def main() -> None:
    path, n, urls = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    with open(path) as f:
        bodies = [line.strip().encode() for line in f if line.strip()][:n]
    if len(bodies) < n:
        sys.exit(f"burst.py: {path} holds {len(bodies)} reports, {n} asked")
    targets = [(urlsplit(u).hostname, urlsplit(u).port) for u in urls]
    release = asyncio.Event()
    started = [0.0]
    tasks = [asyncio.create_task(one(*targets[i % len(targets)], body, release, started))
             for i, body in enumerate(bodies)]
    # Every connection is accepted before the release (the server holds them as idle).
    await asyncio.sleep(0.5 + n / 1000)
    started[0] = time.monotonic()
    release.set()
    results = await asyncio.gather(*tasks)
    counts = collections.Counter((r[0], r[1]) for r in results)
    times = sorted(r[3] for r in results)

    def pct(p: float) -> float:
        return times[min(len(times) - 1, int((len(times) - 1) * p))] * 1000

    answers = " ".join(f"{s}{'/' + c if c else ''}={k}" for (s, c), k in sorted(counts.items(), key=str))
    busy = [r for r in results if r[0] == 503]
    print(f"{n:>5} {len(urls)}  {answers:<44} not-200={sum(1 for r in results if r[0] != 200):<5} "
          f"503-with-Retry-After={sum(1 for r in busy if r[2])}/{len(busy):<5} "
          f"p50={pct(0.50):.0f}ms p99={pct(0.99):.0f}ms max={times[-1] * 1000:.0f}ms")


asyncio.run(main())
