"""Issue 5: POST /v1/receipts beyond the seeds — a receipt settles the user's open order for the
purchase (by its token) instead of making a new one, and concurrent posts of one receipt credit
once and give it one owner."""

from __future__ import annotations

import threading
import time
from datetime import datetime

import pytest
import requests

from support import buy, unique, user_headers

GOLD = "com.example.tests.receipts.gold"
CLUB = "com.example.tests.receipts.club"


@pytest.fixture(scope="module", autouse=True)
def catalog(api):
    api.put_product(GOLD, grants={"balance": {"gold": 100}})
    api.put_product(CLUB, type="auto_renewable", grants={"entitlement": "club"})


def concurrently(n, fn):
    barrier = threading.Barrier(n)
    out = [None] * n

    def run(i):
        barrier.wait(timeout=30)
        out[i] = fn(i)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    return out


def test_a_receipt_settles_the_open_order_it_pays(api, fake_appstore):
    user = unique("open-order")
    order = api.create_order(user, GOLD)
    purchase = fake_appstore.purchase(GOLD, "consumable", app_account_token=order["app_account_token"])
    # The report was lost; the app posts its receipt instead.
    r = api.receipts(receipt=purchase["receipt"], user_id=user)
    assert r.status_code == 200, r.text
    assert [(t["status"], t["trade_no"]) for t in r.json()["transactions"]] == [("settled", order["trade_no"])]
    assert len(api.admin_orders(user_id=user)) == 1
    assert api.order(order["trade_no"])["trade_status"] == "TRADE_SUCCESS"
    # The report arriving afterwards gets the settled answer.
    late = api.report(order["trade_no"], receipt=purchase["receipt"])
    assert late.status_code == 200 and late.json()["order"]["trade_status"] == "TRADE_SUCCESS"
    assert api.balance(user) == 100


def post(url, body):
    r = requests.post(url + "/v1/receipts", json=body, headers=user_headers(body.get("user_id")), timeout=60)
    return r.status_code, r.json()


def test_a_restore_storm_from_one_user_credits_once(api, fake_appstore, stack):
    user = unique("storm")
    purchase = fake_appstore.purchase(GOLD, "consumable")
    body = {"user_id": user, "receipt": purchase["receipt"]}
    answers = concurrently(30, lambda i: post(stack.sk.url, body))
    statuses = [s for s, _ in answers]
    assert set(statuses) <= {200, 202}, answers[:3]
    items = [b["transactions"][0]["status"] for s, b in answers if s == 200]
    assert items.count("settled") <= 1 and set(items) <= {"settled", "restored"}, items
    assert api.balance(user) == 100
    assert len(api.admin_orders(user_id=user)) == 1
    tx = purchase["transaction_id"]
    assert stack.db.scalar(f"SELECT count(*) FROM ledger WHERE transaction_id = '{tx}'") == "1"


def test_one_receipt_posted_by_many_users_at_once_has_one_owner(api, fake_appstore, stack):
    users = [unique(f"claim{i}") for i in range(8)]
    purchase = fake_appstore.purchase(GOLD, "consumable")
    answers = concurrently(len(users), lambda i: post(stack.sk.url, {"user_id": users[i], "receipt": purchase["receipt"]}))
    statuses = sorted(s for s, _ in answers)
    assert statuses == [200] + [409] * (len(users) - 1), answers
    winner = next(b for s, b in answers if s == 200)
    assert [t["status"] for t in winner["transactions"]] == ["settled"]
    assert all(b["code"] == "purchase_not_yours" for s, b in answers if s == 409), answers
    balances = [api.balance(u) for u in users]
    assert sorted(balances) == [0] * (len(users) - 1) + [100]


def test_a_renewal_posted_by_its_subscriber_is_recorded_not_refused(api, fake_appstore):
    # Apple copies the app_account_token of the order that bought the subscription to every
    # renewal. Its notification never arrived; the app posts the renewal: it pays an order of its
    # own and extends the subscription, instead of meeting that paid order.
    user = unique("subscriber")
    order, purchase, _ = buy(api, fake_appstore, user, CLUB, "auto_renewable", expires_in_seconds=60)
    renewal = fake_appstore.renewal(purchase["transaction_id"], expires_in_seconds=3600, deliver=False)
    r = api.receipts(user_id=user, signed_transaction=renewal["signed_transaction"])
    assert r.status_code == 200, r.text
    [item] = r.json()["transactions"]
    assert item["status"] == "settled", item
    assert item["trade_no"] != order["trade_no"]
    assert api.order(item["trade_no"])["origin"] == "renewal"
    [club] = api.entitlements(user)["entitlements"]
    expires = datetime.fromisoformat(club["expires_at"].replace("Z", "+00:00")).timestamp()
    assert expires > time.time() + 1800, club  # the renewal's hour, not the first minute
    again = api.receipts(user_id=user, signed_transaction=renewal["signed_transaction"])
    assert [t["status"] for t in again.json()["transactions"]] == ["restored"]


def test_a_proof_of_two_purchases_without_tokens_pays_each_order_with_its_own_quantity(api, fake_appstore):
    # A StoreKit 1 client sets no token: the order for one is paid by the purchase of one in
    # the receipt, not refused for the newer purchase of three that pays the other order.
    user, account = unique("two-unbound"), unique("two-unbound-account")
    one = api.create_order(user, GOLD)
    three = api.create_order(user, GOLD, quantity=3)
    fake_appstore.purchase(GOLD, "consumable", quantity=1, apple_account=account)
    later = fake_appstore.purchase(GOLD, "consumable", quantity=3, apple_account=account)
    r = api.report(one["trade_no"], receipt=later["receipt"])
    assert r.status_code == 200, r.text
    r = api.report(three["trade_no"], receipt=later["receipt"])
    assert r.status_code == 200, r.text
    assert api.balance(user) == 400
