"""Google's orders, end to end against the fake Google Play (issue 25): refunds are per order as
Google makes them (a quantity-based partial refund takes back its share of a multi-quantity
purchase, under REFUND_POLICY, once; a later full refund takes back only the rest; a revocation
refunds the subscription's latest order; a void names the order it refunds, a renewal's
included), and each order's price comes from the Orders API (orders.get), retried when Google
fails without holding up the credit, and listed in /readyz (still ready) while it fails. The
fake both pushes and is swept every second, so every void reaches Storekeeper twice: each must
apply once."""

from __future__ import annotations

from decimal import Decimal

import pytest

from google_support import push_env, start_pushing_fake
from support import unique, wait_until


@pytest.fixture(scope="module")
def google(tmp_path_factory):
    fake = start_pushing_fake(tmp_path_factory.mktemp("google-orders"))
    yield fake
    fake.terminate(15)
    fake.forget()


@pytest.fixture(scope="module")
def sk(module_launcher, module_storekeeper, google):
    db = module_launcher.database()
    sk = module_storekeeper(db, port=google.storekeeper_port, **push_env(google), GOOGLE_PLAY_SWEEP_INTERVAL="1s")
    sk.client.put_product("go.gold", "consumable", grants={"balance": {"gold": 100}})
    sk.client.put_product("go.vip", "auto_renewable", grants={"entitlement": "vip"})
    sk.db = db
    return sk


def order_for(sk, user: str, product: str, quantity: int | None = None) -> dict:
    body = {"user_id": user, "product_id": product, "store": "google_play"}
    if quantity:
        body["quantity"] = quantity
    r = sk.client.post("/v1/orders", json=body)
    assert r.status_code == 201, r.text
    return r.json()


def report(sk, order: dict, token: str) -> None:
    r = sk.client.post("/v1/trade-reports", json={"trade_no": order["trade_no"], "trade_status": "TRADE_SUCCESS",
                                                  "purchase_token": token})
    assert r.status_code == 200, r.text


def buy_gold(sk, google, user: str, quantity: int, **fields) -> tuple[dict, str]:
    order = order_for(sk, user, "go.gold", quantity)
    token = google.buy("go.gold", quantity=quantity, obfuscated_account_id=order["obfuscated_account_id"],
                       **fields)["purchase_token"]
    report(sk, order, token)
    return order, token


def refunds(sk, user: str) -> list[dict]:
    r = sk.client.get("/admin/v1/events", admin=True, params={"user_id": user, "limit": 200})
    assert r.status_code == 200, r.text
    return [e["data"] for e in r.json()["events"] if e["type"] == "purchase.refunded"]


def ledger(sk, user: str) -> dict:
    r = sk.client.get(f"/v1/users/{user}/ledger")
    assert r.status_code == 200, r.text
    return r.json()


def swept_since_last_void(sk) -> bool:
    """A voided sweep has run completely since the last void Storekeeper applied."""
    return sk.db.scalar(
        "SELECT (SELECT last_run_at FROM google_sweeps WHERE name = 'voided') > "
        "(SELECT max(applied_at) FROM google_voids)") == "t"


