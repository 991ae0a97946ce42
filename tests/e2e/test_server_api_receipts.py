"""Life after verifyReceipt (issue 11): a StoreKit 1 app receipt is verified with the App Store
Server API — transaction ids read from its PKCS#7 container, each transaction's signed data
fetched (Get Transaction History, paginated, and Get Transaction Info) and verified like any
StoreKit 2 transaction — chosen by APPLE_RECEIPT_VERIFICATION (server_api | verify_receipt |
auto, which prefers the Server API when a key is configured)."""

from __future__ import annotations

import subprocess

import requests

from support import unique, wait_for_order, wait_until

P = "com.example.tests.serverapi."
GOLD = P + "gold"
NOADS = P + "noads"


def add_products(api) -> None:
    api.put_product(GOLD, grants={"balance": {"gold": 10}})
    api.put_product(NOADS, type="non_consumable")


def stack(launcher, mode: str | None = "server_api", with_key: bool = True, fake=None, db=None, **env):
    fake = fake or launcher.fake(notify_port=None)
    settings = {**(fake.api_env() if with_key else {}), **env}
    if mode is not None:
        settings["APPLE_RECEIPT_VERIFICATION"] = mode
    sk = launcher.storekeeper(db or launcher.database(), fake=fake, **settings)
    add_products(sk.client)
    return sk, fake


def delta(before: dict, after: dict) -> dict:
    return {k: after[k] - before.get(k, 0) for k in after}


def test_a_receipt_settles_through_the_server_api_without_verify_receipt(launcher):
    sk, fake = stack(launcher)
    fake.set_history_page_size(1)
    api = sk.client
    user = unique("srvapi")
    account = unique("apple")
    before = fake.calls()

    # Two purchases of one Apple account: the second receipt lists both, the history pages.
    order = api.create_order(user, NOADS)
    first = fake.purchase(NOADS, "non_consumable", app_account_token=order["app_account_token"],
                          apple_account=account)
    r = api.report(order["trade_no"], receipt=first["receipt"])
    assert r.status_code == 200, r.text
    assert r.json()["order"]["trade_status"] == "TRADE_SUCCESS"

    second = fake.purchase(GOLD, "consumable", apple_account=account)
    r = api.receipts(receipt=second["receipt"], user_id=user)
    assert r.status_code == 200, r.text
    statuses = {t["transaction_id"]: t["status"] for t in r.json()["transactions"]}
    assert statuses == {first["transaction_id"]: "restored", second["transaction_id"]: "settled"}, statuses
    assert api.balance(user) == 10

    calls = delta(before, fake.calls())
    assert calls["verify_receipt"] == 0, calls
    # Page size 1, two transactions: every report walked more than one page.
    assert calls["transaction_history"] >= 3, calls
    assert "receipts are verified with the App Store Server API" in sk.log()


def test_a_sandbox_receipt_is_found_at_the_sandbox_server_api(launcher):
    sk, fake = stack(launcher)
    api = sk.client
    user = unique("srvapi-sandbox")
    order = api.create_order(user, GOLD)
    bought = fake.purchase(GOLD, "consumable", app_account_token=order["app_account_token"],
                           environment="Sandbox")
    r = api.report(order["trade_no"], receipt=bought["receipt"])
    assert r.status_code == 200, r.text
    assert api.balance(user) == 10
    assert fake.calls()["verify_receipt"] == 0


def test_auto_prefers_the_server_api_with_a_key_and_verify_receipt_without(launcher):
    fake = launcher.fake(notify_port=None)
    db = launcher.database()
    keyed, _ = stack(launcher, mode=None, fake=fake, db=db)
    bare = launcher.storekeeper(db, fake=fake)

    user = unique("srvapi-auto")
    before = fake.calls()
    order = keyed.client.create_order(user, GOLD)
    bought = fake.purchase(GOLD, "consumable", app_account_token=order["app_account_token"])
    assert keyed.client.report(order["trade_no"], receipt=bought["receipt"]).status_code == 200
    after_keyed = fake.calls()
    assert delta(before, after_keyed)["verify_receipt"] == 0
    assert delta(before, after_keyed)["transaction_history"] >= 1

    # An iOS 6-style transaction receipt has no PKCS#7 container: auto asks verifyReceipt.
    order = keyed.client.create_order(user, GOLD)
    old = fake.purchase(GOLD, "consumable", app_account_token=order["app_account_token"],
                        receipt_style="transaction")
    assert keyed.client.report(order["trade_no"], receipt=old["receipt"]).status_code == 200
    after_old = fake.calls()
    assert delta(after_keyed, after_old)["verify_receipt"] == 1

    # No key: verifyReceipt, as before.
    order = bare.client.create_order(user, GOLD)
    bought = fake.purchase(GOLD, "consumable", app_account_token=order["app_account_token"])
    assert bare.client.report(order["trade_no"], receipt=bought["receipt"]).status_code == 200
    calls = delta(after_old, fake.calls())
    assert calls["verify_receipt"] == 1 and calls["transaction_history"] == 0, calls
    assert keyed.client.balance(user) == 30
    assert "receipts are verified with verifyReceipt" in bare.log()


