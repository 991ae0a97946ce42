"""The Google Play sweeps, for what notifications missed. The fake Google Play here pushes to
nobody, so only the sweeps can learn of a void (voidedpurchases.list) or of a subscription's
change (subscriptionsv2.get). Includes the other half of the three-day rule: a purchase
Storekeeper could never acknowledge is refunded by Google, and the sweep takes its credit back."""

from __future__ import annotations

import subprocess
import time

import pytest
import requests

from google_support import FakeGooglePlay
from support import unique, wait_until


@pytest.fixture(scope="module")
def google(tmp_path_factory):
    fake = FakeGooglePlay(tmp_path_factory.mktemp("google-sweeps")).start()
    yield fake
    fake.terminate(15)
    fake.forget()


@pytest.fixture(scope="module")
def sk(module_storekeeper, google):
    sk = module_storekeeper(**google.env_for_storekeeper(), GOOGLE_PLAY_SWEEP_INTERVAL="1s")
    sk.client.put_product("g.gold", "consumable", grants={"balance": {"gold": 100}})
    sk.client.put_product("g.vip", "auto_renewable", grants={"entitlement": "vip"})
    sk.client.put_product("g.pro", "auto_renewable", grants={"entitlement": "pro"})
    return sk


def settle(sk, google, user: str, product: str, subscription: bool = False, **fields) -> tuple[dict, str]:
    r = sk.client.post("/v1/orders", json={"user_id": user, "product_id": product, "store": "google_play"})
    assert r.status_code == 201, r.text
    order = r.json()
    buy = google.subscribe if subscription else google.buy
    token = buy(product, obfuscated_account_id=order["obfuscated_account_id"], **fields)["purchase_token"]
    r = sk.client.post("/v1/trade-reports", json={"trade_no": order["trade_no"], "trade_status": "TRADE_SUCCESS",
                                                  "purchase_token": token})
    assert r.status_code == 200, r.text
    return order, token


def test_a_void_no_notification_told_of_is_taken_back_by_the_sweep(sk, google):
    user = unique("g-sweep-void")
    order, token = settle(sk, google, user, "g.gold")
    assert sk.client.balance(user) == 100
    google.control("voids", {"purchase_token": token, "reason": 7})
    wait_until(lambda: sk.client.order(order["trade_no"])["trade_status"] == "TRADE_CLOSED", 30,
               "refunded by the voided purchases sweep")
    assert sk.client.order(order["trade_no"])["close_reason"] == "refunded"
    assert sk.client.balance(user) == 0


def test_a_purchase_never_acknowledged_is_refunded_by_google_and_reversed(storekeeper, new_db, tmp_path):
    # The fake's faults hit every caller, sweeps included: a fake of its own, and an instance
    # that sweeps once at start and then not for an hour, so the faults land on its report and
    # its acknowledgements only.
    google = FakeGooglePlay(tmp_path, name="fake-googleplay-3day").start()
    db = new_db()
    first = storekeeper(db, **google.env_for_storekeeper(), GOOGLE_PLAY_SWEEP_INTERVAL="1h")
    first.client.put_product("g.gold", "consumable", grants={"balance": {"gold": 100}})
    wait_until(lambda: db.scalar("SELECT count(*) FROM google_sweeps WHERE last_run_at IS NOT NULL") == "2",
               20, "the first sweeps ran")
    user = unique("g-sweep-3day")
    r = first.client.post("/v1/orders", json={"user_id": user, "product_id": "g.gold", "store": "google_play"})
    order = r.json()
    # Bought four days ago on Google's clock.
    google.control("clock", {"now_ms": int(time.time() * 1000) - 4 * 86400 * 1000})
    try:
        token = google.buy("g.gold", obfuscated_account_id=order["obfuscated_account_id"])["purchase_token"]
    finally:
        google.control("clock", {"now_ms": int(time.time() * 1000)})
    google.fault(0, count=1)
    google.fault(503, count=100000)
    try:
        r = first.client.post("/v1/trade-reports", json={"trade_no": order["trade_no"],
                                                         "trade_status": "TRADE_SUCCESS", "purchase_token": token})
        assert r.status_code == 200, r.text
        assert first.client.balance(user) == 100
        wait_until(lambda: int(db.scalar(
            f"SELECT attempts FROM google_acknowledgements WHERE purchase_token = '{token}'") or 0) >= 2,
            30, "the acknowledgement failed and was retried")
        refunded = google.control("three-day-rule")["refunded"]
        assert token in refunded
    finally:
        google.clear_faults()
    # Another instance on the same database sweeps every second: the lease is shared.
    second = storekeeper(db, **google.env_for_storekeeper(), GOOGLE_PLAY_SWEEP_INTERVAL="1s")
    wait_until(lambda: second.client.order(order["trade_no"])["trade_status"] == "TRADE_CLOSED", 30,
               "Google's three-day refund reversed")
    assert second.client.balance(user) == 0
    assert db.scalar(f"SELECT done_at IS NOT NULL FROM google_acknowledgements WHERE purchase_token = '{token}'") == "t"
    google.terminate(15)
    google.forget()


