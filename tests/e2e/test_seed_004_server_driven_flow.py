"""Seed 004 (the server-driven flow): products → order with a trade number → StoreKit purchase
with the order's app_account_token → TRADE_SUCCESS report → settled exactly once. Guests can buy;
deferred purchases (Ask to Buy) settle orders that expired or were cancelled meanwhile."""

from __future__ import annotations

import uuid

import pytest

from support import buy, problem, unique, wait_for_order

P = "com.example.tests.seed004."
GOLD = P + "gold100"
SWORD = P + "sword"


@pytest.fixture(scope="module", autouse=True)
def catalog(api):
    api.put_product(GOLD, price="6.00", currency="CNY", sort_order=1, grants={"balance": {"gold": 100}},
                    content={"message": "You received 100 gold."})
    api.put_product(SWORD, type="non_consumable", price="12.00", currency="CNY", sort_order=2,
                    grants={"entitlement": "sword"}, content={"asset": "sword.png"})


@pytest.mark.parametrize("proof", ["receipt", "signed_transaction"])
def test_products_order_purchase_report_settles_the_order(api, fake_appstore, proof):
    products = {p["product_id"]: p for p in api.get("/v1/products").json()["products"]}
    assert products[GOLD]["price"] == "6.00"

    user = unique("seed004")
    order = api.create_order(user, GOLD)
    purchase = fake_appstore.purchase(GOLD, "consumable", app_account_token=order["app_account_token"])
    r = api.report(order["trade_no"], **{proof: purchase[proof]})
    assert r.status_code == 200, r.text
    answer = r.json()
    settled = answer["order"]
    assert settled["trade_no"] == order["trade_no"]
    assert settled["trade_status"] == "TRADE_SUCCESS"
    assert settled["transaction_id"] == purchase["transaction_id"]
    assert settled["environment"] == "Production"
    assert settled.get("paid_at")
    assert (settled["price"], settled["amount"], settled["currency"]) == ("6.00", "6.00", "CNY")
    delivery = answer["delivery"]
    assert delivery["product_id"] == GOLD
    assert delivery["content"] == {"message": "You received 100 gold."}
    assert delivery["granted"] == {"balance": {"gold": 100}}
    assert delivery["transaction_id"] == purchase["transaction_id"]
    assert delivery["newly_granted"] is True

    assert api.order(order["trade_no"]) == settled
    assert api.balance(user) == 100

    detail = api.admin_order(order["trade_no"])
    assert [(h.get("from_status"), h["to_status"], h["reason"]) for h in detail["history"]] == [
        (None, "WAIT_BUYER_PAY", "created"), ("WAIT_BUYER_PAY", "TRADE_SUCCESS", "paid")]
    assert [t["transaction_id"] for t in detail["transactions"]] == [purchase["transaction_id"]]
    assert [r_["outcome"] for r_ in detail["reports"]] == ["settled"]

    # The client re-sends from its local store: the same answer, nothing credited twice.
    again = api.report(order["trade_no"], **{proof: purchase[proof]})
    assert again.status_code == 200
    repeated = again.json()
    assert repeated["delivery"].pop("newly_granted") is False
    answer["delivery"].pop("newly_granted")
    assert repeated == answer
    assert api.balance(user) == 100


def test_a_guest_buys_without_an_account(api, fake_appstore):
    guest = f"guest:{uuid.uuid4()}"
    order, purchase, r = buy(api, fake_appstore, guest, SWORD, type="non_consumable")
    assert r.json()["order"]["user_id"] == guest
    assert r.json()["delivery"]["content"] == {"asset": "sword.png"}
    owned = api.entitlements(guest)
    assert owned["non_consumables"] == [SWORD]
    assert any(e["entitlement"] == "sword" and e.get("expires_at") is None for e in owned["entitlements"])


def test_a_sandbox_receipt_is_verified_at_the_sandbox_url_and_recorded_as_sandbox(api, fake_appstore):
    user = unique("sandbox")
    order, purchase, r = buy(api, fake_appstore, user, GOLD, proof="receipt", environment="Sandbox")
    assert r.json()["order"]["environment"] == "Sandbox"
    detail = api.admin_order(order["trade_no"])
    assert detail["transactions"][0]["environment"] == "Sandbox"


