"""Google Play as a second store, end to end: the catalog names Google ids, orders for Google
Play carry an obfuscated account id, reports and restores are verified by asking the fake
Google Play's Developer API, and credited purchases are acknowledged or consumed at Google
(read back through google-auth, not through Storekeeper's client)."""

from __future__ import annotations

from urllib.parse import urlencode

import pytest
import requests

from google_support import FakeGooglePlay
from support import problem, unique, wait_until


@pytest.fixture(scope="module")
def google(tmp_path_factory):
    fake = FakeGooglePlay(tmp_path_factory.mktemp("google")).start()
    yield fake
    fake.terminate(15)
    fake.forget()


@pytest.fixture(scope="module")
def sk(module_storekeeper, google):
    return module_storekeeper(**google.env_for_storekeeper())


@pytest.fixture(scope="module")
def api(sk):
    client = sk.client
    client.put_product("g.gold", "consumable", grants={"balance": {"gold": 100}})
    client.put_product("g.noads", "non_consumable", grants={})
    client.put_product("g.vip", "auto_renewable", grants={"entitlement": "vip"})
    return client


def google_order(api, user: str, product: str, quantity: int | None = None) -> dict:
    body = {"user_id": user, "product_id": product, "store": "google_play"}
    if quantity is not None:
        body["quantity"] = quantity
    r = api.post("/v1/orders", json=body)
    assert r.status_code == 201, r.text
    return r.json()


def quiet(api) -> None:
    """Waits until no acknowledgement is open: the fake's faults hit whichever request comes
    next, and a test's fault must land on its own report."""
    wait_until(lambda: "storekeeper_google_acknowledgements_open 0\n" in api.get("/metrics", admin=True).text,
               20, "no acknowledgement in flight")


def report(api, trade_no: str, token: str) -> requests.Response:
    return api.post("/v1/trade-reports", json={"trade_no": trade_no, "trade_status": "TRADE_SUCCESS",
                                               "purchase_token": token})


def test_an_order_for_google_play_carries_an_obfuscated_account_id_unique_per_order(api):
    user = unique("g-order")
    first = google_order(api, user, "g.gold")
    second = google_order(api, user, "g.gold")
    assert first["store"] == "google_play"
    for order in (first, second):
        assert 1 <= len(order["obfuscated_account_id"]) <= 64
    assert first["obfuscated_account_id"] != second["obfuscated_account_id"]
    # An App Store order says its store and carries none.
    apple = api.create_order(user, "g.gold")
    assert apple["store"] == "app_store" and "obfuscated_account_id" not in apple
    assert api.order(first["trade_no"])["obfuscated_account_id"] == first["obfuscated_account_id"]


def test_the_catalog_names_each_products_google_id(api, sk):
    api.put_product("g.renamed", "consumable", grants={"balance": {"gold": 5}})
    r = api.request("PATCH", "/admin/v1/products/g.renamed", admin=True,
                    json={"google_product_id": "gold_pack_5"})
    assert r.status_code == 200, r.text
    assert r.json()["google_product_id"] == "gold_pack_5"
    served = wait_until(lambda: next((p for p in requests.get(sk.url + "/v1/products").json()["products"]
                                      if p["product_id"] == "g.renamed"
                                      and p["google_product_id"] == "gold_pack_5"), None),
                        10, "catalog shows the Google id")
    assert served["google_product_id"] == "gold_pack_5"
    # By default a product goes by its App Store id on Google Play too.
    assert api.get("/admin/v1/products/g.gold", admin=True).json()["google_product_id"] == "g.gold"
    # One Google id names one product.
    r = api.request("PATCH", "/admin/v1/products/g.noads", admin=True,
                    json={"google_product_id": "gold_pack_5"})
    problem(r, 409, "google_product_id_taken")
    r = api.request("PATCH", "/admin/v1/products/g.noads", admin=True,
                    json={"google_base_plan_id": "monthly"})
    problem(r, 422, "validation_failed")
    r = api.request("PATCH", "/admin/v1/products/g.vip", admin=True,
                    json={"google_base_plan_id": "Not A Plan"})
    problem(r, 422, "validation_failed")


