"""Issue 27: experiments. Deterministic assignment checked against an independent computation
(Python's hashlib), the same from two instances and after a restart; first exposures recorded
off the request path; results checked against numbers recomputed from the raw rows with SQL of
the test's own; pause, resume, conclude and their events."""

from __future__ import annotations

import hashlib
import json
import signal
import threading
import time
import uuid
from decimal import ROUND_HALF_UP, Decimal

import pytest

from google_support import push_env, start_pushing_fake
from support import BUNDLE_ID, buy, error_fields, mint, problem, unique, wait_until

P = "com.example.tests.experiments."


@pytest.fixture(scope="module")
def setup(stack):
    api = stack.api
    for name, price in (("a", "1.00"), ("b", "2.00"), ("c", "3.00")):
        api.put_product(P + name, price=price)
        r = api.request("PUT", f"/admin/v1/offerings/x-{name}", admin=True, json={"products": [P + name]})
        assert r.status_code in (200, 201), r.text
    r = api.request("PUT", "/admin/v1/placements/paywall", admin=True, json={
        "offering_id": "x-a", "rules": [{"offering_id": "x-c", "when": {"stores": ["google_play"]}}]})
    assert r.status_code in (200, 201), r.text
    return stack


def create(api, experiment_id: str, placement: str = "paywall", weights=(50, 50), hours: int = 24,
           offerings=("x-a", "x-b")) -> dict:
    body = {"experiment_id": experiment_id, "placement_id": placement, "attribution_hours": hours,
            "variants": [{"variant": f"v{i}", "offering_id": o, "weight": w}
                         for i, (o, w) in enumerate(zip(offerings, weights))]}
    r = api.request("POST", "/admin/v1/experiments", admin=True, json=body)
    assert r.status_code == 201, r.text
    return r.json()


def expected_variant(experiment_id: str, user: str, weights) -> str:
    """The documented rule, computed here without the project's code."""
    point = int.from_bytes(hashlib.sha256(f"{experiment_id}\n{user}".encode()).digest()[:8], "big") % sum(weights)
    for i, w in enumerate(weights):
        if point < w:
            return f"v{i}"
        point -= w
    raise AssertionError("unreachable")


def offering_for(client, user: str | None, **params):
    headers = {"Authorization": f"Bearer {mint(user)}"} if user else {}
    r = client.get("/v1/offerings/paywall", headers=headers, params=params)
    assert r.status_code == 200, r.text
    return r.json()["offering_id"], r.headers.get("Storekeeper-Experiment")


def exposures(db, experiment_id: str) -> dict[str, str]:
    rows = db.rows(f"SELECT user_id, variant FROM experiment_exposures WHERE experiment_id = '{experiment_id}'")
    return {user: variant for user, variant in rows}


def conclude_all(api):
    for e in api.get("/admin/v1/experiments", admin=True).json()["experiments"]:
        if e["status"] != "concluded":
            r = api.request("POST", f"/admin/v1/experiments/{e['experiment_id']}/conclude", admin=True,
                            json={"winner": "v0"})
            assert r.status_code == 200, r.text
    api.request("PUT", "/admin/v1/placements/paywall", admin=True, json={
        "offering_id": "x-a", "rules": [{"offering_id": "x-c", "when": {"stores": ["google_play"]}}]})


def test_assignment_is_the_documented_hash_on_two_instances_and_after_a_restart(setup, module_storekeeper):
    api, db = setup.api, setup.db
    conclude_all(api)
    exp = unique("split").lower()
    create(api, exp, weights=(30, 70))
    other = module_storekeeper(setup.db, share_admin_with=setup.sk)
    users = [unique("player") for _ in range(60)]
    names = {"v0": "x-a", "v1": "x-b"}
    first = {}
    for user in users:
        served, tag = offering_for(api, user)
        variant = expected_variant(exp, user, (30, 70))
        assert served == names[variant] and tag == f"{exp}; variant={variant}", (user, served, tag)
        first[user] = served
        assert offering_for(other.client, user)[0] == served, "the other instance disagrees"
    assert len(set(first.values())) == 2, "60 users all landed in one variant"
    # Rules still come first: a targeted user is not in the experiment.
    assert offering_for(api, users[0], store="google_play") == ("x-c", None)
    # Anonymous callers get the placement's own offering, unassigned.
    assert offering_for(api, None) == ("x-a", None)

    assert other.terminate() == 0
    other.restart()
    for user in users[:20]:
        assert offering_for(other.client, user)[0] == first[user], "a restart moved a user"

    # Every user is recorded once, with the variant they were served, by a background flush.
    wait_until(lambda: len(exposures(db, exp)) == len(users), 10, "exposures were not all written")
    assert exposures(db, exp) == {u: expected_variant(exp, u, (30, 70)) for u in users}
    feed = api.get("/admin/v1/events", admin=True, params={"user_id": users[0], "type": "experiment.exposed"})
    assert feed.status_code == 200, feed.text
    events = feed.json()["events"]
    assert len(events) == 1 and events[0]["data"]["experiment_id"] == exp
    assert events[0]["data"]["variant"] == expected_variant(exp, users[0], (30, 70))
    conclude_all(api)


def test_exposures_waiting_at_sigterm_are_written_before_the_process_exits(setup, module_storekeeper):
    # The loop writes what requests recorded once a second; a SIGTERM (each deploy, each
    # scale-in) within that second leaves exposures waiting in memory. Shutdown writes them
    # before the process exits: once, with one event each, and the instance restarted over
    # the same users writes nothing again.
    api, db = setup.api, setup.db
    conclude_all(api)
    exp = unique("sigterm").lower()
    create(api, exp)
    other = module_storekeeper(setup.db, share_admin_with=setup.sk)
    users = [unique("leaving") for _ in range(40)]
    for user in users:
        offering_for(other.client, user)
    # The table busy in another session as the instance stops: its last flush waits for the
    # database (within the workers' grace) instead of being cancelled there, which wrote nothing.
    with db.holding("LOCK TABLE experiment_exposures IN SHARE MODE"):
        other.proc.send_signal(signal.SIGTERM)
        time.sleep(0.5)
        assert other.running(), "the instance exited without waiting for its last flush"
    assert other.terminate() == 0
    # At once: nothing else holds these exposures, so nothing would write them later.
    assert exposures(db, exp) == {u: expected_variant(exp, u, (50, 50)) for u in users}

    def events() -> int:
        return int(db.scalar(f"SELECT count(*) FROM events WHERE type = 'experiment.exposed' "
                             f"AND data ->> 'experiment_id' = '{exp}'"))

    assert events() == len(users)
    assert "exposures not written" not in other.log()
    other.restart()
    for user in users[:10]:
        offering_for(other.client, user)
    assert other.terminate() == 0
    assert len(exposures(db, exp)) == len(users) and events() == len(users)
    conclude_all(api)


def buy_at(api, fake, user: str, product: str, milliunits: int, currency: str, **purchase) -> dict:
    """An order paid by a StoreKit purchase the store priced itself (not the catalog's price)."""
    order = api.create_order(user, product)
    bought = fake.call("/fake/v1/purchases", {
        "bundle_id": BUNDLE_ID, "product_id": product, "type": "Consumable", "quantity": 1,
        "environment": "Production", "app_account_token": order["app_account_token"],
        "price": milliunits, "currency": currency, **purchase})
    assert api.report(order["trade_no"], signed_transaction=bought["signed_transaction"]).status_code == 200
    return bought


