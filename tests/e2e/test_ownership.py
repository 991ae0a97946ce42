"""Issue 10, ownership: a purchase is credited to one user, whatever path its proof takes, and
only an admin moves it. Every answer that delivers says whether this request granted it. The
module runs once per receipt mode (verify_receipt, server_api, auto), each with a Server API key."""

from __future__ import annotations

import threading

import pytest

from datetime import datetime, timedelta, timezone

from support import buy, jws_payload, problem, unique, wait_for_order, wait_until

GOLD = "com.example.tests.ownership.gold"
VIP = "com.example.tests.ownership.vip"
CLUB = "com.example.tests.ownership.club"
PASS = "com.example.tests.ownership.pass"
EDITED = "com.example.tests.ownership.edited"
PROOFS = ["signed_transaction", "receipt"]


@pytest.fixture(scope="module", params=["verify_receipt", "server_api", "auto"])
def stack(module_launcher, request):
    """The whole suite in each receipt mode, with the App Store Server API key configured: a
    receipt must be Apple's whichever path judges it (issue 22)."""
    return module_launcher.stack(api_key=True, APPLE_RECEIPT_VERIFICATION=request.param)


@pytest.fixture(scope="module", autouse=True)
def catalog(api):
    api.put_product(GOLD, grants={"balance": {"gold": 100}}, content={"gold": 100})
    api.put_product(VIP, type="non_consumable", price="99.00", grants={"entitlement": "vip"})
    api.put_product(CLUB, type="auto_renewable", grants={"entitlement": "club"})
    api.put_product(PASS, type="non_renewing", grants={"entitlement": "season", "duration_days": 30})


def bought_for_an_order(api, fake_appstore, user):
    order = api.create_order(user, GOLD)
    purchase = fake_appstore.purchase(GOLD, "consumable", app_account_token=order["app_account_token"])
    return order, purchase


def bought_for(api, fake_appstore, user, product):
    order = api.create_order(user, product)
    purchase = fake_appstore.purchase(product, "consumable", app_account_token=order["app_account_token"])
    return order, purchase


def transfer(api, transaction_id, user, admin=True):
    return api.request("POST", f"/admin/v1/transactions/{transaction_id}/transfer", admin=admin,
                       json={"to_user_id": user, "reason": "e2e"})


@pytest.mark.parametrize("proof", PROOFS)
def test_a_purchase_made_for_an_order_cannot_be_taken_by_another_user(api, fake_appstore, proof):
    alice, mallory = unique("alice"), unique("mallory")
    order, purchase = bought_for_an_order(api, fake_appstore, alice)
    # Before Alice reports, someone with a copy of her proof posts it as theirs.
    stolen = api.receipts(user_id=mallory, **{proof: purchase[proof]})
    assert stolen.status_code == 409, stolen.text
    assert stolen.json()["code"] == "purchase_not_yours"
    assert alice not in stolen.text and order["trade_no"] not in stolen.text
    assert api.balance(mallory) == 0
    # Alice's own report still settles her order, and grants once.
    mine = api.report(order["trade_no"], **{proof: purchase[proof]})
    assert mine.status_code == 200, mine.text
    assert mine.json()["delivery"]["newly_granted"] is True
    assert api.balance(alice) == 100
    again = api.receipts(user_id=mallory, **{proof: purchase[proof]})
    assert again.status_code == 409 and api.balance(mallory) == 0


@pytest.mark.parametrize("proof", PROOFS)
def test_a_cheap_purchase_made_with_an_orders_token_does_not_pay_that_order(api, fake_appstore, proof):
    # The app chooses the token it buys with: one unit of gold bought with the token of an
    # order for ten, or for the VIP product, pays neither order.
    mallory = unique("mallory")
    for ordered, quantity, code in ((GOLD, 10, "quantity_mismatch"), (VIP, 1, "product_mismatch")):
        order = api.create_order(mallory, ordered, quantity=quantity if quantity != 1 else None)
        purchase = fake_appstore.purchase(GOLD, "consumable", app_account_token=order["app_account_token"],
                                          apple_account=unique("account"))
        r = api.receipts(user_id=mallory, **{proof: purchase[proof]})
        assert r.status_code == 200, r.text
        assert [(t["status"], t.get("code")) for t in r.json()["transactions"]] == [("refused", code)]
        assert r.json()["delivery"] == []
        assert api.order(order["trade_no"])["trade_status"] == "WAIT_BUYER_PAY"
    assert api.balance(mallory) == 0
    assert api.entitlements(mallory)["non_consumables"] == []


