"""Issue 26: a wallet the game can spend from. Spends and backend grants go through the ledger
exactly once per Idempotency-Key, never below zero, across instances; each debit records which
purchases it used (first in, first out); a refund after spending follows REFUND_POLICY."""

from __future__ import annotations

import threading
import uuid

import pytest
import requests

from support import buy, problem, unique, user_headers, wait_until

P = "com.example.tests.wallet."
GOLD = P + "gold"
GOLD50 = P + "gold50"
GOLD3 = P + "gold3"


@pytest.fixture(scope="module", autouse=True)
def catalog(api):
    api.put_product(GOLD, grants={"balance": {"gold": 100}})
    api.put_product(GOLD50, grants={"balance": {"gold": 50}})
    api.put_product(GOLD3, grants={"balance": {"gold": 3}})


def spend(api, user, amount, key=None, reason="sword", reference=None, asset="gold", **kw):
    body = {"amount": amount, "reason": reason}
    if reference is not None:
        body["reference"] = reference
    headers = {"Idempotency-Key": key or str(uuid.uuid4())}
    return api.post(f"/v1/users/{user}/balances/{asset}/spend", json=body, headers=headers, **kw)


def ledger(api, user, **params):
    r = api.get(f"/v1/users/{user}/ledger", params=params)
    assert r.status_code == 200, r.text
    return r.json()


def events(api, user):
    r = api.get("/admin/v1/events", admin=True, params={"user_id": user, "limit": 200})
    assert r.status_code == 200, r.text
    return r.json()["events"]


def refund(api, fake, transaction_id, type="REFUND", prorated=None):
    note = fake.refund(transaction_id, notification_type=None if type == "REFUND" else type,
                       prorated_milliunits=prorated)
    assert note["delivered_status"] == 200, note
    wait_until(lambda: [n for n in api.notifications(limit=200)
                        if n["notification_uuid"] == note["notification_uuid"] and n["state"] == "processed"],
               15, "refund processed")
    return note


def test_a_spend_takes_the_amount_once_per_key_and_never_below_zero(api, fake_appstore):
    user = unique("spender")
    order, purchase, _ = buy(api, fake_appstore, user, GOLD)
    key = str(uuid.uuid4())
    r = spend(api, user, 30, key=key, reference="item-7")
    assert r.status_code == 201, r.text
    body = r.json()
    assert (body["kind"], body["amount"], body["balance"], body["reference"]) == ("spend", 30, 70, "item-7")
    assert body["lots"] == [{"amount": 30, "environment": "Production", "trade_no": order["trade_no"],
                             "transaction_id": purchase["transaction_id"], "credit_id": body["lots"][0]["credit_id"]}]
    assert api.balance(user) == 70

    again = spend(api, user, 30, key=key, reference="item-7")
    assert again.status_code == 200 and again.headers["Idempotent-Replayed"] == "true"
    assert again.json() == body
    assert api.balance(user) == 70
    problem(spend(api, user, 31, key=key, reference="item-7"), 422, "idempotency_key_reused")

    refused = spend(api, user, 71)
    body = problem(refused, 409, "insufficient_balance")
    assert body["balance"] == 70
    assert api.balance(user) == 70
    assert spend(api, user, 70).status_code == 201
    assert api.balance(user) == 0
    assert problem(spend(api, user, 1), 409, "insufficient_balance")["balance"] == 0

    kinds = [e["type"] for e in events(api, user)]
    assert kinds.count("balance.spent") == 2
    spent = [e for e in events(api, user) if e["type"] == "balance.spent"][0]
    assert spent["data"]["amount"] == 30 and spent["data"]["lots"][0]["trade_no"] == order["trade_no"]