def test_partial_refunds_take_back_their_share_once_and_a_full_void_the_rest(sk, google):
    user = unique("g-partial")
    order, token = buy_gold(sk, google, user, 3)
    assert sk.client.balance(user) == 300
    google.control("voids", {"purchase_token": token, "quantity": 1})
    wait_until(lambda: sk.client.balance(user) == 200, 30, "one unit of three taken back")
    assert sk.client.order(order["trade_no"])["trade_status"] == "TRADE_SUCCESS"
    google.control("voids", {"purchase_token": token, "quantity": 1})
    wait_until(lambda: sk.client.balance(user) == 100, 30, "a second unit taken back")
    assert sk.client.order(order["trade_no"])["trade_status"] == "TRADE_SUCCESS"
    google.control("voids", {"purchase_token": token, "reason": 1})
    wait_until(lambda: sk.client.order(order["trade_no"])["trade_status"] == "TRADE_CLOSED", 30,
               "the full refund closes the order")
    assert sk.client.order(order["trade_no"])["close_reason"] == "refunded"
    # Pushed and swept: each refund applied once, whatever reached Storekeeper twice.
    wait_until(lambda: swept_since_last_void(sk), 30, "a sweep after the last void")
    assert sk.client.balance(user) == 0
    got = refunds(sk, user)
    assert sorted((e["refund_type"], e.get("refunded_quantity")) for e in got) == [
        ("full", 1), ("partial", 1), ("partial", 1)]
    assert all(e["store"] == "google_play" and e["quantity"] == 3 for e in got)
    amounts = sorted(e["amount"] for e in ledger(sk, user)["entries"] if e["kind"] == "refund")
    assert amounts == [-100, -100, -100]


def test_a_partial_refund_after_spending_follows_the_refund_policy_and_the_rest_is_not_taken_twice(sk, google):
    user = unique("g-partial-debt")
    order, token = buy_gold(sk, google, user, 3)
    r = sk.client.post(f"/v1/users/{user}/balances/gold/spend", json={"amount": 250, "reason": "sword"},
                       headers={"Idempotency-Key": unique("spend")})
    assert r.status_code == 201, r.text
    google.control("voids", {"purchase_token": token, "quantity": 1})
    wait_until(lambda: len(refunds(sk, user)) == 1, 30, "the partial refund applied")
    # REFUND_POLICY=debt: what is left of the lot (50) is taken, the rest of the unit's 100 is debt.
    assert sk.client.balance(user) == 0
    assert ledger(sk, user)["debts"] == {"gold": 50}
    assert refunds(sk, user)[0]["recovery"] == {"policy": "debt", "assets": {"gold": {
        "credited": 100, "recovered": 50, "unrecovered": 50, "debt": 50, "taken": 50}}}
    google.control("voids", {"purchase_token": token})
    wait_until(lambda: sk.client.order(order["trade_no"])["trade_status"] == "TRADE_CLOSED", 30,
               "the rest refunded")
    # Two units' 200 more, all debt: 250 owed in all, what was spent of the refunded gold.
    assert ledger(sk, user)["debts"] == {"gold": 250}
    assert sk.client.balance(user) == 0


def test_a_partly_refunded_purchase_moves_what_is_left_and_its_later_refunds_take_their_share(sk, google):
    # A transfer once credited the new owner all three units (the refunded one minted again)
    # while the old owner gave back only the two left.
    alice, bob = unique("g-moved-from"), unique("g-moved-to")
    order = order_for(sk, alice, "go.gold", 3)
    bought = google.buy("go.gold", quantity=3, obfuscated_account_id=order["obfuscated_account_id"])
    token = bought["purchase_token"]
    report(sk, order, token)
    google.control("voids", {"purchase_token": token, "quantity": 1})
    wait_until(lambda: sk.client.balance(alice) == 200, 30, "one unit of three taken back")
    r = sk.client.post(f"/admin/v1/transactions/{bought['order_id']}/transfer", admin=True,
                       json={"to_user_id": bob})
    assert r.status_code == 200, r.text
    moved = r.json()["order"]
    assert (sk.client.balance(alice), sk.client.balance(bob)) == (0, 200)
    # The new order is for the two units left, and priced for them.
    assert moved["quantity"] == 2
    assert Decimal(moved["amount"]) == Decimal(order["amount"]) * 2 / 3
    # Its refunds take a share of what it was credited, per unit it was credited for.
    google.control("voids", {"purchase_token": token, "quantity": 1})
    wait_until(lambda: sk.client.balance(bob) == 100, 30, "a second unit taken back from bob")
    assert sk.client.order(moved["trade_no"])["trade_status"] == "TRADE_SUCCESS"
    google.control("voids", {"purchase_token": token})
    wait_until(lambda: sk.client.order(moved["trade_no"])["trade_status"] == "TRADE_CLOSED", 30,
               "the rest refunded")
    wait_until(lambda: swept_since_last_void(sk), 30, "a sweep after the last void")
    assert (sk.client.balance(alice), sk.client.balance(bob)) == (0, 0)
    assert ledger(sk, bob)["debts"] == {}
    assert sorted(e["amount"] for e in ledger(sk, bob)["entries"]) == [-100, -100, 200]