# What counts, written here from the documented definition (not the project's query): a paid
# order of an exposed user, not sandbox, not an admin's transfer, not paid by a Family Sharing
# copy (a family member's transaction of someone else's purchase), and either made from this
# experiment's variant (order_offerings) after the user was first shown it and paid by a purchase
# made at or after it, or naming no offering, bought (the earliest purchase of its original
# transaction, or its Google token's) at or after the exposure, paid within the window after
# it, before the experiment was concluded and not while it was paused. Money is the store's
# signed price, else the order's amount; an order whose purchase an admin moved to another user
# is priced by the purchase it made, and refunded when that purchase was (on the order holding
# it now).
INDEPENDENT_RESULTS = """
    WITH e AS (SELECT variant, user_id, exposed_at FROM experiment_exposures
               WHERE experiment_id = '{exp}'),
    o AS (
      SELECT o.*, t.price_milliunits, t.currency AS apple_currency, g.price_micros,
             g.currency AS google_currency,
             coalesce((SELECT min(s.purchase_date) FROM apple_transactions s
                       WHERE s.original_transaction_id = t.original_transaction_id),
                      gp.purchase_time, o.paid_at) AS bought_at,
             coalesce(t.purchase_date, g.purchased_at, o.paid_at) AS paid_by_purchase_of,
             x.experiment_id AS tag_experiment, x.variant AS tag_variant, x.trade_no AS tagged,
             holder.close_reason AS holder_close_reason
      FROM orders o
      -- By the order's transaction id; an order whose purchase an admin moved away names it
      -- in the event that closed it.
      LEFT JOIN apple_transactions t ON t.transaction_id = coalesce(o.transaction_id,
        (SELECT v.detail ->> 'transaction_id' FROM order_events v
         WHERE v.trade_no = o.trade_no AND o.close_reason = 'transferred'
           AND v.to_status = 'TRADE_CLOSED'))
      LEFT JOIN orders holder ON holder.trade_no = t.trade_no
      LEFT JOIN google_orders g ON g.trade_no = o.trade_no
      LEFT JOIN google_purchases gp ON gp.purchase_token = g.purchase_token
      LEFT JOIN order_offerings x ON x.trade_no = o.trade_no
      WHERE o.paid_at IS NOT NULL AND coalesce(o.environment, '') <> 'Sandbox'
        AND o.origin <> 'transfer' AND t.family_shared IS NOT TRUE),
    counted AS (
      SELECT e.variant, o.user_id, o.trade_no,
             CASE WHEN o.close_reason = 'transferred' THEN o.holder_close_reason
                  ELSE o.close_reason END AS close_reason,
             CASE WHEN o.price_milliunits IS NOT NULL THEN o.price_milliunits / 1000.0
                  WHEN o.price_micros IS NOT NULL THEN o.price_micros / 1000000.0
                  ELSE o.amount END AS paid,
             coalesce(CASE WHEN o.price_milliunits IS NOT NULL THEN o.apple_currency END,
                      o.google_currency, o.currency) AS currency
      FROM e JOIN o ON o.user_id = e.user_id
      WHERE ((o.tag_experiment = '{exp}' AND o.tag_variant = e.variant AND o.created_at >= e.exposed_at
              AND o.paid_by_purchase_of >= e.exposed_at)
         OR (o.tagged IS NULL AND o.bought_at >= e.exposed_at AND o.paid_at >= e.exposed_at
             AND o.paid_at < e.exposed_at + interval '{hours} hours'
             AND o.paid_at < (SELECT coalesce(concluded_at, 'infinity') FROM experiments
                              WHERE experiment_id = '{exp}')
             -- Nor paid while the experiment was paused (the admin log's pause to the next
             -- change of status).
             AND NOT EXISTS (
               SELECT 1 FROM admin_audit a
               WHERE a.target_id = '{exp}' AND a.action = 'experiment_updated'
                 AND a.before ->> 'status' = 'running' AND a.after ->> 'status' = 'paused'
                 AND o.paid_at >= a.created_at
                 AND o.paid_at < coalesce((SELECT min(b.created_at) FROM admin_audit b
                                           WHERE b.target_id = a.target_id AND b.id > a.id
                                             AND b.after ->> 'status' <> 'paused'), 'infinity')))))
    SELECT e.variant, count(DISTINCT e.user_id),
           (SELECT count(DISTINCT user_id) FROM counted c WHERE c.variant = e.variant),
           (SELECT count(*) FROM counted c WHERE c.variant = e.variant),
           (SELECT coalesce(jsonb_object_agg(currency, total), '{{}}')::text
            FROM (SELECT currency, sum(paid)::text AS total FROM counted c
                  WHERE c.variant = e.variant GROUP BY currency) m),
           (SELECT count(*) FROM counted c
            WHERE c.variant = e.variant AND c.close_reason IN ('refunded', 'revoked'))
    FROM e GROUP BY e.variant ORDER BY e.variant"""


def independent_results(db, exp: str, hours: int) -> dict[str, tuple]:
    out = {}
    for variant, exposed, payers, orders, revenue, refunds in db.rows(INDEPENDENT_RESULTS.format(exp=exp, hours=hours)):
        money = {c: Decimal(v) for c, v in json.loads(revenue).items()}
        out[variant] = (int(exposed), int(payers), int(orders), money, int(refunds))
    return out


