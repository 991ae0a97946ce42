"""A report's receipt can hold, beside the purchase that pays its order, a second charge of the
same product: the app bought twice with one order (a double tap, a purchase retried, an Ask to
Buy approved after the user bought again) and reports both with the trade number it kept. A
signed transaction holds one purchase and is credited on an order of its own; a receipt holds
both, and its report is answered with the purchase that paid the order. The other is recorded
as a restore by the order's user records it, once, in either receipt mode (Apple's
verifyReceipt, or the App Store Server API)."""

from __future__ import annotations

import pytest

from support import unique

GOLD = "com.example.tests.secondreceipt.gold"


@pytest.fixture(params=["verify_receipt", "server_api"])
def stack(request, launcher):
    stack = launcher.stack(api_key=request.param == "server_api")
    stack.sk.client.put_product(GOLD, grants={"balance": {"gold": 100}})
    return stack


def paid(stack, user: str) -> dict[str, str]:
    """Each paid order of the user's, by the transaction that paid it."""
    return {o["transaction_id"]: o["trade_no"] for o in stack.sk.client.admin_orders(user_id=user)
            if o["trade_status"] == "TRADE_SUCCESS"}


def test_a_double_tap_without_tokens_credits_both_charges(stack):
    # Seed 004's client buys without the order's token and keeps one order, the latest: both
    # purchases are reported on it, the second with a receipt that lists both.
    api, fake = stack.sk.client, stack.fake
    user, account = unique("double-tap"), unique("apple")
    earlier = api.create_order(user, GOLD)
    kept = api.create_order(user, GOLD)
    first = fake.purchase(GOLD, "consumable", apple_account=account)
    r = api.report(kept["trade_no"], receipt=first["receipt"])
    assert r.status_code == 200, r.text
    assert r.json()["order"]["transaction_id"] == first["transaction_id"]
    second = fake.purchase(GOLD, "consumable", apple_account=account)
    r = api.report(kept["trade_no"], receipt=second["receipt"])
    assert r.status_code == 200, r.text
    assert r.json()["order"]["transaction_id"] == first["transaction_id"]

    assert api.balance(user) == 200
    orders = paid(stack, user)
    assert set(orders) == {first["transaction_id"], second["transaction_id"]}
    # The second pays the user's other open order, as a restore would.
    assert orders[second["transaction_id"]] == earlier["trade_no"]
    # Told again, nothing more.
    assert api.report(kept["trade_no"], receipt=second["receipt"]).status_code == 200
    assert api.receipts(user_id=user, receipt=second["receipt"]).status_code == 200
    assert api.balance(user) == 200


def test_a_purchase_retried_with_the_orders_token_is_credited_on_an_order_of_its_own(stack):
    api, fake = stack.sk.client, stack.fake
    user, account = unique("retried"), unique("apple")
    order = api.create_order(user, GOLD)
    token = order["app_account_token"]
    first = fake.purchase(GOLD, "consumable", app_account_token=token, apple_account=account)
    assert api.report(order["trade_no"], receipt=first["receipt"]).status_code == 200
    second = fake.purchase(GOLD, "consumable", app_account_token=token, apple_account=account)
    r = api.report(order["trade_no"], receipt=second["receipt"])
    assert r.status_code == 200, r.text

    assert api.balance(user) == 200
    orders = paid(stack, user)
    assert orders[first["transaction_id"]] == order["trade_no"]
    own = api.admin_order(orders[second["transaction_id"]])
    assert own["order"]["origin"] == "receipt"
    assert own["history"][0]["detail"] == {"bought_with_order": order["trade_no"]}


def test_two_charges_in_the_first_report_are_both_credited_however_often_it_is_sent(stack):
    # Both purchases completed before the app reported: every report carries the same receipt.
    api, fake = stack.sk.client, stack.fake
    user, account = unique("both-at-once"), unique("apple")
    order = api.create_order(user, GOLD)
    token = order["app_account_token"]
    first = fake.purchase(GOLD, "consumable", app_account_token=token, apple_account=account)
    second = fake.purchase(GOLD, "consumable", app_account_token=token, apple_account=account)
    for _ in range(3):
        r = api.report(order["trade_no"], receipt=second["receipt"])
        assert r.status_code == 200, r.text
    assert api.balance(user) == 200
    assert set(paid(stack, user)) == {first["transaction_id"], second["transaction_id"]}
    assert stack.db.scalar(
        "SELECT count(*) FROM apple_transactions WHERE transaction_id IN "
        f"('{first['transaction_id']}', '{second['transaction_id']}')") == "2"
