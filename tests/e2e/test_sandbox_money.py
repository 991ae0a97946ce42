"""Issue 10, sandbox money: purchases made in Apple's sandbox (App Review, TestFlight) are marked
as such everywhere, and SANDBOX_POLICY decides whether they credit balances."""

from __future__ import annotations

import pytest

from support import unique

GOLD = "com.example.tests.sandbox.gold"
VIP = "com.example.tests.sandbox.vip"


def buy(api, fake, user, product, type, environment, proof="signed_transaction"):
    order = api.create_order(user, product)
    purchase = fake.purchase(product, type, app_account_token=order["app_account_token"], environment=environment)
    r = api.report(order["trade_no"], **{proof: purchase[proof]})
    assert r.status_code == 200, r.text
    return {**r.json(), "_proof": purchase[proof]}


@pytest.fixture(scope="module")
def record_only(module_launcher):
    stack = module_launcher.stack(SANDBOX_POLICY="record_only")
    stack.api.put_product(GOLD, grants={"balance": {"gold": 100}})
    stack.api.put_product(VIP, type="non_consumable", grants={"entitlement": "vip"})
    return stack


def test_record_only_settles_a_sandbox_purchase_without_crediting_it(record_only):
    api, fake = record_only.api, record_only.fake
    user = unique("tester")
    for proof in ("signed_transaction", "receipt"):
        answer = buy(api, fake, user, GOLD, "consumable", "Sandbox", proof)
        assert answer["order"]["trade_status"] == "TRADE_SUCCESS"
        assert answer["order"]["environment"] == "Sandbox"
        # The answer says so: an app that grants from `delivery` hands out no gold.
        assert "balance" not in answer["delivery"]["granted"], answer["delivery"]
        r = api.report(answer["order"]["trade_no"], **{proof: answer["_proof"]})
        assert r.status_code == 200 and "balance" not in r.json()["delivery"]["granted"], r.text
    restore = fake.purchase(GOLD, "consumable", environment="Sandbox")
    r = api.receipts(user_id=user, signed_transaction=restore["signed_transaction"])
    assert r.status_code == 200, r.text
    assert [d["granted"] for d in r.json()["delivery"]] == [{}], r.json()
    assert api.balance(user) == 0
    assert api.entitlements(user)["sandbox_balances"] == {}
    # A real purchase still credits.
    buy(api, fake, user, GOLD, "consumable", "Production")
    assert api.balance(user) == 100


def test_entitlements_say_which_grants_came_from_the_sandbox(record_only):
    api, fake = record_only.api, record_only.fake
    user = unique("tester")
    answer = buy(api, fake, user, VIP, "non_consumable", "Sandbox")
    assert answer["delivery"]["granted"] == {"entitlement": "vip"}
    [vip] = api.entitlements(user)["entitlements"]
    assert (vip["entitlement"], vip["sandbox"]) == ("vip", True)


def test_by_default_sandbox_purchases_credit_and_are_shown_apart(stack, api, fake_appstore):
    api.put_product(GOLD, grants={"balance": {"gold": 100}})
    user = unique("tester")
    buy(api, fake_appstore, user, GOLD, "consumable", "Sandbox")
    buy(api, fake_appstore, user, GOLD, "consumable", "Production")
    view = api.entitlements(user)
    assert view["balances"] == {"gold": 200}
    assert view["sandbox_balances"] == {"gold": 100}
    rows = stack.db.rows(f"SELECT environment, amount FROM ledger WHERE user_id = '{user}' ORDER BY environment")
    assert rows == [["Production", "100"], ["Sandbox", "100"]]