def test_results_match_an_independent_computation_and_show_refunds(setup):
    api, fake, db = setup.api, setup.fake, setup.db
    conclude_all(api)
    api.put_product(P + "forever", type="non_consumable", price="9.00")
    exp = unique("conv").lower()
    create(api, exp, hours=1)
    users = [unique("buyer") for _ in range(24)]
    served = {u: offering_for(api, u)[0] for u in users}
    wait_until(lambda: len(exposures(db, exp)) == len(users), 10, "exposures were not all written")
    # A third of them buy what they were offered, at the price their storefront charged (not
    # the catalog's USD price), one twice; one buyer is refunded afterwards.
    buyers = users[::3]
    purchases = {}
    for i, user in enumerate(buyers):
        currency = ("EUR", "GBP", "USD")[i % 3]
        purchases[user] = buy_at(api, fake, user, P + served[user][-1], 890 + 1000 * i, currency)
    buy_at(api, fake, buyers[0], P + served[buyers[0]][-1], 890, "EUR")
    refunded_user = buyers[1]
    note = fake.refund(purchases[refunded_user]["transaction_id"])
    assert note["delivered_status"] == 200, note
    wait_until(lambda: db.scalar(f"SELECT count(*) FROM orders WHERE user_id = '{refunded_user}' "
                                 "AND close_reason = 'refunded'") == "1", 10, "the refund was not applied")
    # A user who was never exposed buys too: not attributed to anyone.
    buy(api, fake, unique("outsider"), P + "a")
    # An exposed user restores, within the window, a purchase made ten days before the
    # exposure: an order of origin 'receipt' paid now, but no conversion.
    restorer = users[1]
    old = fake.call("/fake/v1/purchases", {
        "bundle_id": BUNDLE_ID, "product_id": P + "forever", "type": "Non-Consumable",
        "quantity": 1, "environment": "Production", "apple_account": unique("acct"),
        "purchase_date_ms": int((time.time() - 10 * 86400) * 1000)})
    assert api.receipts(receipt=old["receipt"], user_id=restorer).status_code == 200
    assert db.scalar(f"SELECT count(*) FROM orders WHERE user_id = '{restorer}' AND origin = 'receipt' "
                     "AND paid_at IS NOT NULL") == "1"
    # An exposed user restores, within the window, a purchase a family member made after the
    # exposure and shares with them (FAMILY_SHARED): access, but nobody in this variant paid.
    member = users[4]
    shared = fake.call("/fake/v1/purchases", {
        "bundle_id": BUNDLE_ID, "product_id": P + "forever", "type": "Non-Consumable",
        "environment": "Production", "in_app_ownership_type": "FAMILY_SHARED"})
    assert api.receipts(signed_transaction=shared["signed_transaction"], user_id=member).status_code == 200
    assert db.scalar(f"SELECT count(*) FROM orders WHERE user_id = '{member}' AND paid_at IS NOT NULL") == "1"
    # An exposed user who bought the unlock thirty days before the exposure (before the app
    # sent account tokens) taps Buy on the offering they were shown: the order names it (tagged
    # with the variant), StoreKit answers "already owned" with the old transaction, which the
    # app reports for the order. The order is paid, but nobody paid after the exposure.
    owner = users[5]
    owned = fake.call("/fake/v1/purchases", {
        "bundle_id": BUNDLE_ID, "product_id": P + "forever", "type": "Non-Consumable",
        "quantity": 1, "environment": "Production", "apple_account": unique("acct"),
        "purchase_date_ms": int((time.time() - 30 * 86400) * 1000), "price": 9990, "currency": "USD"})
    r = order_from(api, owner, P + "forever", placement="paywall", offering=served[owner])
    assert r.status_code == 201, r.text
    tagged = r.json()
    assert (tagged["experiment"], tagged["variant"]) == (exp, expected_variant(exp, owner, (50, 50)))
    assert api.report(tagged["trade_no"], signed_transaction=owned["signed_transaction"]).status_code == 200
    assert api.order(tagged["trade_no"])["trade_status"] == "TRADE_SUCCESS"
    # An admin moves a buyer's purchase to another exposed user: the buyer's order still counts
    # (once), the transfer's order is not a second conversion.
    giver, taker = buyers[2], users[2]
    r = api.request("POST", f"/admin/v1/transactions/{purchases[giver]['transaction_id']}/transfer",
                    admin=True, json={"to_user_id": taker})
    assert r.status_code == 200, r.text
    # Apple then refunds that purchase: the refund closes the transfer's order, and the giver's
    # conversion shows it.
    note = fake.refund(purchases[giver]["transaction_id"])
    assert note["delivered_status"] == 200, note
    wait_until(lambda: db.scalar(f"SELECT count(*) FROM orders WHERE user_id = '{taker}' "
                                 "AND close_reason = 'refunded'") == "1", 10, "the refund was not applied")

    r = api.get(f"/admin/v1/experiments/{exp}/results", admin=True)
    assert r.status_code == 200, r.text
    got = {v["variant"]: v for v in r.json()["variants"]}

    raw = independent_results(db, exp, 1)
    assert raw
    total_refunds = 0
    for variant, (exposed, payers, orders, revenue, refunds) in raw.items():
        v = got[variant]
        assert (v["exposed"], v["payers"], v["orders"], v["refunds"]) == (exposed, payers, orders, refunds), \
            (variant, v)
        assert {c: Decimal(a) for c, a in v["revenue"].items()} == revenue, (variant, v["revenue"])
        for currency, amount in revenue.items():
            assert Decimal(v["revenue_per_exposed"][currency]) == \
                (amount / exposed).quantize(Decimal("0.0001"), rounding=ROUND_HALF_UP)
        assert v["conversion"] == pytest.approx(payers / exposed)
        assert v["conversion_low"] <= v["conversion"] <= v["conversion_high"]
        total_refunds += refunds
    assert sum(v["exposed"] for v in got.values()) == len(users)
    # The restorer, the family member, the owner of the old unlock and the transfer's new owner
    # are no payers; every buyer is.
    assert sum(v["payers"] for v in got.values()) == len(buyers)
    assert sum(v["orders"] for v in got.values()) == len(buyers) + 1
    assert total_refunds == 2
    for user in (refunded_user, giver):
        refunded_variant = expected_variant(exp, user, (50, 50))
        assert got[refunded_variant]["refunds"] >= 1 and got[refunded_variant]["refunded"]
    # What the store charged, not the catalog's USD: the buyers paid in three currencies.
    everything = {}
    for v in got.values():
        for currency, amount in v["revenue"].items():
            everything[currency] = everything.get(currency, Decimal(0)) + Decimal(amount)
    expected = {}
    for i, user in enumerate(buyers):
        currency = ("EUR", "GBP", "USD")[i % 3]
        expected[currency] = expected.get(currency, Decimal(0)) + Decimal(890 + 1000 * i) / 1000
    expected["EUR"] += Decimal("0.89")
    assert everything == expected
    conclude_all(api)


def test_a_purchase_after_the_experiment_concluded_is_no_conversion_of_it(setup):
    # Exposed to a variant, the user buys within the window but after the experiment was
    # concluded: the winner's offering was everyone's by then, so no variant converted them.
    api, fake, db = setup.api, setup.fake, setup.db
    conclude_all(api)
    exp = unique("after").lower()
    create(api, exp, hours=24)
    user = unique("late-buyer")
    served = offering_for(api, user)[0]
    wait_until(lambda: len(exposures(db, exp)) == 1, 10, "the exposure was not written")
    r = api.request("POST", f"/admin/v1/experiments/{exp}/conclude", admin=True, json={"winner": "v0"})
    assert r.status_code == 200, r.text
    buy_at(api, fake, user, P + served[-1], 990, "USD")
    r = api.get(f"/admin/v1/experiments/{exp}/results", admin=True)
    assert r.status_code == 200, r.text
    assert [(v["exposed"], v["payers"], v["orders"]) for v in r.json()["variants"]
            if v["exposed"]] == [(1, 0, 0)]
    assert independent_results(db, exp, 24)[exposures(db, exp)[user]][1:3] == (0, 0)
    conclude_all(api)


def test_a_purchase_while_the_experiment_is_paused_is_no_conversion_of_it(setup):
    # Exposed to a variant, the user buys within the window but while the experiment is paused:
    # everyone was offered the placement's own offering then, so no variant converted them. A
    # purchase after the resume, within the window, counts again.
    api, fake, db = setup.api, setup.fake, setup.db
    conclude_all(api)
    exp = unique("paused").lower()
    create(api, exp, hours=24)
    user = unique("paused-buyer")
    served = offering_for(api, user)[0]
    wait_until(lambda: len(exposures(db, exp)) == 1, 10, "the exposure was not written")
    assert api.request("POST", f"/admin/v1/experiments/{exp}/pause", admin=True).json()["status"] == "paused"
    buy_at(api, fake, user, P + served[-1], 990, "USD")
    r = api.get(f"/admin/v1/experiments/{exp}/results", admin=True)
    assert [(v["exposed"], v["payers"], v["orders"]) for v in r.json()["variants"] if v["exposed"]] == [(1, 0, 0)]
    assert independent_results(db, exp, 24)[exposures(db, exp)[user]][1:3] == (0, 0)
    assert api.request("POST", f"/admin/v1/experiments/{exp}/resume", admin=True).json()["status"] == "running"
    buy_at(api, fake, user, P + served[-1], 990, "USD")
    r = api.get(f"/admin/v1/experiments/{exp}/results", admin=True)
    assert [(v["exposed"], v["payers"], v["orders"]) for v in r.json()["variants"] if v["exposed"]] == [(1, 1, 1)]
    assert independent_results(db, exp, 24)[exposures(db, exp)[user]][1:3] == (1, 1)
    conclude_all(api)


