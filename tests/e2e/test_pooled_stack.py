"""Issue 15: the scaled-out shape, with the real components — two Storekeeper instances whose
statements go through PgBouncer in transaction pooling mode (DB_POOL_MODE=transaction), whose
LISTEN and migration lock go straight to the primary (DATABASE_DIRECT_URL), and whose admin
listings read a streaming replica (DATABASE_READ_URL). scripts/test starts PgBouncer and the
replica (STOREKEEPER_TEST_POOLER_PORT, STOREKEEPER_TEST_REPLICA_PORT).

The database's time zone is Pacific/Chatham (UTC+12:45 or +13:45, nothing like the server's):
Storekeeper sets no time zone of its own, so every scenario here also shows its statements do
not depend on the session's time zone.

The key scenarios of the suite are rerun here: settlement across instances, a burst of
identical reports split over both instances, a refund notification, and a catalog change made
through one instance seen by the other."""

from __future__ import annotations

import subprocess
import threading
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

import pytest
import requests

from support import (
    Client,
    Database,
    REPO,
    FakeAppStore,
    Storekeeper,
    buy,
    free_port,
    required_env,
    unique,
    user_headers,
    wait_for_order,
    wait_until,
)

GOLD = "com.example.tests.pooled.gold"
ZONE = "Pacific/Chatham"