def test_a_transfer_after_spending_and_a_partial_refund_moves_only_what_is_left(sk, google):
    # Alice bought 3 × 100 gold, spent 250, and Google refunded one unit: 50 was taken and 50
    # left owed. A transfer moves the two units left (200) to Bob; Alice gives back those 200
    # and still owes the 50: 250 in all, what she spent. It once took and moved 250 (the owed 50
    # counted as held), charging Alice twice for it and minting 50 for Bob.
    alice, bob = unique("g-spent-from"), unique("g-spent-to")
    order = order_for(sk, alice, "go.gold", 3)
    bought = google.buy("go.gold", quantity=3, obfuscated_account_id=order["obfuscated_account_id"])
    token = bought["purchase_token"]
    report(sk, order, token)
    r = sk.client.post(f"/v1/users/{alice}/balances/gold/spend", json={"amount": 250, "reason": "sword"},
                       headers={"Idempotency-Key": unique("spend")})
    assert r.status_code == 201, r.text
    google.control("voids", {"purchase_token": token, "quantity": 1})
    wait_until(lambda: len(refunds(sk, alice)) == 1, 30, "the partial refund applied")
    assert (sk.client.balance(alice), ledger(sk, alice)["debts"]) == (0, {"gold": 50})
    r = sk.client.post(f"/admin/v1/transactions/{bought['order_id']}/transfer", admin=True,
                       json={"to_user_id": bob})
    assert r.status_code == 200, r.text
    assert sk.client.balance(bob) == 200
    assert (sk.client.balance(alice), ledger(sk, alice)["debts"]) == (-200, {"gold": 50})
    # Nothing minted: what the two hold and owe adds up to the two units left.
    assert sk.client.balance(alice) - 50 + sk.client.balance(bob) + 250 == 200


def spent_then_partly_refunded(sk, google, user: str, quantity: int, spent: int, voided: int) -> dict:
    """`quantity` units of go.gold bought and reported, `spent` of the gold spent, then
    `voided` units refunded by Google; returns the fake's purchase."""
    order = order_for(sk, user, "go.gold", quantity)
    bought = google.buy("go.gold", quantity=quantity, obfuscated_account_id=order["obfuscated_account_id"])
    report(sk, order, bought["purchase_token"])
    r = sk.client.post(f"/v1/users/{user}/balances/gold/spend", json={"amount": spent, "reason": "sword"},
                       headers={"Idempotency-Key": unique("spend")})
    assert r.status_code == 201, r.text
    google.control("voids", {"purchase_token": bought["purchase_token"], "quantity": voided})
    wait_until(lambda: len(refunds(sk, user)) == 1, 30, "the partial refund applied")
    return bought


def test_a_transfer_after_a_sandbox_credit_repaid_the_refunds_debt_moves_only_what_is_left(sk, google):
    # Alice bought 2 × 100 gold and spent it all; Google refunded one unit, left owed (100). A
    # test purchase (sandbox) then repaid that debt, so the repayment is a sandbox row of the
    # first order. A transfer moves the one unit left (100) to Bob, not the 200 the order's
    # production rows alone add up to.
    alice, bob = unique("g-repaid-from"), unique("g-repaid-to")
    bought = spent_then_partly_refunded(sk, google, alice, 2, 200, 1)
    assert (sk.client.balance(alice), ledger(sk, alice)["debts"]) == (0, {"gold": 100})
    buy_gold(sk, google, alice, 1, test=True)
    assert (sk.client.balance(alice), ledger(sk, alice)["debts"]) == (0, {})
    r = sk.client.post(f"/admin/v1/transactions/{bought['order_id']}/transfer", admin=True,
                       json={"to_user_id": bob})
    assert r.status_code == 200, r.text
    assert sk.client.balance(bob) == 100
    assert sk.client.balance(alice) == -100


