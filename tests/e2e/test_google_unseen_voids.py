"""Voids Storekeeper never heard of by push (issue 25's known gap): the fake Google Play pushes
every notification but the ones a test withholds (`POST /fake/v1/pushes/withhold`, a push lost
for good), so only the voided purchases sweep (`voidedpurchases.list`) can learn of them.

- A purchase credited whose void's push never came: the sweep takes the credit back, once,
  however many passes list it again, and the push released late changes nothing.
- A void of a purchase Storekeeper never credited (bought, never reported): nothing is taken
  back nor credited, it is recorded and counted once (`storekeeper_google_unmatched_voids_total`,
  one log line), and a report of it afterwards is refused.
- A void of a renewal whose push never came either: the subscription ends once, and the renewal
  arriving late credits nothing.
- A subscription reported after Google refunded it, when Google's list no longer reaches back to
  the void: the void kept unmatched is applied by the next sweep, once.
"""

from __future__ import annotations

import time

import pytest

from google_support import FakeGooglePlay, push_env, start_pushing_fake
from support import unique, wait_until


@pytest.fixture(scope="module")
def google(tmp_path_factory):
    fake = start_pushing_fake(tmp_path_factory.mktemp("google-unseen-voids"))
    yield fake
    fake.terminate(15)
    fake.forget()


@pytest.fixture(scope="module")
def sk(module_launcher, module_storekeeper, google):
    db = module_launcher.database()
    sk = module_storekeeper(db, port=google.storekeeper_port, **push_env(google), GOOGLE_PLAY_SWEEP_INTERVAL="1s")
    sk.client.put_product("gu.gold", "consumable", grants={"balance": {"gold": 100}})
    sk.db = db
    return sk


def withheld_while(google, action) -> tuple[object, list[dict]]:
    """Runs `action` with the next push withheld; returns what it returned and the pushes it made."""
    before = set(google.pushes())
    google.control("pushes/withhold")
    result = action()
    made = [p for i, p in google.pushes().items() if i not in before]
    assert made and all(p["withheld"] and p["attempts"] == [] for p in made), made
    return result, made


def order_for(sk, user: str, product: str) -> dict:
    r = sk.client.post("/v1/orders", json={"user_id": user, "product_id": product, "store": "google_play"})
    assert r.status_code == 201, r.text
    return r.json()


def report(sk, order: dict, token: str):
    return sk.client.post("/v1/trade-reports", json={"trade_no": order["trade_no"], "trade_status": "TRADE_SUCCESS",
                                                     "purchase_token": token})


def refunds(sk, user: str) -> list[dict]:
    r = sk.client.get("/admin/v1/events", admin=True, params={"user_id": user, "limit": 200})
    assert r.status_code == 200, r.text
    return [e["data"] for e in r.json()["events"] if e["type"] == "purchase.refunded"]


def refund_amounts(sk, user: str) -> list[int]:
    r = sk.client.get(f"/v1/users/{user}/ledger")
    assert r.status_code == 200, r.text
    return [e["amount"] for e in r.json()["entries"] if e["kind"] == "refund"]


def sweeps_after(db, count: int = 2, name: str = "voided") -> None:
    """Waits until `count` more passes of the sweep `name` have ended: the voided sweep's each
    list the last 29 days again (from where the previous ended, less an hour), the
    subscriptions sweep's read each subscription back."""
    def last() -> str | None:
        return db.scalar(f"SELECT last_run_at FROM google_sweeps WHERE name = '{name}'")
    for _ in range(count):
        before = last()
        wait_until(lambda: last() != before, 30, "another voided sweep pass")


def applied(db, google, token: str) -> bool:
    """Every push about `token` so far was delivered and applied (none is pending)."""
    ids = [i for i, p in google.pushes().items() if token in str(p["data"])]
    if not ids or not all(google.pushes()[i]["delivered"] for i in ids):
        return False
    listed = ", ".join(f"'{i}'" for i in ids)
    return db.scalar(f"SELECT count(*) FROM google_notifications WHERE message_id IN ({listed}) "
                     "AND state <> 'pending'") == str(len(ids))


def notification_result(db, message_id: str) -> str | None:
    return db.scalar(f"SELECT state || ' ' || result FROM google_notifications WHERE message_id = '{message_id}'")


def metric(sk, name: str) -> int:
    text = sk.client.get("/metrics", admin=True).text
    return int(next(line.split()[1] for line in text.splitlines() if line.startswith(name + " ")))


