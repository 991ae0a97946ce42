"""Issue 5: Apple timing out, answering 503, 21005 or a retryable 21199: the report gets 202 with
verification pending, is kept, and the worker settles it once Apple answers again."""

from __future__ import annotations

import pytest

from support import unique, wait_for_order, wait_until

GOLD = "com.example.tests.faults.gold"


@pytest.fixture(scope="module", autouse=True)
def catalog(api):
    api.put_product(GOLD, grants={"balance": {"gold": 100}})


@pytest.fixture(autouse=True)
def no_fault_left_behind(fake_appstore):
    fake_appstore.clear_faults()
    yield
    fake_appstore.clear_faults()


FAULTS = [
    ("timeout", {"delay_ms": 5000}),
    ("http503", {}),
    ("status21005", {}),
    # "Malformed, or a temporary issue": an app receipt whose signature chains to Apple cannot
    # be malformed, so it waits as for any other outage.
    ("status21002", {}),
    ("retryable", {}),
]


@pytest.mark.parametrize("mode,options", FAULTS, ids=[f[0] for f in FAULTS])
def test_a_report_waits_while_apple_fails_and_settles_when_it_recovers(api, fake_appstore, mode, options):
    user = unique(f"fault-{mode}")
    order = api.create_order(user, GOLD)
    purchase = fake_appstore.purchase(GOLD, "consumable", app_account_token=order["app_account_token"])
    fake_appstore.fault(mode, **options)

    r = api.report(order["trade_no"], receipt=purchase["receipt"])
    assert r.status_code == 202, r.text
    body = r.json()
    assert body["verification"] == "pending"
    assert body["order"]["trade_status"] == "WAIT_BUYER_PAY"
    assert body["order"]["verification"] == "pending"
    assert isinstance(body.get("report_id"), int)
    now = api.order(order["trade_no"])
    assert now["trade_status"] == "WAIT_BUYER_PAY" and now["verification"] == "pending"
    assert api.balance(user) == 0

    # The client tries again while Apple is still failing: still pending, nothing credited.
    again = api.report(order["trade_no"], receipt=purchase["receipt"])
    assert again.status_code == 202, again.text

    fake_appstore.clear_faults()
    settled = wait_for_order(api, order["trade_no"], "TRADE_SUCCESS", timeout=15)
    assert settled["transaction_id"] == purchase["transaction_id"]
    assert settled.get("verification") is None
    assert api.balance(user) == 100
    detail = api.admin_order(order["trade_no"])
    assert [h["to_status"] for h in detail["history"]] == ["WAIT_BUYER_PAY", "TRADE_SUCCESS"]
    assert detail["history"][-1]["cause"] == "retry_worker"
    assert {x["outcome"] for x in detail["reports"]} == {"settled"}

    # The report now answers 200 at once.
    final = api.report(order["trade_no"], receipt=purchase["receipt"])
    assert final.status_code == 200 and final.json()["order"] == settled


def test_a_receipt_post_waits_while_apple_fails_and_is_applied_later(api, fake_appstore):
    user = unique("fault-receipt")
    purchase = fake_appstore.purchase(GOLD, "consumable")
    fake_appstore.fault("http503")
    r = api.receipts(receipt=purchase["receipt"], user_id=user)
    assert r.status_code == 202, r.text
    assert r.json()["verification"] == "pending"
    assert api.balance(user) == 0
    fake_appstore.clear_faults()
    wait_until(lambda: api.balance(user) == 100, 15, "the pending receipt was never applied")
    orders = api.admin_orders(user_id=user)
    assert len(orders) == 1 and orders[0]["trade_status"] == "TRADE_SUCCESS"


def test_a_fault_for_a_limited_count_passes_by_itself(api, fake_appstore):
    user = unique("fault-count")
    order = api.create_order(user, GOLD)
    purchase = fake_appstore.purchase(GOLD, "consumable", app_account_token=order["app_account_token"])
    fake_appstore.fault("status21005", count=2)
    r = api.report(order["trade_no"], receipt=purchase["receipt"])
    assert r.status_code == 202, r.text
    wait_for_order(api, order["trade_no"], "TRADE_SUCCESS", timeout=15)
    assert api.balance(user) == 100


def test_the_sweeper_leaves_an_order_alone_while_its_payment_is_being_verified(module_launcher):
    stack = module_launcher.stack(ORDER_TTL="2s", SWEEP_INTERVAL="1s")
    api, fake = stack.api, stack.fake
    api.put_product(GOLD, grants={"balance": {"gold": 100}})
    user = unique("pending-ttl")
    order = api.create_order(user, GOLD)
    purchase = fake.purchase(GOLD, "consumable", app_account_token=order["app_account_token"])
    fake.fault("http503")
    assert api.report(order["trade_no"], receipt=purchase["receipt"]).status_code == 202
    # Past the TTL, with the sweeper and the retry worker both having had several turns.
    wait_until(lambda: int(stack.db.scalar(
        f"SELECT coalesce(max(attempts), 0) FROM trade_reports WHERE trade_no = '{order['trade_no']}'")) >= 2
        and stack.db.scalar(f"SELECT expires_at < now() - interval '2 seconds' FROM orders "
                            f"WHERE trade_no = '{order['trade_no']}'") == "t",
        20, "the retry worker did not keep retrying")
    waiting = api.order(order["trade_no"])
    assert waiting["trade_status"] == "WAIT_BUYER_PAY" and waiting["verification"] == "pending", waiting
    fake.clear_faults()
    wait_for_order(api, order["trade_no"], "TRADE_SUCCESS")
    assert [h["reason"] for h in api.admin_order(order["trade_no"])["history"]] == ["created", "paid"]
    assert api.balance(user) == 100


def test_a_report_apple_never_answers_is_given_up_with_its_reason(launcher):
    # A retry window of seconds instead of 72 hours: the worker must stop and say why.
    short = launcher.stack(REPORT_RETRY_WINDOW="3s", REPORT_RETRY_BASE="1s")
    api, fake = short.api, short.fake
    api.put_product(GOLD, grants={"balance": {"gold": 100}})
    user = unique("fault-gave-up")
    order = api.create_order(user, GOLD)
    purchase = fake.purchase(GOLD, "consumable", app_account_token=order["app_account_token"])
    fake.fault("http503")

    r = api.report(order["trade_no"], receipt=purchase["receipt"])
    assert r.status_code == 202, r.text
    failed = wait_until(
        lambda: (o := api.order(order["trade_no"])).get("verification") == "failed" and o, 20,
        "the worker never gave up")
    assert failed["trade_status"] == "WAIT_BUYER_PAY"
    detail = api.admin_order(order["trade_no"])
    assert [(x["outcome"], x.get("outcome_code")) for x in detail["reports"]] == [
        ("gave_up", "verify_receipt_http_503")]
    assert detail["history"][-1]["reason"] == "verification_gave_up"
    assert detail["history"][-1]["cause"] == "retry_worker"
    assert api.balance(user) == 0

    # Apple is back and the app reports again: the paid purchase is not lost.
    fake.clear_faults()
    again = api.report(order["trade_no"], receipt=purchase["receipt"])
    assert again.status_code == 200, again.text
    assert again.json()["order"]["trade_status"] == "TRADE_SUCCESS"
    assert api.balance(user) == 100
