"""Seed 002 (Chinese MKStoreManager tutorial): five consumable gold packs and VIP products.
Balances add up exactly, a re-sent receipt ("try again" after a timeout) credits nothing, and
VIP lasts its duration from payment, extended by each purchase. Like the tutorial's client, the
receipts posted are iOS 6-style transaction receipts (`transaction.transactionReceipt`), one per
purchase."""

from __future__ import annotations

import json
from datetime import datetime, timedelta

import pytest

from support import error_fields, problem, unique

P = "com.example.tests.seed002."
PACKS = [("gold60", 60, "6.00"), ("gold300", 300, "30.00"), ("gold680", 680, "68.00"),
         ("gold1280", 1280, "128.00"), ("gold3280", 3280, "328.00")]
VIP_MONTH = P + "vip.month"
VIP_QUARTER = P + "vip.quarter"


@pytest.fixture(scope="module", autouse=True)
def catalog(api):
    for i, (name, gold, price) in enumerate(PACKS):
        api.put_product(P + name, price=price, currency="CNY", sort_order=10 * (i + 1),
                        grants={"balance": {"gold": gold}}, content={"message": f"You received {gold} gold."})
    api.put_product(VIP_MONTH, type="non_renewing", price="30.00", currency="CNY", sort_order=100,
                    grants={"entitlement": "vip", "duration_days": 30})
    api.put_product(VIP_QUARTER, type="non_renewing", price="78.00", currency="CNY", sort_order=110,
                    grants={"entitlement": "vip", "duration_days": 90})


def parse(text):
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def test_five_gold_packs_add_up_exactly_and_a_resent_receipt_credits_nothing(api, fake_appstore):
    user = unique("seed002")
    account = unique("apple")
    expected = 0
    settled = []
    for name, gold, _ in PACKS + [("gold60", 60, "6.00")]:
        order = api.create_order(user, P + name)
        purchase = fake_appstore.purchase(P + name, "consumable", app_account_token=order["app_account_token"],
                                          apple_account=account, receipt_style="transaction")
        # The transaction receipt holds this purchase alone.
        r = api.report(order["trade_no"], receipt=purchase["receipt"])
        assert r.status_code == 200, r.text
        assert r.json()["order"]["transaction_id"] == purchase["transaction_id"]
        assert r.json()["delivery"]["granted"] == {"balance": {"gold": gold}}
        expected += gold
        assert api.balance(user) == expected
        settled.append((order, purchase, r.json()))
    assert expected == 60 + 300 + 680 + 1280 + 3280 + 60

    # Quantity 3 of a pack: three times the gold, one transaction.
    order = api.create_order(user, P + "gold300", quantity=3)
    assert order["amount"] == "90.00"
    purchase = fake_appstore.purchase(P + "gold300", "consumable", quantity=3,
                                      app_account_token=order["app_account_token"], apple_account=account,
                                      receipt_style="transaction")
    r = api.report(order["trade_no"], receipt=purchase["receipt"])
    assert r.status_code == 200, r.text
    assert r.json()["delivery"]["granted"] == {"balance": {"gold": 900}}
    expected += 900
    assert api.balance(user) == expected
    settled.append((order, purchase, r.json()))

    # "Try again": every order's receipt re-sent, as a report and as a plain receipt post.
    for order, purchase_, answer in settled:
        again = api.report(order["trade_no"], receipt=purchase_["receipt"])
        assert again.status_code == 200, again.text
        assert again.json()["order"] == answer["order"]
        again = api.receipts(receipt=purchase_["receipt"], user_id=user)
        assert again.status_code == 200, again.text
        assert [t["status"] for t in again.json()["transactions"]] == ["restored"]
    assert api.balance(user) == expected
    assert api.entitlements(user)["balances"] == {"gold": expected}


def test_a_receipt_used_for_another_users_order_credits_nothing(api, fake_appstore):
    owner, other = unique("seed002-owner"), unique("seed002-other")
    order = api.create_order(owner, P + "gold60")
    purchase = fake_appstore.purchase(P + "gold60", "consumable", app_account_token=order["app_account_token"],
                                      receipt_style="transaction")
    assert api.report(order["trade_no"], receipt=purchase["receipt"]).status_code == 200
    stolen = api.create_order(other, P + "gold60")
    r = api.report(stolen["trade_no"], receipt=purchase["receipt"])
    assert r.status_code in (409, 422), r.text
    assert r.json()["code"] in ("transaction_already_used", "account_token_mismatch")
    assert api.order(stolen["trade_no"])["trade_status"] == "WAIT_BUYER_PAY"
    assert api.balance(other) == 0 and api.balance(owner) == 60


