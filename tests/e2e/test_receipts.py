"""Issue 5: POST /v1/receipts beyond the seeds — a receipt settles the user's open order for the
purchase (by its token) instead of making a new one, and concurrent posts of one receipt credit
once and give it one owner."""

from __future__ import annotations

import threading
import time
from datetime import datetime

import pytest
import requests

from support import buy, unique, user_headers, wait_until

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


def test_a_purchase_whose_order_another_purchase_paid_is_credited_on_an_order_of_its_own(api, fake_appstore, stack):
    # The app opens an order and starts its purchase; meanwhile a purchase without a token (an
    # offer code redeemed in the App Store, one made while the order call failed) is posted and
    # pays that order, the user's oldest unpaid one for the product. When the order's own
    # purchase arrives Apple has charged twice: it is credited too, on an order of its own,
    # whichever way it comes (report, restore, ONE_TIME_CHARGE), and recorded once.
    user = unique("second-purchase")
    order = api.create_order(user, GOLD)
    tokenless = fake_appstore.purchase(GOLD, "consumable")
    r = api.receipts(user_id=user, signed_transaction=tokenless["signed_transaction"])
    assert [(t["status"], t["trade_no"]) for t in r.json()["transactions"]] == [("settled", order["trade_no"])]
    mine = fake_appstore.purchase(GOLD, "consumable", app_account_token=order["app_account_token"])
    rep = api.report(order["trade_no"], signed_transaction=mine["signed_transaction"])
    assert rep.status_code == 200, rep.text
    own = rep.json()["order"]
    assert own["trade_no"] != order["trade_no"] and own["trade_status"] == "TRADE_SUCCESS"
    assert own["transaction_id"] == mine["transaction_id"]
    assert api.balance(user) == 200
    detail = api.admin_order(own["trade_no"])
    assert detail["order"]["origin"] == "receipt"
    assert detail["history"][0]["detail"] == {"bought_with_order": order["trade_no"]}
    # The report told again is answered as it was.
    again = api.report(order["trade_no"], signed_transaction=mine["signed_transaction"])
    assert again.status_code == 200, again.text
    assert again.json()["order"]["trade_no"] == own["trade_no"]
    # Told again, it is the purchase it was: restored, nothing more credited.
    again = api.receipts(user_id=user, signed_transaction=mine["signed_transaction"])
    assert [(t["status"], t["trade_no"]) for t in again.json()["transactions"]] == [("restored", own["trade_no"])]
    assert api.balance(user) == 200

    # The app bought twice with one order (its purchase call seemed to fail and it tried
    # again): the second purchase is restored onto an order of its own.
    twice = unique("second-purchase-twice")
    order = api.create_order(twice, GOLD)
    first = fake_appstore.purchase(GOLD, "consumable", app_account_token=order["app_account_token"])
    assert api.report(order["trade_no"], signed_transaction=first["signed_transaction"]).status_code == 200
    second = fake_appstore.purchase(GOLD, "consumable", app_account_token=order["app_account_token"])
    r = api.receipts(user_id=twice, signed_transaction=second["signed_transaction"])
    [listed] = r.json()["transactions"]
    assert listed["status"] == "settled" and listed["trade_no"] != order["trade_no"]
    assert api.balance(twice) == 200

    # And a third, that only Apple's ONE_TIME_CHARGE reports.
    third = fake_appstore.purchase(GOLD, "consumable", app_account_token=order["app_account_token"])
    note = fake_appstore.notification("ONE_TIME_CHARGE", transaction_id=third["transaction_id"])
    assert note["delivered_status"] == 200, note
    wait_until(lambda: api.balance(twice) == 300, 15, "the charge credited")
    # Its event names the order it settled, not the one whose token it carries.
    charged = [e["data"] for e in api.get("/admin/v1/events", admin=True, params={"user_id": twice}).json()["events"]
               if e["type"] == "purchase.charged"]
    settled_on = stack.db.scalar(f"SELECT trade_no FROM apple_transactions WHERE transaction_id = '{third['transaction_id']}'")
    assert [c["trade_no"] for c in charged] == [settled_on] and settled_on != order["trade_no"]
    assert stack.db.scalar(
        "SELECT count(DISTINCT trade_no) FROM apple_transactions WHERE transaction_id IN "
        f"('{first['transaction_id']}', '{second['transaction_id']}', '{third['transaction_id']}')") == "3"
