"""Issue 5: proofs that must not settle an order — invalid, from Xcode, another app, a forbidden
environment, another product, another order's token, another quantity — and one Apple
transaction reported for two orders (sequentially, concurrently, and through two processes)."""

from __future__ import annotations

import threading

import pytest
import requests

from support import problem, tamper_jws_payload, unique, user_headers

P = "com.example.tests.refusals."
GOLD = P + "gold"
GEMS = P + "gems"


@pytest.fixture(scope="module", autouse=True)
def catalog(api):
    api.put_product(GOLD, grants={"balance": {"gold": 100}})
    api.put_product(GEMS, grants={"balance": {"gems": 5}})


def assert_untouched(api, order, user):
    now = api.order(order["trade_no"])
    assert now["trade_status"] == "WAIT_BUYER_PAY"
    assert now.get("transaction_id") is None
    assert api.entitlements(user)["balances"] == {}


@pytest.mark.parametrize("proof", [
    {"receipt": "bm90IGEgcmVjZWlwdA=="},
    {"receipt": "@@not base64@@"},
    {"signed_transaction": "a.b.c"},
    {"signed_transaction": "eyJhbGciOiJub25lIn0.eyJ0cmFuc2FjdGlvbklkIjoiMSJ9."},
])
def test_an_invalid_proof_is_422_and_recorded(api, proof):
    user = unique("invalid")
    order = api.create_order(user, GOLD)
    r = api.report(order["trade_no"], **proof)
    body = problem(r, 422, "invalid_proof")
    assert body["detail"]
    assert_untouched(api, order, user)
    reports = api.admin_order(order["trade_no"])["reports"]
    assert [x["outcome"] for x in reports] == ["invalid"]


def test_a_tampered_signed_transaction_is_refused(api, fake_appstore):
    user = unique("tampered")
    order = api.create_order(user, GOLD)
    purchase = fake_appstore.purchase(GOLD, "consumable", app_account_token=order["app_account_token"])
    problem(api.report(order["trade_no"], signed_transaction=tamper_jws_payload(purchase["signed_transaction"])),
            422, "invalid_proof")
    jws = purchase["signed_transaction"]
    head, payload, sig = jws.split(".")
    problem(api.report(order["trade_no"], signed_transaction=".".join([head, payload, sig[::-1]])), 422,
            "invalid_proof")
    assert_untouched(api, order, user)
    # The genuine one still works afterwards.
    assert api.report(order["trade_no"], signed_transaction=jws).status_code == 200


@pytest.mark.parametrize("proof", ["signed_transaction", "receipt"])
def test_an_xcode_purchase_is_refused(api, fake_appstore, proof):
    user = unique("xcode")
    order = api.create_order(user, GOLD)
    purchase = fake_appstore.purchase(GOLD, "consumable", app_account_token=order["app_account_token"],
                                      environment="Xcode")
    problem(api.report(order["trade_no"], **{proof: purchase[proof]}), 422, "invalid_proof")
    assert_untouched(api, order, user)


@pytest.mark.parametrize("proof", ["signed_transaction", "receipt"])
def test_a_purchase_of_another_app_is_refused(api, fake_appstore, proof):
    user = unique("bundle")
    order = api.create_order(user, GOLD)
    purchase = fake_appstore.purchase(GOLD, "consumable", app_account_token=order["app_account_token"],
                                      bundle_id="com.example.someone.else")
    problem(api.report(order["trade_no"], **{proof: purchase[proof]}), 422, "invalid_proof")
    assert_untouched(api, order, user)


@pytest.mark.parametrize("proof", ["signed_transaction", "receipt"])
def test_a_purchase_of_another_product_is_product_mismatch(api, fake_appstore, proof):
    user = unique("mismatch")
    order = api.create_order(user, GOLD)
    purchase = fake_appstore.purchase(GEMS, "consumable", app_account_token=order["app_account_token"])
    problem(api.report(order["trade_no"], **{proof: purchase[proof]}), 422, "product_mismatch")
    assert_untouched(api, order, user)