def test_a_purchase_pays_its_order_is_credited_once_and_consumed_at_google(api, google):
    user = unique("g-pay")
    order = google_order(api, user, "g.gold", quantity=3)
    bought = google.buy("g.gold", quantity=3, obfuscated_account_id=order["obfuscated_account_id"])
    r = report(api, order["trade_no"], bought["purchase_token"])
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["order"]["trade_status"] == "TRADE_SUCCESS"
    assert body["order"]["transaction_id"] == bought["order_id"]
    assert body["order"]["environment"] == "Production"
    assert body["delivery"]["newly_granted"] is True
    assert api.balance(user) == 300
    # Consumed at Google once the credit committed, so the user can buy it again.
    google.wait_acknowledged("g.gold", bought["purchase_token"], consumed=True)
    # The admin's view of the order shows the Google purchase that paid it, its token shortened.
    detail = api.admin_order(order["trade_no"])
    assert detail["order"]["store"] == "google_play"
    [purchase] = detail["transactions"]
    assert purchase["store"] == "google_play" and purchase["transaction_id"] == bought["order_id"]
    assert bought["purchase_token"] not in purchase["original_transaction_id"]
    paid = [e for e in api.get("/admin/v1/events", admin=True, params={"user_id": user}).json()["events"]
            if e["type"] == "order.paid"]
    assert paid and paid[0]["data"]["store"] == "google_play"
    # The same report again changes nothing.
    again = report(api, order["trade_no"], bought["purchase_token"])
    assert again.status_code == 200 and again.json()["delivery"]["newly_granted"] is False
    assert api.balance(user) == 300
    # Nor can another order of the same user spend it.
    other = google_order(api, user, "g.gold", quantity=3)
    problem(report(api, other["trade_no"], bought["purchase_token"]), 422, "account_token_mismatch")
    assert api.balance(user) == 300


def test_a_non_consumable_is_acknowledged_not_consumed(api, google):
    user = unique("g-noads")
    order = google_order(api, user, "g.noads")
    bought = google.buy("g.noads", obfuscated_account_id=order["obfuscated_account_id"])
    assert report(api, order["trade_no"], bought["purchase_token"]).status_code == 200
    purchase = google.wait_acknowledged("g.noads", bought["purchase_token"], consumed=False)
    assert purchase.get("consumptionState", 0) == 0
    assert "g.noads" in api.entitlements(user)["non_consumables"]


def test_a_subscription_grants_until_googles_expiry_and_is_acknowledged(api, google):
    user = unique("g-vip")
    order = google_order(api, user, "g.vip")
    bought = google.subscribe("g.vip", obfuscated_account_id=order["obfuscated_account_id"])
    token = bought["purchase_token"]
    r = report(api, order["trade_no"], token)
    assert r.status_code == 200, r.text
    entitlements = api.entitlements(user)["entitlements"]
    vip = next(e for e in entitlements if e["entitlement"] == "vip")
    expiry = google.subscription(token)["lineItems"][0]["expiryTime"]
    assert vip["expires_at"][:19] == expiry[:19]
    wait_until(lambda: google.subscription(token)["acknowledgementState"]
               == "ACKNOWLEDGEMENT_STATE_ACKNOWLEDGED", 20, "subscription acknowledged")


def test_another_users_purchase_is_refused_and_pays_nobody_else(api, google):
    owner, thief = unique("g-owner"), unique("g-thief")
    order = google_order(api, owner, "g.gold")
    bought = google.buy("g.gold", obfuscated_account_id=order["obfuscated_account_id"])
    stolen_order = google_order(api, thief, "g.gold")
    problem(report(api, stolen_order["trade_no"], bought["purchase_token"]), 422, "account_token_mismatch")
    r = api.post("/v1/receipts", json={"store": "google_play", "user_id": thief,
                                       "purchase_token": bought["purchase_token"], "product_id": "g.gold"})
    problem(r, 409, "purchase_not_yours")
    assert api.balance(thief) == 0
    # The owner still gets it, once.
    assert report(api, order["trade_no"], bought["purchase_token"]).status_code == 200
    assert api.balance(owner) == 100