def test_a_void_whose_push_never_came_is_taken_back_by_the_sweep_once(sk, google):
    user = unique("gu-void")
    order = order_for(sk, user, "gu.gold")
    token = google.buy("gu.gold", obfuscated_account_id=order["obfuscated_account_id"])["purchase_token"]
    assert report(sk, order, token).status_code == 200
    assert sk.client.balance(user) == 100
    void, (held,) = withheld_while(
        google, lambda: google.control("voids", {"purchase_token": token, "reason": 7}))
    assert held["data"]["voidedPurchaseNotification"]["purchaseToken"] == token
    wait_until(lambda: sk.client.order(order["trade_no"])["trade_status"] == "TRADE_CLOSED", 30,
               "refunded by the voided purchases sweep")
    # Only the sweep can have done it: Storekeeper never got the push.
    assert notification_result(sk.db, held["message_id"]) is None
    assert sk.client.order(order["trade_no"])["close_reason"] == "refunded"
    sweeps_after(sk.db)
    assert sk.client.balance(user) == 0
    assert [e["transaction_id"] for e in refunds(sk, user)] == [void["orderId"]]
    assert refund_amounts(sk, user) == [-100]
    assert sk.db.scalar(f"SELECT count(*) || ' ' || min(result) FROM google_voids "
                        f"WHERE purchase_token = '{token}'") == "1 refunded"
    # The push arrives at last: the entry was applied, nothing more is taken.
    google.control(f"pushes/{held['message_id']}/release")
    assert wait_until(lambda: notification_result(sk.db, held["message_id"]), 30,
                      "the late push applied") == "processed already_applied"
    assert sk.client.balance(user) == 0 and refund_amounts(sk, user) == [-100] and len(refunds(sk, user)) == 1


def test_a_void_of_a_purchase_never_credited_is_counted_once_and_takes_nothing(sk, google):
    counted = metric(sk, "storekeeper_google_unmatched_voids_total")
    bystander = unique("gu-bystander")
    order = order_for(sk, bystander, "gu.gold")
    # Bought on Google, never reported: its purchase push has no effect, nor has the void's.
    token = google.buy("gu.gold")["purchase_token"]
    void = google.control("voids", {"purchase_token": token, "reason": 1})
    wait_until(lambda: metric(sk, "storekeeper_google_unmatched_voids_total") == counted + 1, 30,
               "the sweep recorded the void it could match to nothing")
    assert sk.db.scalar(f"SELECT order_id || ' ' || voided_reason FROM google_unmatched_voids "
                        f"WHERE purchase_token = '{token}'") == f"{void['orderId']} 1"
    voided_pushes = [p for p in google.pushes().values()
                     if p["data"].get("voidedPurchaseNotification", {}).get("purchaseToken") == token]
    assert len(voided_pushes) == 1
    assert wait_until(lambda: notification_result(sk.db, voided_pushes[0]["message_id"]), 30,
                      "the void's push recorded") == "ignored unknown_token"
    # Listed again by every pass: still one entry, one log line.
    sweeps_after(sk.db)
    assert metric(sk, "storekeeper_google_unmatched_voids_total") == counted + 1
    logged = [line for line in sk.log().splitlines() if "never credited" in line and void["orderId"] in line]
    assert len(logged) == 1, logged
    assert sk.db.scalar(f"SELECT count(*) FROM google_voids WHERE purchase_token = '{token}'") == "0"
    # Reported afterwards, Google says canceled: refused, nothing credited.
    r = report(sk, order, token)
    assert r.status_code == 409 and r.json()["code"] == "purchase_canceled", r.text
    assert sk.client.balance(bystander) == 0 and refunds(sk, bystander) == []
    assert sk.client.order(order["trade_no"])["trade_status"] != "TRADE_SUCCESS"