def psql(port: str, database: str, sql: str) -> str:
    result = subprocess.run(
        ["psql", "-h", "127.0.0.1", "-p", port, "-U", "storekeeper", "-d", database, "-X", "-q", "-tA",
         "-F", "\t", "-v", "ON_ERROR_STOP=1", "-c", sql],
        capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, f"psql :{port}/{database} failed: {result.stderr.strip()}\nSQL: {sql}"
    return result.stdout.strip()


@dataclass
class Pooled:
    a: Storekeeper
    b: Storekeeper
    fake: FakeAppStore
    db: Database
    pooler_port: str
    replica_port: str

    def replica(self, sql: str) -> str:
        return psql(self.replica_port, self.db.name, sql)

    def pause_replay(self) -> None:
        psql(self.replica_port, "postgres", "SELECT pg_wal_replay_pause()")

    def resume_replay(self) -> None:
        psql(self.replica_port, "postgres", "SELECT pg_wal_replay_resume()")


@pytest.fixture(scope="module")
def pooled(module_launcher) -> Pooled:
    pooler_port = required_env("STOREKEEPER_TEST_POOLER_PORT")
    replica_port = required_env("STOREKEEPER_TEST_REPLICA_PORT")
    db = module_launcher.database()
    db.server.psql(f"ALTER DATABASE \"{db.name}\" SET timezone = '{ZONE}'")
    # The replica has the database once it has replayed its creation.
    wait_until(lambda: psql(replica_port, "postgres",
                            f"SELECT count(*) FROM pg_database WHERE datname = '{db.name}'") == "1",
               30, "the replica never showed the new database")
    env = {
        "DATABASE_URL": f"postgresql://storekeeper@127.0.0.1:{pooler_port}/{db.name}",
        "DATABASE_DIRECT_URL": db.url,
        "DATABASE_READ_URL": f"postgresql://storekeeper@127.0.0.1:{replica_port}/{db.name}",
        "DB_POOL_MODE": "transaction",
    }
    port = free_port()
    fake = module_launcher.fake(notify_port=port)
    a = module_launcher.storekeeper(db, fake=fake, port=port, **env)
    b = module_launcher.storekeeper(db, fake=fake, share_admin_with=a, **env)
    a.client.put_product(GOLD, grants={"balance": {"gold": 100}}, content={"message": "100 gold"})
    return Pooled(a, b, fake, db, pooler_port, replica_port)


def test_a_direct_url_naming_the_pooler_again_stops_start_up_naming_it(module_launcher, binary):
    # The pooler's URL copied into DATABASE_DIRECT_URL started ready, and its LISTEN, dropped
    # with each transaction, never heard a catalog change.
    pooler_port = required_env("STOREKEEPER_TEST_POOLER_PORT")
    db = module_launcher.database()
    pooler = f"postgresql://storekeeper@127.0.0.1:{pooler_port}/{db.name}"
    env = module_launcher.env(db, free_port(), DATABASE_URL=pooler, DATABASE_DIRECT_URL=pooler,
                              DB_POOL_MODE="transaction")
    result = subprocess.run([binary, "serve"], env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 2, result.stdout + result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "DATABASE_DIRECT_URL" in lines[0] and "LISTEN" in lines[0], lines


def test_a_listener_handed_a_pooled_session_says_so(module_launcher, binary):
    # The same pooler under another name passes the start-up check; the listener's own check
    # sees a second session handed its server connection, and says so as an error.
    pooler_port = required_env("STOREKEEPER_TEST_POOLER_PORT")
    db = module_launcher.database()
    migrate_env = module_launcher.env(db, free_port())
    migrated = subprocess.run([binary, "migrate"], env=migrate_env, capture_output=True, text=True, timeout=120)
    assert migrated.returncode == 0, migrated.stderr
    sk = module_launcher.storekeeper(
        db, start=False, DB_POOL_MODE="transaction",
        DATABASE_DIRECT_URL=f"postgresql://storekeeper@localhost:{pooler_port}/{db.name}")
    sk.argv.append("--no-migrate")
    sk.start()

    def shared() -> dict | None:
        return next((line for line in sk.log_lines_json()
                     if line.get("level") == "error" and "not its own" in line.get("msg", "")), None)
    line = wait_until(shared, 15, "the listener should say its session is a pooler's")
    assert line.get("setting") == "DATABASE_DIRECT_URL", line


def test_a_listener_on_postgresql_itself_says_nothing_of_the_kind(pooled):
    for sk in (pooled.a, pooled.b):
        assert not [line for line in sk.log_lines_json() if "not its own" in line.get("msg", "")], \
            sk.log_tail()


def test_statements_go_through_pgbouncer_and_listen_goes_to_the_primary(pooled):
    # Both instances answer their statements through PgBouncer: its pool for this database has
    # clients (the admin console's SHOW CLIENTS lists them)...
    pooled.a.client.get("/v1/products")
    pooled.b.client.get("/v1/products")
    clients = psql(pooled.pooler_port, "pgbouncer", "SHOW CLIENTS")
    assert sum(1 for line in clients.splitlines() if f"\t{pooled.db.name}\t" in line) >= 2, clients
    # ...while each instance's LISTEN is a session of its own on the primary itself.
    listening = wait_until(lambda: (lambda n: n if n == "2" else None)(pooled.db.scalar(
        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
        "AND query LIKE 'LISTEN %'")), 10, "both instances should LISTEN on the primary")
    assert listening == "2"
    # The migrations ran once, over the direct URL, under the session lock.
    assert pooled.db.scalar("SELECT count(*) FROM schema_migrations") == \
        str(len(list((REPO / "Migrations").glob("*.sql"))))


def test_a_purchase_ordered_on_one_instance_settles_on_the_other(pooled):
    user = unique("pooled")
    order = pooled.a.client.create_order(user, GOLD)
    purchase = pooled.fake.purchase(GOLD, "consumable", app_account_token=order["app_account_token"])
    r = pooled.b.client.report(order["trade_no"], signed_transaction=purchase["signed_transaction"])
    assert r.status_code == 200, r.text
    assert r.json()["order"]["trade_status"] == "TRADE_SUCCESS"
    # Read after its own write, on the other instance: the primary, never the replica.
    assert pooled.a.client.order(order["trade_no"])["trade_status"] == "TRADE_SUCCESS"
    assert pooled.a.client.balance(user) == 100
    # Times are UTC whatever the session's time zone (the database's is Chatham's).
    created = pooled.a.client.order(order["trade_no"])["created_at"]
    assert created.endswith("Z"), created
    at = datetime.fromisoformat(created.replace("Z", "+00:00"))
    assert abs((datetime.now(timezone.utc) - at).total_seconds()) < 300, created
    assert pooled.db.scalar("SELECT current_setting('TimeZone')") == ZONE


def test_identical_reports_split_over_both_instances_settle_once(pooled):
    user = unique("pooled-burst")
    order = pooled.a.client.create_order(user, GOLD)
    purchase = pooled.fake.purchase(GOLD, "consumable", app_account_token=order["app_account_token"])
    body = {"trade_no": order["trade_no"], "trade_status": "TRADE_SUCCESS",
            "signed_transaction": purchase["signed_transaction"]}
    n = 40
    barrier = threading.Barrier(n)
    answers: list = [None] * n

    def fire(i):
        session = requests.Session()
        base = (pooled.a if i % 2 == 0 else pooled.b).url
        barrier.wait(timeout=30)
        try:
            r = session.post(base + "/v1/trade-reports", json=body, headers=user_headers(user), timeout=60)
            answers[i] = (r.status_code, r.json())
        except Exception as e:  # reported below
            answers[i] = ("error", repr(e))

    threads = [threading.Thread(target=fire, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    busy = [a for a in answers if a is not None and a[0] == 503 and a[1].get("code") == "verification_busy"]
    errors = [a for a in answers if a is None or (a[0] not in (200, 202) and a not in busy)]
    assert not errors, f"{len(errors)} answers were neither 200, 202 nor 503 busy: {errors[:5]}"
    oks = [a[1] for a in answers if a[0] == 200]
    assert oks
    granted = [b["delivery"].pop("newly_granted") for b in oks]
    assert granted.count(True) <= 1, granted
    assert all(b == oks[0] for b in oks), "the 200 answers differ"
    wait_for_order(pooled.b.client, order["trade_no"], "TRADE_SUCCESS")
    assert pooled.b.client.balance(user) == 100
    tx = purchase["transaction_id"]
    assert pooled.db.scalar(f"SELECT count(*) FROM ledger WHERE transaction_id = '{tx}'") == "1"


def test_a_refund_notification_reaches_either_instance_once(pooled):
    user = unique("pooled-refund")
    order, purchase, _ = buy(pooled.b.client, pooled.fake, user, GOLD)
    assert pooled.a.client.balance(user) == 100
    # The fake App Store notifies instance A; instance B gets the same notification again.
    note = pooled.fake.refund(purchase["transaction_id"])
    assert note["delivered_status"] == 200, note
    r = pooled.b.client.post_notification(note["signed_payload"])
    assert r.status_code == 200, r.text
    closed = wait_for_order(pooled.b.client, order["trade_no"], "TRADE_CLOSED")
    assert closed["close_reason"] == "refunded"
    assert pooled.b.client.balance(user) == 0
    ledger = pooled.db.rows(f"SELECT kind, amount FROM ledger WHERE transaction_id = "
                            f"'{purchase['transaction_id']}' ORDER BY id")
    assert ledger == [["grant", "100"], ["refund", "-100"]]


def test_a_catalog_change_through_one_instance_is_served_by_the_other(pooled):
    product = unique("com.example.tests.pooled.new")
    assert pooled.b.client.get(f"/v1/products/{product}").status_code == 404
    pooled.a.client.put_product(product, price="7.00", title="Seven")
    # B's in-memory catalog is refreshed by NOTIFY, received on its direct LISTEN session.
    served = wait_until(lambda: (lambda r: r.json() if r.status_code == 200 else None)(
        pooled.b.client.get(f"/v1/products/{product}")), 10, "instance B never served the new product")
    assert served["title"] == "Seven" and served["price"] == "7.00"
    pooled.a.client.put_product(product, price="8.00", title="Eight")
    wait_until(lambda: pooled.b.client.get(f"/v1/products/{product}").json().get("price") == "8.00", 10,
               "instance B kept the old price")


def test_admin_listings_come_from_the_replica_and_orders_from_the_primary(pooled):
    user = unique("pooled-replica")
    api = pooled.b.client
    pooled.pause_replay()
    try:
        order = pooled.a.client.create_order(user, GOLD)
        # The order is on the primary: its owner reads it at once, through either instance.
        assert api.order(order["trade_no"])["trade_status"] == "WAIT_BUYER_PAY"
        r = api.get(f"/admin/v1/orders/{order['trade_no']}", admin=True)
        assert r.status_code == 200, r.text
        # The listing reads the replica, whose replay is paused: it does not have the order yet.
        assert [o["trade_no"] for o in api.admin_orders(user_id=user)] == []
        assert pooled.replica(f"SELECT count(*) FROM orders WHERE trade_no = '{order['trade_no']}'") == "0"
        # Readiness and metrics say how far behind the replica is.
        ready = requests.get(pooled.b.url + "/readyz", timeout=10).json()
        assert ready["replica"]["status"] == "streaming"
        assert ready["replica"]["replay_paused"] is True
        assert ready["replica"]["lag_bytes"] > 0
        metrics = pooled.b.client.get("/metrics", admin=True, timeout=10).text
        assert "storekeeper_replica_up 1" in metrics
        lag = [line for line in metrics.splitlines() if line.startswith("storekeeper_replica_lag_bytes ")]
        assert lag and int(lag[0].split()[1]) > 0, metrics
        assert 'storekeeper_db_sessions{pool="replica"}' in metrics
    finally:
        pooled.resume_replay()
    listed = wait_until(lambda: api.admin_orders(user_id=user) or None, 15,
                        "the listing never showed the order after replay resumed")
    assert [o["trade_no"] for o in listed] == [order["trade_no"]]
    # Caught up: no lag left to report (the primary keeps writing, so allow a moment).
    wait_until(lambda: requests.get(pooled.b.url + "/readyz", timeout=10).json()["replica"]["lag_bytes"] == 0,
               15, "the replica's lag never came back to 0")


def test_the_feed_read_from_the_replica_never_skips_a_late_commit(pooled):
    """A standby's snapshot lists no running transaction ids, only its xmin: the whole feed read
    there must still wait for a transaction running on the primary, or a cursor taken past a
    later event would skip this one's when it commits."""
    api = pooled.b.client
    late, early = unique("feed-late"), unique("feed-early")

    def event(user: str) -> str:
        return ("INSERT INTO events (id, type, user_id, sequence, data, user_state) VALUES "
                f"(gen_random_uuid(), 'balance.changed', '{user}', 1, '{{}}', '{{}}')")

    def feed(**params) -> dict:
        r = api.get("/admin/v1/events", admin=True, params={"limit": 200, **params})
        assert r.status_code == 200, r.text
        return r.json()

    with pooled.db.holding(event(late), end="COMMIT"):
        pooled.db.server.psql(event(early), database=pooled.db.name)
        wait_until(lambda: pooled.replica(f"SELECT count(*) FROM events WHERE user_id = '{early}'") == "1",
                   15, "the replica never had the early event")
        before = feed()
        assert early not in [e["user_id"] for e in before["events"]]
    wait_until(lambda: pooled.replica(f"SELECT count(*) FROM events WHERE user_id = '{late}'") == "1",
               15, "the replica never had the late event")
    after = wait_until(lambda: (lambda page: page if early in [e["user_id"] for e in page["events"]] else None)(
        feed(**({"after": before["next_cursor"]} if "next_cursor" in before else {}))), 15,
        "the feed never showed the early event")
    assert [e["user_id"] for e in after["events"] if e["user_id"] in (late, early)] == [late, early]


def test_the_commands_run_again_and_again_through_pgbouncer(pooled):
    # A one-shot command's named statements would stay on PgBouncer's server connections after
    # it exits, and the next command's of the same name fail there (42P05): commands keep no
    # statement cache. Each runs twice, through the pooled environment the servers use.
    env = dict(pooled.a.env)
    now = datetime.now(timezone.utc)
    window = ["--from", (now - timedelta(days=1)).isoformat(), "--to", (now + timedelta(days=1)).isoformat()]
    commands = [["export", "orders", *window], ["export", "ledger", *window, "--format", "jsonl"],
                ["charts-backfill"], ["charts-backfill", "--changes"], ["seed-demo"], ["migrate"]]
    for command in commands * 2:
        done = subprocess.run([pooled.a.argv[0], *command], env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, (command, done.stdout[-400:], done.stderr[-800:])


def test_a_replica_that_never_answers_does_not_hold_readiness(launcher):
    # A replica that accepts connections and then says nothing (frozen, or a network that
    # black-holes it): readiness reports it and answers, instead of waiting on it.
    import socket
    hole = socket.socket()
    hole.bind(("127.0.0.1", 0))
    hole.listen(64)
    try:
        db = launcher.database()
        sk = launcher.storekeeper(db, DATABASE_READ_URL=f"postgresql://storekeeper@127.0.0.1:{hole.getsockname()[1]}/x")
        for _ in range(2):
            r = requests.get(sk.url + "/readyz", timeout=30)
            assert r.status_code == 200, r.text
            assert r.json()["replica"]["status"] == "timeout", r.json()
        assert sk.client.get("/v1/products").status_code == 200
    finally:
        hole.close()


# What DEPLOYMENT.md's "What reads where" lists under the replica, and a sample of the primary's.
REPLICA_READS = [
    "/admin/v1/events?limit=1", "/admin/v1/charts/revenue", "/admin/v1/overview",
    "/admin/v1/charts/revenue/transactions?period=2026-01-01&from=2026-01-01&to=2026-01-31",
    "/admin/v1/orders",
    "/admin/v1/notifications", "/admin/v1/consumption-requests", "/admin/v1/audit",
    "/admin/v1/reconcile/repairs", "/admin/v1/transactions?app_transaction_id=1",
]
PRIMARY_READS = [
    "/admin/v1/products", "/admin/v1/offerings", "/admin/v1/experiments", "/admin/v1/currency-rates",
    "/admin/v1/webhook-endpoints", "/admin/v1/webhook-deliveries", "/admin/v1/users/replica-down",
    "/admin/v1/users/replica-down/ledger", "/admin/v1/users/replica-down/transactions",
    "/admin/v1/users/replica-down/adjustments",
]


def test_a_replica_that_is_down_stops_only_the_reads_that_go_to_it(launcher):
    # The replica's port refuses connections: the instance stays ready, apps and the primary's
    # admin reads go on, and exactly the reads DEPLOYMENT.md routes to the replica are 503.
    import socket
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()
    sk = launcher.storekeeper(launcher.database(), DATABASE_READ_URL=f"postgresql://storekeeper@127.0.0.1:{port}/x")
    api = sk.client
    ready = requests.get(sk.url + "/readyz", timeout=30)
    assert ready.status_code == 200 and ready.json()["replica"]["status"] == "unreachable", ready.text
    api.put_product(GOLD, grants={"balance": {"gold": 100}})
    order = api.create_order(unique("replica-down"), GOLD)
    assert api.get(f"/admin/v1/orders/{order['trade_no']}", admin=True).status_code == 200
    for path in REPLICA_READS:
        r = api.get(path, admin=True)
        assert r.status_code == 503 and r.json()["code"] == "database_unavailable", (path, r.status_code, r.text)
    for path in PRIMARY_READS:
        r = api.get(path, admin=True)
        assert r.status_code == 200, (path, r.status_code, r.text)
    # An export streams: its head is sent before the first page is read, so it is cut (no last
    # chunk), as any export whose database goes away.
    with pytest.raises(requests.exceptions.ChunkedEncodingError):
        api.get("/admin/v1/exports/orders?from=2026-01-01&to=2026-01-02", admin=True).content