def test_a_cancelled_order_is_closed_and_a_late_payment_still_settles_it(api, fake_appstore):
    user = unique("cancel")
    order = api.create_order(user, GOLD)
    r = api.report(order["trade_no"], trade_status="TRADE_CLOSED", reason="cancelled")
    assert r.status_code == 200, r.text
    assert api.order(order["trade_no"])["trade_status"] == "TRADE_CLOSED"
    assert api.balance(user) == 0

    purchase = fake_appstore.purchase(GOLD, "consumable", app_account_token=order["app_account_token"])
    r = api.report(order["trade_no"], signed_transaction=purchase["signed_transaction"])
    assert r.status_code == 200, r.text
    assert r.json()["order"]["trade_status"] == "TRADE_SUCCESS"
    assert r.json()["order"].get("close_reason") is None
    history = api.admin_order(order["trade_no"])["history"]
    assert [(h["to_status"], h["reason"]) for h in history] == [
        ("WAIT_BUYER_PAY", "created"), ("TRADE_CLOSED", "cancelled"), ("TRADE_SUCCESS", "reopened_by_payment")]
    assert history[-1]["detail"]["previous_close_reason"] == "cancelled"
    assert api.balance(user) == 100


def test_trade_closed_on_a_paid_order_changes_nothing_and_says_so(api, fake_appstore):
    user = unique("paid-close")
    order, _, _ = buy(api, fake_appstore, user, GOLD)
    problem(api.report(order["trade_no"], trade_status="TRADE_CLOSED", reason="failed"), 409, "order_already_paid")
    after = api.order(order["trade_no"])
    assert after["trade_status"] == "TRADE_SUCCESS"
    assert api.balance(user) == 100


def test_report_for_an_unknown_order_is_404(api, fake_appstore):
    purchase = fake_appstore.purchase(GOLD, "consumable")
    problem(api.report("20990101000000000NoSuchOrder00000", signed_transaction=purchase["signed_transaction"]),
            404, "order_not_found")


def test_reports_are_accepted_as_form_posts(api, fake_appstore):
    from support import form_post
    user = unique("form")
    order = api.create_order(user, GOLD)
    purchase = fake_appstore.purchase(GOLD, "consumable", app_account_token=order["app_account_token"])
    r = form_post(api, "/v1/trade-reports", [("trade_no", order["trade_no"]), ("trade_status", "TRADE_SUCCESS"),
                                             ("receipt", purchase["receipt"])])
    assert r.status_code == 200, r.text
    assert r.json()["order"]["trade_status"] == "TRADE_SUCCESS"
    assert api.balance(user) == 100


def test_a_deferred_purchase_after_the_order_expired_still_settles(module_launcher):
    stack = module_launcher.stack(ORDER_TTL="2s", SWEEP_INTERVAL="1s")
    api, fake = stack.api, stack.fake
    api.put_product(GOLD, grants={"balance": {"gold": 100}})
    user = unique("deferred")
    order = api.create_order(user, GOLD)
    expired = wait_for_order(api, order["trade_no"], "TRADE_CLOSED", timeout=15)
    assert expired["close_reason"] == "expired"

    # Ask to Buy: the parent approves later; StoreKit reports the purchase then.
    purchase = fake.purchase(GOLD, "consumable", app_account_token=order["app_account_token"])
    r = api.report(order["trade_no"], receipt=purchase["receipt"])
    assert r.status_code == 200, r.text
    settled = r.json()["order"]
    assert settled["trade_status"] == "TRADE_SUCCESS"
    assert settled["transaction_id"] == purchase["transaction_id"]
    history = api.admin_order(order["trade_no"])["history"]
    assert [(h.get("from_status"), h["to_status"], h["reason"]) for h in history] == [
        (None, "WAIT_BUYER_PAY", "created"),
        ("WAIT_BUYER_PAY", "TRADE_CLOSED", "expired"),
        ("TRADE_CLOSED", "TRADE_SUCCESS", "reopened_by_payment"),
    ]
    assert history[-1]["detail"]["previous_close_reason"] == "expired"
    assert api.balance(user) == 100
    # The sweeper never closes a paid order.
    assert api.order(order["trade_no"])["trade_status"] == "TRADE_SUCCESS"
