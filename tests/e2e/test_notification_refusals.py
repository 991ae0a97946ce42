"""An App Store notification the database refuses for a reason that passes (here a lock held
longer than the role's `lock_timeout`, 55P03; the same path takes a statement timeout, a full
disk, a node a failover made read-only) stays pending and is applied by a later pass once the
reason is gone. Kept as failed it would never be applied: Apple's redelivery and the
notification history are duplicates of it by then, and the refunded gold would stay
spendable."""

from __future__ import annotations

from support import buy, unique, wait_until

GOLD = "com.example.tests.refusals.gold"


def notification(db, uuid: str) -> list[str] | None:
    rows = db.rows("SELECT state, attempts, coalesce(result, '') FROM apple_notifications "
                   f"WHERE notification_uuid = '{uuid}'")
    return rows[0] if rows else None


def test_a_refund_refused_by_a_lock_timeout_is_applied_once_the_lock_is_gone(launcher):
    db = launcher.database()
    # An operator's usual guard on the app's role: a lock wait ends after 1 s.
    stack = launcher.stack(db=db, DATABASE_URL=db.url + "?options=-c%20lock_timeout%3D1s")
    api, fake = stack.api, stack.fake
    api.put_product(GOLD, grants={"balance": {"gold": 100}})
    user = unique("refused")
    order, purchase, _ = buy(api, fake, user, GOLD)
    assert api.balance(user) == 100
    trade_no = order["trade_no"]
    # Another transaction holds the order's row (a settlement, an admin's transfer, an
    # operator's query) for longer than the lock timeout.
    with db.holding(f"SELECT 1 FROM orders WHERE trade_no = '{trade_no}' FOR UPDATE"):
        note = fake.refund(purchase["transaction_id"])
        assert note["delivered_status"] == 200
        uuid = note["notification_uuid"]
        refused = wait_until(lambda: (lambda row: row if row and "55P03" in row[2] else None)(
            notification(db, uuid)), 60, "the refund never met the lock")
        assert refused[0] == "pending", refused
        assert api.balance(user) == 100
    applied = wait_until(lambda: (lambda row: row if row and row[0] != "pending" else None)(
        notification(db, uuid)), 60, "the refund was not applied once the lock was gone")
    assert applied[0] == "processed", applied
    assert api.balance(user) == 0
    assert api.order(trade_no)["trade_status"] == "TRADE_CLOSED"
    assert any(line.get("msg", "").startswith("notification refused by the database")
               for line in stack.sk.log_lines_json())
    assert not [line for line in stack.sk.log_lines_json()
                if line.get("msg") == "notification could not be applied"]