def test_a_restore_never_pays_an_order_for_another_product(api, google):
    # The order is found by the purchase's account id, not by what was bought: a cheap purchase
    # made with a dear order's account id must not pay that order (nor grant its product).
    api.put_product("g.premium", "non_consumable", price="49.99", grants={"entitlement": "premium"})
    api.put_product("g.gold_chest", "consumable", price="99.99", grants={"balance": {"gold": 5000}})
    for dear, cheap in (("g.premium", "g.noads"), ("g.gold_chest", "g.gold")):
        user = unique("g-swap")
        order = google_order(api, user, dear)
        bought = google.buy(cheap, obfuscated_account_id=order["obfuscated_account_id"])
        r = api.post("/v1/receipts", json={"store": "google_play", "user_id": user,
                                           "purchase_token": bought["purchase_token"], "product_id": cheap})
        assert r.status_code == 200, r.text
        item = r.json()["transactions"][0]
        assert (item["status"], item["code"]) == ("refused", "product_mismatch"), item
        assert r.json()["delivery"] == []
        assert api.order(order["trade_no"])["trade_status"] == "WAIT_BUYER_PAY"
        state = api.entitlements(user)
        assert state["entitlements"] == [] and state["non_consumables"] == [], state
        assert api.balance(user) == 0
        # The report path refuses it too; the order is still there to be paid properly.
        assert report(api, order["trade_no"], bought["purchase_token"]).status_code == 422


def test_a_restore_with_no_order_credits_once_then_restores(api, google):
    user = unique("g-restore")
    bought = google.buy("g.gold")
    body = {"store": "google_play", "user_id": user, "purchase_token": bought["purchase_token"],
            "product_id": "g.gold"}
    first = api.post("/v1/receipts", json=body)
    assert first.status_code == 200, first.text
    item = first.json()["transactions"][0]
    assert item["status"] == "settled" and item["transaction_id"] == bought["order_id"]
    assert api.order(item["trade_no"])["store"] == "google_play"
    second = api.post("/v1/receipts", json=body)
    assert second.json()["transactions"][0]["status"] == "restored"
    # Seed 000's XML form and a form-encoded post restore it too, answered in JSON (openapi).
    form = {"data": urlencode(body), "headers": {"Content-Type": "application/x-www-form-urlencoded"}}
    for path, kw in (("/v1/receipts.xml", {"json": body}), ("/v1/receipts", form)):
        again = api.post(path, **kw)
        assert again.status_code == 200, (path, again.text)
        assert again.headers["Content-Type"].startswith("application/json"), path
        assert again.json()["transactions"][0]["status"] == "restored"
    assert api.balance(user) == 100
    problem(api.post("/v1/receipts", json={**body, "user_id": unique("g-other")}), 409, "purchase_not_yours")


def test_a_restore_of_more_units_than_an_order_holds_is_refused_and_leaves_no_order(api, google):
    # Orders hold 1-10 units; a purchase of 11 cannot be credited, and asking again must not
    # leave another unpaid order behind each time.
    user = unique("g-eleven")
    bought = google.buy("g.gold", quantity=11)
    body = {"store": "google_play", "user_id": user, "purchase_token": bought["purchase_token"],
            "product_id": "g.gold"}
    for _ in range(2):
        r = api.post("/v1/receipts", json=body)
        assert r.status_code == 200, r.text
        item = r.json()["transactions"][0]
        assert (item["status"], item["code"]) == ("refused", "quantity_mismatch"), item
    assert api.admin_orders(user_id=user) == []
    assert api.balance(user) == 0


def test_an_app_store_purchase_never_pays_a_google_play_order(module_launcher, google):
    # The user has an unpaid Google Play order for the product; an App Store purchase of it
    # posted as a receipt (naming no order) gets an order of its own, and one carrying that
    # order's token pays nothing of it: the Google order waits for Google's purchase.
    stack = module_launcher.stack(**google.env_for_storekeeper())
    api, fake = stack.api, stack.fake
    api.put_product("g.gold", "consumable", grants={"balance": {"gold": 100}})
    user = unique("g-cross")
    order = google_order(api, user, "g.gold")
    unbound = fake.purchase("g.gold", "consumable")
    r = api.receipts(user_id=user, signed_transaction=unbound["signed_transaction"])
    assert r.status_code == 200, r.text
    item = r.json()["transactions"][0]
    assert item["status"] == "settled" and item["trade_no"] != order["trade_no"], item
    assert api.admin_order(item["trade_no"])["order"]["origin"] == "receipt"
    bound = fake.purchase("g.gold", "consumable", app_account_token=order["app_account_token"])
    r = api.receipts(user_id=user, signed_transaction=bound["signed_transaction"])
    assert r.status_code == 200, r.text
    assert r.json()["transactions"][0]["trade_no"] != order["trade_no"]
    assert api.order(order["trade_no"])["trade_status"] == "WAIT_BUYER_PAY"