def test_verify_receipt_mode_ignores_the_key(launcher):
    sk, fake = stack(launcher, mode="verify_receipt")
    user = unique("srvapi-vr")
    order = sk.client.create_order(user, GOLD)
    bought = fake.purchase(GOLD, "consumable", app_account_token=order["app_account_token"])
    before = fake.calls()
    assert sk.client.report(order["trade_no"], receipt=bought["receipt"]).status_code == 200
    calls = delta(before, fake.calls())
    assert calls["verify_receipt"] == 1 and calls["transaction_history"] == 0, calls


def test_server_api_mode_refuses_what_only_verify_receipt_could_read(launcher):
    sk, fake = stack(launcher)
    user = unique("srvapi-old")
    order = sk.client.create_order(user, GOLD)
    old = fake.purchase(GOLD, "consumable", app_account_token=order["app_account_token"],
                        receipt_style="transaction")
    r = sk.client.report(order["trade_no"], receipt=old["receipt"])
    assert r.status_code == 422, r.text
    assert r.json()["code"] == "invalid_proof"
    assert "not_an_app_receipt" in r.json()["detail"], r.text
    assert fake.calls()["verify_receipt"] == 0


def test_a_receipt_signed_by_another_authority_is_refused_before_apple_is_asked(launcher):
    # A well-formed receipt from an App Store whose root this server does not trust: its
    # signature does not chain, so nobody is asked about its transactions.
    sk, fake = stack(launcher)
    elsewhere = launcher.fake(notify_port=None)
    foreign = elsewhere.purchase(GOLD, "consumable")
    user = unique("srvapi-unknown")
    order = sk.client.create_order(user, GOLD)
    before = fake.calls()
    r = sk.client.report(order["trade_no"], receipt=foreign["receipt"])
    assert r.status_code == 422, r.text
    # Both fakes' roots bear the same name; the authority key identifier in the foreign
    # intermediate says it was issued by another key, so no path leads to a trusted root.
    assert "untrusted_root" in r.json()["detail"], r.text
    assert sk.client.order(order["trade_no"])["trade_status"] == "WAIT_BUYER_PAY"
    assert delta(before, fake.calls()) == {k: 0 for k in before}, fake.calls()


def test_apple_down_keeps_the_report_pending_until_a_retry_settles_it(launcher):
    sk, fake = stack(launcher, REPORT_RETRY_BASE="1s")
    user = unique("srvapi-down")
    order = sk.client.create_order(user, GOLD)
    bought = fake.purchase(GOLD, "consumable", app_account_token=order["app_account_token"])
    fake.fault("http503", count=2)
    r = sk.client.report(order["trade_no"], receipt=bought["receipt"])
    assert r.status_code == 202, r.text
    assert sk.client.order(order["trade_no"])["trade_status"] == "WAIT_BUYER_PAY"
    wait_for_order(sk.client, order["trade_no"], "TRADE_SUCCESS", timeout=60)
    assert sk.client.balance(user) == 10
    assert fake.calls()["verify_receipt"] == 0


def test_a_key_apple_refuses_is_an_operator_error_and_the_report_waits(launcher):
    fake = launcher.fake(notify_port=None)
    db = launcher.database()
    sk, _ = stack(launcher, fake=fake, db=db, APPLE_API_KEY_ID="WRONGKEY00")
    user = unique("srvapi-key")
    order = sk.client.create_order(user, GOLD)
    bought = fake.purchase(GOLD, "consumable", app_account_token=order["app_account_token"])
    r = sk.client.report(order["trade_no"], receipt=bought["receipt"])
    assert r.status_code == 202, r.text
    metrics = sk.client.get("/metrics", admin=True, timeout=10).text
    assert ('storekeeper_apple_configuration_errors{setting="APPLE_API_KEY_ID",status="401",'
            'environment="Production"} 1') in metrics, metrics[-1500:]
    problems = requests.get(sk.url + "/readyz", timeout=10).json()["problems"]
    assert [(p["setting"], p["apple_status"]) for p in problems] == [("APPLE_API_KEY_ID", 401)]
    wait_until(lambda: any(line.get("level") == "error" and line.get("setting") == "APPLE_API_KEY_ID"
                           for line in sk.log_lines_json()), 10, "no error naming APPLE_API_KEY_ID")

    assert sk.terminate() == 0
    fixed = launcher.storekeeper(db, fake=fake, APPLE_RECEIPT_VERIFICATION="server_api",
                                 REPORT_RETRY_BASE="1s", **fake.api_env())
    wait_for_order(fixed.client, order["trade_no"], "TRADE_SUCCESS", timeout=60)
    assert fixed.client.balance(user) == 10


def test_the_setting_is_checked_at_start_up(binary, launcher, fresh_db):
    def serve(**env):
        return subprocess.run([binary, "serve"], env=launcher.env(fresh_db, 1, **env),
                              capture_output=True, text=True, timeout=20)

    result = serve(APPLE_RECEIPT_VERIFICATION="sometimes")
    assert result.returncode != 0
    assert "APPLE_RECEIPT_VERIFICATION" in result.stdout + result.stderr
    result = serve(APPLE_RECEIPT_VERIFICATION="server_api")
    assert result.returncode != 0
    output = result.stdout + result.stderr
    assert "APPLE_RECEIPT_VERIFICATION" in output and "APPLE_API_KEY_FILE" in output, output
