"""Issue 2: PostgreSQL goes away and comes back; Storekeeper answers 503 quickly meanwhile and
recovers by itself. This stops the shared PostgreSQL server: the suite must run sequentially."""

from __future__ import annotations

import contextlib
import os
from concurrent.futures import ThreadPoolExecutor
import signal
import subprocess
import time
from pathlib import Path

import pytest
import requests

from support import pg_start, pg_stop, problem, required_env, unique, wait_until


@contextlib.contextmanager
def database_hung():
    """Stops (SIGSTOP) every PostgreSQL process: sessions stay open but nothing answers, as
    when the host hangs or a partition drops packets. Resumed (SIGCONT) on the way out."""
    data = Path(required_env("STOREKEEPER_TEST_PGDATA"))
    postmaster = int((data / "postmaster.pid").read_text().split()[0])
    children = subprocess.run(["pgrep", "-P", str(postmaster)], capture_output=True, text=True).stdout
    pids = [postmaster] + [int(pid) for pid in children.split()]
    for pid in pids:
        os.kill(pid, signal.SIGSTOP)
    try:
        yield
    finally:
        for pid in pids:
            os.kill(pid, signal.SIGCONT)


def test_database_restart_gives_503_while_down_and_recovers_without_restart(storekeeper):
    sk = storekeeper()
    api = sk.client
    product = "com.example.tests.restart.gold"
    api.put_product(product)
    before = api.create_order(unique("restart"), product)

    pg_stop()
    try:
        # While the database is down: a quick 503 problem, and readiness says so.
        started = time.monotonic()
        r = api.post_order(unique("restart"), product)
        problem(r, 503, "database_unavailable")
        assert r.headers.get("Retry-After")
        assert time.monotonic() - started < 15, "the 503 must not wait for the database to return"
        ready = requests.get(sk.url + "/readyz", timeout=15)
        assert ready.status_code == 503
        assert requests.get(sk.url + "/healthz", timeout=5).status_code == 200
        # The catalog is served from memory.
        assert requests.get(sk.url + "/v1/products", timeout=5).status_code == 200
    finally:
        pg_start()

    wait_until(lambda: requests.get(sk.url + "/readyz", timeout=5).status_code == 200, 30,
               "/readyz did not recover after PostgreSQL came back")
    user = unique("restart")
    after = wait_until(lambda: (lambda r: r.json() if r.status_code == 201 else None)(api.post_order(user, product)),
                       30, "orders did not succeed again after PostgreSQL came back")
    assert after["trade_status"] == "WAIT_BUYER_PAY"
    assert api.order(before["trade_no"])["trade_no"] == before["trade_no"]
    assert sk.running(), "Storekeeper must survive the database restart"


def test_after_a_database_restart_catalog_changes_still_reach_every_instance(launcher):
    db = launcher.database()
    a = launcher.storekeeper(db)
    b = launcher.storekeeper(db, share_admin_with=a)
    product = "com.example.tests.restart.listen"
    a.client.put_product(product, price="1.00")
    wait_until(lambda: b.client.get(f"/v1/products/{product}").status_code == 200, 5, "B never saw the product")

    pg_stop()
    pg_start()
    wait_until(lambda: requests.get(a.url + "/readyz", timeout=5).status_code == 200, 30, "A did not recover")
    wait_until(lambda: requests.get(b.url + "/readyz", timeout=5).status_code == 200, 30, "B did not recover")

    r = a.client.request("PATCH", f"/admin/v1/products/{product}", admin=True, json={"price": "2.00"})
    assert r.status_code == 200, r.text
    # B's LISTEN connection was cut by the restart: it must reconnect (and reload) by itself.
    wait_until(lambda: b.client.get(f"/v1/products/{product}").json()["price"] == "2.00", 10,
               "instance B never served the change made after the database restart")


def test_sigterm_exits_0_in_bounded_time_while_the_database_hangs(storekeeper):
    sk = storekeeper(SWEEP_INTERVAL="1s")
    product = "com.example.tests.restart.hung"
    sk.client.put_product(product)
    sk.client.create_order(unique("hung"), product)
    with database_hung():
        # Not an assertion: the sweeper (every second) gets to send a statement that hangs.
        time.sleep(3)
        started = time.monotonic()
        sk.signal(signal.SIGTERM)
        try:
            code = sk.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            pytest.fail(f"still running 30 s after SIGTERM while the database hangs\n{sk.log_tail()}")
    assert code == 0, sk.log_tail()
    assert time.monotonic() - started < 25
    assert "background work did not stop in time" in sk.log(), sk.log_tail()


def test_readyz_answers_503_in_time_while_the_database_hangs(storekeeper):
    # No worker takes the pool's idle sessions meanwhile: /readyz gets one that will hang.
    sk = storekeeper(SWEEP_INTERVAL="1h", WEBHOOK_POLL_INTERVAL="1h")
    with ThreadPoolExecutor(8) as pool:
        assert set(pool.map(lambda _: requests.get(sk.url + "/readyz", timeout=5).status_code, range(8))) == {200}
    with database_hung():
        for _ in range(3):
            started = time.monotonic()
            try:
                r = requests.get(sk.url + "/readyz", timeout=8)
            except requests.Timeout:
                pytest.fail("/readyz did not answer within 8 s while the database hangs")
            problem(r, 503, "database_unavailable")
            assert time.monotonic() - started < 5
        assert requests.get(sk.url + "/healthz", timeout=5).status_code == 200
    wait_until(lambda: requests.get(sk.url + "/readyz", timeout=5).status_code == 200, 30,
               "/readyz did not recover after the database resumed")


def test_sigterm_while_another_instance_holds_the_migration_lock_stops_without_serving(launcher):
    # Another instance migrating holds the lock for as long as its migrations take; an instance
    # told to stop meanwhile stops there, and never begins serving.
    db = launcher.database()
    with db.holding("SELECT pg_advisory_lock(8319396948778640741)"):  # Migrator.lockKey
        sk = launcher.storekeeper(db, start=False)
        sk.spawn()
        wait_until(lambda: db.scalar(
            "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
            "AND query LIKE 'SELECT pg_advisory_lock%'") == "1", 20, "the instance never waited for the lock")
        sk.signal(signal.SIGTERM)
        assert sk.proc is not None and sk.proc.wait(timeout=30) == 0, sk.log_tail()
    log = sk.log()
    assert "signal received during start-up; stopping" in log, log[-2000:]
    assert "storekeeper serving" not in log
