"""Issue 3: unpaid orders past ORDER_TTL are closed as expired by the sweeper, with history;
with two instances sweeping one database each order is closed exactly once."""

from __future__ import annotations

import time
from datetime import datetime, timedelta

from support import unique, wait_until

GOLD = "com.example.tests.expiry.gold"


def parse_time(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def test_an_unpaid_order_is_closed_as_expired_after_the_ttl(storekeeper, new_db):
    db = new_db()
    a = storekeeper(db, ORDER_TTL="2s", SWEEP_INTERVAL="1s")
    b = storekeeper(db, ORDER_TTL="2s", SWEEP_INTERVAL="1s", share_admin_with=a)
    api = a.client
    api.put_product(GOLD)
    user = unique("expiry")
    orders = [api.create_order(user, GOLD) for _ in range(5)]
    for order in orders:
        assert abs(parse_time(order["expires_at"]) - parse_time(order["created_at"]) - timedelta(seconds=2)) \
            < timedelta(milliseconds=500)
        assert order["trade_status"] == "WAIT_BUYER_PAY"

    for order in orders:
        closed = wait_until(lambda: (lambda o: o if o["trade_status"] == "TRADE_CLOSED" else None)(
            api.order(order["trade_no"])), 15, f"order {order['trade_no']} was not closed after its TTL")
        assert closed["close_reason"] == "expired"
        assert closed.get("closed_at")
        history = b.client.admin_order(order["trade_no"])["history"]
        expired = [h for h in history if h["to_status"] == "TRADE_CLOSED"]
        assert len(expired) == 1, f"closed more than once by two sweepers: {history}"
        assert expired[0]["reason"] == "expired" and expired[0]["from_status"] == "WAIT_BUYER_PAY"
        assert expired[0]["cause"] == "sweeper"

    # A fresh order is not touched before its time: made through a third instance whose orders
    # live an hour (the time is fixed at creation), it outlives the other two's sweeps.
    c = storekeeper(db, ORDER_TTL="1h", share_admin_with=a)
    fresh = c.client.create_order(user, GOLD)
    sweeps = db.scalar("SELECT count(*) FROM order_events WHERE cause = 'sweeper'")
    time.sleep(3)
    assert db.scalar("SELECT count(*) FROM order_events WHERE cause = 'sweeper'") == sweeps
    assert api.order(fresh["trade_no"])["trade_status"] == "WAIT_BUYER_PAY"
    closed = api.admin_orders(user_id=user, trade_status="TRADE_CLOSED")
    assert len(closed) == 5


def test_an_order_whose_invalid_report_lost_its_session_still_expires(launcher):
    # The retry worker ends an invalid report and lets its order be swept in one transaction:
    # in two, a session lost between them left the order waiting on nothing, never expired,
    # holding one of the user's open-order slots for good.
    stack = launcher.stack(ORDER_TTL="3s", SWEEP_INTERVAL="1s", REPORT_RETRY_BASE="1s")
    api, fake, db = stack.api, stack.fake, stack.db
    gold = "com.example.tests.expiry.stuck"
    api.put_product(gold, grants={"balance": {"gold": 10}})
    trade_no = api.create_order(unique("stuck"), gold)["trade_no"]
    theirs = fake.purchase(gold, "consumable", receipt_style="transaction", bundle_id="com.example.someone.else")
    fake.fault("http503")
    assert api.report(trade_no, receipt=theirs["receipt"]).status_code == 202
    assert api.order(trade_no)["verification"] == "pending"
    with db.holding(f"SELECT 1 FROM orders WHERE trade_no = '{trade_no}' FOR UPDATE"):
        fake.clear_faults()
        waiting = wait_until(lambda: db.scalar(
            "SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database() "
            "AND query ILIKE '%orders%'"), 30, "the release waiting on the order")
        assert db.scalar(f"SELECT pg_terminate_backend({waiting})") == "t"
    wait_until(lambda: api.order(trade_no)["trade_status"] == "TRADE_CLOSED", 30, "the order never expired")
    assert db.scalar(f"SELECT outcome FROM trade_reports WHERE trade_no = '{trade_no}'") == "invalid"