def test_subscription_reconciliation_applies_a_hold_no_notification_told_of(sk, google):
    user = unique("g-sweep-hold")
    _, token = settle(sk, google, user, "g.vip", subscription=True)
    vip = lambda: next((e for e in sk.client.entitlements(user)["entitlements"] if e["entitlement"] == "vip"), None)
    assert vip() is not None
    google.control(f"subscriptions/{token}/events", {"event": "hold"})
    wait_until(lambda: vip() is None, 30, "the hold reconciled")
    google.control(f"subscriptions/{token}/events", {"event": "recover"})
    wait_until(lambda: vip() is not None, 30, "the recovery reconciled")


def test_a_state_read_again_by_every_sweep_is_an_event_once(sk, google):
    # The sweep reads every recent subscription again on each pass (one a second here): a
    # grace period, a hold or an expiry is said once, in Apple's shape, not once per pass.
    users = {}
    for event in ("grace", "hold", "expire"):
        user = unique(f"g-sweep-once-{event}")
        _, token = settle(sk, google, user, "g.vip", subscription=True)
        google.control(f"subscriptions/{token}/events", {"event": event})
        users[event] = user

    def events(user: str) -> list[dict]:
        r = sk.client.get("/admin/v1/events", admin=True, params={"user_id": user, "limit": 200})
        assert r.status_code == 200, r.text
        return [e for e in r.json()["events"] if e["type"].startswith("subscription.")]

    expected = {"grace": "subscription.billing_problem", "hold": "subscription.billing_problem",
                "expire": "subscription.expired"}
    for event, user in users.items():
        wait_until(lambda: events(user), 30, f"the {event} reconciled")
    started = time.monotonic()
    # Several passes later (each reads all three again).
    time.sleep(5)
    assert time.monotonic() - started >= 5
    for event, user in users.items():
        said = events(user)
        assert [e["type"] for e in said] == [expected[event]], (event, said)
    grace, hold = events(users["grace"])[0]["data"], events(users["hold"])[0]["data"]
    assert grace["status"] == "grace_period" and grace["grace_expires_at"] == grace["expires_at"]
    assert hold["status"] == "billing_retry"


def test_a_purchase_an_upgrade_replaced_is_no_churn_when_the_sweep_reads_it_expired(sk, google):
    # Google reads the purchase an upgrade replaced back as expired, canceled by the
    # replacement; the sweep reads every recent subscription, replaced ones included. The
    # subscriber upgraded, they did not lapse: no subscription event about the old purchase.
    user = unique("g-sweep-upgrade")
    _, old = settle(sk, google, user, "g.vip", subscription=True)
    settle(sk, google, user, "g.pro", subscription=True, linked_purchase_token=old)
    db_url = sk.env["DATABASE_URL"]
    wait_until(lambda: subprocess.run(
        ["psql", db_url, "-qAtc", f"SELECT state FROM google_purchases WHERE purchase_token = '{old}'"],
        capture_output=True, text=True, check=True, timeout=30).stdout.strip() == "SUBSCRIPTION_STATE_EXPIRED",
        30, "the sweep read the replaced purchase")
    r = sk.client.get("/admin/v1/events", admin=True, params={"user_id": user, "limit": 200})
    assert r.status_code == 200, r.text
    said = [(e["type"], e["data"].get("product_id")) for e in r.json()["events"]
            if e["type"].startswith("subscription.")]
    assert said == [], said
    assert [e["entitlement"] for e in sk.client.entitlements(user)["entitlements"]] == ["pro"]
