"""Issue 13: concurrent POST /v1/orders are written in batches (group commit). The batching must
be invisible to clients: every answer is what a lone request would get, an Idempotency-Key
sent twice at once still makes one order, the open-order cap holds inside a batch, and a client
never sees 201 for an order that was not committed, whether the process dies mid-flush or its
database sessions are cut."""

from __future__ import annotations

import subprocess
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import requests

from support import problem, unique, wait_until

GOLD = "com.example.tests.batch.gold"


def burst(fn, items, workers=24):
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(fn, items))


def test_a_burst_gets_the_answers_lone_requests_would(launcher):
    db = launcher.database()
    sk = launcher.storekeeper(db=db, MAX_OPEN_ORDERS_PER_USER="3")
    api = sk.client
    api.put_product(GOLD)
    api.put_product(GOLD + ".off", active=False)
    api.put_product(GOLD + ".sword", type="non_consumable")
    capped = unique("capped")
    # Interleaved in one burst: fine orders, unknown and inactive products, two of a
    # non-consumable, and six orders of one user whose cap is three.
    work = []
    for i in range(60):
        work.append(("fine", unique("fine"), GOLD, None))
        if i % 10 == 0:
            work.append(("unknown", unique("u"), GOLD + ".nope", None))
            work.append(("inactive", unique("u"), GOLD + ".off", None))
            work.append(("quantity", unique("u"), GOLD + ".sword", 2))
        if i < 6:
            work.append(("capped", capped, GOLD, None))

    def post(item):
        kind, user, product, quantity = item
        return kind, user, api.post_order(user, product, quantity=quantity)

    results = burst(post, work)
    for kind, user, r in results:
        if kind == "fine":
            assert r.status_code == 201, r.text
            order = r.json()
            assert order["user_id"] == user and order["trade_status"] == "WAIT_BUYER_PAY"
            assert r.headers["Location"] == f"/v1/orders/{order['trade_no']}"
        elif kind == "unknown":
            problem(r, 404, "product_not_found")
        elif kind == "inactive":
            problem(r, 422, "product_inactive")
        elif kind == "quantity":
            problem(r, 422, "quantity_not_allowed")
    capped_answers = [r for kind, _, r in results if kind == "capped"]
    assert sorted(r.status_code for r in capped_answers) == [201] * 3 + [409] * 3
    for r in capped_answers:
        if r.status_code == 409:
            problem(r, 409, "too_many_open_orders")
    assert db.scalar(f"SELECT count(*) FROM orders WHERE user_id = '{capped}'") == "3"
    # Three distinct slots, and every order has its first event.
    assert db.scalar(f"SELECT count(DISTINCT open_slot) FROM orders WHERE user_id = '{capped}'") == "3"
    assert db.scalar("SELECT count(*) FROM orders o WHERE NOT EXISTS "
                     "(SELECT 1 FROM order_events e WHERE e.trade_no = o.trade_no)") == "0"


def test_one_idempotency_key_sent_many_times_at_once_makes_one_order(launcher):
    db = launcher.database()
    sk = launcher.storekeeper(db=db)
    api = sk.client
    api.put_product(GOLD)
    keys = [(unique("idem"), unique("key")) for _ in range(12)]
    # Each key four times in the same burst, among keyless orders that fill the batches.
    work = [("keyed", user, key) for user, key in keys for _ in range(4)]
    work += [("plain", unique("plain"), None) for _ in range(40)]
    work.sort(key=lambda item: hash(item[2] or item[1]))

    results = burst(lambda item: (item, api.post_order(item[1], GOLD, key=item[2])), work, workers=32)
    for (kind, user, key), r in results:
        if kind == "plain":
            assert r.status_code == 201, r.text
            continue
        # The first claim wins; a duplicate arriving meanwhile is told it is in flight, one
        # arriving after is replayed the same order.
        assert r.status_code in (201, 409), r.text
        if r.status_code == 409:
            problem(r, 409, "idempotency_key_in_flight")
    for user, key in keys:
        answers = [r for (_, u, k), r in results if k == key]
        created = {r.json()["trade_no"] for r in answers if r.status_code == 201}
        assert len(created) == 1, [a.text for a in answers]
        assert db.scalar(f"SELECT count(*) FROM orders WHERE user_id = '{user}'") == "1"
        # Across batches: the key now replays that order.
        again = api.post_order(user, GOLD, key=key)
        assert again.status_code == 201 and again.headers.get("Idempotent-Replayed") == "true"
        assert again.json()["trade_no"] in created
        assert db.scalar(f"SELECT state FROM idempotency_keys WHERE user_id = '{user}'") == "done"


def _burst_until(api, stop: threading.Event, seen: list, lock: threading.Lock, workers: int = 16):
    def loop():
        while not stop.is_set():
            user = unique("crash")
            try:
                r = api.post_order(user, GOLD, key=unique("k") if len(seen) % 2 else None)
                outcome = (user, r.status_code, r.json() if r.status_code == 201 else r.text)
            except requests.RequestException as e:
                outcome = (user, "cut", repr(e))
            with lock:
                seen.append(outcome)

    threads = [threading.Thread(target=loop) for _ in range(workers)]
    for t in threads:
        t.start()
    return threads