@pytest.mark.parametrize("proof", PROOFS)
def test_a_purchase_without_a_token_is_its_first_owners(api, fake_appstore, proof):
    bob, mallory = unique("bob"), unique("mallory")
    purchase = fake_appstore.purchase(GOLD, "consumable")
    first = api.receipts(user_id=bob, **{proof: purchase[proof]})
    assert first.status_code == 200, first.text
    assert [t["status"] for t in first.json()["transactions"]] == ["settled"]
    other = api.receipts(user_id=mallory, **{proof: purchase[proof]})
    assert other.status_code == 409 and other.json()["code"] == "purchase_not_yours"
    assert (api.balance(bob), api.balance(mallory)) == (100, 0)


def test_a_repeated_receipt_delivers_again_but_grants_once(api, fake_appstore):
    user = unique("repeat")
    purchase = fake_appstore.purchase(GOLD, "consumable")
    answers = [api.receipts(user_id=user, receipt=purchase["receipt"]) for _ in range(3)]
    assert [a.status_code for a in answers] == [200, 200, 200], [a.text for a in answers]
    assert [[d["newly_granted"] for d in a.json()["delivery"]] for a in answers] == [[True], [False], [False]]
    assert all(a.json()["delivery"][0]["content"] == {"gold": 100} for a in answers)
    assert api.balance(user) == 100


def test_an_admin_moves_a_purchase_once_and_audits_it_in_the_history(api, fake_appstore):
    alice, erin = unique("alice"), unique("erin")
    order, purchase = bought_for_an_order(api, fake_appstore, alice)
    assert api.report(order["trade_no"], signed_transaction=purchase["signed_transaction"]).status_code == 200
    tx = purchase["transaction_id"]

    assert transfer(api, tx, erin, admin=False).status_code == 401
    missing = transfer(api, "999999999999999", erin)
    assert missing.status_code == 404 and missing.json()["code"] == "transaction_not_found"

    moved = transfer(api, tx, erin)
    assert moved.status_code == 200, moved.text
    body = moved.json()
    assert body["from_trade_no"] == order["trade_no"]
    assert body["order"]["user_id"] == erin and body["order"]["trade_status"] == "TRADE_SUCCESS"
    assert (api.balance(alice), api.balance(erin)) == (0, 100)
    old = api.admin_order(order["trade_no"])
    assert old["order"]["close_reason"] == "transferred"
    last = old["history"][-1]
    assert (last["reason"], last["cause"]) == ("transferred", "admin")
    assert last["detail"]["to_user_id"] == erin and last["detail"]["admin"]

    again = transfer(api, tx, erin)
    assert again.status_code == 409 and again.json()["code"] == "already_owned"
    # Alice's copy of the proof no longer gets her anything.
    r = api.receipts(user_id=alice, signed_transaction=purchase["signed_transaction"])
    assert r.status_code == 409
    assert (api.balance(alice), api.balance(erin)) == (0, 100)