def test_spend_refusals_name_the_field_and_the_caller(api, fake_appstore):
    user = unique("spender")
    buy(api, fake_appstore, user, GOLD)
    r = api.post(f"/v1/users/{user}/balances/gold/spend", json={"amount": 1, "reason": "x"})
    problem(r, 400, "idempotency_key_required")
    for body in ({"amount": 0, "reason": "x"}, {"amount": 1_000_000_001, "reason": "x"},
                 {"amount": 1, "reason": "x" * 201}, {"amount": 1, "reason": " "},
                 {"amount": 1, "reason": "x", "reference": "r" * 201}, {"amount": 1},
                 {"amount": 1, "reason": "x", "environment": "Sandbox"}):
        r = api.post(f"/v1/users/{user}/balances/gold/spend", json=body,
                     headers={"Idempotency-Key": str(uuid.uuid4())})
        problem(r, 422, "validation_failed")
    # Another user's token may not spend this user's balance.
    r = api.post(f"/v1/users/{user}/balances/gold/spend", json={"amount": 1, "reason": "x"},
                 headers={"Idempotency-Key": "k", **user_headers(unique("other"))})
    problem(r, 403, "user_mismatch")
    problem(api.get(f"/v1/users/{user}/ledger", headers=user_headers(unique("other"))), 403, "user_mismatch")
    # A signed-in user may not grant.
    r = api.post(f"/v1/users/{user}/balances/gold/grant", json={"amount": 1, "reason": "x"},
                 headers={"Idempotency-Key": "k"})
    problem(r, 403, "backend_only")
    problem(spend(api, user, 1, asset="not gold"), 404, "balance_not_found")
    assert api.balance(user) == 100


def test_debits_use_the_oldest_purchases_first(api, fake_appstore):
    user = unique("fifo")
    first, _, _ = buy(api, fake_appstore, user, GOLD)
    second, _, _ = buy(api, fake_appstore, user, GOLD50)
    third, _, _ = buy(api, fake_appstore, user, GOLD)
    a = spend(api, user, 120).json()
    assert [(l["trade_no"], l["amount"]) for l in a["lots"]] == [(first["trade_no"], 100), (second["trade_no"], 20)]
    b = spend(api, user, 60).json()
    assert [(l["trade_no"], l["amount"]) for l in b["lots"]] == [(second["trade_no"], 30), (third["trade_no"], 30)]
    assert b["balance"] == 70

    # The user's own ledger, newest first, a page at a time.
    page = ledger(api, user, limit=2)
    assert [(e["kind"], e["amount"]) for e in page["entries"]] == [("spend", -60), ("spend", -120)]
    assert page["entries"][0]["reason"] == "sword" and page["entries"][0]["operation_id"] == b["id"]
    rest = ledger(api, user, limit=2, cursor=page["next_cursor"])
    assert [(e["kind"], e["amount"]) for e in rest["entries"]] == [("grant", 100), ("grant", 50)]
    last = ledger(api, user, limit=2, cursor=rest["next_cursor"])
    assert [(e["kind"], e["amount"]) for e in last["entries"]] == [("grant", 100)] and "next_cursor" not in last
    assert last["debts"] == {}


def test_sandbox_spends_stay_sandbox_money(api, fake_appstore):
    user = unique("tester")
    buy(api, fake_appstore, user, GOLD, environment="Sandbox")
    buy(api, fake_appstore, user, GOLD, environment="Production")
    r = spend(api, user, 150).json()
    assert [(l["environment"], l["amount"]) for l in r["lots"]] == [("Sandbox", 100), ("Production", 50)]
    view = api.entitlements(user)
    assert view["balances"] == {"gold": 50} and view["sandbox_balances"] == {}
    rows = [(e["environment"], e["amount"]) for e in ledger(api, user)["entries"] if e["kind"] == "spend"]
    assert sorted(rows) == [("Production", -50), ("Sandbox", -100)]


@pytest.fixture(scope="module")
def backend(module_launcher):
    key = "k" * 40
    stack = module_launcher.stack(APP_AUTH="api_key", APP_API_KEYS=f"game:{key}", APP_JWT_SECRET=None)
    stack.api.put_product(GOLD, grants={"balance": {"gold": 100}})
    stack.api.put_product(GOLD50, grants={"balance": {"gold": 50}})
    return stack


def test_the_backend_grants_rewards_and_spends_for_any_user(backend):
    api = backend.api
    user = unique("player")
    r = api.post(f"/v1/users/{user}/balances/gold/grant", json={"amount": 40, "reason": "daily quest"},
                 headers={"Idempotency-Key": "quest-1"})
    assert r.status_code == 201, r.text
    granted = r.json()
    assert (granted["kind"], granted["balance"], granted["environment"]) == ("grant", 40, "Production")
    again = api.post(f"/v1/users/{user}/balances/gold/grant", json={"amount": 40, "reason": "daily quest"},
                     headers={"Idempotency-Key": "quest-1"})
    assert again.status_code == 200 and api.balance(user) == 40
    s = spend(api, user, 25).json()
    # A reward's lot is no purchase: it names no order.
    assert [(l.get("trade_no"), l["amount"]) for l in s["lots"]] == [(None, 25)]
    assert api.balance(user) == 15
    assert [e["type"] for e in events(api, user) if e["type"].startswith("balance.")] == \
        ["balance.granted", "balance.changed", "balance.spent", "balance.changed"]
    assert backend.db.scalar(f"SELECT caller FROM wallet_operations WHERE user_id = '{user}' AND kind = 'grant'") \
        == "backend:game"
    problem(api.get(f"/v1/users/{user}/ledger", auth=False), 401)


