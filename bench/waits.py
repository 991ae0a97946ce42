#!/usr/bin/env python3
"""A wait profile: what the server's threads and its database sessions are doing, sampled.

Usage: waits.py SECONDS SERVER_PID POSTGRES_URL APPLICATION_NAME [INTERVAL_MS, default 5]

Every INTERVAL_MS it reads, for each thread of SERVER_PID, its scheduler state and kernel wait
channel (/proc/PID/task/TID/stat and wchan), and, for each PostgreSQL session whose
application_name is APPLICATION_NAME, its state and wait event (pg_stat_activity, through one
psql session kept open) together with the backend process's scheduler state. Then it prints the
share of samples in each state: where the time that no core spends goes. Sampling costs a little
CPU itself (one query every interval), the same in every run it is used in.
"""

import collections
import os
import subprocess
import sys
import time


def thread_states(pid):
    states = []
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return states
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                stat = f.read()
            with open(f"/proc/{pid}/task/{tid}/wchan") as f:
                wchan = f.read().strip() or "-"
        except OSError:
            continue
        # The thread's name is in parentheses and may hold spaces; the state follows it.
        name = stat[stat.index("(") + 1 : stat.rindex(")")]
        state = stat[stat.rindex(")") + 2]
        states.append((name, state, wchan))
    return states


def process_state(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            stat = f.read()
        return stat[stat.rindex(")") + 2]
    except OSError:
        return "?"


def family(name):
    """Threads of one kind share a name but for a number (loop-0, loop-1): one row for each kind."""
    return name.rstrip("0123456789").rstrip("-_ ") or name


def main():
    seconds, server_pid, url, app = float(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
    interval = (float(sys.argv[5]) if len(sys.argv) > 5 else 5.0) / 1000
    psql = subprocess.Popen(
        ["psql", url, "-X", "-qtA", "-F", "|"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1,
    )
    query = (
        "SELECT pid, state, coalesce(wait_event_type, '-'), coalesce(wait_event, '-') "
        f"FROM pg_stat_activity WHERE application_name = '{app}';\n\\echo END\n"
    )
    server = collections.Counter()
    sessions = collections.Counter()
    samples = 0
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        started = time.monotonic()
        for name, state, wchan in thread_states(server_pid):
            server[(family(name), "running" if state == "R" else wchan)] += 1
        psql.stdin.write(query)
        while True:
            line = psql.stdout.readline().strip()
            if line == "END" or not line and psql.poll() is not None:
                break
            pid, state, kind, event = line.split("|")
            on_cpu = process_state(pid) == "R"
            if state == "active" and kind == "-":
                what = "active, on a core" if on_cpu else "active, runnable or in the kernel"
            elif state == "active":
                what = f"active, waiting on {kind}:{event}"
            else:
                what = f"{state} ({kind}:{event})"
            sessions[what] += 1
        samples += 1
        time.sleep(max(0.0, interval - (time.monotonic() - started)))
    psql.stdin.close()
    psql.wait()

    print(f"wait profile: {samples} samples every {interval * 1000:.0f} ms")
    per_family = collections.Counter()
    for (fam, _), n in server.items():
        per_family[fam] += n
    print("  server threads (share of each kind's samples; threads per kind = samples / "
          f"{samples}):")
    for fam, total in per_family.most_common():
        rows = sorted(((n, what) for (f, what), n in server.items() if f == fam), reverse=True)
        shown = ", ".join(f"{what} {100 * n / total:.0f}%" for n, what in rows[:4])
        print(f"    {fam} ×{total / samples:.1f}: {shown}")
    total = sum(sessions.values())
    print(f"  database sessions of {app} (×{total / max(samples, 1):.1f} on average):")
    for what, n in sessions.most_common(8):
        print(f"    {100 * n / max(total, 1):5.1f}%  {what}")


if __name__ == "__main__":
    main()