def test_vip_lasts_its_duration_from_payment_and_each_purchase_extends_it(api, fake_appstore):
    user = unique("seed002-vip")
    order = api.create_order(user, VIP_MONTH)
    purchase = fake_appstore.purchase(VIP_MONTH, "non_renewing", app_account_token=order["app_account_token"])
    r = api.report(order["trade_no"], signed_transaction=purchase["signed_transaction"])
    assert r.status_code == 200, r.text
    paid = parse(r.json()["order"]["paid_at"])
    assert r.json()["delivery"]["granted"] == {"entitlement": "vip", "duration_days": 30}
    vip = [e for e in api.entitlements(user)["entitlements"] if e["entitlement"] == "vip"]
    assert len(vip) == 1
    assert abs(parse(vip[0]["expires_at"]) - (paid + timedelta(days=30))) < timedelta(seconds=2), vip

    order = api.create_order(user, VIP_QUARTER)
    purchase = fake_appstore.purchase(VIP_QUARTER, "non_renewing", app_account_token=order["app_account_token"],
                                      receipt_style="transaction")
    assert api.report(order["trade_no"], receipt=purchase["receipt"]).status_code == 200
    vip = [e for e in api.entitlements(user)["entitlements"] if e["entitlement"] == "vip"]
    assert len(vip) == 1
    assert abs(parse(vip[0]["expires_at"]) - (paid + timedelta(days=120))) < timedelta(seconds=5), vip
    assert api.entitlements(user)["balances"] == {}


def test_vip_cannot_be_bought_in_quantity(api):
    problem(api.post_order(unique("seed002"), VIP_MONTH, quantity=2), 422, "quantity_not_allowed")


FORM = "application/x-www-form-urlencoded"


def verify_receipt_post(api, user, body: dict | bytes, content_type: str | None, path="/v1/receipts"):
    """The tutorial's verification request: a JSON text in the body and no Content-Type set,
    which iOS then declares a form (`content_type=None` sends none at all)."""
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    headers = {"Content-Type": content_type} if content_type else {}
    return api.post(path, data=data, headers=headers, user=user)


def test_apples_verify_receipt_body_is_accepted_and_success_says_status_0(api, fake_appstore):
    """The client posts `{"receipt-data": …}`, Apple's verifyReceipt body, and takes only
    `status == 0` for a verified purchase; on a timeout it sends the same receipt again."""
    user = unique("seed002-verify")
    purchase = fake_appstore.purchase(P + "gold60", "consumable", receipt_style="transaction")
    first = verify_receipt_post(api, user, {"receipt-data": purchase["receipt"]}, FORM)
    assert first.status_code == 200, first.text
    assert first.json()["status"] == 0
    assert [(d["product_id"], d["newly_granted"]) for d in first.json()["delivery"]] == [(P + "gold60", True)]
    assert api.balance(user) == 60

    # "Try again": no Content-Type at all, and the keys Apple's body also allows, ignored.
    again = verify_receipt_post(api, user, {"receipt-data": purchase["receipt"], "password": "0123456789abcdef",
                                            "exclude-old-transactions": True}, None)
    assert again.status_code == 200, again.text
    assert again.json()["status"] == 0
    assert [d["newly_granted"] for d in again.json()["delivery"]] == [False]
    xml = verify_receipt_post(api, user, {"receipt-data": purchase["receipt"]}, FORM, path="/v1/receipts.xml")
    assert xml.status_code == 200 and b"<receipt>" in xml.content, xml.text
    assert api.balance(user) == 60

    # A refusal never says 0: its status is the HTTP status.
    bad = verify_receipt_post(api, user, {"receipt-data": "this is not base64 !!!"}, FORM)
    assert problem(bad, 422, "invalid_proof")["status"] == 422
    both = verify_receipt_post(api, user, {"receipt-data": purchase["receipt"], "receipt": purchase["receipt"]}, FORM)
    assert "receipt-data" in error_fields(problem(both, 422, "validation_failed"))
    wrong = verify_receipt_post(api, user, {"receipt-data": purchase["receipt"], "exclude-old-transactions": 1}, FORM)
    assert "exclude-old-transactions" in error_fields(problem(wrong, 422, "validation_failed"))
    # Only a JSON object is read as JSON under the form type: anything else is still a form.
    garbled = verify_receipt_post(api, user, b'{"receipt-data": "' + purchase["receipt"].encode(), FORM)
    problem(garbled, 422, "validation_failed")
    assert api.balance(user) == 60