def test_a_transfer_keeps_what_a_sandbox_credit_left_of_a_refunds_debt_owed(sk, google):
    # Alice bought 3 × 100 gold and spent it all; Google refunded two units, left owed (200); a
    # test purchase (sandbox) repaid half of it. A transfer moves the unit left (100) to Bob
    # and Alice still owes the other 100: the order's sandbox row (the repayment) is no credit
    # of hers to pay it with.
    alice, bob = unique("g-half-from"), unique("g-half-to")
    bought = spent_then_partly_refunded(sk, google, alice, 3, 300, 2)
    assert ledger(sk, alice)["debts"] == {"gold": 200}
    buy_gold(sk, google, alice, 1, test=True)
    assert (sk.client.balance(alice), ledger(sk, alice)["debts"]) == (0, {"gold": 100})
    r = sk.client.post(f"/admin/v1/transactions/{bought['order_id']}/transfer", admin=True,
                       json={"to_user_id": bob})
    assert r.status_code == 200, r.text
    assert sk.client.balance(bob) == 100
    assert (sk.client.balance(alice), ledger(sk, alice)["debts"]) == (-100, {"gold": 100})


def subscribe(sk, google, user: str, **fields) -> tuple[dict, str]:
    order = order_for(sk, user, "go.vip")
    bought = google.subscribe("go.vip", obfuscated_account_id=order["obfuscated_account_id"], **fields)
    report(sk, order, bought["purchase_token"])
    return order, bought["purchase_token"]


def orders_of(sk, user: str) -> dict[str, dict]:
    """The user's paid-or-closed Google orders, by Google's order id."""
    return {o["transaction_id"]: o for o in sk.client.admin_orders(user_id=user) if o.get("transaction_id")}


def renew(sk, google, user: str, token: str, **fields) -> str:
    google.control(f"subscriptions/{token}/events", {"event": "renew", **fields})
    latest = google.subscription(token)["lineItems"][0]["latestSuccessfulOrderId"]
    wait_until(lambda: latest in orders_of(sk, user), 30, f"renewal {latest} paid")
    return latest


def vip(sk, user: str) -> dict | None:
    return next((e for e in sk.client.entitlements(user)["entitlements"] if e["entitlement"] == "vip"), None)


def test_a_revocation_refunds_the_latest_renewal_and_leaves_the_paid_periods_paid(sk, google):
    user = unique("g-revoke")
    first, token = subscribe(sk, google, user, period_seconds=3600)
    first_id = sk.client.order(first["trade_no"])["transaction_id"]
    second = renew(sk, google, user, token)
    third = renew(sk, google, user, token)
    assert [first_id + "..0", first_id + "..1"] == [second, third]
    google.control(f"subscriptions/{token}/events", {"event": "revoke"})
    wait_until(lambda: orders_of(sk, user)[third]["trade_status"] == "TRADE_CLOSED", 30,
               "the latest renewal refunded")
    wait_until(lambda: swept_since_last_void(sk), 30, "a sweep after the revocation's void")
    paid = orders_of(sk, user)
    assert paid[third]["close_reason"] == "refunded"
    assert paid[first_id]["trade_status"] == "TRADE_SUCCESS" and paid[second]["trade_status"] == "TRADE_SUCCESS"
    assert vip(sk, user) is None
    assert [e["transaction_id"] for e in refunds(sk, user)] == [third]