def test_a_reversed_refund_whose_debt_a_sandbox_grant_repaid_gives_each_environment_its_own(backend):
    # The refund took 40 and left 60 owed, which a sandbox grant repaid. Its reversal is a row
    # per environment (+40 production, +60 sandbox): the 60 goes back to the grant's lot, the
    # 40 to the purchase's, whichever row the statement writes first. A second refund of the
    # purchase then takes its own 40 again and owes the 60 it never had back.
    api, fake = backend.api, backend.fake
    user = unique("two-envs")
    _, purchase, _ = buy(api, fake, user, GOLD)
    assert spend(api, user, 60).status_code == 201
    refund(api, fake, purchase["transaction_id"])
    assert (api.balance(user), ledger(api, user)["debts"]) == (0, {"gold": 60})
    r = api.post(f"/v1/users/{user}/balances/gold/grant", json={"amount": 100, "reason": "test", "environment": "Sandbox"},
                 headers={"Idempotency-Key": unique("grant")})
    assert r.status_code == 201, r.text
    assert (api.balance(user), ledger(api, user)["debts"]) == (40, {})
    refund(api, fake, purchase["transaction_id"], type="REFUND_REVERSED")
    assert api.balance(user) == 140
    refund(api, fake, purchase["transaction_id"])
    assert (api.balance(user), ledger(api, user)["debts"]) == (100, {"gold": 60})


def test_sandbox_balances_are_what_the_sandbox_lots_hold_whatever_took_from_them(backend):
    # The purchase's 100 was spent; moving it to another user takes 100 from what is left, the
    # sandbox grant's lot: the sandbox part of a balance of 0 is 0 (it stayed 100, for good).
    api, fake = backend.api, backend.fake
    user, other = unique("sandbox-taken"), unique("sandbox-taken-to")
    _, purchase, _ = buy(api, fake, user, GOLD)
    r = api.post(f"/v1/users/{user}/balances/gold/grant", json={"amount": 100, "reason": "test", "environment": "Sandbox"},
                 headers={"Idempotency-Key": unique("grant")})
    assert r.status_code == 201, r.text
    assert spend(api, user, 100).status_code == 201
    assert api.entitlements(user)["sandbox_balances"] == {"gold": 100}
    r = api.request("POST", f"/admin/v1/transactions/{purchase['transaction_id']}/transfer", admin=True,
                    json={"to_user_id": other, "reason": "support case"})
    assert r.status_code == 200, r.text
    assert (api.balance(user), api.entitlements(user)["sandbox_balances"]) == (0, {})
    assert (api.balance(other), api.entitlements(other)["sandbox_balances"]) == (100, {})
    assert backend.db.scalar(f"SELECT sandbox FROM user_balances WHERE user_id = '{user}'") == "0"


def test_a_key_reused_with_canonically_equivalent_text_is_another_request(backend):
    """A key replays only the bytes it was first sent with: "café" precomposed and "cafe" with a
    combining accent are equal to Swift's ==, but they are different requests."""
    api = backend.api
    user = unique("nfd")

    def grant(key, reason, reference=None):
        body = {"amount": 10, "reason": reason}
        if reference is not None:
            body["reference"] = reference
        return api.post(f"/v1/users/{user}/balances/gold/grant", json=body, headers={"Idempotency-Key": key})

    assert grant("nfc-reason", "caf\u00e9").status_code == 201
    problem(grant("nfc-reason", "cafe\u0301"), 422, "idempotency_key_reused")
    assert grant("nfc-reason", "caf\u00e9").status_code == 200
    assert grant("nfc-reference", "quest", reference="caf\u00e9").status_code == 201
    problem(grant("nfc-reference", "quest", reference="cafe\u0301"), 422, "idempotency_key_reused")
    assert api.balance(user) == 20


