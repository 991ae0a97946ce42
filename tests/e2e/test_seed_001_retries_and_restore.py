"""Seed 001 (Japanese tutorial): the client retries the product request, the purchase and the
verification, and restores completed transactions. Every call must be safe to repeat, and a
restore of a non-consumable gives it back without a new payment. Like the tutorial's client, the
receipts posted are iOS 6-style transaction receipts (`transaction.transactionReceipt`)."""

from __future__ import annotations

import uuid

import pytest

from support import buy, problem, unique

P = "com.example.tests.seed001."
GOLD = P + "gold"
PRO = P + "pro"


@pytest.fixture(scope="module", autouse=True)
def catalog(api):
    api.put_product(GOLD, grants={"balance": {"gold": 50}}, content={"message": "50 gold"})
    api.put_product(PRO, type="non_consumable", grants={"entitlement": "pro"}, content={"unlock": "pro"})


def test_every_call_retried_is_safe(api, fake_appstore):
    # The product request, three times (it "occasionally fails in production").
    lists = [api.get("/v1/products") for _ in range(3)]
    assert len({r.headers["ETag"] for r in lists}) == 1
    assert len({r.content for r in lists}) == 1

    # Order creation with an Idempotency-Key, retried after a lost answer.
    user, key = unique("seed001"), str(uuid.uuid4())
    answers = [api.post_order(user, GOLD, key=key) for _ in range(3)]
    assert answers[0].status_code == 201
    assert all(a.json() == answers[0].json() for a in answers)
    assert [a.headers.get("Idempotent-Replayed") for a in answers[1:]] == ["true", "true"]
    order = answers[0].json()
    assert len(api.admin_orders(user_id=user)) == 1

    # The report, retried with the receipt and then with the signed transaction.
    purchase = fake_appstore.purchase(GOLD, "consumable", app_account_token=order["app_account_token"],
                                      receipt_style="transaction")
    reports = [api.report(order["trade_no"], receipt=purchase["receipt"]) for _ in range(3)]
    reports.append(api.report(order["trade_no"], signed_transaction=purchase["signed_transaction"]))
    assert [r.status_code for r in reports] == [200, 200, 200, 200], [r.text for r in reports]
    # The same answer every time, except that only the first says it granted the gold.
    assert [r.json()["delivery"]["newly_granted"] for r in reports] == [True, False, False, False]
    answers = [r.json() for r in reports]
    for answer in answers:
        answer["delivery"].pop("newly_granted")
    assert all(a == answers[0] for a in answers)
    assert api.balance(user) == 50

    # Receipts posted again (restore), twice.
    for _ in range(2):
        r = api.receipts(receipt=purchase["receipt"], user_id=user)
        assert r.status_code == 200, r.text
        assert [t["status"] for t in r.json()["transactions"]] == ["restored"]
    assert api.balance(user) == 50

    # Reads are reads.
    assert api.order(order["trade_no"]) == api.order(order["trade_no"])
    assert api.entitlements(user) == api.entitlements(user)


def test_restore_of_a_non_consumable_on_a_new_device(api, fake_appstore):
    user = unique("seed001")
    account = unique("apple-account")
    order, purchase, r = buy(api, fake_appstore, user, PRO, type="non_consumable", apple_account=account,
                            receipt_style="transaction")
    assert api.entitlements(user)["non_consumables"] == [PRO]

    # A new device: restoreCompletedTransactions, then the app posts the receipt.
    restored = api.receipts(receipt=purchase["receipt"], user_id=user)
    assert restored.status_code == 200, restored.text
    body = restored.json()
    assert [(t["transaction_id"], t["status"], t.get("trade_no")) for t in body["transactions"]] == [
        (purchase["transaction_id"], "restored", order["trade_no"])]
    assert [d["content"] for d in body["delivery"]] == [{"unlock": "pro"}]
    assert body["entitlements"]["non_consumables"] == [PRO]
    assert len(api.admin_orders(user_id=user)) == 1, "a restore creates no new order"

    # Someone else posting the same receipt gets nothing.
    other = unique("seed001-other")
    r = api.receipts(receipt=purchase["receipt"], user_id=other)
    assert r.status_code == 409, r.text
    assert r.json()["code"] == "purchase_not_yours"
    assert user not in r.text and order["trade_no"] not in r.text
    assert api.entitlements(other)["non_consumables"] == []


def test_a_purchase_whose_order_call_was_lost_is_settled_by_its_receipt(api, fake_appstore):
    user = unique("seed001-lost")
    purchase = fake_appstore.purchase(GOLD, "consumable", receipt_style="transaction")
    r = api.receipts(receipt=purchase["receipt"], user_id=user)
    assert r.status_code == 200, r.text
    assert [t["status"] for t in r.json()["transactions"]] == ["settled"]
    orders = api.admin_orders(user_id=user)
    assert len(orders) == 1 and orders[0]["origin"] == "receipt"
    assert orders[0]["transaction_id"] == purchase["transaction_id"]
    assert api.balance(user) == 50


def test_errors_are_clear_for_the_app_to_show(api):
    body = problem(api.post("/v1/trade-reports", json={"trade_status": "TRADE_SUCCESS"}), 422, "validation_failed")
    fields = {e["field"] for e in body["errors"]}
    assert {"trade_no", "receipt"} <= fields
    assert all(e["message"] for e in body["errors"])
    assert body["detail"]