def test_a_pending_purchase_waits_and_is_granted_when_it_completes(api, google):
    user = unique("g-pending")
    order = google_order(api, user, "g.gold")
    bought = google.buy("g.gold", state="pending", obfuscated_account_id=order["obfuscated_account_id"])
    r = report(api, order["trade_no"], bought["purchase_token"])
    assert r.status_code == 202, r.text
    assert api.balance(user) == 0
    google.control(f"products/{bought['purchase_token']}/complete")
    wait_until(lambda: api.order(order["trade_no"])["trade_status"] == "TRADE_SUCCESS", 30,
               "pending purchase granted by the retry worker")
    assert api.balance(user) == 100


def test_the_overview_counts_a_pending_google_purchase_as_waiting_on_google_not_apple(api, google):
    def waiting():
        body = api.get("/admin/v1/overview", admin=True).json()
        return body["reports_waiting"], body["reports_waiting_google"]

    apple, google_before = waiting()
    user = unique("g-overview")
    order = google_order(api, user, "g.gold")
    bought = google.buy("g.gold", state="pending", obfuscated_account_id=order["obfuscated_account_id"])
    assert report(api, order["trade_no"], bought["purchase_token"]).status_code == 202
    assert waiting() == (apple, google_before + 1)
    metrics = api.get("/metrics", admin=True).text
    assert f'storekeeper_reports_pending{{store="google_play"}} {google_before + 1}' in metrics
    assert f'storekeeper_reports_pending{{store="app_store"}} {apple}' in metrics
    google.control(f"products/{bought['purchase_token']}/complete")
    wait_until(lambda: waiting() == (apple, google_before), 30, "the completed purchase still counted as waiting")


def test_a_canceled_purchase_is_refused(api, google):
    user = unique("g-cancel")
    order = google_order(api, user, "g.gold")
    bought = google.buy("g.gold", state="pending", obfuscated_account_id=order["obfuscated_account_id"])
    google.control(f"products/{bought['purchase_token']}/cancel")
    problem(report(api, order["trade_no"], bought["purchase_token"]), 409, "purchase_canceled")
    assert api.order(order["trade_no"])["trade_status"] == "WAIT_BUYER_PAY"


def test_a_token_google_does_not_know_is_refused_with_its_own_code(api, google):
    order = google_order(api, unique("g-unknown"), "g.gold")
    body = problem(report(api, order["trade_no"], "no-such-token-at-all"), 422, "purchase_token_unknown")
    assert body["errors"][0]["field"] == "purchase_token"
    # A one-time token of another product: Google answers 400 purchaseTokenDoesNotMatchProductId
    # when asked for it under this one, which is the same answer: no such purchase of it.
    other = google.buy("g.noads", obfuscated_account_id=order["obfuscated_account_id"])
    body = problem(report(api, order["trade_no"], other["purchase_token"]), 422, "purchase_token_unknown")
    assert body["errors"][0]["field"] == "purchase_token"


def test_a_google_proof_never_pays_an_app_store_order(api, google):
    user = unique("g-mixed")
    apple = api.create_order(user, "g.gold")
    bought = google.buy("g.gold", obfuscated_account_id=apple["app_account_token"])
    problem(report(api, apple["trade_no"], bought["purchase_token"]), 422, "store_mismatch")


@pytest.mark.parametrize("status", [503, 429])
def test_googles_outage_keeps_the_report_pending_and_the_worker_retries(api, google, status):
    user = unique(f"g-outage-{status}")
    order = google_order(api, user, "g.gold")
    bought = google.buy("g.gold", obfuscated_account_id=order["obfuscated_account_id"])
    quiet(api)
    google.fault(status, count=1)
    r = report(api, order["trade_no"], bought["purchase_token"])
    assert r.status_code == 202, r.text
    wait_until(lambda: api.order(order["trade_no"])["trade_status"] == "TRADE_SUCCESS", 30,
               "settled once Google answers")
    assert api.balance(user) == 100


def test_google_unreachable_keeps_the_report_pending(module_storekeeper, google):
    env = {**google.env_for_storekeeper(), "GOOGLE_PLAY_API_URL": "http://127.0.0.1:9"}
    sk = module_storekeeper(**env)
    sk.client.put_product("g.gold", "consumable", grants={"balance": {"gold": 100}})
    order = google_order(sk.client, unique("g-unreachable"), "g.gold")
    bought = google.buy("g.gold", obfuscated_account_id=order["obfuscated_account_id"])
    r = report(sk.client, order["trade_no"], bought["purchase_token"])
    assert r.status_code == 202, r.text
    assert r.json()["verification"] == "pending"