def test_a_void_closes_the_order_it_names_and_only_the_latest_ends_the_subscription(sk, google):
    user = unique("g-void-order")
    first, token = subscribe(sk, google, user, period_seconds=3600)
    first_id = sk.client.order(first["trade_no"])["transaction_id"]
    renewal = renew(sk, google, user, token)
    # The first period refunded alone: the subscription goes on, paid by its renewal.
    google.control("voids", {"purchase_token": token, "order_id": first_id})
    wait_until(lambda: orders_of(sk, user)[first_id]["trade_status"] == "TRADE_CLOSED", 30,
               "the first order refunded")
    assert orders_of(sk, user)[renewal]["trade_status"] == "TRADE_SUCCESS"
    assert vip(sk, user) is not None
    # The latest order refunded: access ends with it.
    google.control("voids", {"purchase_token": token})
    wait_until(lambda: orders_of(sk, user)[renewal]["trade_status"] == "TRADE_CLOSED", 30,
               "the renewal refunded")
    assert vip(sk, user) is None
    wait_until(lambda: swept_since_last_void(sk), 30, "a sweep after the last void")
    assert sorted(e["transaction_id"] for e in refunds(sk, user)) == sorted([first_id, renewal])


def priced(sk, order_id: str) -> tuple[str, str, int] | None:
    row = sk.db.scalar(
        "SELECT price_micros || ' ' || currency || ' ' || price_attempts FROM google_orders "
        f"WHERE order_id = '{order_id}' AND price_source = 'order'")
    if not row:
        return None
    micros, currency, attempts = row.split()
    return micros, currency, int(attempts)


def test_the_orders_api_prices_each_order_and_its_failures_never_hold_up_the_credit(sk, google):
    user = unique("g-price")
    # orders.get fails twice (Google away): the credit commits all the same, the price follows.
    google.fault(503, count=2, target="orders")
    order, _ = buy_gold(sk, google, user, 2, price_micros=1_250_000, currency="EUR")
    assert sk.client.balance(user) == 200
    order_id = sk.client.order(order["trade_no"])["transaction_id"]
    micros, currency, attempts = wait_until(lambda: priced(sk, order_id), 60, "priced by orders.get")
    assert (micros, currency) == ("2500000", "EUR") and attempts >= 3
    today = sk.db.scalar("SELECT to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD')")
    r = sk.client.get("/admin/v1/charts/revenue/transactions", admin=True,
                      params={"from": today, "to": today, "period": today, "store": "google_play", "limit": 100})
    assert r.status_code == 200, r.text
    listed = {t["transaction_id"]: t for t in r.json()["transactions"]}
    assert (listed[order_id]["currency"], Decimal(listed[order_id]["price"])) == ("EUR", Decimal("2.5"))


def test_each_renewal_is_priced_as_its_own_order(sk, google):
    user = unique("g-renewal-price")
    first, token = subscribe(sk, google, user, period_seconds=3600, price_micros=4_990_000)
    first_id = sk.client.order(first["trade_no"])["transaction_id"]
    renewal = renew(sk, google, user, token, price_micros=5_990_000)
    assert wait_until(lambda: priced(sk, renewal), 60, "renewal priced")[:2] == ("5990000", "USD")
    assert wait_until(lambda: priced(sk, first_id), 60, "first order priced")[:2] == ("4990000", "USD")


