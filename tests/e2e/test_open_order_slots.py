"""Issue 23: the open-order limit is exact under contention. Two instances on one database, 200
concurrent POST /v1/orders for one user: below MAX_OPEN_ORDERS_PER_USER none is refused; at a
limit smaller than the burst exactly the limit is created and every other one is refused 409,
and the user never holds more than the limit."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from support import problem, unique

GOLD = "com.example.tests.slots.gold"
BURST = 200


# Group commit (the default), and every order in its own statement: the lone path, whose
# racers all meet on the user's slots at once.
PATHS = pytest.mark.parametrize("batch_max", ["64", "1"], ids=["group-commit", "one-by-one"])


def two_instances(launcher, limit: int, batch_max: str):
    db = launcher.database()
    env = {"MAX_OPEN_ORDERS_PER_USER": str(limit), "ORDER_BATCH_MAX": batch_max}
    a = launcher.storekeeper(db=db, **env)
    b = launcher.storekeeper(db=db, share_admin_with=a, **env)
    a.client.put_product(GOLD)
    return db, a, b


def burst(a, b, user: str, keyed_every: int = 0) -> list:
    """BURST orders for `user`, alternating between the instances, all released at once; every
    `keyed_every`-th one carries an Idempotency-Key of its own (its batch runs in a transaction)."""
    start = threading.Barrier(BURST)

    def post(i: int):
        client = (a if i % 2 == 0 else b).client
        key = unique("slot-key") if keyed_every and i % keyed_every == 0 else None
        start.wait()
        return client.post_order(user, GOLD, key=key)

    with ThreadPoolExecutor(max_workers=BURST) as pool:
        return list(pool.map(post, range(BURST)))


def batch_deadlocks(sk) -> int:
    r = sk.client.get("/metrics", admin=True, timeout=10)
    assert r.status_code == 200, r.text
    line = next(line for line in r.text.splitlines()
                if line.startswith("storekeeper_order_batch_deadlocks_total "))
    return int(line.split()[1])


def open_orders(db, user: str) -> int:
    return int(db.scalar(
        f"SELECT count(*) FROM orders WHERE user_id = '{user}' AND trade_status = 'WAIT_BUYER_PAY'"))


@PATHS
def test_a_user_below_the_limit_is_never_refused_under_a_burst_on_two_instances(launcher, batch_max):
    db, a, b = two_instances(launcher, 1000, batch_max)
    user = unique("slots-below")
    answers = burst(a, b, user, keyed_every=3)
    refused = [r for r in answers if r.status_code != 201]
    assert not refused, [(r.status_code, r.text) for r in refused[:5]]
    assert open_orders(db, user) == BURST
    # One slot each, every one within the limit.
    assert db.scalar(f"SELECT count(DISTINCT open_slot) FROM orders WHERE user_id = '{user}'") == str(BURST)
    assert int(db.scalar(f"SELECT max(open_slot) FROM orders WHERE user_id = '{user}'")) <= 1000
    # Keyed batches take their slots in one order: PostgreSQL never had to break a deadlock.
    for sk in (a, b):
        assert batch_deadlocks(sk) == 0


@PATHS
def test_a_burst_past_the_limit_creates_exactly_the_limit_and_refuses_the_rest(launcher, batch_max):
    limit = 50
    db, a, b = two_instances(launcher, limit, batch_max)
    user = unique("slots-at")
    seen = []
    done = threading.Event()

    def watch():
        # What the database holds for the user while the burst runs: never past the limit.
        while not done.is_set():
            seen.append(open_orders(db, user))

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        answers = burst(a, b, user, keyed_every=4)
    finally:
        done.set()
        watcher.join()
    statuses = sorted(r.status_code for r in answers)
    assert statuses == [201] * limit + [409] * (BURST - limit), statuses
    for r in answers:
        if r.status_code == 409:
            problem(r, 409, "too_many_open_orders")
    assert max(seen, default=0) <= limit
    assert open_orders(db, user) == limit
    assert int(db.scalar(f"SELECT max(open_slot) FROM orders WHERE user_id = '{user}'")) <= limit
    # At the limit the next order is refused on either instance; one cancelled makes room.
    problem(a.client.post_order(user, GOLD), 409, "too_many_open_orders")
    problem(b.client.post_order(user, GOLD), 409, "too_many_open_orders")
    trade_no = next(r.json()["trade_no"] for r in answers if r.status_code == 201)
    assert a.client.report(trade_no, trade_status="TRADE_CLOSED", reason="cancelled").status_code == 200
    assert b.client.post_order(user, GOLD).status_code == 201
    problem(a.client.post_order(user, GOLD), 409, "too_many_open_orders")


def test_a_key_refused_at_the_limit_is_not_kept_refusing_once_a_slot_frees(launcher):
    # The limit is a state, not a verdict on the request: retried with its key after the user
    # cancelled an order, the same request is made (and its replay names it in Location).
    sk = launcher.storekeeper(MAX_OPEN_ORDERS_PER_USER="1")
    api = sk.client
    api.put_product(GOLD)
    user, key = unique("slot-key"), "retry-after-cancel"
    held = api.post_order(user, GOLD)
    assert held.status_code == 201, held.text
    problem(api.post_order(user, GOLD, key=key), 409, "too_many_open_orders")
    cancelled = api.report(held.json()["trade_no"], trade_status="TRADE_CLOSED", reason="cancelled")
    assert cancelled.status_code == 200, cancelled.text
    made = api.post_order(user, GOLD, key=key)
    assert made.status_code == 201, made.text
    again = api.post_order(user, GOLD, key=key)
    assert again.status_code == 201 and again.headers["Idempotent-Replayed"] == "true"
    assert again.json() == made.json()
    assert again.headers["Location"] == made.headers["Location"] == f"/v1/orders/{made.json()['trade_no']}"