def test_a_refused_service_account_is_a_configuration_problem_not_the_customers(api, sk, google):
    user = unique("g-403")
    order = google_order(api, user, "g.gold")
    bought = google.buy("g.gold", obfuscated_account_id=order["obfuscated_account_id"])
    quiet(api)
    google.fault(403, count=1000)
    try:
        r = report(api, order["trade_no"], bought["purchase_token"])
        assert r.status_code == 202, r.text
        ready = requests.get(sk.url + "/readyz", timeout=5)
        assert ready.status_code == 200
        problems = ready.json()["problems"]
        assert any(p["code"] == "google_play_configuration"
                   and p["setting"] == "GOOGLE_PLAY_SERVICE_ACCOUNT_FILE" for p in problems), problems
        metrics = api.get("/metrics", admin=True).text
        assert 'storekeeper_google_play_configuration_errors{setting="GOOGLE_PLAY_SERVICE_ACCOUNT_FILE"} 1' in metrics
    finally:
        google.clear_faults()
    # Fixed: the waiting report settles, and the problem clears.
    wait_until(lambda: api.order(order["trade_no"])["trade_status"] == "TRADE_SUCCESS", 30,
               "settled once Google takes the account")
    ready = requests.get(sk.url + "/readyz", timeout=5).json()
    assert not any(p["code"] == "google_play_configuration" for p in ready.get("problems", []))


def test_test_purchases_follow_the_sandbox_policy(module_storekeeper, google):
    for policy, credited in (("credit", True), ("record_only", False)):
        sk = module_storekeeper(**google.env_for_storekeeper(), SANDBOX_POLICY=policy)
        sk.client.put_product("g.gold", "consumable", grants={"balance": {"gold": 100}})
        user = unique(f"g-test-{policy}")
        order = google_order(sk.client, user, "g.gold")
        bought = google.buy("g.gold", test=True, obfuscated_account_id=order["obfuscated_account_id"])
        r = report(sk.client, order["trade_no"], bought["purchase_token"])
        assert r.status_code == 200, r.text
        assert r.json()["order"]["environment"] == "Sandbox"
        state = sk.client.entitlements(user)
        assert state["balances"].get("gold", 0) == (100 if credited else 0)
        if credited:
            assert state["sandbox_balances"]["gold"] == 100


def test_google_play_off_answers_503_with_a_code(module_storekeeper):
    sk = module_storekeeper()
    sk.client.put_product("g.gold", "consumable", grants={"balance": {"gold": 100}})
    r = sk.client.post("/v1/orders", json={"user_id": "u-off", "product_id": "g.gold", "store": "google_play"})
    problem(r, 503, "google_play_disabled")
    r = sk.client.post("/v1/receipts", json={"store": "google_play", "user_id": "u-off",
                                             "purchase_token": "abc", "product_id": "g.gold"})
    problem(r, 503, "google_play_disabled")


def test_bad_google_fields_are_refused_with_their_field(api):
    r = api.post("/v1/orders", json={"user_id": "u-bad", "product_id": "g.gold", "store": "play_store"})
    problem(r, 422, "validation_failed")
    order = google_order(api, unique("g-bad"), "g.gold")
    r = api.post("/v1/trade-reports", json={"trade_no": order["trade_no"], "trade_status": "TRADE_SUCCESS",
                                            "purchase_token": "has spaces/and slashes"})
    problem(r, 422, "validation_failed")
    r = api.post("/v1/trade-reports", json={"trade_no": order["trade_no"], "trade_status": "TRADE_SUCCESS",
                                            "purchase_token": "x" * 1025})
    problem(r, 422, "validation_failed")
    r = api.post("/v1/receipts", json={"store": "google_play", "user_id": "u-bad", "purchase_token": "abc"})
    problem(r, 422, "validation_failed")