def test_a_renewal_google_will_not_price_carries_the_price_google_bills_now(sk, google):
    # Until orders.get answers (here never: refused, as for an account without "View financial
    # data"), a renewal is priced by its plan's recurring price as subscriptionsv2 reads it now,
    # not as it was when the purchase was first seen: a price change shows from the renewal
    # Google bills at it.
    user = unique("g-renewal-plan-price")
    google.fault(403, target="orders")
    try:
        first, token = subscribe(sk, google, user, period_seconds=3600, price_micros=4_990_000)
        renewal = renew(sk, google, user, token, price_micros=9_990_000)
        placeholder = sk.db.scalar("SELECT price_micros || ' ' || currency || ' ' || price_source "
                                   f"FROM google_orders WHERE order_id = '{renewal}'")
        assert placeholder == "9990000 USD plan", placeholder
        today = sk.db.scalar("SELECT to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD')")
        r = sk.client.get("/admin/v1/charts/revenue/transactions", admin=True,
                          params={"from": today, "to": today, "period": today, "store": "google_play",
                                  "limit": 100})
        assert r.status_code == 200, r.text
        listed = {t["transaction_id"]: Decimal(t["price"]) for t in r.json()["transactions"]}
        first_id = sk.client.order(first["trade_no"])["transaction_id"]
        assert (listed[first_id], listed[renewal]) == (Decimal("4.99"), Decimal("9.99")), listed
    finally:
        google.clear_faults()
    # Priced once Google answers, so no refusal is left for the tests after this one to see.
    for order_id in (first_id, renewal):
        wait_until(lambda: priced(sk, order_id), 60, "priced once Google answers")


def metric(sk, name: str) -> int:
    text = sk.client.get("/metrics", admin=True).text
    return int(next(line.split()[1] for line in text.splitlines() if line.startswith(name + " ")))


def test_orders_google_will_not_price_are_counted_in_metrics_until_it_does(sk, google):
    user = unique("g-price-metrics")
    google.fault(503, target="orders")
    try:
        order, _ = buy_gold(sk, google, user, 1)
        assert sk.client.balance(user) == 100
        wait_until(lambda: metric(sk, "storekeeper_google_order_prices_failing") >= 1, 30,
                   "the failing price lookup counted")
        assert metric(sk, "storekeeper_google_order_prices_due") >= 1
        # An outage names no setting: nothing of the operator's is to blame.
        outage = readiness_problems(sk)["google_order_prices_failing"]
        assert "setting" not in outage and "google_status 503" in outage["detail"]
    finally:
        google.clear_faults()
    order_id = sk.client.order(order["trade_no"])["transaction_id"]
    wait_until(lambda: priced(sk, order_id), 60, "priced once Google answers")
    wait_until(lambda: metric(sk, "storekeeper_google_order_prices_due") == 0, 30, "nothing left to price")
    assert metric(sk, "storekeeper_google_order_prices_failing") == 0


def readiness_problems(sk) -> dict[str, dict]:
    r = sk.client.get("/readyz")
    # A failing dependency other than the database never makes the instance unready.
    assert r.status_code == 200, r.text
    assert r.json()["status"] == "ready"
    return {p["code"]: p for p in r.json().get("problems", [])}


def test_orders_google_will_not_price_are_a_readiness_problem_until_it_does(sk, google):
    user = unique("g-price-readyz")
    assert "google_order_prices_failing" not in readiness_problems(sk)
    # Only orders.get refused, as for an account without "View financial data": purchases.get
    # answers, so each report clears google_play_configuration, but the price problem stays.
    google.fault(403, target="orders")
    try:
        first, _ = buy_gold(sk, google, user, 1)
        problem = wait_until(lambda: readiness_problems(sk).get("google_order_prices_failing"), 30,
                             "the failing price lookup listed in /readyz")
        assert problem["count"] >= 1
        assert problem["setting"] == "GOOGLE_PLAY_SERVICE_ACCOUNT_FILE"
        assert "View financial data" in problem["detail"] and "google_credentials_refused" in problem["detail"]
        assert problem["since"].endswith("Z")
        second, _ = buy_gold(sk, google, user, 1)
        assert sk.client.balance(user) == 200
        problem = readiness_problems(sk)["google_order_prices_failing"]
        assert problem["count"] >= 1
    finally:
        google.clear_faults()
    for order in (first, second):
        order_id = sk.client.order(order["trade_no"])["transaction_id"]
        wait_until(lambda: priced(sk, order_id), 60, "priced once Google answers")
    wait_until(lambda: "google_order_prices_failing" not in readiness_problems(sk), 30,
               "the problem cleared once every order is priced")