def test_a_void_of_a_renewal_never_seen_ends_the_subscription_once(storekeeper, new_db, tmp_path):
    # A fake of its own, pushing to an instance that sweeps once at start and then not for an
    # hour: what it never got pushed, it never hears of.
    google = start_pushing_fake(tmp_path)
    db = new_db()
    first = storekeeper(db, port=google.storekeeper_port, **push_env(google), GOOGLE_PLAY_SWEEP_INTERVAL="1h")
    first.client.put_product("gu.vip", "auto_renewable", grants={"entitlement": "vip"})
    wait_until(lambda: db.scalar("SELECT count(*) FROM google_sweeps WHERE last_run_at IS NOT NULL") == "2",
               20, "the first sweeps ran")
    user = unique("gu-renewal")
    order = order_for(first, user, "gu.vip")
    token = google.subscribe("gu.vip", obfuscated_account_id=order["obfuscated_account_id"],
                             period_seconds=3600)["purchase_token"]
    assert report(first, order, token).status_code == 200
    # The purchase's push reads Google back: applied before the renewal, or it would see it.
    wait_until(lambda: applied(db, google, token), 30, "the purchase's push applied")
    first_id = first.client.order(order["trade_no"])["transaction_id"]

    def vip(sk) -> dict | None:
        return next((e for e in sk.client.entitlements(user)["entitlements"] if e["entitlement"] == "vip"), None)

    assert vip(first) is not None
    _, (renewed,) = withheld_while(
        google, lambda: google.control(f"subscriptions/{token}/events", {"event": "renew"}))
    renewal_id = google.subscription(token)["lineItems"][0]["latestSuccessfulOrderId"]
    assert renewal_id == first_id + "..0"
    # Google refunds the renewal, its latest order: the subscription is revoked and expired.
    void, (voided,) = withheld_while(google, lambda: google.control("voids", {"purchase_token": token}))
    assert void["orderId"] == renewal_id
    paid = {o["transaction_id"] for o in first.client.admin_orders(user_id=user) if o.get("transaction_id")}
    assert paid == {first_id} and vip(first) is not None
    # Another instance on the database sweeps every second: its voided pass (which runs before
    # subscription reconciliation) finds the void of an order Storekeeper never saw.
    second = storekeeper(db, **push_env(google), GOOGLE_PLAY_SWEEP_INTERVAL="1s")
    wait_until(lambda: vip(second) is None, 30, "the subscription ended by the sweep")
    # docs/GOOGLE_PLAY.md: an order never seen stands for the latest one Storekeeper knows.
    closed = second.client.order(order["trade_no"])
    assert (closed["trade_status"], closed["close_reason"]) == ("TRADE_CLOSED", "refunded")
    # The withheld pushes arrive late: the renewal credits nothing, the void takes nothing more.
    for held in (renewed, voided):
        google.control(f"pushes/{held['message_id']}/release")
    assert wait_until(lambda: notification_result(db, renewed["message_id"]), 30,
                      "the late renewal push applied") == "processed revoked_earlier"
    assert wait_until(lambda: notification_result(db, voided["message_id"]), 30,
                      "the late void push applied") == "processed already_applied"
    sweeps_after(db)
    orders = second.client.admin_orders(user_id=user)
    assert [o.get("transaction_id") for o in orders if o["trade_status"] == "TRADE_SUCCESS"] == []
    assert renewal_id not in {o.get("transaction_id") for o in orders}
    assert [e["transaction_id"] for e in refunds(second, user)] == [first_id]
    assert vip(second) is None
    assert db.scalar(f"SELECT count(*) FROM google_voids WHERE purchase_token = '{token}'") == "1"
    google.terminate(15)
    google.forget()


def test_a_subscription_reported_after_google_refunded_it_is_taken_back_by_the_next_sweep(
        storekeeper, new_db, tmp_path):
    # Bought and refunded three hours ago, before any Storekeeper ran: Google's list shows the
    # void to the first pass (29 days back) only; later passes start an hour before the last.
    google = FakeGooglePlay(tmp_path, name="fake-googleplay-late-report").start()
    google.control("clock", {"now_ms": int(time.time() * 1000) - 3 * 3600 * 1000})
    try:
        token = google.subscribe("gu.vip")["purchase_token"]
        void = google.control("voids", {"purchase_token": token})
    finally:
        google.control("clock", {"now_ms": int(time.time() * 1000)})
    db = new_db()
    sk = storekeeper(db, **google.env_for_storekeeper(), GOOGLE_PLAY_SWEEP_INTERVAL="1s")
    sk.client.put_product("gu.vip", "auto_renewable", grants={"entitlement": "vip"})
    wait_until(lambda: db.scalar(f"SELECT count(*) FROM google_unmatched_voids WHERE purchase_token = '{token}'")
               == "1", 30, "the first pass kept the void it could match to nothing")
    sweeps_after(db)
    user = unique("gu-late-report")
    order = order_for(sk, user, "gu.vip")
    # Google answers an expired subscription as once paid: the report credits it.
    r = report(sk, order, token)
    assert r.status_code == 200, r.text
    wait_until(lambda: sk.client.order(order["trade_no"])["trade_status"] == "TRADE_CLOSED", 30,
               "the kept void applied by the next sweep")
    assert sk.client.order(order["trade_no"])["close_reason"] == "refunded"
    sweeps_after(db)
    assert [e["transaction_id"] for e in refunds(sk, user)] == [void["orderId"]]
    assert db.scalar(f"SELECT count(*) || ' ' || bool_and(matched_at IS NOT NULL) FROM google_unmatched_voids "
                     f"WHERE purchase_token = '{token}'") == "1 true"
    assert db.scalar(f"SELECT count(*) FROM google_voids WHERE purchase_token = '{token}'") == "1"
    google.terminate(15)
    google.forget()