def test_an_admin_moves_a_google_purchase_to_another_user(api, google):
    owner, heir = unique("g-from"), unique("g-to")
    order = google_order(api, owner, "g.gold")
    bought = google.buy("g.gold", obfuscated_account_id=order["obfuscated_account_id"])
    assert report(api, order["trade_no"], bought["purchase_token"]).status_code == 200
    r = api.post(f"/admin/v1/transactions/{bought['order_id']}/transfer", admin=True,
                 json={"to_user_id": heir, "reason": "support ticket 7"})
    assert r.status_code == 200, r.text
    moved = r.json()
    assert moved["from_trade_no"] == order["trade_no"]
    assert moved["order"]["store"] == "google_play" and moved["order"]["origin"] == "transfer"
    assert moved["order"]["transaction_id"] == bought["order_id"]
    assert api.balance(owner) == 0 and api.balance(heir) == 100
    assert api.admin_order(order["trade_no"])["order"]["close_reason"] == "transferred"
    # The old owner's app reporting its order again hears why it is closed, with this purchase
    # or with another one made for another order (whose account id would otherwise be the
    # refusal), and nothing is credited.
    problem(report(api, order["trade_no"], bought["purchase_token"]), 409, "order_transferred")
    other = google.buy("g.gold", obfuscated_account_id=google_order(api, owner, "g.gold")["obfuscated_account_id"])
    problem(report(api, order["trade_no"], other["purchase_token"]), 409, "order_transferred")
    assert api.balance(owner) == 0 and api.balance(heir) == 100
    # Its token now restores for the new owner only.
    body = {"store": "google_play", "purchase_token": bought["purchase_token"], "product_id": "g.gold"}
    assert api.post("/v1/receipts", json={**body, "user_id": heir}).json()["transactions"][0]["status"] == "restored"
    problem(api.post("/v1/receipts", json={**body, "user_id": owner}), 409, "purchase_not_yours")
    problem(api.post(f"/admin/v1/transactions/{bought['order_id']}/transfer", admin=True,
                     json={"to_user_id": heir}), 409, "already_owned")


def test_a_purchase_google_names_no_order_for_is_never_exported_by_its_token(api, google):
    # Google's orderId "may not be set if there is no order associated with the purchase" (a
    # promo code): the purchase is then known by its token, a credential that must not leave
    # in an export. The exports name it by a digest, as the charts do.
    from datetime import datetime, timedelta, timezone
    user = unique("g-orderless")
    order = google_order(api, user, "g.gold")
    made = google.buy("g.gold", obfuscated_account_id=order["obfuscated_account_id"], no_order=True)
    assert "orderId" not in google.api(f"products/g.gold/tokens/{made['purchase_token']}")
    r = report(api, order["trade_no"], made["purchase_token"])
    assert r.status_code == 200, r.text
    assert api.balance(user) == 100
    now = datetime.now(timezone.utc)
    window = {"from": (now - timedelta(hours=1)).isoformat(), "to": (now + timedelta(hours=1)).isoformat()}
    for kind in ("orders", "ledger"):
        r = api.get(f"/admin/v1/exports/{kind}", admin=True, params={**window, "format": "jsonl"})
        assert r.status_code == 200, r.text
        assert made["purchase_token"] not in r.text, kind
        mine = [row for row in map(__import__("json").loads, r.text.splitlines()) if row.get("user_id") == user]
        assert mine and all(row["transaction_id"].startswith("token:") for row in mine), (kind, mine)


def test_a_purchase_google_names_no_order_for_can_be_transferred_by_the_id_the_admin_api_shows(api, google, sk):
    # Such a purchase goes by its purchase token, longer than any Apple id: the transfer route
    # refused every id over 64 characters, saying no "Apple transaction" was recorded.
    owner, heir = unique("g-orderless-from"), unique("g-orderless-to")
    order = google_order(api, owner, "g.gold")
    made = google.buy("g.gold", obfuscated_account_id=order["obfuscated_account_id"], no_order=True)
    assert report(api, order["trade_no"], made["purchase_token"]).status_code == 200
    [shown] = api.get(f"/admin/v1/orders/{order['trade_no']}", admin=True).json()["transactions"]
    assert len(shown["transaction_id"]) > 64, shown
    r = api.post(f"/admin/v1/transactions/{shown['transaction_id']}/transfer", admin=True,
                 json={"to_user_id": heir, "reason": "changed accounts"})
    assert r.status_code == 200, r.text
    assert (api.balance(owner), api.balance(heir)) == (0, 100)
    # Its audit row is found by the same id (the filter took at most 128 characters).
    r = api.get("/admin/v1/audit", admin=True, params={"target_id": shown["transaction_id"]})
    assert r.status_code == 200, r.text
    assert [e["action"] for e in r.json()["entries"]] == ["purchase_transferred"], r.json()
    missing = problem(api.post(f"/admin/v1/transactions/{'x' * 100}/transfer", admin=True,
                               json={"to_user_id": heir}), 404, "transaction_not_found")
    assert "Apple" not in missing["detail"], missing
    # The token stands in for the order id Google never gave, and reads the purchase: the
    # settlement's and the transfer's log lines keep only its first characters.
    assert made["purchase_token"] not in sk.log()
    assert made["purchase_token"][:12] + "…" in sk.log()