def test_another_orders_token_is_account_token_mismatch(api, fake_appstore):
    user = unique("token")
    mine = api.create_order(user, GOLD)
    theirs = api.create_order(unique("token-other"), GOLD)
    purchase = fake_appstore.purchase(GOLD, "consumable", app_account_token=theirs["app_account_token"])
    problem(api.report(mine["trade_no"], signed_transaction=purchase["signed_transaction"]), 422,
            "account_token_mismatch")
    assert_untouched(api, mine, user)
    # It still pays the order it names.
    assert api.report(theirs["trade_no"], signed_transaction=purchase["signed_transaction"]).status_code == 200


def test_another_quantity_is_refused(api, fake_appstore):
    user = unique("quantity")
    order = api.create_order(user, GOLD, quantity=3)
    purchase = fake_appstore.purchase(GOLD, "consumable", quantity=1, app_account_token=order["app_account_token"])
    problem(api.report(order["trade_no"], signed_transaction=purchase["signed_transaction"]), 422,
            "quantity_mismatch")
    assert_untouched(api, order, user)


def test_sandbox_is_refused_where_only_production_is_allowed(module_launcher):
    """The default, production only, refuses App Review's and TestFlight's sandbox purchases:
    the client hears `environment_not_allowed`, and the operator a line naming the environment
    and the setting that accepts it."""
    stack = module_launcher.stack(APPLE_ENVIRONMENTS="production")
    api = stack.api
    api.put_product(GOLD)
    seen = 0
    for proof in ("signed_transaction", "receipt"):
        user = unique("prod-only")
        order = api.create_order(user, GOLD)
        purchase = stack.fake.purchase(GOLD, "consumable", app_account_token=order["app_account_token"],
                                       environment="Sandbox")
        body = problem(api.report(order["trade_no"], **{proof: purchase[proof]}), 422, "invalid_proof")
        assert "environment_not_allowed" in body["detail"], body
        assert_untouched(api, order, user)
        told = [line for line in stack.sk.log_lines_json()
                if line.get("environment") == "Sandbox" and line.get("setting") == "APPLE_ENVIRONMENTS"]
        assert len(told) > seen, stack.sk.log_tail()
        seen = len(told)
        assert told[-1]["level"] == "warning" and told[-1]["accepted"] == "production", told
        assert "APPLE_ENVIRONMENTS=production,sandbox" in told[-1]["hint"], told


def test_a_sandbox_receipt_judged_through_the_server_api_tells_the_operator_the_setting(module_launcher):
    """With the Server API key, a production-only server asks production alone: a sandbox
    receipt is unknown there. The client hears it was not found; the operator, why."""
    stack = module_launcher.stack(api_key=True, APPLE_ENVIRONMENTS="production")
    api = stack.api
    api.put_product(GOLD)
    user = unique("prod-only-api")
    order = api.create_order(user, GOLD)
    purchase = stack.fake.purchase(GOLD, "consumable", app_account_token=order["app_account_token"],
                                   environment="Sandbox")
    body = problem(api.report(order["trade_no"], receipt=purchase["receipt"]), 422, "invalid_proof")
    assert "server_api_transaction_not_found" in body["detail"], body
    assert_untouched(api, order, user)
    told = [line for line in stack.sk.log_lines_json() if line.get("setting") == "APPLE_ENVIRONMENTS"]
    assert len(told) == 1, stack.sk.log_tail()
    assert told[0]["level"] == "warning" and told[0]["accepted"] == "production", told
    assert "APPLE_ENVIRONMENTS=production,sandbox" in told[0]["hint"], told


# ---------------------------------------------------------------------------------------------
# One transaction, two orders


def test_one_transaction_reported_for_two_orders_settles_only_the_first(api, fake_appstore, stack):
    a_user, b_user = unique("double-a"), unique("double-b")
    a, b = api.create_order(a_user, GOLD), api.create_order(b_user, GOLD)
    purchase = fake_appstore.purchase(GOLD, "consumable")  # no token: it could pay either
    assert api.report(a["trade_no"], signed_transaction=purchase["signed_transaction"]).status_code == 200
    for proof in ("signed_transaction", "receipt"):
        problem(api.report(b["trade_no"], **{proof: purchase[proof]}), 409, "transaction_already_used")
    assert_untouched(api, b, b_user)
    assert api.balance(a_user) == 100
    assert stack.db.scalar(f"SELECT count(*) FROM ledger WHERE transaction_id = '{purchase['transaction_id']}'") == "1"


