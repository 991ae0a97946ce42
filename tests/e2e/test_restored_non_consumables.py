"""StoreKit 1 restores of a non-consumable (`restoreCompletedTransactions`): each carries a new
transaction id whose original transaction is the purchase. Whatever proof brings one (an app
receipt, its iOS 6 transaction receipt; a report or `POST /v1/receipts`), it is the purchase
again: delivered to its owner, never a new order, a second payment or more revenue (the
catalog lets no non-consumable credit a balance, so no currency is at stake). Run with
receipts judged by verifyReceipt and by the App Store Server API (which knows the purchase by
its original transaction only)."""

from __future__ import annotations

import datetime

import pytest

from support import unique

P = "com.example.tests.restored."
PRO = P + "pro_pack"


def stack(launcher, server_api: bool):
    fake = launcher.fake(notify_port=None)
    sk = launcher.storekeeper(launcher.database(), fake=fake, **(fake.api_env() if server_api else {}))
    sk.client.put_product(PRO, type="non_consumable", grants={"entitlement": "pro"},
                          content={"unlock": "pro"})
    return sk.client, fake


def revenue_transactions(api) -> int:
    today = datetime.datetime.now(datetime.timezone.utc).date().isoformat()
    r = api.get("/admin/v1/charts/revenue", admin=True,
                params={"from": today, "to": today, "product": PRO, "source": "transactions"})
    assert r.status_code == 200, r.text
    return sum(row["transactions"] for row in r.json()["rows"])


@pytest.mark.parametrize("server_api", [False, True], ids=["verify_receipt", "server_api"])
def test_a_restore_is_the_purchase_again_not_a_new_one(launcher, server_api):
    api, fake = stack(launcher, server_api)
    user, account = unique("restorer"), unique("apple")
    # Bought without an app account token, as StoreKit 1 apps do (seed 001's tutorial): only
    # the ids tie a restore to its purchase.
    order = api.create_order(user, PRO)
    purchase = fake.purchase(PRO, "non_consumable", apple_account=account)
    r = api.report(order["trade_no"], receipt=purchase["receipt"])
    assert r.status_code == 200, r.text

    restore = fake.restore(purchase["transaction_id"])
    assert restore["transaction_id"] != purchase["transaction_id"]
    assert restore["original_transaction_id"] == purchase["transaction_id"]

    # Posted as a restore, in the app receipt (which lists the purchase and the restore) and in
    # the restore's own transaction receipt.
    for proof in (restore["app_receipt"], restore["transaction_receipt"]):
        r = api.receipts(receipt=proof, user_id=user)
        assert r.status_code == 200, r.text
        body = r.json()
        assert {(t["transaction_id"], t["status"], t.get("trade_no")) for t in body["transactions"]} == {
            (purchase["transaction_id"], "restored", order["trade_no"])}, body
        assert [d["content"] for d in body["delivery"]] == [{"unlock": "pro"}]
        assert not any(d["newly_granted"] for d in body["delivery"])

    # Reported on the order that bought it: answered as that order, nothing granted again.
    r = api.report(order["trade_no"], receipt=restore["app_receipt"])
    assert r.status_code == 200, r.text
    assert r.json()["delivery"]["newly_granted"] is False

    # The app buys it again (StoreKit 1 gives it back free, as a restore) and reports that on a
    # new order: the purchase is the user's already, so the answer is the order that holds it,
    # granting nothing again (audit storekit2, finding 1: it was 409 transaction_already_used).
    again = api.create_order(user, PRO)
    r = api.report(again["trade_no"], receipt=restore["transaction_receipt"])
    assert r.status_code == 200, r.text
    assert r.json()["order"]["trade_no"] == order["trade_no"]
    assert r.json()["delivery"]["newly_granted"] is False
    assert api.order(again["trade_no"])["trade_status"] == "WAIT_BUYER_PAY"

    # Another app user on the device, and a post without a user, get nothing.
    other = unique("restorer-other")
    r = api.receipts(receipt=restore["app_receipt"], user_id=other)
    assert r.status_code == 409 and r.json()["code"] == "purchase_not_yours", r.text
    assert api.entitlements(other)["non_consumables"] == []
    r = api.receipts(receipt=restore["transaction_receipt"])
    assert r.status_code in (200, 409), r.text

    assert api.entitlements(user)["non_consumables"] == [PRO]
    paid = [o for o in api.admin_orders() if o["trade_status"] == "TRADE_SUCCESS"]
    assert [(o["trade_no"], o["transaction_id"]) for o in paid] == [
        (order["trade_no"], purchase["transaction_id"])]
    assert revenue_transactions(api) == 1


@pytest.mark.parametrize("server_api", [False, True], ids=["verify_receipt", "server_api"])
def test_a_restore_of_a_purchase_never_recorded_records_it_once(launcher, server_api):
    api, fake = stack(launcher, server_api)
    user = unique("restorer")
    purchase = fake.purchase(PRO, "non_consumable", apple_account=unique("apple"))
    first = fake.restore(purchase["transaction_id"])
    second = fake.restore(purchase["transaction_id"])

    # The purchase's order call and report were lost; the first the server hears of it is a
    # restore. It is the purchase, recorded and paid once under its original id.
    for proof in (first["transaction_receipt"], second["app_receipt"], second["transaction_receipt"]):
        r = api.receipts(receipt=proof, user_id=user)
        assert r.status_code == 200, r.text
        assert {t["transaction_id"] for t in r.json()["transactions"]} == {purchase["transaction_id"]}
    assert api.entitlements(user)["non_consumables"] == [PRO]
    orders = api.admin_orders()
    assert [(o["origin"], o["transaction_id"]) for o in orders] == [("receipt", purchase["transaction_id"])]
    assert revenue_transactions(api) == 1


def test_apples_cancellation_on_a_restore_is_the_purchases(launcher):
    api, fake = stack(launcher, server_api=False)
    user = unique("restorer")
    order = api.create_order(user, PRO)
    purchase = fake.purchase(PRO, "non_consumable", apple_account=unique("apple"))
    assert api.report(order["trade_no"], receipt=purchase["receipt"]).status_code == 200
    restore = fake.restore(purchase["transaction_id"])
    # Apple refunds the purchase (the notification is lost); the restore's own receipt shows it.
    # A receipt's cancellation alone takes nothing back (docs/ARCHITECTURE.md: only a signed
    # transaction's or the notification's word does), but it is the purchase's: listed revoked,
    # delivering nothing, and no refunded transaction of its own is recorded beside it.
    fake.refund(purchase["transaction_id"], deliver=False)
    r = api.receipts(receipt=restore["transaction_receipt"], user_id=user)
    assert r.status_code == 200, r.text
    assert [(t["transaction_id"], t["status"]) for t in r.json()["transactions"]] == [
        (purchase["transaction_id"], "revoked")]
    assert r.json()["delivery"] == []
    assert [o["trade_no"] for o in api.admin_orders()] == [order["trade_no"]]