def test_a_balance_grant_edit_leaves_earlier_buyers_what_they_got_and_a_transfer_moves_that(api, fake_appstore):
    # ARCHITECTURE.md ("Catalog"): balance grants apply to settlements after the change. A
    # transfer once credited the new owner the grants as edited (alice 0, erin 100000) while
    # taking back from alice what she had been credited.
    api.put_product(EDITED, grants={"balance": {"gold": 100}})
    alice, erin, carol = unique("alice"), unique("erin"), unique("carol")
    order = api.create_order(alice, EDITED, quantity=2)
    purchase = fake_appstore.purchase(EDITED, "consumable", quantity=2,
                                      app_account_token=order["app_account_token"])
    assert api.report(order["trade_no"], signed_transaction=purchase["signed_transaction"]).status_code == 200
    assert api.balance(alice) == 200
    r = api.request("PATCH", f"/admin/v1/products/{EDITED}", admin=True,
                    json={"grants": {"balance": {"gold": 100000}}})
    assert r.status_code == 200, r.text
    assert api.balance(alice) == 200
    later, bought = bought_for(api, fake_appstore, carol, EDITED)
    assert api.report(later["trade_no"], signed_transaction=bought["signed_transaction"]).status_code == 200
    assert api.balance(carol) == 100000

    moved = transfer(api, purchase["transaction_id"], erin)
    assert moved.status_code == 200, moved.text
    assert (api.balance(alice), api.balance(erin)) == (0, 200)
    entries = api.get(f"/v1/users/{erin}/ledger").json()["entries"]
    assert [(e["kind"], e["amount"], e["trade_no"]) for e in entries] == [
        ("grant", 200, moved.json()["order"]["trade_no"])]
    # Taken back from erin by a refund is what she was given, not the grants as edited.
    fake_appstore.refund(purchase["transaction_id"])
    wait_until(lambda: api.balance(erin) == 0, 20, "the refund took back what erin was given")
    assert api.balance(alice) == 0


def test_a_transfer_of_a_purchase_whose_refund_is_stored_but_not_yet_applied_is_not_transferable(
        api, fake_appstore, stack):
    # Apple's REFUND arrives while an admin moves the purchase: stored, but the notification pass
    # cannot apply it before the transfer ends (the transfer holds the purchase's order). The
    # transfer's settlement reads the stored refund and refuses; that was answered 422
    # transaction_revoked, a report's code the transfer's contract does not have.
    alice, erin = unique("alice"), unique("erin")
    order, purchase, _ = buy(api, fake_appstore, alice, GOLD)
    note = fake_appstore.refund(purchase["transaction_id"], deliver=False)
    answers = []
    mover = threading.Thread(target=lambda: answers.append(transfer(api, purchase["transaction_id"], erin)))
    db = stack.db
    waiting = "SELECT count(*) FROM pg_locks WHERE NOT granted AND locktype = 'transactionid'"
    # Held at erin's event sequence, which it locks after alice's purchase and order.
    with db.holding(f"INSERT INTO user_event_sequences (user_id, last_sequence) VALUES ('{erin}', 0)"):
        mover.start()
        wait_until(lambda: db.scalar(waiting) != "0", 20, "the transfer waits for erin's sequence")
        assert api.post_notification(note["signed_payload"]).status_code == 200
        stored = f"SELECT state FROM apple_notifications WHERE notification_uuid = '{note['notification_uuid']}'"
        assert db.scalar(stored) == "pending"
    mover.join(timeout=30)
    problem(answers[0], 409, "not_transferable")
    wait_until(lambda: db.scalar(stored) == "processed", 20, "the refund was applied")
    assert (api.balance(alice), api.balance(erin)) == (0, 0)
    assert wait_for_order(api, order["trade_no"], "TRADE_CLOSED")["close_reason"] == "refunded"


@pytest.mark.parametrize("proof", PROOFS)
def test_reporting_an_order_whose_purchase_was_transferred_says_so_not_refunded(api, fake_appstore, proof):
    # The old owner's app reports the order again after an admin moved its purchase: the order
    # is closed for good, as after a refund, but Apple refunded nothing and the answer says so.
    alice, erin = unique("alice"), unique("erin")
    order, purchase = bought_for_an_order(api, fake_appstore, alice)
    assert api.report(order["trade_no"], **{proof: purchase[proof]}).status_code == 200
    moved = transfer(api, purchase["transaction_id"], erin)
    assert moved.status_code == 200, moved.text
    # Once Apple holds the new owner's token (the worker sets it; the Server API then reads it
    # back in the receipt's transactions), the answer must still be the order's own: it was
    # once 422 account_token_mismatch or 409 depending on which came first.
    token = moved.json()["order"]["app_account_token"].lower()
    wait_until(lambda: fake_appstore.transaction(purchase["transaction_id"]).get("app_account_token") == token,
               20, "Apple never got the new owner's token")

    again = api.report(order["trade_no"], **{proof: purchase[proof]})
    body = problem(again, 409, "order_transferred")
    assert "moved to another order by an admin" in body["detail"] and "refund" not in body["detail"]
    assert (api.balance(alice), api.balance(erin)) == (0, 100)