def _assert_every_201_committed(db, seen):
    created = [(user, body) for user, status, body in seen if status == 201]
    assert created, seen[:5]
    stored = {}
    # In chunks: a fast machine answers thousands in a burst, and one psql argument holds
    # at most 128 KiB.
    for start in range(0, len(created), 500):
        trade_nos = ",".join(f"'{body['trade_no']}'" for _, body in created[start:start + 500])
        stored.update(db.rows(f"SELECT trade_no, user_id FROM orders WHERE trade_no IN ({trade_nos})"))
    missing = [body["trade_no"] for _, body in created if body["trade_no"] not in stored]
    assert not missing, f"{len(missing)} orders answered 201 but not committed: {missing[:5]}"
    for user, body in created:
        assert stored[body["trade_no"]] == user


def test_sigkill_mid_flush_never_leaves_a_201_for_an_uncommitted_order(launcher):
    db = launcher.database()
    sk = launcher.storekeeper(db=db)
    api = sk.client
    api.put_product(GOLD)
    seen: list = []
    lock = threading.Lock()
    stop = threading.Event()
    threads = _burst_until(api, stop, seen, lock)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        with lock:
            if sum(1 for s in seen if s[1] == 201) >= 200:
                break
        time.sleep(0.02)
    sk.kill()
    time.sleep(0.5)
    stop.set()
    for t in threads:
        t.join(60)
    _assert_every_201_committed(db, seen)
    assert any(s[1] == "cut" for s in seen), "the kill cut no request short"