def race(calls):
    """Runs the calls at once; returns their responses in order."""
    barrier = threading.Barrier(len(calls))
    out = [None] * len(calls)

    def run(i, fn):
        barrier.wait(timeout=30)
        out[i] = fn()

    threads = [threading.Thread(target=run, args=(i, fn)) for i, fn in enumerate(calls)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    return out


def post_report(url, trade_no, jws, user_id):
    return requests.post(url + "/v1/trade-reports", timeout=60, headers=user_headers(user_id),
                         json={"trade_no": trade_no, "trade_status": "TRADE_SUCCESS", "signed_transaction": jws})


def check_exactly_one_winner(api, db, orders, users, purchase, answers):
    statuses = sorted(r.status_code for r in answers)
    assert statuses == [200] + [409] * (len(answers) - 1), [(r.status_code, r.text) for r in answers]
    for r in answers:
        if r.status_code == 409:
            assert r.json()["code"] in ("transaction_already_used", "order_already_paid"), r.text
    paid = [o for o in orders if api.order(o["trade_no"])["trade_status"] == "TRADE_SUCCESS"]
    assert len(paid) == 1
    assert sum(api.balance(u) for u in users) == 100
    assert db.scalar(f"SELECT count(*) FROM ledger WHERE transaction_id = '{purchase['transaction_id']}'") == "1"


@pytest.mark.parametrize("attempt", range(5))
def test_one_transaction_reported_concurrently_for_two_orders_exactly_one_wins(api, fake_appstore, stack, attempt):
    users = [unique("race-a"), unique("race-b")]
    orders = [api.create_order(u, GOLD) for u in users]
    purchase = fake_appstore.purchase(GOLD, "consumable")
    jws = purchase["signed_transaction"]
    answers = race([lambda o=o: post_report(stack.sk.url, o["trade_no"], jws, o["user_id"]) for o in orders])
    check_exactly_one_winner(api, stack.db, orders, users, purchase, answers)


def test_one_transaction_reported_through_two_processes_exactly_one_wins(api, fake_appstore, stack,
                                                                         module_storekeeper):
    other = module_storekeeper(stack.db, fake=fake_appstore, share_admin_with=stack.sk)
    for _ in range(5):
        users = [unique("two-a"), unique("two-b"), unique("two-c"), unique("two-d")]
        orders = [api.create_order(u, GOLD) for u in users]
        purchase = fake_appstore.purchase(GOLD, "consumable")
        jws = purchase["signed_transaction"]
        urls = [stack.sk.url, other.url, stack.sk.url, other.url]
        answers = race([lambda o=o, u=u: post_report(u, o["trade_no"], jws, o["user_id"]) for o, u in zip(orders, urls)])
        check_exactly_one_winner(api, stack.db, orders, users, purchase, answers)


def test_the_fake_app_store_is_trusted_only_where_its_root_is_configured(stack, launcher, fake_appstore):
    # The instance that names the fake's root in APPLE_ROOT_CERTS says so loudly at start-up.
    assert "trusting an extra root certificate" in stack.sk.log()

    # Another instance on its own database, trusting only Apple's root (and an unrelated one),
    # refuses a transaction the fake signed.
    other = launcher.storekeeper()
    other.client.put_product(GOLD, grants={"balance": {"gold": 100}})
    user = unique("untrusted")
    order = other.client.create_order(user, GOLD)
    purchase = fake_appstore.purchase(GOLD, "consumable", app_account_token=order["app_account_token"])
    r = other.client.report(order["trade_no"], signed_transaction=purchase["signed_transaction"])
    body = problem(r, 422, "invalid_proof")
    assert [e["message"] for e in body["errors"]] == ["untrusted_root"]
    assert_untouched(other.client, order, user)