def test_a_refunded_purchase_posted_again_with_its_old_proof_is_revoked(api, fake_appstore):
    # The signed transaction kept on the device predates Apple's refund and does not mention it;
    # the refund notification recorded it. Posting it again restores nothing and delivers nothing.
    user = unique("refunded")
    order, purchase, _ = buy(api, fake_appstore, user, VIP, "non_consumable")
    fake_appstore.refund(purchase["transaction_id"])
    assert wait_for_order(api, order["trade_no"], "TRADE_CLOSED")["close_reason"] == "refunded"
    r = api.receipts(user_id=user, signed_transaction=purchase["signed_transaction"])
    assert r.status_code == 200, r.text
    assert [t["status"] for t in r.json()["transactions"]] == ["revoked"]
    assert r.json()["delivery"] == []
    assert api.entitlements(user)["non_consumables"] == []


# Issue 22: PostgreSQL compares user ids byte for byte, so the edge must too. Each pair reads
# alike; the first is canonically equivalent to its partner (Swift's `String ==` calls them
# equal), the others are only look-alikes (full-width letters, a zero-width space).
LOOK_ALIKES = [("jose\u0301", "jos\u00e9"), ("\uff4a\uff4f\uff53\uff45", "jose"),
               ("jo\u200bse", "jose")]


@pytest.mark.parametrize("look_alike,owner_form", LOOK_ALIKES,
                         ids=["canonically_equivalent", "full_width", "zero_width"])
def test_a_look_alike_user_id_is_another_user(api, fake_appstore, look_alike, owner_form):
    tail = unique("")
    alice, mallory = owner_form + tail, look_alike + tail
    assert alice.encode() != mallory.encode()
    _, vip, r = buy(api, fake_appstore, alice, VIP, "non_consumable")
    assert r.json()["delivery"]["newly_granted"] is True
    # Alice's purchase, posted by the look-alike, is not restored to them.
    stolen = api.receipts(user_id=mallory, signed_transaction=vip["signed_transaction"])
    assert stolen.status_code == 409, stolen.text
    assert stolen.json()["code"] == "purchase_not_yours"
    assert api.entitlements(mallory)["non_consumables"] == []
    # Her open order is, to the look-alike, exactly a missing one: not read, cancelled or paid.
    order = api.create_order(alice, GOLD)
    missing = order["trade_no"][:-4] + "zzzz"
    gold = fake_appstore.purchase(GOLD, "consumable", app_account_token=order["app_account_token"])
    calls = [
        lambda t: api.request("GET", f"/v1/orders/{t}", user=mallory),
        lambda t: api.request("POST", "/v1/trade-reports", user=mallory,
                              json={"trade_no": t, "trade_status": "TRADE_CLOSED", "reason": "cancelled"}),
        lambda t: api.request("POST", "/v1/trade-reports", user=mallory,
                              json={"trade_no": t, "trade_status": "TRADE_SUCCESS",
                                    "signed_transaction": gold["signed_transaction"]}),
    ]
    for call in calls:
        theirs, nobodys = call(order["trade_no"]), call(missing)
        a, b = problem(theirs, 404, "order_not_found"), problem(nobodys, 404, "order_not_found")
        assert a["detail"].replace(order["trade_no"], "") == b["detail"].replace(missing, "")
    assert api.order(order["trade_no"])["trade_status"] == "WAIT_BUYER_PAY"
    assert api.balance(mallory) == 0
    # A signed-in look-alike naming Alice is refused as naming someone else.
    named = api.request("POST", "/v1/orders", user=mallory, json={"user_id": alice, "product_id": GOLD})
    problem(named, 403, "user_mismatch")
    assert api.entitlements(alice)["non_consumables"] != []


def club_expiry_ms(api, user):
    found = [e for e in api.entitlements(user)["entitlements"] if e["entitlement"] == "club"]
    if not found:
        return None
    return int(datetime.fromisoformat(found[0]["expires_at"].replace("Z", "+00:00")).timestamp() * 1000)