def test_100_concurrent_spends_across_two_instances_spend_exactly_the_balance(backend, module_launcher):
    other = module_launcher.storekeeper(db=backend.db, fake=backend.fake, share_admin_with=backend.sk,
                                        APP_AUTH="api_key", APP_API_KEYS=f"game:{'k' * 40}", APP_JWT_SECRET=None)
    user = unique("race")
    buy(backend.api, backend.fake, user, GOLD50)
    assert backend.api.balance(user) == 50
    keys = [f"race-{i}" for i in range(100)]
    # Every key is sent twice, once to each instance, all at once: 200 requests.
    jobs = [(key, url) for key in keys for url in (backend.sk.url, other.url)]
    barrier = threading.Barrier(len(jobs))
    answers: list = [None] * len(jobs)

    def fire(i):
        key, url = jobs[i]
        session = requests.Session()
        barrier.wait(timeout=60)
        try:
            r = session.post(f"{url}/v1/users/{user}/balances/gold/spend", json={"amount": 1, "reason": "race"},
                             headers={"Idempotency-Key": key, "Authorization": "Bearer " + "k" * 40}, timeout=120)
            answers[i] = (key, r.status_code, r.json())
        except Exception as e:  # reported below
            answers[i] = (key, "error", repr(e))

    threads = [threading.Thread(target=fire, args=(i,)) for i in range(len(jobs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(180)

    assert all(a is not None and a[1] in (200, 201, 409) for a in answers), \
        [a for a in answers if a is None or a[1] not in (200, 201, 409)][:5]
    created = [a for a in answers if a[1] == 201]
    assert len(created) == 50
    assert len({a[0] for a in created}) == 50, "a key spent twice"
    for key in {a[0] for a in created}:
        pair = [a for a in answers if a[0] == key]
        # The other request with the key is a replay of the same spend.
        assert sorted(a[1] for a in pair) == [200, 201], pair
        assert pair[0][2]["id"] == pair[1][2]["id"]
    for a in answers:
        if a[1] == 409:
            assert a[2]["code"] == "insufficient_balance" and a[2]["balance"] == 0
    assert backend.api.balance(user) == 0
    db = backend.db
    assert db.scalar(f"SELECT count(*) FROM wallet_operations WHERE user_id = '{user}'") == "50"
    assert db.scalar(f"SELECT sum(amount) FROM ledger WHERE user_id = '{user}'") == "0"
    assert db.scalar(f"SELECT min(balance_after) FROM wallet_operations WHERE user_id = '{user}'") == "0"
    assert db.scalar(f"SELECT sum(u.amount) FROM ledger_lot_uses u JOIN ledger l ON l.id = u.ledger_id "
                     f"WHERE l.user_id = '{user}' AND l.kind = 'spend'") == "50"


def test_a_refund_after_spending_takes_back_what_is_left_and_records_the_rest_as_debt(api, fake_appstore, stack):
    user = unique("refund-debt")
    order, purchase, _ = buy(api, fake_appstore, user, GOLD)
    assert spend(api, user, 70).status_code == 201
    refund(api, fake_appstore, purchase["transaction_id"])
    assert api.balance(user) == 0
    view = ledger(api, user)
    assert view["debts"] == {"gold": 70}
    assert [(e["kind"], e["amount"], e.get("debt")) for e in view["entries"]][0] == ("refund", -30, 70)
    # Support sees the same debt in the admin's view of the user.
    admin_view = api.get(f"/admin/v1/users/{user}/ledger", admin=True)
    assert admin_view.status_code == 200, admin_view.text
    assert admin_view.json()["debts"] == {"gold": 70}
    refunded = [e for e in events(api, user) if e["type"] == "purchase.refunded"][0]
    assert refunded["data"]["recovery"] == {"policy": "debt", "assets": {"gold": {
        "credited": 100, "recovered": 30, "unrecovered": 70, "debt": 70, "taken": 30}}}
    problem(spend(api, user, 1), 409, "insufficient_balance")

    # The next purchase repays the debt first.
    second, _, _ = buy(api, fake_appstore, user, GOLD)
    assert api.balance(user) == 30
    view = ledger(api, user)
    assert view["debts"] == {}
    assert api.get(f"/admin/v1/users/{user}/ledger", admin=True).json()["debts"] == {}
    assert [(e["kind"], e["amount"], e.get("trade_no")) for e in view["entries"]][:2] == \
        [("debt_repaid", -70, order["trade_no"]), ("grant", 100, second["trade_no"])]
    s = spend(api, user, 30).json()
    assert [(l["trade_no"], l["amount"]) for l in s["lots"]] == [(second["trade_no"], 30)]


def test_a_reversed_refund_gives_back_what_it_took_and_cancels_its_debt(api, fake_appstore):
    user = unique("reversal")
    order, purchase, _ = buy(api, fake_appstore, user, GOLD)
    spend(api, user, 70)
    refund(api, fake_appstore, purchase["transaction_id"])
    assert api.balance(user) == 0 and ledger(api, user)["debts"] == {"gold": 70}
    refund(api, fake_appstore, purchase["transaction_id"], type="REFUND_REVERSED")
    assert api.balance(user) == 30
    assert ledger(api, user)["debts"] == {}
    s = spend(api, user, 30).json()
    assert [(l["trade_no"], l["amount"]) for l in s["lots"]] == [(order["trade_no"], 30)]


def test_a_reversed_refund_that_took_nothing_still_cancels_its_debt(api, fake_appstore):
    user = unique("reversal-empty")
    _, purchase, _ = buy(api, fake_appstore, user, GOLD)
    spend(api, user, 100)
    refund(api, fake_appstore, purchase["transaction_id"])
    assert api.balance(user) == 0 and ledger(api, user)["debts"] == {"gold": 100}
    assert [(e["kind"], e["amount"], e.get("debt")) for e in ledger(api, user)["entries"]][0] == ("refund", 0, 100)
    refund(api, fake_appstore, purchase["transaction_id"], type="REFUND_REVERSED")
    assert ledger(api, user)["debts"] == {}
    buy(api, fake_appstore, user, GOLD)
    assert api.balance(user) == 100


def test_a_reversed_refund_gives_what_a_later_purchase_repaid_back_to_that_purchase(api, fake_appstore):
    # The second purchase repaid the first's debt; when the first refund is reversed, the 100
    # that comes back is the second purchase's money (the first's was spent), so refunding the
    # second then takes it back instead of leaving it spendable beside a new debt.
    user = unique("reversal-repaid")
    first, purchase, _ = buy(api, fake_appstore, user, GOLD)
    spend(api, user, 100)
    refund(api, fake_appstore, purchase["transaction_id"])
    second, later, _ = buy(api, fake_appstore, user, GOLD)
    assert api.balance(user) == 0 and ledger(api, user)["debts"] == {}
    refund(api, fake_appstore, purchase["transaction_id"], type="REFUND_REVERSED")
    assert api.balance(user) == 100
    refund(api, fake_appstore, later["transaction_id"])
    assert api.balance(user) == 0
    assert ledger(api, user)["debts"] == {}
    problem(spend(api, user, 1), 409, "insufficient_balance")


def recovery_of_last_refund(api, user) -> dict:
    return [e for e in events(api, user) if e["type"] == "purchase.refunded"][-1]["data"]["recovery"]


def test_a_reversed_refund_puts_the_gold_back_in_the_purchase_it_came_from(api, fake_appstore):
    # A: 60 spent, refunded (40 taken, 60 owed); B repays those 60 and is refunded itself (40
    # taken, 60 owed). Reversing A's refund gives A's lot back its 40 and B's 60 repay B's own
    # debt: what is left is A's, so a spend uses A and A's second refund takes it (it was given
    # to refunded B, and the second refund left 30 spendable beside a debt of 100).
    user = unique("reversal-repayer-refunded")
    a, first, _ = buy(api, fake_appstore, user, GOLD)
    spend(api, user, 60)
    refund(api, fake_appstore, first["transaction_id"])
    _, second, _ = buy(api, fake_appstore, user, GOLD)
    refund(api, fake_appstore, second["transaction_id"])
    assert api.balance(user) == 0
    refund(api, fake_appstore, first["transaction_id"], type="REFUND_REVERSED")
    assert api.balance(user) == 40 and ledger(api, user)["debts"] == {}
    used = spend(api, user, 10)
    assert used.status_code == 201, used.text
    assert [(lot["trade_no"], lot["amount"]) for lot in used.json()["lots"]] == [(a["trade_no"], 10)]
    refund(api, fake_appstore, first["transaction_id"])
    assert api.balance(user) == 0
    assert recovery_of_last_refund(api, user)["assets"]["gold"] == {
        "credited": 100, "recovered": 30, "unrecovered": 70, "debt": 70, "taken": 30}


def test_a_prorated_refund_takes_back_its_share_and_leaves_the_order_paid(api, fake_appstore):
    # 60 of 100 spent, Apple refunds 40% (REFUND_PRORATED, as a consumption answer of 60% used
    # may lead it to): the 40 left are taken, nothing more is owed, the order stays paid. A
    # later refund to 70% takes the 30 it adds (owed, all spent); one delivered again, nothing.
    user = unique("prorated")
    order, purchase, _ = buy(api, fake_appstore, user, GOLD)
    spend(api, user, 60)
    refund(api, fake_appstore, purchase["transaction_id"], prorated=40000)
    assert (api.balance(user), ledger(api, user)["debts"]) == (0, {})
    assert api.order(order["trade_no"])["trade_status"] == "TRADE_SUCCESS"
    partial = [e["data"] for e in events(api, user) if e["type"] == "purchase.refunded"]
    assert [(d["refund_type"], d["revocation_percentage"]) for d in partial] == [("partial", 40000)]
    assert partial[0]["recovery"]["assets"]["gold"] == {
        "credited": 40, "recovered": 40, "unrecovered": 0, "debt": 0, "taken": 40}
    refund(api, fake_appstore, purchase["transaction_id"], prorated=40000)
    assert (api.balance(user), ledger(api, user)["debts"]) == (0, {})
    refund(api, fake_appstore, purchase["transaction_id"], prorated=70000)
    assert (api.balance(user), ledger(api, user)["debts"]) == (0, {"gold": 30})
    assert api.order(order["trade_no"])["trade_status"] == "TRADE_SUCCESS"
    assert len([e for e in events(api, user) if e["type"] == "purchase.refunded"]) == 2
    # The purchase is still live: a full refund then takes what is left of it, the 30 the
    # prorated refunds did not (the 30 they left owed is not owed twice): 60 owed in all, what
    # was spent.
    refund(api, fake_appstore, purchase["transaction_id"])
    assert api.order(order["trade_no"])["trade_status"] == "TRADE_CLOSED"
    assert (api.balance(user), ledger(api, user)["debts"]) == (0, {"gold": 60})
    assert recovery_of_last_refund(api, user)["assets"]["gold"] == {
        "credited": 30, "recovered": 0, "unrecovered": 30, "debt": 30, "taken": 0}


def test_a_full_refund_after_a_prorated_one_takes_only_what_it_did_not(api, fake_appstore):
    # 80 of 100 spent; Apple refunds 50% (the 20 left taken, 30 owed), then all of it: the
    # other 50 are owed, 80 in all (what was spent), not 50 more beside the 30 already owed.
    user = unique("prorated-then-full")
    order, purchase, _ = buy(api, fake_appstore, user, GOLD)
    spend(api, user, 80)
    refund(api, fake_appstore, purchase["transaction_id"], prorated=50000)
    assert (api.balance(user), ledger(api, user)["debts"]) == (0, {"gold": 30})
    refund(api, fake_appstore, purchase["transaction_id"])
    assert (api.balance(user), ledger(api, user)["debts"]) == (0, {"gold": 80})
    assert recovery_of_last_refund(api, user)["assets"]["gold"] == {
        "credited": 50, "recovered": 0, "unrecovered": 50, "debt": 50, "taken": 0}
    # The next pack repays the 80 and leaves 20.
    buy(api, fake_appstore, user, GOLD)
    assert (api.balance(user), ledger(api, user)["debts"]) == (20, {})


def test_reversing_a_full_refund_after_a_prorated_one_gives_back_both(api, fake_appstore):
    # 40% prorated, then a full refund, then Apple reverses the refund: all 100 come back, and
    # no share stands taken, so a later 50% prorated refund takes 50 (not the 10 it adds to a
    # 40% already given back).
    user = unique("prorated-full-reversed")
    order, purchase, _ = buy(api, fake_appstore, user, GOLD)
    transaction_id = purchase["transaction_id"]
    refund(api, fake_appstore, transaction_id, prorated=40000)
    refund(api, fake_appstore, transaction_id)
    assert (api.balance(user), api.order(order["trade_no"])["trade_status"]) == (0, "TRADE_CLOSED")
    refund(api, fake_appstore, transaction_id, type="REFUND_REVERSED")
    assert (api.balance(user), api.order(order["trade_no"])["trade_status"]) == (100, "TRADE_SUCCESS")
    refund(api, fake_appstore, transaction_id, prorated=50000)
    assert (api.balance(user), ledger(api, user)["debts"]) == (50, {})


def test_a_reversed_prorated_refund_gives_back_its_share_and_cancels_its_debt(api, fake_appstore):
    # Apple reverses a prorated refund: what the share took comes back and the order, paid all
    # along, stays paid; a second reversal gives nothing more, and a later prorated refund
    # takes its share again.
    user = unique("prorated-reversed")
    order, purchase, _ = buy(api, fake_appstore, user, GOLD)
    transaction_id = purchase["transaction_id"]
    refund(api, fake_appstore, transaction_id, prorated=40000)
    assert api.balance(user) == 60
    refund(api, fake_appstore, transaction_id, type="REFUND_REVERSED")
    assert (api.balance(user), ledger(api, user)["debts"]) == (100, {})
    assert api.order(order["trade_no"])["trade_status"] == "TRADE_SUCCESS"
    reversals = [e["data"] for e in events(api, user) if e["type"] == "purchase.refund_reversed"]
    assert [(d["trade_no"], d["refund_type"]) for d in reversals] == [(order["trade_no"], "partial")]
    refund(api, fake_appstore, transaction_id, type="REFUND_REVERSED")
    assert api.balance(user) == 100
    assert len([e for e in events(api, user) if e["type"] == "purchase.refund_reversed"]) == 1
    refund(api, fake_appstore, transaction_id, prorated=40000)
    assert api.balance(user) == 60

    # 60 spent, then 70% refunded: the 40 left are taken and 30 is owed; the reversal gives
    # the 40 back and cancels the debt.
    spent = unique("prorated-reversed-debt")
    _, bought, _ = buy(api, fake_appstore, spent, GOLD)
    spend(api, spent, 60)
    refund(api, fake_appstore, bought["transaction_id"], prorated=70000)
    assert (api.balance(spent), ledger(api, spent)["debts"]) == (0, {"gold": 30})
    refund(api, fake_appstore, bought["transaction_id"], type="REFUND_REVERSED")
    assert (api.balance(spent), ledger(api, spent)["debts"]) == (40, {})


def test_a_prorated_refund_after_a_transfer_takes_its_share_of_the_whole_purchase(api, fake_appstore):
    # 40% refunded (60 left), then an admin moves the purchase (the new owner is credited 60),
    # then Apple raises the refund to 70%: 30 more of the purchase's 100, not 30% of the 60
    # the transfer moved.
    owner, heir = unique("prorated-moved-from"), unique("prorated-moved-to")
    _, purchase, _ = buy(api, fake_appstore, owner, GOLD)
    transaction_id = purchase["transaction_id"]
    refund(api, fake_appstore, transaction_id, prorated=40000)
    r = api.post(f"/admin/v1/transactions/{transaction_id}/transfer", admin=True, json={"to_user_id": heir})
    assert r.status_code == 200, r.text
    assert (api.balance(owner), api.balance(heir)) == (0, 60)
    refund(api, fake_appstore, transaction_id, prorated=70000)
    assert (api.balance(heir), ledger(api, heir)["debts"]) == (30, {})
    # Apple reverses the refund: the 40 taken before the transfer (the old order's rows) and
    # the 30 after it come back to the heir, the whole purchase; once, however often reversed.
    refund(api, fake_appstore, transaction_id, type="REFUND_REVERSED")
    assert (api.balance(owner), api.balance(heir), ledger(api, heir)["debts"]) == (0, 100, {})
    refund(api, fake_appstore, transaction_id, prorated=40000)
    assert api.balance(heir) == 60
    refund(api, fake_appstore, transaction_id, type="REFUND_REVERSED")
    assert api.balance(heir) == 100
    # Reversed straight after the transfer: only the old order's rows hold what was taken.
    owner, heir = unique("prorated-moved-from"), unique("prorated-moved-to")
    _, purchase, _ = buy(api, fake_appstore, owner, GOLD)
    transaction_id = purchase["transaction_id"]
    refund(api, fake_appstore, transaction_id, prorated=40000)
    r = api.post(f"/admin/v1/transactions/{transaction_id}/transfer", admin=True, json={"to_user_id": heir})
    assert r.status_code == 200, r.text
    refund(api, fake_appstore, transaction_id, type="REFUND_REVERSED")
    assert (api.balance(owner), api.balance(heir)) == (0, 100)
    refund(api, fake_appstore, transaction_id, prorated=40000)
    assert api.balance(heir) == 60


def test_successive_prorated_refunds_take_one_rounding_of_the_whole_share(api, fake_appstore):
    # Apple raises the refund of a 3-gold pack to 16.667%, 33.334%, then 50.001% (cumulative):
    # 3 x 0.50001 rounds to 2 taken, 1 left. Rounding each increment took 1 + 1 + 1, all 3.
    user = unique("prorated-rounding")
    _, purchase, _ = buy(api, fake_appstore, user, GOLD3)
    assert api.balance(user) == 3
    for share in (16667, 33334, 50001):
        refund(api, fake_appstore, purchase["transaction_id"], prorated=share)
    assert (api.balance(user), ledger(api, user)["debts"]) == (1, {})
    # One refund of the same share takes the same.
    once = unique("prorated-rounding-once")
    _, bought, _ = buy(api, fake_appstore, once, GOLD3)
    refund(api, fake_appstore, bought["transaction_id"], prorated=50001)
    assert api.balance(once) == 1


def test_an_unspent_purchase_is_refunded_in_full_whatever_else_was_spent(api, fake_appstore):
    user = unique("refund-full")
    buy(api, fake_appstore, user, GOLD)
    _, second, _ = buy(api, fake_appstore, user, GOLD)
    spend(api, user, 100)  # the first purchase, FIFO
    refund(api, fake_appstore, second["transaction_id"])
    assert api.balance(user) == 0
    assert ledger(api, user)["debts"] == {}


@pytest.fixture(scope="module")
def negative(module_launcher):
    stack = module_launcher.stack(REFUND_POLICY="negative")
    stack.api.put_product(GOLD, grants={"balance": {"gold": 100}})
    return stack


def test_under_the_negative_policy_a_refund_takes_everything_and_the_balance_goes_below_zero(negative):
    api, fake = negative.api, negative.fake
    user = unique("refund-negative")
    order, purchase, _ = buy(api, fake, user, GOLD)
    spend(api, user, 70)
    refund(api, fake, purchase["transaction_id"])
    assert api.balance(user) == -70
    view = ledger(api, user)
    assert view["debts"] == {}
    assert [(e["kind"], e["amount"]) for e in view["entries"]][0] == ("refund", -100)
    refunded = [e for e in events(api, user) if e["type"] == "purchase.refunded"][0]
    assert refunded["data"]["recovery"] == {"policy": "negative", "assets": {"gold": {
        "credited": 100, "recovered": 30, "unrecovered": 70, "debt": 0, "taken": 100}}}
    assert problem(spend(api, user, 1), 409, "insufficient_balance")["balance"] == -70
    second, _, _ = buy(api, fake, user, GOLD)
    assert api.balance(user) == 30
    s = spend(api, user, 30).json()
    assert [(l["trade_no"], l["amount"]) for l in s["lots"]] == [(second["trade_no"], 30)]
    problem(spend(api, user, 1), 409, "insufficient_balance")


def test_under_the_negative_policy_a_reversal_gives_back_what_its_refund_took_from_others(negative):
    # A's refund took A's 40 and 60 of B's: its reversal gives B its 60 back, so B, never
    # spent, is refunded in full, and a spend uses A's 40 first.
    api, fake = negative.api, negative.fake
    user = unique("reversal-negative")
    a, first, _ = buy(api, fake, user, GOLD)
    spend(api, user, 60)
    _, second, _ = buy(api, fake, user, GOLD)
    refund(api, fake, first["transaction_id"])
    assert api.balance(user) == 40
    refund(api, fake, first["transaction_id"], type="REFUND_REVERSED")
    assert api.balance(user) == 140
    used = spend(api, user, 40)
    assert used.status_code == 201, used.text
    assert [(lot["trade_no"], lot["amount"]) for lot in used.json()["lots"]] == [(a["trade_no"], 40)]
    refund(api, fake, second["transaction_id"])
    assert api.balance(user) == 0
    assert recovery_of_last_refund(api, user)["assets"]["gold"] == {
        "credited": 100, "recovered": 100, "unrecovered": 0, "debt": 0, "taken": 100}
