"""One-time purchases whose truth is Google's, not the order's: the quantity the user picked in
Google's purchase screen (the app cannot set it), the order a pending purchase names when its
report named another, and the start of Google's three days for a purchase paid after it was
pending."""

from __future__ import annotations

import time

import pytest
import requests

from google_support import push_env, start_pushing_fake
from support import unique, wait_until
from test_google_unseen_voids import order_for, report


@pytest.fixture(scope="module")
def google(tmp_path_factory):
    fake = start_pushing_fake(tmp_path_factory.mktemp("google-quantity"))
    yield fake
    fake.terminate(15)
    fake.forget()


@pytest.fixture(scope="module")
def sk(module_launcher, module_storekeeper, google):
    db = module_launcher.database()
    sk = module_storekeeper(db, port=google.storekeeper_port, **push_env(google))
    sk.client.put_product("gq.gold", "consumable", grants={"balance": {"gold": 100}})
    sk.db = db
    return sk


def paid(sk, trade_no: str) -> bool:
    return sk.client.order(trade_no)["trade_status"] == "TRADE_SUCCESS"


def resized(sk, trade_no: str, quantity: int) -> None:
    """The order holds what Google charged for, and its history says it was resized."""
    order = sk.client.order(trade_no)
    assert order["quantity"] == quantity
    row = sk.db.scalar("SELECT amount::text || ' ' || (amount = unit_price * quantity)::text "
                       f"FROM orders WHERE trade_no = '{trade_no}'")
    amount, consistent = row.split(" ")
    assert consistent == "true" and float(amount) == pytest.approx(float(order["price"]) * quantity)
    detail = sk.db.scalar("SELECT detail->>'resized_from_quantity' FROM order_events "
                          f"WHERE trade_no = '{trade_no}' AND to_status = 'TRADE_SUCCESS'")
    assert detail == "1"


def test_a_quantity_picked_in_googles_screen_is_credited_by_the_report(sk, google):
    user = unique("gq-report")
    order = order_for(sk, user, "gq.gold")
    # The push would settle it first; held back so the report is what settles.
    google.control("pushes/withhold", {"count": 1})
    bought = google.buy("gq.gold", quantity=3, obfuscated_account_id=order["obfuscated_account_id"])
    r = report(sk, order, bought["purchase_token"])
    assert r.status_code == 200, r.text
    assert r.json()["delivery"]["quantity"] == 3
    assert sk.client.balance(user) == 300
    resized(sk, order["trade_no"], 3)
    google.wait_acknowledged("gq.gold", bought["purchase_token"], consumed=True)


def test_a_quantity_picked_in_googles_screen_is_credited_by_the_push(sk, google):
    user = unique("gq-push")
    order = order_for(sk, user, "gq.gold")
    bought = google.buy("gq.gold", quantity=4, obfuscated_account_id=order["obfuscated_account_id"])
    wait_until(lambda: paid(sk, order["trade_no"]), 30, "the order paid by the push")
    assert sk.client.balance(user) == 400
    resized(sk, order["trade_no"], 4)
    google.wait_acknowledged("gq.gold", bought["purchase_token"], consumed=True)


def test_a_quantity_picked_in_googles_screen_is_credited_by_the_restore(sk, google):
    user = unique("gq-restore")
    order = order_for(sk, user, "gq.gold")
    google.control("pushes/withhold", {"count": 1})
    bought = google.buy("gq.gold", quantity=2, obfuscated_account_id=order["obfuscated_account_id"])
    r = sk.client.post("/v1/receipts", json={"store": "google_play", "user_id": user,
                                             "product_id": "gq.gold",
                                             "purchase_token": bought["purchase_token"]})
    assert r.status_code == 200, r.text
    assert [t["status"] for t in r.json()["transactions"]] == ["settled"]
    assert sk.client.balance(user) == 200
    resized(sk, order["trade_no"], 2)


def test_more_than_an_order_holds_is_refused_and_alerted(sk, google):
    user = unique("gq-many")
    order = order_for(sk, user, "gq.gold")
    google.control("pushes/withhold", {"count": 1})
    bought = google.buy("gq.gold", quantity=11, obfuscated_account_id=order["obfuscated_account_id"])
    r = report(sk, order, bought["purchase_token"])
    assert r.status_code == 422 and r.json()["code"] == "quantity_mismatch", r.text
    assert sk.client.balance(user) == 0
    metrics = sk.client.get("/metrics", admin=True).text
    assert "storekeeper_google_purchases_uncreditable_total 1" in metrics, metrics


def test_a_pending_purchase_reported_on_the_wrong_order_pays_the_order_it_names(sk, google):
    user = unique("gq-wake")
    named = order_for(sk, user, "gq.gold")
    other = order_for(sk, user, "gq.gold")
    bought = google.buy("gq.gold", state="pending", obfuscated_account_id=named["obfuscated_account_id"])
    token = bought["purchase_token"]
    assert report(sk, other, token).status_code == 202
    google.control(f"products/{token}/complete")
    wait_until(lambda: paid(sk, named["trade_no"]), 30, "the named order paid by the push")
    assert sk.client.balance(user) == 100
    assert not paid(sk, other["trade_no"])
    google.wait_acknowledged("gq.gold", token, consumed=True)
    wait_until(lambda: sk.db.scalar(
        "SELECT outcome_code FROM trade_reports WHERE trade_no = "
        f"'{other['trade_no']}'") == "account_token_mismatch", 30, "the wrong report refused")
    assert sk.client.balance(user) == 100


def test_googles_three_days_count_from_when_a_pending_purchase_was_paid(sk, google):
    user = unique("gq-late")
    order = order_for(sk, user, "gq.gold")
    google.control("clock", {"now_ms": int(time.time() * 1000) - 60 * 3600 * 1000})
    try:
        bought = google.buy("gq.gold", state="pending",
                            obfuscated_account_id=order["obfuscated_account_id"])
    finally:
        google.control("clock", {"now_ms": int(time.time() * 1000)})
    google.control("pushes/withhold", {"count": 1})
    # Paid now, 60 hours after it began: Google refunds it in three days from now.
    google.control(f"products/{bought['purchase_token']}/complete")
    # The reads go through; every consume fails, so the job stays open.
    google.fault(503, count=100000, target="writes")
    try:
        assert report(sk, order, bought["purchase_token"]).status_code == 200
        row = sk.db.scalar("SELECT extract(epoch FROM now() - purchase_time)::int "
                           "FROM google_acknowledgements WHERE purchase_token = "
                           f"'{bought['purchase_token']}'")
        assert int(row) < 600
        problems = requests.get(sk.url + "/readyz", timeout=5).json().get("problems", [])
        assert not any(p["code"] == "google_acknowledgements_overdue" for p in problems), problems
    finally:
        google.clear_faults()
    google.wait_acknowledged("gq.gold", bought["purchase_token"], consumed=True, timeout=60)