@pytest.mark.parametrize("bought", ["for_an_order", "without_an_order"])
def test_a_renewal_is_its_subscribers_whoever_posts_it_and_its_late_notification_adds_nothing(
        api, fake_appstore, bought):
    # Issue 22. The victim subscribes (with an order's token, or through /v1/receipts with none);
    # Apple renews, and the DID_RENEW is held back. An attacker with the renewal's signed
    # transaction posts it to /v1/receipts, then reports it on an order of their own.
    victim, attacker = unique("payer"), unique("thief")
    if bought == "for_an_order":
        _, purchase, _ = buy(api, fake_appstore, victim, CLUB, type="auto_renewable", expires_in_seconds=120)
    else:
        purchase = fake_appstore.purchase(CLUB, "auto_renewable", expires_in_seconds=120)
        first = api.receipts(user_id=victim, signed_transaction=purchase["signed_transaction"])
        assert first.status_code == 200 and first.json()["transactions"][0]["status"] == "settled", first.text
    note = fake_appstore.renewal(purchase["transaction_id"], expires_in_seconds=30 * 86400, deliver=False)
    assert note["delivered_status"] is None
    renewed = jws_payload(note["signed_transaction"])
    assert renewed["originalTransactionId"] == purchase["original_transaction_id"] != renewed["transactionId"]

    stolen = api.receipts(user_id=attacker, signed_transaction=note["signed_transaction"])
    problem(stolen, 409, "purchase_not_yours")
    assert victim not in stolen.text
    # The subscriber has the period at once, on an order of their own.
    assert club_expiry_ms(api, victim) == renewed["expiresDate"]
    renewal_orders = [o for o in api.admin_orders(user_id=victim) if o["origin"] == "renewal"]
    assert [(o["trade_status"], o["transaction_id"]) for o in renewal_orders] == [
        ("TRADE_SUCCESS", renewed["transactionId"])]

    theirs = api.create_order(attacker, CLUB)
    reported = api.report(theirs["trade_no"], signed_transaction=note["signed_transaction"])
    problem(reported, 409, "purchase_not_yours")
    assert api.order(theirs["trade_no"])["trade_status"] == "WAIT_BUYER_PAY"
    assert api.entitlements(attacker)["entitlements"] == []
    assert [o["trade_no"] for o in api.admin_orders(user_id=attacker)] == [theirs["trade_no"]]

    # The late DID_RENEW confirms the dates and credits nothing twice.
    assert api.post_notification(note["signed_payload"]).status_code == 200
    wait_until(lambda: [n for n in api.notifications(transaction_id=renewed["transactionId"])
                        if n["notification_uuid"] == note["notification_uuid"] and n["state"] == "processed"],
               15, "the late DID_RENEW was not processed")
    assert len(api.admin_orders(user_id=victim)) == 2
    assert club_expiry_ms(api, victim) == renewed["expiresDate"]
    assert api.entitlements(attacker)["entitlements"] == []
    assert [o["trade_no"] for o in api.admin_orders(user_id=attacker)] == [theirs["trade_no"]]


def test_a_transferred_pass_keeps_the_time_it_had_left(api, fake_appstore, stack):
    # A 30-day pass bought 29 days ago has a day left; moved to another user it still has a
    # day, and moved back again, still a day: a transfer moves the pass, it sells no new one.
    owner, heir = unique("pass-from"), unique("pass-to")
    order, purchase, _ = buy(api, fake_appstore, owner, PASS, type="non_renewing")
    stack.db.rows(f"UPDATE orders SET paid_at = paid_at - interval '29 days' WHERE trade_no = '{order['trade_no']}'")

    def season(user):
        found = [e for e in api.entitlements(user)["entitlements"] if e["entitlement"] == "season"]
        return found[0]["expires_at"] if found else None

    # The aged order's own state: read again after an event recomputes it.
    r = api.post(f"/admin/v1/users/{owner}/adjustments", admin=True,
                 json={"asset": "gold", "amount": 1, "reason": "recompute"})
    assert r.status_code in (200, 201), r.text
    left = season(owner)
    assert left and datetime.fromisoformat(left.replace("Z", "+00:00")) < datetime.now(timezone.utc) + timedelta(days=2), left
    assert transfer(api, purchase["transaction_id"], heir).status_code == 200
    assert (season(heir), season(owner)) == (left, None)
    assert transfer(api, purchase["transaction_id"], owner).status_code == 200
    assert (season(owner), season(heir)) == (left, None)