def test_database_sessions_cut_mid_flush_never_leave_a_201_for_an_uncommitted_order(launcher):
    db = launcher.database()
    sk = launcher.storekeeper(db=db)
    api = sk.client
    api.put_product(GOLD)
    seen: list = []
    lock = threading.Lock()
    stop = threading.Event()
    threads = _burst_until(api, stop, seen, lock)
    try:
        for _ in range(8):
            time.sleep(0.4)
            db.rows("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                    f"WHERE datname = '{db.name}' AND pid <> pg_backend_pid()")
        time.sleep(0.4)
    finally:
        stop.set()
        for t in threads:
            t.join(60)
    _assert_every_201_committed(db, seen)
    statuses = {s[1] for s in seen}
    assert statuses <= {201, 500, 503, "cut"}, statuses
    assert statuses & {500, 503}, "no request met a cut session"
    # It recovers: the next order is created.
    assert api.post_order(unique("after"), GOLD).status_code == 201


def test_a_flush_held_up_in_the_database_is_answered_and_logged_as_slow(launcher):
    db = launcher.database()
    # The third order waits for a flush the whole 10 s: within its bound here.
    sk = launcher.storekeeper(db=db, ORDER_QUEUE_TIMEOUT="30s")
    api = sk.client
    api.put_product(GOLD)
    server = db.server
    # Another session locks the product row for 10 s: the flush's foreign-key check on it
    # waits, as it would on a stalled disk, and so does everyone in the batch.
    holder = subprocess.Popen(
        ["psql", "-h", server.host, "-p", str(server.port), "-U", server.user, "-d", db.name,
         "-X", "-q", "-v", "ON_ERROR_STOP=1", "-c",
         f"BEGIN; SELECT 1 FROM products WHERE product_id = '{GOLD}' FOR UPDATE; "
         "SELECT pg_sleep(10); COMMIT;"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 10
        # Sleeping means the row is locked: the lock comes first in the same transaction.
        while db.scalar("SELECT count(*) FROM pg_stat_activity "
                        "WHERE wait_event = 'PgSleep' AND datname = current_database()") != "1":
            assert time.monotonic() < deadline, "the lock holder never started"
            time.sleep(0.02)
        users = [unique("slow") for _ in range(3)]
        started = time.monotonic()
        answers = burst(lambda user: api.post_order(user, GOLD), users, workers=3)
        waited = time.monotonic() - started
    finally:
        _, err = holder.communicate(timeout=30)
    assert holder.returncode == 0, err
    assert [r.status_code for r in answers] == [201] * 3, [r.text for r in answers]
    assert waited >= 1.0, "the flush was not held up: the test proves nothing"
    slow = [line for line in sk.log_lines_json()
            if line.get("msg", "").startswith("an order flush was slow")]
    assert slow, sk.log_tail()
    assert all(line["level"] == "warning" and line["ms"] >= 1000 for line in slow), slow
    assert sum(line["orders"] for line in slow) >= 1
    # A flush in the usual time says nothing at the default level.
    quick = api.post_order(unique("quick"), GOLD)
    assert quick.status_code == 201, quick.text
    assert len([line for line in sk.log_lines_json()
                if line.get("msg", "").startswith("an order flush was slow")]) == len(slow)


def test_orders_that_wait_past_their_bound_for_a_stuck_flush_get_503_and_are_never_written(launcher):
    # A flush stuck in the database (here on a lock; a host that vanished mid-statement holds
    # it until tcp_user_timeout) held every order behind it with no deadline: their clients
    # gave up, and their orders were written once it ended, for nobody.
    db = launcher.database()
    sk = launcher.storekeeper(db=db, ORDER_BATCH_FLUSHES="1", ORDER_QUEUE_TIMEOUT="500ms")
    api = sk.client
    api.put_product(GOLD)
    stuck, queued, keyed, key = unique("stuck"), [unique("queued") for _ in range(3)], unique("keyed"), unique("k")
    with ThreadPoolExecutor(max_workers=1) as leader:
        with db.holding(f"SELECT 1 FROM products WHERE product_id = '{GOLD}' FOR UPDATE"):
            first = leader.submit(api.post_order, stuck, GOLD)
            wait_until(lambda: db.scalar("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                                         "AND datname = current_database()") == "1",
                       30, "the first order's flush never waited for the lock")
            # The one flush is stuck: these wait for the next, past their bound, and are answered
            # while it still is.
            answers = burst(lambda user: api.post_order(user, GOLD), queued, workers=3)
            answers.append(api.post_order(keyed, GOLD, key=key))
            for r in answers:
                problem(r, 503, "database_unavailable")
                assert r.headers.get("Retry-After"), r.headers
            assert not first.done(), "the stuck flush was answered before the lock went"
        # The stuck flush had sent its order to the database: it is written once the lock goes.
        assert first.result(timeout=30).status_code == 201
    # The others never are, nor by a later flush.
    assert api.post_order(unique("after"), GOLD).status_code == 201
    for user in queued + [keyed]:
        assert db.scalar(f"SELECT count(*) FROM orders WHERE user_id = '{user}'") == "0", user
    # The key was released with the 503: sent again, the request makes its order, once.
    again = api.post_order(keyed, GOLD, key=key)
    assert again.status_code == 201, again.text
    assert db.scalar(f"SELECT count(*) FROM orders WHERE user_id = '{keyed}'") == "1"
    metrics = api.get("/metrics", admin=True).text
    assert "storekeeper_order_queue_timeouts_total 4" in metrics
    warned = [line for line in sk.log_lines_json()
              if line.get("msg", "").startswith("orders waited past ORDER_QUEUE_TIMEOUT")]
    assert warned and sum(line["orders"] for line in warned) == 4, sk.log_tail()


def test_an_order_whose_client_leaves_while_it_waits_for_a_stuck_flush_is_never_written(launcher):
    # A client that gave up (here after 1 s) closed its connection: its order, still waiting for
    # a flush to take it, is withdrawn then, not written for nobody when the flush ends (where
    # it took one of the user's open-order slots for a day).
    db = launcher.database()
    sk = launcher.storekeeper(db=db, ORDER_BATCH_FLUSHES="1", ORDER_QUEUE_TIMEOUT="60s")
    api = sk.client
    api.put_product(GOLD)
    stuck, gone, key = unique("stuck"), unique("gone"), unique("k")

    def answered_to_nobody() -> bool:
        return any(line.get("msg") == "request" and line.get("path") == "/v1/orders"
                   and line.get("status") == 503 for line in sk.log_lines_json())

    with ThreadPoolExecutor(max_workers=1) as leader:
        with db.holding(f"SELECT 1 FROM products WHERE product_id = '{GOLD}' FOR UPDATE"):
            first = leader.submit(api.post_order, stuck, GOLD)
            wait_until(lambda: db.scalar("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                                         "AND datname = current_database()") == "1",
                       30, "the first order's flush never waited for the lock")
            with requests.Session() as session:
                try:
                    r = session.post(api.base + "/v1/orders", json={"user_id": gone, "product_id": GOLD},
                                     headers={"Authorization": f"Bearer {api.bearer(gone)}",
                                              "Idempotency-Key": key}, timeout=1)
                    raise AssertionError(f"answered while the flush was stuck: {r.status_code} {r.text}")
                except requests.exceptions.ReadTimeout:
                    pass
            # Withdrawn while the flush is still stuck.
            wait_until(answered_to_nobody, 30, "the departed client's order was never withdrawn")
            assert not first.done(), "the stuck flush was answered before the lock went"
        assert first.result(timeout=30).status_code == 201
    assert api.post_order(unique("after"), GOLD).status_code == 201
    assert db.scalar(f"SELECT count(*) FROM orders WHERE user_id = '{gone}'") == "0"
    # Its key was released: the client's retry makes the order, once.
    again = api.post_order(gone, GOLD, key=key)
    assert again.status_code == 201, again.text
    assert db.scalar(f"SELECT count(*) FROM orders WHERE user_id = '{gone}'") == "1"
    assert not [line for line in sk.log_lines_json() if line.get("msg") == "handler failed"]
