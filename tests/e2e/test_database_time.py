"""Storekeeper keeps PostgreSQL's time, whatever the clock of the machine it runs on says.

The instance here runs under an LD_PRELOAD shim (clock_skew.c, built here with the C compiler
the Swift toolchain brings) that puts its wall clock two hours ahead, as a VM restored from a
snapshot or a host keeping its RTC in local time would. Judged by its own clock, it would write
`entitlement.expired` for a subscription that runs another hour, store that future in the
user's `last_state_at` for every instance to meet, and put a failed webhook's retry two hours
off (docs/ARCHITECTURE.md, "Time")."""

from __future__ import annotations

import shutil
import subprocess
import time
from datetime import datetime
from pathlib import Path

from support import buy, free_port, mint, unique, wait_until

SKEW_SECONDS = 7200
PRO = "com.example.tests.time.pro.monthly"
SHIM = Path(__file__).with_name("clock_skew.c")


def build_shim(directory: Path) -> Path:
    """The shim, built with `cc` or the Swift toolchain's `clang` (swift build needs one)."""
    compiler = shutil.which("cc") or shutil.which("clang")
    assert compiler, "no C compiler on PATH (cc, or the clang next to swift)"
    library = directory / "libclockskew.so"
    built = subprocess.run([compiler, "-shared", "-fPIC", "-O2", "-o", str(library), str(SHIM), "-ldl"],
                           capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    return library


def test_an_instance_two_hours_ahead_keeps_postgresqls_time(launcher, tmp_path):
    shim = build_shim(tmp_path)
    stack = launcher.stack(LD_PRELOAD=str(shim), SKEW_SECONDS=str(SKEW_SECONDS),
                           WEBHOOK_RETRY_BASE="60s", WEBHOOK_POLL_INTERVAL="200ms")
    sk, fake, db, api = stack.sk, stack.fake, stack.db, stack.api
    # The shim took: the instance's own clock (its log's `ts`) reads two hours ahead.
    first = sk.log_lines_json()[0]
    ahead = datetime.fromisoformat(first["ts"].replace("Z", "+00:00")).timestamp() - time.time()
    assert abs(ahead - SKEW_SECONDS) < 60, first
    # The app's sign-in tokens are still judged by this machine's clock (docs/OPERATIONS.md,
    # "Time"): minted to outlive the skew.
    api.bearer = lambda user: mint(user, lifetime=SKEW_SECONDS + 3600)

    api.put_product(PRO, type="auto_renewable", grants={"entitlement": "pro"})
    refused_port = free_port()  # nothing listens there
    r = api.post("/admin/v1/webhook-endpoints", admin=True,
                 json={"url": f"http://127.0.0.1:{refused_port}/hooks"})
    assert r.status_code == 201, r.text
    user = unique("time")
    _, purchase, _ = buy(api, fake, user, PRO, type="auto_renewable", expires_in_seconds=3600)

    def events() -> list[dict]:
        return api.get("/admin/v1/events", admin=True, params={"user_id": user}).json()["events"]

    wait_until(events, 15, "the purchase's events")
    # The expiry sweep runs every second (SWEEP_INTERVAL=1s): a few passes, each of which would
    # have found the hour-long subscription expired at the instance's own time.
    time.sleep(4)
    # Granted, and not expired: at its own time the instance would have granted nothing.
    assert [e["type"] for e in events()] == ["order.paid", "entitlement.granted"]
    owned = api.entitlements(user)
    assert [e["entitlement"] for e in owned["entitlements"]] == ["pro"], owned
    expires = datetime.fromisoformat(owned["entitlements"][0]["expires_at"].replace("Z", "+00:00"))
    assert abs(expires.timestamp() * 1000 - purchase["expires_date_ms"]) < 1000, (owned, purchase)
    assert events()[-1]["user_state"] == owned
    # What the user's next event starts from is the database's present, not the future.
    assert float(db.scalar(f"SELECT extract(epoch FROM last_state_at - now()) FROM user_event_sequences "
                           f"WHERE user_id = '{user}'")) < 60

    # The first delivery failed (nothing listens): its retry is due WEBHOOK_RETRY_BASE after the
    # attempt, by PostgreSQL's clock, and not two hours later.
    query = ("SELECT extract(epoch FROM d.next_attempt_at - a.attempted_at), "
             "extract(epoch FROM d.next_attempt_at - now()) "
             "FROM webhook_deliveries d JOIN webhook_attempts a ON a.delivery_id = d.id "
             f"WHERE d.user_id = '{user}' AND d.state = 'pending' AND d.attempts = 1")
    [[after_attempt, from_now]] = wait_until(lambda: db.rows(query) or None, 15, "a failed attempt")
    assert 58 <= float(after_attempt) <= 62, after_attempt
    assert 0 < float(from_now) <= 60, from_now

    # The log says, once, how far this machine's clock is off.
    said = [line for line in sk.log_lines_json() if line["msg"].startswith("this machine's clock differs")]
    assert len(said) == 1, said
    assert abs(int(said[0]["offset_ms"]) - SKEW_SECONDS * 1000) < 1000, said
