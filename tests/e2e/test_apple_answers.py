"""Apple as it really answers (issue 11): the iOS 6-style transaction receipt that seeds 000-002
post is answered with the transaction itself as `receipt` (app in `bid`, no `bundle_id`), and a
wrong shared secret (21004) is the operator's mistake, not the customer's: the report waits,
the operator is told, and it settles once the setting is fixed."""

from __future__ import annotations

import requests

from support import unique, wait_for_order, wait_until

P = "com.example.tests.appleanswers."
GOLD = P + "gold"


def add_gold(api) -> None:
    api.put_product(GOLD, grants={"balance": {"gold": 10}}, content={"message": "10 gold"})


def test_a_transaction_receipt_of_ours_settles_and_another_apps_is_refused(api, fake_appstore):
    add_gold(api)
    user = unique("answers")

    order = api.create_order(user, GOLD)
    ours = fake_appstore.purchase(GOLD, "consumable", app_account_token=order["app_account_token"],
                                  receipt_style="transaction")
    r = api.report(order["trade_no"], receipt=ours["receipt"])
    assert r.status_code == 200, r.text
    assert r.json()["order"]["trade_status"] == "TRADE_SUCCESS"
    assert api.balance(user) == 10

    order = api.create_order(user, GOLD)
    theirs = fake_appstore.purchase(GOLD, "consumable", receipt_style="transaction",
                                    bundle_id="com.example.someone.else")
    r = api.report(order["trade_no"], receipt=theirs["receipt"])
    assert r.status_code == 422, r.text
    assert r.json()["code"] == "invalid_proof"
    assert api.order(order["trade_no"])["trade_status"] == "WAIT_BUYER_PAY"
    r = api.receipts(receipt=theirs["receipt"], user_id=user)
    assert r.status_code == 422, r.text
    assert r.json()["code"] == "invalid_proof"
    assert api.balance(user) == 10


def metric_lines(sk, name: str) -> list[str]:
    r = sk.client.get("/metrics", admin=True, timeout=10)
    assert r.status_code == 200, r.text
    return [line for line in r.text.splitlines() if line.startswith(name + "{")]


def secret_errors(sk) -> list[dict]:
    return [line for line in sk.log_lines_json()
            if line.get("level") == "error" and line.get("setting") == "APPLE_SHARED_SECRET"]


def test_a_wrong_shared_secret_keeps_reports_pending_until_it_is_fixed(launcher):
    fake = launcher.fake(notify_port=None, shared_secret="the-right-secret")
    db = launcher.database()
    sk = launcher.storekeeper(db, fake=fake, APPLE_SHARED_SECRET="a-wrong-secret", REPORT_RETRY_BASE="1s")
    api = sk.client
    add_gold(api)
    user = unique("answers-secret")

    pending = []
    for style in ("transaction", "app"):
        order = api.create_order(user, GOLD)
        purchase = fake.purchase(GOLD, "consumable", app_account_token=order["app_account_token"],
                                 receipt_style=style)
        r = api.report(order["trade_no"], receipt=purchase["receipt"])
        # Not 422 invalid_proof: the customer's receipt is fine, our setting is not.
        assert r.status_code == 202, r.text
        pending.append(order)

    gauge = metric_lines(sk, "storekeeper_apple_configuration_errors")
    assert gauge == ['storekeeper_apple_configuration_errors{setting="APPLE_SHARED_SECRET",status="21004",'
                     'environment="Production"} 1'], gauge
    ready = requests.get(sk.url + "/readyz", timeout=10)
    assert ready.status_code == 200, ready.text
    problems = ready.json()["problems"]
    assert [(p["setting"], p["apple_status"]) for p in problems] == [("APPLE_SHARED_SECRET", 21004)]
    assert ready.json()["status"] == "ready"
    # Two reports, and the retry worker asking again: one error line a minute, not one per answer.
    wait_until(lambda: secret_errors(sk), 10, "no error naming APPLE_SHARED_SECRET was logged")
    assert len(secret_errors(sk)) == 1, secret_errors(sk)
    assert all(api.order(o["trade_no"])["trade_status"] == "WAIT_BUYER_PAY" for o in pending)

    # The operator fixes the setting; the retry worker settles what waited.
    assert sk.terminate() == 0
    fixed = launcher.storekeeper(db, fake=fake, APPLE_SHARED_SECRET="the-right-secret", REPORT_RETRY_BASE="1s")
    for order in pending:
        wait_for_order(fixed.client, order["trade_no"], "TRADE_SUCCESS", timeout=60)
    assert fixed.client.balance(user) == 20
    assert metric_lines(fixed, "storekeeper_apple_configuration_errors") == []
    assert "problems" not in requests.get(fixed.url + "/readyz", timeout=10).json()