def test_an_offering_being_removed_while_it_wins_stays_or_the_removal_is_refused(setup):
    # The removal checks that no placement names the offering, then waits on the experiment
    # that the conclusion holds while it makes that offering the placement's. Once the
    # conclusion commits the removal must not go on: the placement would name nothing and
    # every caller get 503.
    api, db = setup.api, setup.db
    conclude_all(api)
    winner = "x-" + unique("won").lower()
    r = api.request("PUT", f"/admin/v1/offerings/{winner}", admin=True, json={"products": [P + "b"]})
    assert r.status_code in (200, 201), r.text
    exp = unique("race").lower()
    create(api, exp, offerings=("x-a", winner))
    answers: dict[str, int] = {}

    def waiting() -> int:
        return int(db.scalar("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                             f"AND datname = '{db.name}'") or 0)

    concluding = threading.Thread(target=lambda: answers.update(conclude=api.request(
        "POST", f"/admin/v1/experiments/{exp}/conclude", admin=True, json={"winner": "v1"},
        timeout=60).status_code))
    removing = threading.Thread(target=lambda: answers.update(remove=api.request(
        "DELETE", f"/admin/v1/offerings/{winner}", admin=True, timeout=60).status_code))
    try:
        # The placement held, so the conclusion stops just before naming the winner there.
        with db.holding("SELECT 1 FROM placements WHERE placement_id = 'paywall' FOR UPDATE"):
            concluding.start()
            wait_until(lambda: waiting() == 1, 30, "the conclusion did not reach the placement")
            removing.start()
            wait_until(lambda: waiting() == 2, 30, "the removal did not wait")
    finally:
        for thread in (concluding, removing):
            if thread.ident is not None:
                thread.join(timeout=60)
    assert answers["conclude"] == 200
    assert answers["remove"] == 409, answers
    offered = api.get("/v1/offerings/paywall", headers={"Authorization": f"Bearer {mint(unique('p'))}"})
    assert offered.status_code == 200 and offered.json()["offering_id"] == winner, offered.text
    conclude_all(api)


def test_pause_resume_and_conclude(setup):
    api, db = setup.api, setup.db
    conclude_all(api)
    exp = unique("life").lower()
    create(api, exp, weights=(1, 1000), offerings=("x-a", "x-b"))
    user = next(u for u in (unique("p") for _ in range(100)) if expected_variant(exp, u, (1, 1000)) == "v1")
    assert offering_for(api, user)[0] == "x-b"
    # An offering a running experiment serves cannot be removed.
    problem(api.request("DELETE", "/admin/v1/offerings/x-b", admin=True), 409, "offering_in_use")
    problem(api.request("POST", "/admin/v1/experiments", admin=True, json={
        "experiment_id": unique("second").lower(), "placement_id": "paywall",
        "variants": [{"variant": "a", "offering_id": "x-a", "weight": 1},
                     {"variant": "b", "offering_id": "x-b", "weight": 1}]}), 409, "experiment_already_running")

    assert api.request("POST", f"/admin/v1/experiments/{exp}/pause", admin=True).json()["status"] == "paused"
    late = unique("late")
    assert offering_for(api, late) == ("x-a", None), "a paused experiment serves the placement's own offering"
    assert offering_for(api, user) == ("x-a", None)
    assert api.request("POST", f"/admin/v1/experiments/{exp}/resume", admin=True).json()["status"] == "running"
    # A HEAD shows nothing (no body): a link checker or a cache revalidating exposes nobody.
    looked = unique("head")
    r = api.request("HEAD", "/v1/offerings/paywall", headers={"Authorization": f"Bearer {mint(looked)}"})
    assert r.status_code == 200 and r.content == b"", r.text
    assert offering_for(api, user)[0] == "x-b", "resuming keeps the assignment"
    wait_until(lambda: user in exposures(db, exp), 10, "exposure not written")
    assert late not in exposures(db, exp), "nobody is exposed while paused"
    assert looked not in exposures(db, exp), "a HEAD exposed its user"

    problem(api.request("POST", f"/admin/v1/experiments/{exp}/conclude", admin=True, json={"winner": "zz"}),
            422, "unknown_variant")
    problem(api.request("POST", f"/admin/v1/experiments/{exp}/conclude", admin=True, json={}), 422,
            "validation_failed")
    r = api.request("POST", f"/admin/v1/experiments/{exp}/conclude", admin=True, json={"winner": "v1"})
    assert r.status_code == 200, r.text
    assert r.json()["status"] == "concluded" and r.json()["winner"] == "v1"
    assert api.get("/admin/v1/placements/paywall", admin=True).json()["offering_id"] == "x-b"
    assert offering_for(api, unique("after")) == ("x-b", None), "the winner serves everyone, unassigned"
    problem(api.request("POST", f"/admin/v1/experiments/{exp}/pause", admin=True), 409, "experiment_state")
    problem(api.request("POST", "/admin/v1/experiments", admin=True, json={
        "experiment_id": exp, "placement_id": "paywall",
        "variants": [{"variant": "a", "offering_id": "x-a", "weight": 1},
                     {"variant": "b", "offering_id": "x-b", "weight": 1}]}), 409, "experiment_exists")

    events = api.get("/admin/v1/events", admin=True,
                     params={"user_id": f"experiment:{exp}", "type": "experiment.concluded"}).json()["events"]
    assert len(events) == 1
    data = events[0]["data"]
    assert (data["winner"], data["offering_id"], data["placement_id"]) == ("v1", "x-b", "paywall")
    assert {v["variant"] for v in data["results"]} == {"v0", "v1"}
    conclude_all(api)


def test_concluded_is_a_webhook_and_exposed_is_not(setup):
    api, db = setup.api, setup.db
    conclude_all(api)
    r = api.request("POST", "/admin/v1/webhook-endpoints", admin=True,
                    json={"url": "http://127.0.0.1:9/hook", "event_types": ["*"]})
    assert r.status_code == 201, r.text
    endpoint = r.json()["id"]
    exp = unique("hooks").lower()
    create(api, exp)
    user = unique("hooked")
    offering_for(api, user)
    wait_until(lambda: user in exposures(db, exp), 10, "exposure not written")
    api.request("POST", f"/admin/v1/experiments/{exp}/conclude", admin=True, json={"winner": "v0"})
    queued = db.rows(f"""
        SELECT e.type FROM webhook_deliveries d JOIN events e ON e.position = d.event_position
        WHERE d.endpoint_id = '{endpoint}' AND e.type LIKE 'experiment.%'""")
    assert [t for (t,) in queued] == ["experiment.concluded"]
    assert db.scalar(f"SELECT count(*) FROM events WHERE type = 'experiment.exposed' AND user_id = '{user}'") == "1"
    api.request("DELETE", f"/admin/v1/webhook-endpoints/{endpoint}", admin=True)
    conclude_all(api)


def test_the_concluded_event_counts_what_was_served_just_before(setup):
    # Exposures wait up to a second to be written; concluding within it, the event's results
    # (kept by the backend) must still count them, as the results read later do.
    api, db = setup.api, setup.db
    conclude_all(api)
    exp = unique("just-before").lower()
    create(api, exp)
    for user in [unique("just-before-user") for _ in range(6)]:
        offering_for(api, user)
    r = api.request("POST", f"/admin/v1/experiments/{exp}/conclude", admin=True, json={"winner": "v0"})
    assert r.status_code == 200, r.text
    event = json.loads(db.scalar(f"SELECT data::text FROM events WHERE type = 'experiment.concluded' "
                                 f"AND user_id = 'experiment:{exp}'"))
    said = {v["variant"]: v["exposed"] for v in event["results"]}
    assert sum(said.values()) == 6, said
    later = api.get(f"/admin/v1/experiments/{exp}/results", admin=True).json()["variants"]
    assert {v["variant"]: v["exposed"] for v in later} == said
    conclude_all(api)


@pytest.mark.parametrize("body,field", [
    ({"placement_id": "paywall", "variants": [{"variant": "a", "offering_id": "x-a", "weight": 1},
                                              {"variant": "b", "offering_id": "x-b", "weight": 1}]},
     "experiment_id"),
    ({"experiment_id": "e", "placement_id": "paywall", "variants": [{"variant": "a", "offering_id": "x-a", "weight": 1}]},
     "variants"),
    ({"experiment_id": "e", "placement_id": "paywall", "variants": [{"variant": "a", "offering_id": "x-a", "weight": 1}] * 5},
     "variants"),
    ({"experiment_id": "e", "placement_id": "paywall",
      "variants": [{"variant": "a", "offering_id": "x-a", "weight": 0}, {"variant": "b", "offering_id": "x-b", "weight": 1}]},
     "variants[0].weight"),
    ({"experiment_id": "e", "placement_id": "paywall",
      "variants": [{"variant": "a", "offering_id": "x-a", "weight": 1}, {"variant": "a", "offering_id": "x-b", "weight": 1}]},
     "variants[1].variant"),
    ({"experiment_id": "e", "placement_id": "paywall",
      "variants": [{"variant": "a", "offering_id": "X", "weight": 1}, {"variant": "b", "offering_id": "x-b", "weight": 1}]},
     "variants[0].offering_id"),
    ({"experiment_id": "e", "placement_id": "paywall", "attribution_hours": 0,
      "variants": [{"variant": "a", "offering_id": "x-a", "weight": 1}, {"variant": "b", "offering_id": "x-b", "weight": 1}]},
     "attribution_hours"),
])
def test_experiment_bodies_are_validated_with_their_fields(setup, body, field):
    r = setup.api.request("POST", "/admin/v1/experiments", admin=True, json=body)
    assert error_fields(problem(r, 422, "validation_failed")) == {field}


def test_unknown_placements_and_offerings_are_refused(setup):
    api = setup.api
    variants = [{"variant": "a", "offering_id": "x-a", "weight": 1}, {"variant": "b", "offering_id": "ghost", "weight": 1}]
    problem(api.request("POST", "/admin/v1/experiments", admin=True,
                        json={"experiment_id": "nowhere", "placement_id": "nowhere", "variants": variants}),
            404, "placement_not_found")
    conclude_all(api)
    refused = problem(api.request("POST", "/admin/v1/experiments", admin=True,
                                  json={"experiment_id": "ghostly", "placement_id": "paywall", "variants": variants}),
                      422, "unknown_offerings")
    assert error_fields(refused) == {"variants[1].offering_id"}
    problem(api.get("/admin/v1/experiments/nope/results", admin=True), 404, "experiment_not_found")
    problem(api.request("POST", "/admin/v1/experiments/nope/pause", admin=True), 404, "experiment_not_found")
    problem(api.get("/admin/v1/experiments", headers={"Authorization": "Bearer wrong"}), 401)


def order_from(api, user: str, product: str, **named):
    r = api.post("/v1/orders", json={"user_id": user, "product_id": product, **named})
    return r


def test_an_order_naming_its_offering_counts_for_that_variant_whatever_the_window(setup):
    api, fake, db = setup.api, setup.fake, setup.db
    conclude_all(api)
    exp = unique("tagged").lower()
    create(api, exp, hours=1)
    users = [unique("tagged-buyer") for _ in range(10)]
    served = {u: offering_for(api, u)[0] for u in users}
    wait_until(lambda: len(exposures(db, exp)) == len(users), 10, "exposures were not all written")
    # Every exposure two hours back: by the window rule alone (one hour) nothing would count.
    db.server.psql(f"UPDATE experiment_exposures SET exposed_at = exposed_at - interval '2 hours' "
                   f"WHERE experiment_id = '{exp}'", database=db.name)
    tagged, other_offering, untagged = users[:6], users[6], users[7]
    # What the store charged (not the catalog's 1.00 / 2.00): revenue counts what was paid.
    prices = {"x-a": Decimal("1.49"), "x-b": Decimal("2.49"), "x-c": Decimal("3.49")}
    mine = {}
    for user in tagged + [other_offering, untagged]:
        named = {}
        if user in tagged:
            named = {"placement": "paywall", "offering": served[user]}
        elif user == other_offering:
            # The placement's own offering, or a rule's: offered by the placement, but not
            # what the experiment showed this user.
            named = {"placement": "paywall", "offering": "x-c"}
        r = order_from(api, user, P + (served[user] if user in tagged else "c")[-1], **named)
        assert r.status_code == 201, r.text
        order = r.json()
        purchase = fake.call("/fake/v1/purchases", {
            "bundle_id": BUNDLE_ID, "product_id": order["product_id"], "type": "Consumable", "quantity": 1,
            "environment": "Production", "app_account_token": order["app_account_token"],
            "price": int(prices["x-" + order["product_id"][-1]] * 1000), "currency": "USD"})
        assert api.report(order["trade_no"], signed_transaction=purchase["signed_transaction"]).status_code == 200
        mine[user] = order["trade_no"]
    # What was kept, checked against the documented assignment computed here.
    for user in tagged:
        row = db.rows(f"SELECT placement_id, offering_id, experiment_id, variant FROM order_offerings "
                      f"WHERE trade_no = '{mine[user]}'")
        assert row == [["paywall", served[user], exp, expected_variant(exp, user, (50, 50))]], user
    assert db.rows(f"SELECT offering_id, coalesce(experiment_id, '-') FROM order_offerings "
                   f"WHERE trade_no = '{mine[other_offering]}'") == [["x-c", "-"]]
    assert db.scalar(f"SELECT count(*) FROM order_offerings WHERE trade_no = '{mine[untagged]}'") == "0"

    r = api.get(f"/admin/v1/experiments/{exp}/results", admin=True)
    assert r.status_code == 200, r.text
    got = {v["variant"]: v for v in r.json()["variants"]}
    for variant in ("v0", "v1"):
        buyers = [u for u in tagged if expected_variant(exp, u, (50, 50)) == variant]
        assert got[variant]["payers"] == got[variant]["orders"] == len(buyers), (variant, got[variant])
        revenue = sum((prices[served[u]] for u in buyers), Decimal("0"))
        assert Decimal(got[variant]["revenue"].get("USD", "0")) == revenue
    assert sum(v["exposed"] for v in got.values()) == len(users)
    conclude_all(api)


SHOWN = ("placement", "offering", "experiment", "variant")


def shown(order: dict) -> dict:
    """What an order's answer says it was made from."""
    return {k: order[k] for k in SHOWN if k in order}


def test_an_order_shows_the_offering_it_named_on_creation_read_and_in_the_admin_view(setup):
    api, fake = setup.api, setup.fake
    conclude_all(api)
    exp = unique("shown").lower()
    create(api, exp)
    assigned, other_offering, unnamed = (unique("shown-buyer") for _ in range(3))
    served, _ = offering_for(api, assigned)
    variant = expected_variant(exp, assigned, (50, 50))
    cases = [
        # The experiment's variant for this user: the order says which.
        (assigned, {"placement": "paywall", "offering": served},
         {"placement": "paywall", "offering": served, "experiment": exp, "variant": variant}),
        # A rule's offering of the placement: named, but for no variant.
        (other_offering, {"placement": "paywall", "offering": "x-c"}, {"placement": "paywall", "offering": "x-c"}),
        (unnamed, {}, {}),
    ]
    for user, named, expected in cases:
        key = unique("shown-key")
        body = {"user_id": user, "product_id": P + (named.get("offering") or "x-a")[-1], **named}
        r = api.post("/v1/orders", json=body, headers={"Idempotency-Key": key})
        assert r.status_code == 201, r.text
        order = r.json()
        assert shown(order) == expected, user
        # A retry with the key replays the same answer, offering and all.
        again = api.post("/v1/orders", json=body, headers={"Idempotency-Key": key})
        assert again.status_code == 201 and again.headers.get("Idempotent-Replayed") == "true"
        assert again.json() == order
        assert shown(api.order(order["trade_no"])) == expected, user
        assert shown(api.admin_order(order["trade_no"])["order"]) == expected, user
        # Without a key, through the batch path: the same answer.
        plain = order_from(api, user, body["product_id"], **named)
        assert plain.status_code == 201, plain.text
        assert shown(plain.json()) == expected and shown(api.order(plain.json()["trade_no"])) == expected
        # Paid, the order still shows what it was made from.
        purchase = fake.purchase(order["product_id"], "consumable", app_account_token=order["app_account_token"])
        assert api.report(order["trade_no"], signed_transaction=purchase["signed_transaction"]).status_code == 200
        paid = api.order(order["trade_no"])
        assert paid["trade_status"] == "TRADE_SUCCESS" and shown(paid) == expected
        assert shown(api.admin_order(order["trade_no"])["order"]) == expected
    conclude_all(api)


@pytest.mark.parametrize("named, field", [
    ({"placement": "paywall"}, "offering"),
    ({"offering": "x-a"}, "placement"),
    ({"placement": "Paywall", "offering": "x-a"}, "placement"),
    ({"placement": "paywall", "offering": "x" * 65}, "offering"),
])
def test_an_order_naming_its_offering_malformed_is_refused_with_the_field(setup, named, field):
    r = order_from(setup.api, unique("namer"), P + "a", **named)
    assert field in error_fields(problem(r, 422, "validation_failed"))


@pytest.mark.parametrize("named", [
    {"placement": "nowhere", "offering": "x-a"},
    {"placement": "paywall", "offering": "x-nothing"},
])
def test_an_order_naming_an_offering_not_served_is_made_untagged(setup, named):
    # Deleted since the app showed it, or not loaded yet by this instance: a tag for the
    # results never stops a purchase, and a retry with the same key replays the order.
    key = str(uuid.uuid4())
    body = {"user_id": unique("namer"), "product_id": P + "a", **named}
    first = setup.api.post("/v1/orders", json=body, headers={"Idempotency-Key": key})
    assert first.status_code == 201, first.text
    assert shown(first.json()) == named
    again = setup.api.post("/v1/orders", json=body, headers={"Idempotency-Key": key})
    assert again.status_code == 201 and again.headers.get("Idempotent-Replayed") == "true", again.text
    assert again.json()["trade_no"] == first.json()["trade_no"]


def test_an_order_that_names_no_store_is_judged_by_the_rules_as_its_offerings_request_was(setup):
    # A rule for App Store apps that name their store: the app asked for its offering without
    # naming one (no rule applied, the experiment did), and its order names none either; taken
    # as app_store, the order was untagged and the exposed user's conversion lost.
    api = setup.api
    conclude_all(api)
    exp = unique("nostore").lower()
    create(api, exp, offerings=("x-a", "x-b"))
    r = api.request("PUT", "/admin/v1/placements/paywall", admin=True, json={
        "offering_id": "x-a", "rules": [{"offering_id": "x-c", "when": {"stores": ["app_store"]}}]})
    assert r.status_code == 200, r.text
    user = user_in(exp, "v1", "nostore-buyer")
    assert offering_for(api, user) == ("x-b", f"{exp}; variant=v1")
    assert offering_for(api, user, store="app_store") == ("x-c", None)
    named = {"placement": "paywall", "offering": "x-b"}
    made = order_from(api, user, P + "b", **named)
    assert made.status_code == 201, made.text
    assert shown(made.json()) == {**named, "experiment": exp, "variant": "v1"}
    # Naming the store the rule targets, the user is not in the experiment.
    ruled = order_from(api, user, P + "b", store="app_store", **named)
    assert ruled.status_code == 201, ruled.text
    assert shown(ruled.json()) == named
    conclude_all(api)


def test_being_exposed_does_not_make_a_new_user_returning(setup):
    api, fake, db = setup.api, setup.fake, setup.db
    conclude_all(api)
    r = api.request("PUT", "/admin/v1/placements/welcome", admin=True, json={
        "offering_id": "x-a", "rules": [{"offering_id": "x-b", "when": {"user": "new"}}]})
    assert r.status_code in (200, 201), r.text
    exp = unique("naive").lower()
    create(api, exp)
    user = unique("newcomer")

    def welcome():
        r = api.get("/v1/offerings/welcome", headers={"Authorization": f"Bearer {mint(user)}"})
        assert r.status_code == 200, r.text
        return r.json()["offering_id"]

    assert welcome() == "x-b"
    offering_for(api, user)
    # The exposure and its experiment.exposed event are written: reading offerings wrote them,
    # so they say nothing of the user.
    wait_until(lambda: db.scalar(f"SELECT count(*) FROM events WHERE user_id = '{user}' "
                                 "AND type = 'experiment.exposed'") == "1", 10, "exposure not written")
    assert welcome() == "x-b", "being shown an offering made the user a returning one"
    # Something the user did makes them returning.
    buy(api, fake, user, P + "a")
    assert welcome() == "x-a"
    conclude_all(api)


def test_a_rules_offering_is_no_variants_even_when_a_variant_has_it(setup):
    api, fake = setup.api, setup.fake
    conclude_all(api)
    exp = unique("ruled").lower()
    create(api, exp, offerings=("x-a", "x-c"))
    r = api.request("PUT", "/admin/v1/placements/paywall", admin=True, json={
        "offering_id": "x-a", "rules": [{"offering_id": "x-c", "when": {"storefronts": ["DEU"]}},
                                        {"offering_id": "x-c", "when": {"has_paid": True}},
                                        {"offering_id": "x-c", "when": {"app_version": {"from": "9"}}},
                                        {"offering_id": "x-c", "when": {"locales": ["fr"]}}]})
    assert r.status_code == 200, r.text
    users = (unique("ruled-buyer") for _ in range(200))
    german, payer, plain = [u for _, u in zip(range(3), (u for u in users if expected_variant(exp, u, (50, 50)) == "v1"))]
    buy(api, fake, payer, P + "a")
    # The German user is served x-c by the rule, the payer too; the plain user by the variant.
    # A parameter or its header: the same rule, on the offerings route as on the order.
    for facts in ({"storefront": "DEU"}, {"app_version": "9.1"}, {"locale": "fr-CA"}):
        assert offering_for(api, german, **facts) == ("x-c", None), facts
    assert offering_for(api, german, storefront="USA") == ("x-c", f"{exp}; variant=v1")
    assert offering_for(api, payer) == ("x-c", None)
    assert offering_for(api, plain) == ("x-c", f"{exp}; variant=v1")
    named = {"placement": "paywall", "offering": "x-c"}
    ruled = {"placement": "paywall", "offering": "x-c"}
    for user, headers, params, expected in [
        (german, {"Storekeeper-Storefront": "DEU"}, {}, ruled),
        (german, {}, {"storefront": "DEU"}, ruled),
        # The parameter wins over the header, as on the offerings route.
        (german, {"Storekeeper-Storefront": "USA"}, {"storefront": "DEU"}, ruled),
        (german, {"Storekeeper-Storefront": "DEU"}, {"storefront": "USA"}, {**named, "experiment": exp, "variant": "v1"}),
        (german, {"Storekeeper-App-Version": "9.1"}, {}, ruled),
        (german, {}, {"app_version": "9.1"}, ruled),
        (german, {"Accept-Language": "fr-CA"}, {}, ruled),
        (german, {}, {"locale": "fr-CA"}, ruled),
        # A value the offerings route would refuse is no fact on the order, which still stands.
        (german, {}, {"app_version": "9.x"}, {**named, "experiment": exp, "variant": "v1"}),
        (payer, {}, {}, ruled),
        (plain, {}, {}, {**named, "experiment": exp, "variant": "v1"}),
    ]:
        r = api.post("/v1/orders", json={"user_id": user, "product_id": P + "c", **named}, headers=headers,
                     params=params)
        assert r.status_code == 201, r.text
        assert shown(r.json()) == expected, (user, headers, params)
    conclude_all(api)


def test_a_variants_etag_is_its_own_so_a_stale_assignment_is_not_revalidated(setup):
    api = setup.api
    conclude_all(api)
    exp = unique("tags").lower()
    # v0 serves the placement's own offering: the same body with and without the experiment.
    create(api, exp)
    user = next(u for u in (unique("tagged") for _ in range(100)) if expected_variant(exp, u, (50, 50)) == "v0")
    headers = {"Authorization": f"Bearer {mint(user)}"}
    plain = api.get("/v1/offerings/paywall")
    first = api.get("/v1/offerings/paywall", headers=headers)
    assert first.headers["Storekeeper-Experiment"] == f"{exp}; variant=v0"
    assert first.content == plain.content and first.headers["ETag"] != plain.headers["ETag"]
    etag = first.headers["ETag"]
    again = api.get("/v1/offerings/paywall", headers={**headers, "If-None-Match": etag})
    assert again.status_code == 304 and again.headers["Storekeeper-Experiment"] == f"{exp}; variant=v0"
    assert again.headers["ETag"] == etag and "Authorization" in again.headers["Vary"]
    assert api.request("POST", f"/admin/v1/experiments/{exp}/pause", admin=True).status_code == 200
    paused = api.get("/v1/offerings/paywall", headers={**headers, "If-None-Match": etag})
    assert paused.status_code == 200 and "Storekeeper-Experiment" not in paused.headers
    assert paused.headers["ETag"] == plain.headers["ETag"]
    r = api.request("POST", f"/admin/v1/experiments/{exp}/conclude", admin=True, json={"winner": "v0"})
    assert r.status_code == 200, r.text
    concluded = api.get("/v1/offerings/paywall", headers={**headers, "If-None-Match": etag})
    assert concluded.status_code == 200 and "Storekeeper-Experiment" not in concluded.headers
    conclude_all(api)


def results(api, exp: str) -> dict[str, tuple]:
    r = api.get(f"/admin/v1/experiments/{exp}/results", admin=True)
    assert r.status_code == 200, r.text
    return {v["variant"]: (v["exposed"], v["payers"], v["orders"]) for v in r.json()["variants"]}


def independent_counts(db, exp: str, hours: int) -> dict[str, tuple]:
    return {v: (exposed, payers, orders)
            for v, (exposed, payers, orders, _, _) in independent_results(db, exp, hours).items()}


def user_in(exp: str, variant: str, prefix: str) -> str:
    return next(u for u in (unique(prefix) for _ in range(100))
                if expected_variant(exp, u, (50, 50)) == variant)


def test_an_order_made_before_the_user_was_shown_the_variant_is_no_conversion(setup):
    # Signed out, the app showed the placement's own offering (also the control's); the user
    # signed in and bought it, the hash tagging the order v0, and was shown the paywall only
    # later: that order was not made from the experiment. One made after is.
    api, fake, db = setup.api, setup.fake, setup.db
    conclude_all(api)
    exp = unique("before-shown").lower()
    create(api, exp)
    user = user_in(exp, "v0", "before-shown")

    def buy(product: str, **named) -> dict:
        r = order_from(api, user, product, **named)
        assert r.status_code == 201, r.text
        order = r.json()
        purchase = fake.call("/fake/v1/purchases", {
            "bundle_id": BUNDLE_ID, "product_id": product, "type": "Consumable", "quantity": 1,
            "environment": "Production", "app_account_token": order["app_account_token"]})
        assert api.report(order["trade_no"], signed_transaction=purchase["signed_transaction"]).status_code == 200
        return order

    assert offering_for(api, None)[0] == "x-a"
    early = buy(P + "a", placement="paywall", offering="x-a")
    assert (early["experiment"], early["variant"]) == (exp, "v0")
    assert offering_for(api, user)[0] == "x-a"
    wait_until(lambda: exposures(db, exp) == {user: "v0"}, 10, "the exposure was not written")
    assert results(api, exp)["v0"] == (1, 0, 0) == independent_counts(db, exp, 24)["v0"]
    buy(P + "a", placement="paywall", offering="x-a")
    assert results(api, exp)["v0"] == (1, 1, 1) == independent_counts(db, exp, 24)["v0"]
    conclude_all(api)


def test_a_restore_moved_to_another_user_stays_no_conversion(setup):
    # A restore of what was bought before the exposure is no conversion; an admin moving that
    # purchase to another user does not make the order that restored it one.
    api, fake, db = setup.api, setup.fake, setup.db
    conclude_all(api)
    api.put_product(P + "forever", type="non_consumable", price="9.00")
    exp = unique("moved-restore").lower()
    create(api, exp)
    restorer = unique("restorer")
    offering_for(api, restorer)
    wait_until(lambda: restorer in exposures(db, exp), 10, "the exposure was not written")
    old = fake.call("/fake/v1/purchases", {
        "bundle_id": BUNDLE_ID, "product_id": P + "forever", "type": "Non-Consumable", "quantity": 1,
        "environment": "Production", "apple_account": unique("account"),
        "purchase_date_ms": int((time.time() - 10 * 86400) * 1000), "price": 9990, "currency": "EUR"})
    assert api.receipts(receipt=old["receipt"], user_id=restorer).status_code == 200
    assert sum(payers for _, payers, _ in results(api, exp).values()) == 0
    moved = db.scalar(f"SELECT transaction_id FROM apple_transactions WHERE user_id = '{restorer}'")
    r = api.request("POST", f"/admin/v1/transactions/{moved}/transfer", admin=True,
                    json={"to_user_id": unique("someone-else")})
    assert r.status_code == 200, r.text
    after = results(api, exp)
    assert sum(payers for _, payers, _ in after.values()) == 0, after
    independent = independent_counts(db, exp, 24)
    assert {v: counts for v, counts in after.items() if v in independent} == independent
    conclude_all(api)


def test_an_order_naming_a_concluded_experiments_losing_offering_is_made_untagged(setup):
    # The app may still show the paywall it was given when the experiment was concluded: the
    # purchase goes through; it counts for no variant.
    api = setup.api
    conclude_all(api)
    exp = unique("lost").lower()
    create(api, exp)
    user = user_in(exp, "v1", "loser")
    served, _ = offering_for(api, user)
    assert served == "x-b"
    r = api.request("POST", f"/admin/v1/experiments/{exp}/conclude", admin=True, json={"winner": "v0"})
    assert r.status_code == 200, r.text
    r = order_from(api, user, P + "b", placement="paywall", offering=served)
    assert r.status_code == 201, r.text
    assert shown(r.json()) == {"placement": "paywall", "offering": "x-b"}
    conclude_all(api)


@pytest.fixture(scope="module")
def google_setup(tmp_path_factory, module_launcher, module_storekeeper):
    """A Storekeeper selling through the fake Google Play, whose Orders API prices each order."""
    fake = start_pushing_fake(tmp_path_factory.mktemp("experiments-google"))
    db = module_launcher.database()
    sk = module_storekeeper(db, port=fake.storekeeper_port, **push_env(fake))
    api = sk.client
    for name in ("a", "b"):
        api.put_product(P + "g" + name, price="1.00", currency="USD")
        r = api.request("PUT", f"/admin/v1/offerings/xg-{name}", admin=True, json={"products": [P + "g" + name]})
        assert r.status_code in (200, 201), r.text
    r = api.request("PUT", "/admin/v1/placements/paywall", admin=True, json={"offering_id": "xg-a"})
    assert r.status_code in (200, 201), r.text
    yield api, fake, db
    fake.terminate(15)
    fake.forget()


def test_a_google_purchase_moved_to_another_user_keeps_the_price_google_charged(google_setup):
    """Revenue is what Google charged (3.75 EUR, not the catalog's 1.00 USD), also once an admin
    has moved the purchase to another user and its Google order belongs to the transfer's."""
    api, google, db = google_setup
    exp = unique("gmoved").lower()
    create(api, exp, offerings=("xg-a", "xg-b"))
    user = unique("g-buyer")
    served = offering_for(api, user, store="google_play")[0]
    wait_until(lambda: exposures(db, exp), 10, "the exposure was not written")
    variant = exposures(db, exp)[user]
    product = {"xg-a": P + "ga", "xg-b": P + "gb"}[served]
    r = api.post("/v1/orders", json={"user_id": user, "product_id": product, "store": "google_play"})
    assert r.status_code == 201, r.text
    order = r.json()
    bought = google.buy(product, obfuscated_account_id=order["obfuscated_account_id"],
                        price_micros=3_750_000, currency="EUR")
    r = api.post("/v1/trade-reports", json={"trade_no": order["trade_no"], "trade_status": "TRADE_SUCCESS",
                                            "purchase_token": bought["purchase_token"]})
    assert r.status_code == 200, r.text
    wait_until(lambda: db.scalar(f"SELECT price_source FROM google_orders WHERE order_id = '{bought['order_id']}'")
               == "order", 60, "the Orders API did not price the order")

    def revenue() -> dict:
        r = api.get(f"/admin/v1/experiments/{exp}/results", admin=True)
        assert r.status_code == 200, r.text
        return {v["variant"]: (v["orders"], v["revenue"]) for v in r.json()["variants"]}[variant]

    assert revenue() == (1, {"EUR": "3.75"})
    r = api.request("POST", f"/admin/v1/transactions/{bought['order_id']}/transfer", admin=True,
                    json={"to_user_id": unique("g-heir")})
    assert r.status_code == 200, r.text
    assert db.scalar(f"SELECT trade_no FROM google_orders WHERE order_id = '{bought['order_id']}'") != order["trade_no"]
    assert revenue() == (1, {"EUR": "3.75"})


def test_a_conclusion_is_in_the_placements_history_and_a_stale_form_cannot_undo_it(setup):
    # The conclusion changed the placement's offering without a row of the placement's own, and
    # a PUT made from what was read before it silently put the loser back.
    api = setup.api
    placement = unique("kept").lower()
    r = api.request("PUT", f"/admin/v1/placements/{placement}", admin=True, json={"offering_id": "x-a"})
    assert r.status_code == 201, r.text
    read = api.request("GET", f"/admin/v1/placements/{placement}", admin=True)
    assert read.headers["ETag"] == r.headers["ETag"], (read.headers, r.headers)
    exp = unique("winner").lower()
    create(api, exp, placement=placement)
    r = api.request("POST", f"/admin/v1/experiments/{exp}/conclude", admin=True, json={"winner": "v1"})
    assert r.status_code == 200, r.text

    entries = api.get("/admin/v1/audit", admin=True,
                      params={"action": "placement_written", "target_id": placement}).json()["entries"]
    assert [((e.get("before") or {}).get("offering_id"), e["after"]["offering_id"]) for e in entries] == [
        ("x-a", "x-b"), (None, "x-a")], entries

    stale = problem(api.request("PUT", f"/admin/v1/placements/{placement}", admin=True,
                                headers={"If-Match": read.headers["ETag"]}, json={"offering_id": "x-a"}),
                    412, "precondition_failed")
    assert placement in stale["detail"]
    assert api.request("GET", f"/admin/v1/placements/{placement}", admin=True).json()["offering_id"] == "x-b"
    current = api.request("GET", f"/admin/v1/placements/{placement}", admin=True).headers["ETag"]
    r = api.request("PUT", f"/admin/v1/placements/{placement}", admin=True, headers={"If-Match": current},
                    json={"offering_id": "x-b", "rules": []})
    assert r.status_code == 200 and r.headers["ETag"] != current, r.text
    # If-Match names a stored version: a placement not stored yet has none.
    problem(api.request("PUT", f"/admin/v1/placements/{unique('none').lower()}", admin=True,
                        headers={"If-Match": "*"}, json={"offering_id": "x-a"}), 412, "precondition_failed")
