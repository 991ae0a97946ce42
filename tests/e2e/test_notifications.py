"""Issue 6: App Store Server Notifications V2 signed by the fake App Store and delivered to
Storekeeper: refunds (exactly once however often delivered, also before the purchase is
reported), reversals, revocations, renewals, expiry and grace periods, consumption requests,
TEST, unknown types, and tampered payloads."""

from __future__ import annotations

import subprocess
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime

import pytest

from support import BUNDLE_ID, buy, jws_payload, problem, refreshed_metrics, tamper_jws_payload, unique, wait_for_order, wait_until

P = "com.example.tests.notifications."
GOLD = P + "gold"
SWORD = P + "sword"
CLUB = P + "club.monthly"
CLUB_PLUS = P + "club.plus.monthly"
CLUB_CHARTED = P + "club.charted.monthly"


@pytest.fixture(scope="module", autouse=True)
def catalog(api):
    api.put_product(GOLD, grants={"balance": {"gold": 100}})
    api.put_product(SWORD, type="non_consumable", grants={"entitlement": "sword"})
    api.put_product(CLUB, type="auto_renewable", grants={"entitlement": "club"})
    api.put_product(CLUB_PLUS, type="auto_renewable", grants={"entitlement": "club_plus"})
    api.put_product(CLUB_CHARTED, type="auto_renewable", grants={"entitlement": "club"})


def parse_ms(text):
    return int(datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() * 1000)


def stored(api, uuid):
    found = [n for n in api.notifications(limit=200) if n["notification_uuid"] == uuid]
    return found[0] if found else None


def wait_processed(api, uuid, state="processed"):
    return wait_until(lambda: (lambda n: n if n and n["state"] == state else None)(stored(api, uuid)), 15,
                      f"notification {uuid} never reached state {state}")


def entitlement(api, user, name):
    found = [e for e in api.entitlements(user)["entitlements"] if e["entitlement"] == name]
    return found[0] if found else None


# ---------------------------------------------------------------------------------------------
# Refunds and revocations


def test_a_refund_delivered_five_times_lowers_the_balance_exactly_once(api, fake_appstore, stack):
    user = unique("refund")
    order, purchase, _ = buy(api, fake_appstore, user, GOLD)
    buy(api, fake_appstore, user, GOLD)
    assert api.balance(user) == 200

    note = fake_appstore.refund(purchase["transaction_id"])
    assert note["delivered_status"] == 200, note
    for _ in range(4):
        r = api.post_notification(note["signed_payload"])
        assert r.status_code == 200, r.text

    closed = wait_for_order(api, order["trade_no"], "TRADE_CLOSED")
    assert closed["close_reason"] == "refunded"
    wait_processed(api, note["notification_uuid"])
    assert len([n for n in api.notifications(transaction_id=purchase["transaction_id"])
                if n["notification_uuid"] == note["notification_uuid"]]) == 1
    assert api.balance(user) == 100
    ledger = stack.db.rows(f"SELECT kind, amount FROM ledger WHERE transaction_id = '{purchase['transaction_id']}' "
                           "ORDER BY id")
    assert ledger == [["grant", "100"], ["refund", "-100"]]

    detail = api.admin_order(order["trade_no"])
    assert [(h["to_status"], h["reason"], h["cause"]) for h in detail["history"]][-1] == \
        ("TRADE_CLOSED", "refunded", "notification")
    assert [n["notification_uuid"] for n in detail["notifications"]] == [note["notification_uuid"]]
    assert detail["notifications"][0]["notification_type"] == "REFUND"


def test_a_refund_before_the_purchase_is_reported_refuses_its_proof(api, fake_appstore, stack):
    user = unique("early-refund")
    order = api.create_order(user, GOLD)
    purchase = fake_appstore.purchase(GOLD, "consumable", app_account_token=order["app_account_token"])
    # The refund notification arrives first (Apple's deliveries are not ordered).
    note = fake_appstore.refund(purchase["transaction_id"])
    assert note["delivered_status"] == 200, note
    wait_processed(api, note["notification_uuid"], state="deferred")
    assert api.order(order["trade_no"])["trade_status"] == "WAIT_BUYER_PAY"

    # The app reports with the transaction as it was when bought. Storekeeper holds Apple's
    # signed refund of it: settling would credit gold a spend could take before the refund applies.
    problem(api.report(order["trade_no"], signed_transaction=purchase["signed_transaction"]), 422,
            "transaction_revoked")
    assert api.order(order["trade_no"])["trade_status"] == "WAIT_BUYER_PAY"
    assert api.balance(user) == 0
    spent = api.post(f"/v1/users/{user}/balances/gold/spend", json={"amount": 100, "reason": "sword"},
                     headers={"Idempotency-Key": unique("spend")})
    assert spent.status_code == 409, spent.text

    # Nor does reporting it again; the refund has no order to close.
    problem(api.report(order["trade_no"], signed_transaction=purchase["signed_transaction"]), 422,
            "transaction_revoked")
    # A later notification pass (which wakes every deferred notification whose wait is over)
    # leaves it waiting.
    wait_processed(api, fake_appstore.notification("TEST", bundle_id=BUNDLE_ID)["notification_uuid"])
    assert stored(api, note["notification_uuid"])["state"] == "deferred"
    assert api.order(order["trade_no"])["trade_status"] == "WAIT_BUYER_PAY"
    assert api.balance(user) == 0
    assert stack.db.scalar(f"SELECT count(*) FROM ledger WHERE transaction_id = '{purchase['transaction_id']}'") == "0"


@pytest.mark.parametrize("posted_to", ["receipts", "report"])
def test_a_refund_the_proof_shows_is_applied_when_its_notification_was_lost(api, fake_appstore, stack, posted_to):
    # Apple's REFUND never arrived (72 hours of retries missed, a sandbox notification sent
    # once). The app's next restore or report carries Apple's current signed transaction,
    # which says refunded: that is Apple's word too, so the refund applies then, once, and the
    # answer does not grant what its own list calls revoked.
    user = unique(f"refund-shown-{posted_to}")
    order, purchase, _ = buy(api, fake_appstore, user, CLUB, type="auto_renewable", expires_in_seconds=20 * 86400)
    assert entitlement(api, user, "club")
    note = fake_appstore.refund(purchase["transaction_id"], deliver=False)
    refunded = fake_appstore.transaction(purchase["transaction_id"])["signed_transaction"]
    assert jws_payload(refunded).get("revocationDate")
    if posted_to == "receipts":
        r = api.receipts(user_id=user, signed_transaction=refunded)
        assert r.status_code == 200, r.text
        assert [t["status"] for t in r.json()["transactions"]] == ["revoked"]
        assert not [e for e in r.json()["entitlements"]["entitlements"] if e["entitlement"] == "club"], r.json()
    else:
        r = api.report(order["trade_no"], signed_transaction=refunded)
        assert r.status_code == 409 and r.json()["code"] == "order_refunded", r.text
    assert entitlement(api, user, "club") is None
    closed = api.order(order["trade_no"])
    assert (closed["trade_status"], closed["close_reason"]) == ("TRADE_CLOSED", "refunded")
    # The notification, delivered at last, finds it done.
    assert api.post_notification(note["signed_payload"]).status_code == 200
    wait_processed(api, note["notification_uuid"])
    events = stack.db.rows(f"SELECT count(*) FROM events WHERE user_id = '{user}' AND type = 'purchase.refunded'")
    assert events == [["1"]]


def test_a_renewal_refunded_before_its_notice_came_is_credited_once_the_refund_is_reversed(api, fake_appstore):
    # DID_RENEW's first delivery failed; Apple refunded the period, then reversed the refund.
    # Delivered REFUND, DID_RENEW, REFUND_REVERSED: the renewal was held back for the refund,
    # and the reversal (Apple's last word) must let it through, not wait for a transaction
    # nobody will record.
    user = unique("renewal-refund-reversed")
    _, purchase, _ = buy(api, fake_appstore, user, CLUB, type="auto_renewable", expires_in_seconds=3600)
    renewal = fake_appstore.renewal(purchase["transaction_id"], expires_in_seconds=30 * 86400, deliver=False)
    period = jws_payload(renewal["signed_transaction"])
    time.sleep(0.01)
    refund = fake_appstore.refund(period["transactionId"])
    wait_processed(api, refund["notification_uuid"], state="deferred")
    assert api.post_notification(renewal["signed_payload"]).status_code == 200
    assert wait_processed(api, renewal["notification_uuid"])["result"] == "superseded"
    time.sleep(0.01)
    reversal = fake_appstore.refund(period["transactionId"], notification_type="REFUND_REVERSED")
    assert reversal["delivered_status"] == 200, reversal
    wait_until(lambda: (lambda c: c if c and parse_ms(c["expires_at"]) == period["expiresDate"] else None)(
        entitlement(api, user, "club")), 15, "the renewal credited after the reversal")
    orders = api.admin_orders(user_id=user)
    assert sorted((o["origin"], o["trade_status"]) for o in orders) == \
        [("order", "TRADE_SUCCESS"), ("renewal", "TRADE_SUCCESS")], orders
    wait_processed(api, reversal["notification_uuid"])


def test_a_subscribers_renewal_reported_on_the_order_that_bought_it_pays_an_order_of_its_own(api, fake_appstore):
    # A StoreKit 2 app reports every transaction from Transaction.updates with the trade
    # number it kept for the subscription; Apple's renewal carries that order's token. The
    # period is the subscriber's: it pays a renewal order, as through /v1/receipts, and a
    # repeat is answered the same; the DID_RENEW that follows finds it recorded.
    user = unique("own-renewal-report")
    order, purchase, _ = buy(api, fake_appstore, user, CLUB, type="auto_renewable", expires_in_seconds=3600)
    renewal = fake_appstore.renewal(purchase["transaction_id"], expires_in_seconds=30 * 86400, deliver=False)
    period = jws_payload(renewal["signed_transaction"])
    assert period["appAccountToken"] == order["app_account_token"]
    answers = [api.report(order["trade_no"], signed_transaction=renewal["signed_transaction"]) for _ in range(2)]
    for r in answers:
        assert r.status_code == 200, r.text
        assert r.json()["order"]["origin"] == "renewal" and r.json()["order"]["transaction_id"] == period["transactionId"]
    assert answers[0].json()["order"]["trade_no"] == answers[1].json()["order"]["trade_no"] != order["trade_no"]
    assert [a.json()["delivery"]["newly_granted"] for a in answers] == [True, False]
    assert parse_ms(entitlement(api, user, "club")["expires_at"]) == period["expiresDate"]
    assert api.post_notification(renewal["signed_payload"]).status_code == 200
    assert wait_processed(api, renewal["notification_uuid"])["result"] == "dates_updated"
    assert sorted(o["origin"] for o in api.admin_orders(user_id=user)) == ["order", "renewal"]


def test_a_proof_signed_before_a_refund_reversal_does_not_refund_again(api, fake_appstore, stack):
    # Refunded, then reversed (both notified): a signed transaction the app kept from between
    # the two says refunded, but Apple's later word stands.
    user = unique("refund-shown-reversed")
    order, purchase, _ = buy(api, fake_appstore, user, CLUB, type="auto_renewable", expires_in_seconds=20 * 86400)
    note = fake_appstore.refund(purchase["transaction_id"])
    wait_processed(api, note["notification_uuid"])
    kept = fake_appstore.transaction(purchase["transaction_id"])["signed_transaction"]
    assert jws_payload(kept).get("revocationDate")
    time.sleep(0.01)
    reversal = fake_appstore.refund(purchase["transaction_id"], notification_type="REFUND_REVERSED")
    wait_processed(api, reversal["notification_uuid"])
    assert api.order(order["trade_no"])["trade_status"] == "TRADE_SUCCESS"
    r = api.receipts(user_id=user, signed_transaction=kept)
    assert r.status_code == 200, r.text
    assert api.order(order["trade_no"])["trade_status"] == "TRADE_SUCCESS"
    assert entitlement(api, user, "club")


def test_a_restore_of_a_purchase_refunded_before_it_was_reported_delivers_nothing(api, fake_appstore, stack):
    user = unique("early-refund-restore")
    order = api.create_order(user, GOLD)
    purchase = fake_appstore.purchase(GOLD, "consumable", app_account_token=order["app_account_token"])
    note = fake_appstore.refund(purchase["transaction_id"])
    wait_processed(api, note["notification_uuid"], state="deferred")

    # Posted as a restore it is revoked, as if its proof said so, and delivers nothing.
    r = api.receipts(user_id=user, signed_transaction=purchase["signed_transaction"])
    assert r.status_code == 200, r.text
    assert [t["status"] for t in r.json()["transactions"]] == ["revoked"]
    assert r.json()["delivery"] == []
    assert api.balance(user) == 0
    # Its row records Apple's refund, so no later post or transfer takes it for a live purchase.
    assert stack.db.scalar("SELECT revocation_date IS NOT NULL AND user_id IS NULL FROM apple_transactions "
                           f"WHERE transaction_id = '{purchase['transaction_id']}'") == "t"
    problem(api.report(order["trade_no"], signed_transaction=purchase["signed_transaction"]), 422,
            "transaction_revoked")
    assert api.receipts(user_id=user, signed_transaction=purchase["signed_transaction"]).json()["delivery"] == []
    assert api.order(order["trade_no"])["trade_status"] == "WAIT_BUYER_PAY"
    assert api.balance(user) == 0


def test_a_refund_reversed_before_the_purchase_is_reported_lets_it_settle(api, fake_appstore):
    user = unique("early-reversal")
    order = api.create_order(user, GOLD)
    purchase = fake_appstore.purchase(GOLD, "consumable", app_account_token=order["app_account_token"])
    refund = fake_appstore.refund(purchase["transaction_id"])
    wait_processed(api, refund["notification_uuid"], state="deferred")
    time.sleep(0.01)  # Apple signs the reversal later
    reversal = fake_appstore.refund(purchase["transaction_id"], notification_type="REFUND_REVERSED")
    wait_processed(api, reversal["notification_uuid"], state="deferred")
    r = api.report(order["trade_no"], signed_transaction=purchase["signed_transaction"])
    assert r.status_code == 200, r.text
    wait_processed(api, refund["notification_uuid"])
    wait_processed(api, reversal["notification_uuid"])
    assert api.order(order["trade_no"])["trade_status"] == "TRADE_SUCCESS"
    assert api.balance(user) == 100


def test_a_refund_signed_before_its_reversal_but_delivered_after_it_changes_nothing(api, fake_appstore):
    user = unique("late-refund")
    order, purchase, _ = buy(api, fake_appstore, user, GOLD)
    refund = fake_appstore.refund(purchase["transaction_id"], deliver=False)
    time.sleep(0.01)  # Apple signs the reversal later
    reversal = fake_appstore.refund(purchase["transaction_id"], notification_type="REFUND_REVERSED", deliver=False)
    assert jws_payload(refund["signed_payload"])["signedDate"] < jws_payload(reversal["signed_payload"])["signedDate"]
    # Delivered the other way round (a retry of the refund, or history recovery).
    assert api.post_notification(reversal["signed_payload"]).status_code == 200
    wait_processed(api, reversal["notification_uuid"])
    assert api.post_notification(refund["signed_payload"]).status_code == 200
    assert wait_processed(api, refund["notification_uuid"])["result"] == "superseded"
    assert api.order(order["trade_no"])["trade_status"] == "TRADE_SUCCESS"
    assert api.balance(user) == 100
    assert [h["reason"] for h in api.admin_order(order["trade_no"])["history"]] == ["created", "paid"]


def test_a_purchase_a_proof_showed_refunded_is_not_credited_by_an_older_proof(api, fake_appstore):
    # The report of a purchase was lost; Apple refunded it and its notification never came. A
    # restore then showed the refund (a proof with revocationDate: kept, ownerless, revoked).
    # The app's retry of the old proof, made before the refund, must not credit it: by report
    # or by receipt post.
    user = unique("known-refunded")
    order = api.create_order(user, GOLD)
    purchase = fake_appstore.purchase(GOLD, "consumable", app_account_token=order["app_account_token"])
    note = fake_appstore.refund(purchase["transaction_id"], deliver=False)
    refunded_proof = jws_payload(note["signed_payload"])["data"]["signedTransactionInfo"]
    assert jws_payload(refunded_proof).get("revocationDate")
    r = api.receipts(user_id=user, signed_transaction=refunded_proof)
    assert r.status_code == 200, r.text
    assert r.json()["transactions"][0]["status"] == "revoked"
    problem(api.report(order["trade_no"], signed_transaction=purchase["signed_transaction"]), 422,
            "transaction_revoked")
    r = api.receipts(user_id=user, signed_transaction=purchase["signed_transaction"])
    assert r.status_code == 200, r.text
    assert r.json()["transactions"][0]["status"] == "revoked"
    assert api.order(order["trade_no"])["trade_status"] == "WAIT_BUYER_PAY"
    assert api.balance(user) == 0


def test_a_refund_applied_while_its_purchase_is_being_reported_is_not_lost(api, fake_appstore, stack):
    # The report's settlement has recorded the transaction but not committed (held here at the
    # user's event sequence lock) when the refund is applied: it finds no transaction and defers.
    # The settlement's wake read the notification as pending, so it cannot wake it; the next
    # notification pass must, or the refund never takes anything back.
    user = unique("racing-refund")
    buy(api, fake_appstore, user, GOLD)  # the user's sequence row exists, to be locked
    order = api.create_order(user, GOLD)
    purchase = fake_appstore.purchase(GOLD, "consumable", app_account_token=order["app_account_token"])
    note = fake_appstore.refund(purchase["transaction_id"], deliver=False)
    pg = stack.db.server
    holder = subprocess.Popen(["psql", "-h", pg.host, "-p", str(pg.port), "-U", pg.user, "-d", stack.db.name,
                               "-X", "-q", "-v", "ON_ERROR_STOP=1"], stdin=subprocess.PIPE, text=True)
    reported = {}
    try:
        holder.stdin.write(f"BEGIN; SELECT 1 FROM user_event_sequences WHERE user_id = '{user}' FOR UPDATE;\n")
        holder.stdin.flush()
        wait_until(lambda: stack.db.scalar("SELECT count(*) FROM pg_stat_activity WHERE state = 'idle in transaction'"
                                           " AND query LIKE '%user_event_sequences%'") == "1", 10, "lock not held")
        reporter = threading.Thread(target=lambda: reported.setdefault(
            "r", api.report(order["trade_no"], signed_transaction=purchase["signed_transaction"])))
        reporter.start()
        wait_until(lambda: stack.db.scalar("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'")
                   != "0", 10, "the settlement never waited")
        assert api.post_notification(note["signed_payload"]).status_code == 200
        wait_processed(api, note["notification_uuid"], state="deferred")
    finally:
        holder.stdin.write("COMMIT;\n")
        holder.stdin.close()
        holder.wait(30)
    reporter.join(30)
    assert reported["r"].status_code == 200, reported["r"].text
    assert wait_for_order(api, order["trade_no"], "TRADE_CLOSED")["close_reason"] == "refunded"
    wait_processed(api, note["notification_uuid"])
    assert api.balance(user) == 100


def test_a_refund_reversed_restores_the_purchase(api, fake_appstore):
    user = unique("reversed")
    order, purchase, _ = buy(api, fake_appstore, user, GOLD)
    assert fake_appstore.refund(purchase["transaction_id"])["delivered_status"] == 200
    wait_for_order(api, order["trade_no"], "TRADE_CLOSED")
    assert api.balance(user) == 0
    note = fake_appstore.refund(purchase["transaction_id"], notification_type="REFUND_REVERSED")
    assert note["delivered_status"] == 200
    back = wait_for_order(api, order["trade_no"], "TRADE_SUCCESS")
    assert back.get("close_reason") is None
    assert api.balance(user) == 100
    reasons = [h["reason"] for h in api.admin_order(order["trade_no"])["history"]]
    assert reasons == ["created", "paid", "refunded", "refund_reversed"]


def test_a_revoked_non_consumable_is_no_longer_owned(api, fake_appstore):
    user = unique("revoke")
    order, purchase, _ = buy(api, fake_appstore, user, SWORD, type="non_consumable")
    assert api.entitlements(user)["non_consumables"] == [SWORD]
    note = fake_appstore.refund(purchase["transaction_id"], notification_type="REVOKE")
    assert note["delivered_status"] == 200
    closed = wait_for_order(api, order["trade_no"], "TRADE_CLOSED")
    assert closed["close_reason"] == "revoked"
    owned = api.entitlements(user)
    assert owned["non_consumables"] == [] and owned["entitlements"] == []


def test_a_refunded_subscription_ends_its_entitlement(api, fake_appstore):
    user = unique("sub-refund")
    order, purchase, _ = buy(api, fake_appstore, user, CLUB, type="auto_renewable", expires_in_seconds=3600)
    assert entitlement(api, user, "club")
    assert fake_appstore.refund(purchase["transaction_id"])["delivered_status"] == 200
    wait_until(lambda: entitlement(api, user, "club") is None, 15, "the refunded subscription is still active")
    assert api.order(order["trade_no"])["close_reason"] == "refunded"


# ---------------------------------------------------------------------------------------------
# Renewals and expiry


@pytest.mark.parametrize("kind", ["DID_RENEW", "SUBSCRIBED", "OFFER_REDEEMED"])
def test_a_renewal_nobody_reported_extends_the_subscription_of_the_original_user(api, fake_appstore, kind):
    user = unique("renew")
    order, purchase, _ = buy(api, fake_appstore, user, CLUB, type="auto_renewable", expires_in_seconds=120)
    first = entitlement(api, user, "club")
    assert parse_ms(first["expires_at"]) == jws_payload(purchase["signed_transaction"])["expiresDate"]

    note = fake_appstore.renewal(purchase["transaction_id"], expires_in_seconds=30 * 86400, notification_type=kind)
    assert note["delivered_status"] == 200, note
    renewed = jws_payload(note["signed_transaction"])
    assert renewed["originalTransactionId"] == purchase["original_transaction_id"]
    assert renewed["transactionId"] != purchase["transaction_id"]
    wait_until(lambda: (lambda e: e and parse_ms(e["expires_at"]) == renewed["expiresDate"])(
        entitlement(api, user, "club")), 15, "the renewal did not extend the entitlement to Apple's expiresDate")

    orders = api.admin_orders(user_id=user)
    assert len(orders) == 2
    renewal = [o for o in orders if o["trade_no"] != order["trade_no"]][0]
    assert renewal["origin"] == "renewal"
    assert renewal["trade_status"] == "TRADE_SUCCESS"
    assert renewal["transaction_id"] == renewed["transactionId"]
    # Delivered again: nothing more happens.
    assert api.post_notification(note["signed_payload"]).status_code == 200
    assert len(api.admin_orders(user_id=user)) == 2


def test_a_renewal_another_user_posted_first_is_credited_to_the_subscriber_by_its_notification(
        api, fake_appstore):
    # Another user posts the renewal first: told it is not theirs, it is kept without an owner.
    # The DID_RENEW that follows still gives the period to the subscriber, on an order of its own.
    user, other = unique("renew"), unique("poster")
    order, purchase, _ = buy(api, fake_appstore, user, CLUB, type="auto_renewable", expires_in_seconds=120)
    note = fake_appstore.renewal(purchase["transaction_id"], expires_in_seconds=30 * 86400, deliver=False)
    renewed = jws_payload(note["signed_transaction"])
    stolen = api.receipts(user_id=other, signed_transaction=note["signed_transaction"])
    assert stolen.status_code == 409 and stolen.json()["code"] == "purchase_not_yours", stolen.text

    assert api.post_notification(note["signed_payload"]).status_code == 200
    wait_until(lambda: (lambda e: e and parse_ms(e["expires_at"]) == renewed["expiresDate"])(
        entitlement(api, user, "club")), 15, "the renewal did not extend the subscriber's entitlement")
    orders = api.admin_orders(user_id=user)
    assert len(orders) == 2
    renewal = [o for o in orders if o["trade_no"] != order["trade_no"]][0]
    assert (renewal["origin"], renewal["trade_status"]) == ("renewal", "TRADE_SUCCESS")
    assert renewal["transaction_id"] == renewed["transactionId"]
    assert api.entitlements(other)["entitlements"] == []
    assert api.admin_orders(user_id=other) == []


def test_a_renewal_applied_while_an_admin_transfers_the_subscription_is_the_new_owners(
        api, fake_appstore, stack, module_launcher):
    # The renewal read the subscriber (the owner of the latest period) without waiting for the
    # transfer that held that row, and credited the old owner once the transfer committed: the
    # renewal was then the latest period, and every later one followed it to the old owner.
    old, new = unique("renew-moving"), unique("renew-moved")
    _, purchase, _ = buy(api, fake_appstore, old, CLUB, type="auto_renewable", expires_in_seconds=3600)
    note = fake_appstore.renewal(purchase["transaction_id"], expires_in_seconds=30 * 86400, deliver=False)
    renewed = jws_payload(note["signed_transaction"])
    other = module_launcher.storekeeper(stack.db, fake=fake_appstore, share_admin_with=stack.sk).client
    db = stack.db

    def waiting() -> int:
        return int(db.scalar("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                             "AND datname = current_database()"))

    with ThreadPoolExecutor(max_workers=2) as pool:
        # The transfer has moved the purchase and waits to write its audit row, its last.
        with db.holding("LOCK TABLE admin_audit IN EXCLUSIVE MODE"):
            moved = pool.submit(api.post, f"/admin/v1/transactions/{purchase['transaction_id']}/transfer",
                                admin=True, json={"to_user_id": new})
            wait_until(lambda: waiting() == 1, 30, "the transfer never waited for its audit row")
            posted = pool.submit(other.post_notification, note["signed_payload"])
            wait_until(lambda: waiting() >= 2, 30, "the renewal never waited for the transfer")
        assert moved.result(timeout=30).status_code == 200
        assert posted.result(timeout=30).status_code == 200
    wait_processed(api, note["notification_uuid"])
    assert db.scalar(f"SELECT user_id FROM apple_transactions "
                     f"WHERE transaction_id = '{renewed['transactionId']}'") == new
    assert parse_ms(entitlement(api, new, "club")["expires_at"]) == renewed["expiresDate"]
    assert api.entitlements(old)["entitlements"] == []


def test_an_upgrade_nobody_reported_grants_the_new_product_and_ends_the_old_period(api, fake_appstore):
    # Apple starts an upgrade at once and refunds the rest of the old period: the old product's
    # entitlement ends when the new period begins, although its own expiresDate is weeks away.
    user = unique("upgrade")
    order, purchase, _ = buy(api, fake_appstore, user, CLUB, type="auto_renewable", expires_in_seconds=20 * 86400)
    assert entitlement(api, user, "club")

    note = fake_appstore.renewal(purchase["transaction_id"], product_id=CLUB_PLUS, expires_in_seconds=30 * 86400)
    assert note["delivered_status"] == 200, note
    assert jws_payload(note["signed_payload"])["subtype"] == "UPGRADE"
    upgrade = jws_payload(note["signed_transaction"])
    assert (upgrade["productId"], upgrade["originalTransactionId"]) == (CLUB_PLUS, purchase["original_transaction_id"])
    assert jws_payload(fake_appstore.transaction(purchase["transaction_id"])["signed_transaction"])["isUpgraded"] is True
    wait_processed(api, note["notification_uuid"])

    plus = entitlement(api, user, "club_plus")
    assert plus and parse_ms(plus["expires_at"]) == upgrade["expiresDate"], plus
    assert entitlement(api, user, "club") is None, "the period upgraded from still grants access"
    orders = api.admin_orders(user_id=user)
    assert len(orders) == 2
    new = [o for o in orders if o["trade_no"] != order["trade_no"]][0]
    assert (new["product_id"], new["origin"], new["trade_status"]) == (CLUB_PLUS, "renewal", "TRADE_SUCCESS")
    # The user's latest event carries the same state as the entitlements view.
    def latest_state():
        r = api.get("/admin/v1/events", admin=True, params={"user_id": user, "limit": 200})
        assert r.status_code == 200, r.text
        events = r.json()["events"]
        return events and events[-1]["user_state"] == api.entitlements(user) and events[-1]["user_state"]
    state = wait_until(latest_state, 15, "the feed's latest event does not show the upgrade")
    assert [e["entitlement"] for e in state["entitlements"]] == ["club_plus"]


def test_an_upgrade_the_app_reports_ends_the_old_period(api, fake_appstore):
    user = unique("upgrade-report")
    _, purchase, _ = buy(api, fake_appstore, user, CLUB, type="auto_renewable", expires_in_seconds=20 * 86400)
    # The app buys the upgrade with a new order's token, as StoreKit's purchase(options:) passes it.
    order = api.create_order(user, CLUB_PLUS)
    note = fake_appstore.renewal(purchase["transaction_id"], product_id=CLUB_PLUS, expires_in_seconds=30 * 86400,
                                 deliver=False, app_account_token=order["app_account_token"])
    r = api.report(order["trade_no"], signed_transaction=note["signed_transaction"])
    assert r.status_code == 200, r.text
    assert entitlement(api, user, "club") is None, "the period upgraded from still grants access"
    assert entitlement(api, user, "club_plus")
    # Delivered after the report: the same period, nothing more.
    assert api.post_notification(note["signed_payload"]).status_code == 200
    wait_processed(api, note["notification_uuid"])
    assert len(api.admin_orders(user_id=user)) == 2


def assert_the_upgrade_paid_the_apps_order(api, user, order, note):
    """The app's order for the upgrade is paid by it, its report is answered 200, and the user
    holds the new product alone, on the two orders the app made."""
    assert api.order(order["trade_no"])["trade_status"] == "TRADE_SUCCESS"
    r = api.report(order["trade_no"], signed_transaction=note["signed_transaction"])
    assert r.status_code == 200, r.text
    assert entitlement(api, user, "club_plus") and entitlement(api, user, "club") is None
    orders = api.admin_orders(user_id=user)
    assert sorted(o["origin"] for o in orders) == ["order", "order"], orders
    assert all(o["trade_status"] == "TRADE_SUCCESS" for o in orders)


def test_an_upgrade_notified_before_the_apps_report_pays_the_apps_own_order(api, fake_appstore):
    # Apple's UPGRADE comes first: it pays the order the app made for the upgrade (its token is
    # in the transaction), so the report that follows is answered as settled, not refused as a
    # purchase a renewal order took.
    user = unique("upgrade-notified")
    _, purchase, _ = buy(api, fake_appstore, user, CLUB, type="auto_renewable", expires_in_seconds=20 * 86400)
    order = api.create_order(user, CLUB_PLUS)
    note = fake_appstore.renewal(purchase["transaction_id"], product_id=CLUB_PLUS, expires_in_seconds=30 * 86400,
                                 app_account_token=order["app_account_token"])
    assert note["delivered_status"] == 200, note
    wait_processed(api, note["notification_uuid"])
    assert_the_upgrade_paid_the_apps_order(api, user, order, note)


def test_an_upgrade_restored_before_the_apps_report_pays_the_apps_own_order(api, fake_appstore):
    # The app posts the upgrade to /v1/receipts (a restore, a Transaction.updates listener)
    # before its report: the purchase pays the order the app made for it (its token is in the
    # transaction), as the notification would, not a renewal order that leaves the app's order
    # unpaid and its report refused 409.
    user = unique("upgrade-restored")
    _, purchase, _ = buy(api, fake_appstore, user, CLUB, type="auto_renewable", expires_in_seconds=20 * 86400)
    order = api.create_order(user, CLUB_PLUS)
    note = fake_appstore.renewal(purchase["transaction_id"], product_id=CLUB_PLUS, expires_in_seconds=30 * 86400,
                                 deliver=False, app_account_token=order["app_account_token"])
    r = api.receipts(user_id=user, signed_transaction=note["signed_transaction"])
    assert r.status_code == 200, r.text
    assert [(t["status"], t["trade_no"]) for t in r.json()["transactions"]] == [("settled", order["trade_no"])]
    r = api.report(order["trade_no"], signed_transaction=note["signed_transaction"])
    assert r.status_code == 200, r.text
    orders = api.admin_orders(user_id=user)
    assert sorted(o["origin"] for o in orders) == ["order", "order"], orders
    assert all(o["trade_status"] == "TRADE_SUCCESS" for o in orders)


@pytest.mark.parametrize("first_heard", ["notification", "restore"])
def test_a_tokenless_upgrade_pays_the_apps_own_order_whoever_comes_first(api, fake_appstore, stack, first_heard):
    # Seed 004's client sets no token on any purchase. Its upgrade reaches Storekeeper first
    # through Apple's UPGRADE or a restore: it still pays the order the app made for it (the
    # subscriber's unpaid order for the new product), so the app's report is answered 200, not
    # 409 for a purchase a renewal order took. A plain renewal pays no such order.
    user = unique(f"upgrade-tokenless-{first_heard}")
    first_order = api.create_order(user, CLUB)
    purchase = fake_appstore.purchase(CLUB, "auto_renewable", expires_in_seconds=20 * 86400)
    assert api.report(first_order["trade_no"], signed_transaction=purchase["signed_transaction"]).status_code == 200
    order = api.create_order(user, CLUB_PLUS)
    note = fake_appstore.renewal(purchase["transaction_id"], product_id=CLUB_PLUS, expires_in_seconds=30 * 86400,
                                 deliver=first_heard == "notification")
    assert jws_payload(note["signed_transaction"]).get("appAccountToken") is None
    if first_heard == "notification":
        assert note["delivered_status"] == 200, note
        wait_processed(api, note["notification_uuid"])
    else:
        r = api.receipts(user_id=user, signed_transaction=note["signed_transaction"])
        assert [(t["status"], t["trade_no"]) for t in r.json()["transactions"]] == [("settled", order["trade_no"])]
    assert_the_upgrade_paid_the_apps_order(api, user, order, note)

    # The next period of CLUB_PLUS is Apple's renewal: an order of its own, not another
    # unpaid order the app made for the product, nor one the app cancelled; even after a lapse
    # (a billing retry that recovered), which nothing tells from a resubscription.
    stack.db.rows("UPDATE apple_transactions SET expires_date = now() - interval '1 hour' "
                  f"WHERE transaction_id = '{jws_payload(note['signed_transaction'])['transactionId']}'")
    cancelled = api.create_order(user, CLUB_PLUS)
    r = api.report(cancelled["trade_no"], trade_status="TRADE_CLOSED", reason="cancelled")
    assert r.status_code == 200, r.text
    stale = api.create_order(user, CLUB_PLUS)
    renewal = fake_appstore.renewal(purchase["transaction_id"], product_id=CLUB_PLUS,
                                    expires_in_seconds=60 * 86400)
    assert renewal["delivered_status"] == 200, renewal
    wait_processed(api, renewal["notification_uuid"])
    assert api.order(stale["trade_no"])["trade_status"] == "WAIT_BUYER_PAY"
    assert api.order(cancelled["trade_no"])["trade_status"] == "TRADE_CLOSED"
    assert sorted(o["origin"] for o in api.admin_orders(user_id=user)) == ["order"] * 4 + ["renewal"]


@pytest.mark.parametrize("notification_type", ["SUBSCRIBED", "OFFER_REDEEMED"])
def test_a_first_subscription_apple_announces_pays_the_order_whose_token_it_carries(api, fake_appstore,
                                                                                  notification_type):
    # The app's report never comes (it crashed after StoreKit's purchase): Apple's INITIAL_BUY
    # names the order by its token, so it pays it, as ONE_TIME_CHARGE does for a consumable,
    # and the subscriber has access without the app. The report that follows is answered 200.
    user = unique(f"initial-buy-{notification_type.lower()}")
    order = api.create_order(user, CLUB)
    purchase = fake_appstore.purchase(CLUB, "auto_renewable", app_account_token=order["app_account_token"],
                                      expires_in_seconds=20 * 86400)
    note = fake_appstore.notification(notification_type, subtype="INITIAL_BUY",
                                      transaction_id=purchase["transaction_id"])
    assert note["delivered_status"] == 200, note
    assert wait_processed(api, note["notification_uuid"])["result"] == "renewal_recorded"
    assert api.order(order["trade_no"])["trade_status"] == "TRADE_SUCCESS"
    assert entitlement(api, user, "club")
    r = api.report(order["trade_no"], signed_transaction=purchase["signed_transaction"])
    assert r.status_code == 200, r.text
    assert r.json()["delivery"]["newly_granted"] is False
    # Its renewals now have a subscriber.
    renewal = fake_appstore.renewal(purchase["transaction_id"], expires_in_seconds=50 * 86400)
    assert renewal["delivered_status"] == 200, renewal
    wait_processed(api, renewal["notification_uuid"])
    assert sorted(o["origin"] for o in api.admin_orders(user_id=user)) == ["order", "renewal"]


def test_a_first_subscription_apple_announces_without_an_orders_token_waits_for_its_report(api, fake_appstore):
    # No token, or the token of an order for another product: nothing says whose it is, so
    # the notification waits for the report that makes the purchase known.
    user = unique("initial-buy-unnamed")
    other = api.create_order(user, GOLD)
    order = api.create_order(user, CLUB)
    mismatched = fake_appstore.purchase(CLUB, "auto_renewable", app_account_token=other["app_account_token"])
    tokenless = fake_appstore.purchase(CLUB, "auto_renewable")
    for purchase in (mismatched, tokenless):
        note = fake_appstore.notification("SUBSCRIBED", subtype="INITIAL_BUY", transaction_id=purchase["transaction_id"])
        assert note["delivered_status"] == 200, note
        wait_processed(api, note["notification_uuid"], state="deferred")
    assert api.order(other["trade_no"])["trade_status"] == "WAIT_BUYER_PAY"
    assert api.order(order["trade_no"])["trade_status"] == "WAIT_BUYER_PAY"
    assert entitlement(api, user, "club") is None


@pytest.mark.parametrize("first_heard", ["notification", "report"])
def test_a_tokenless_resubscription_pays_the_apps_own_order_whoever_comes_first(api, fake_appstore, stack,
                                                                               first_heard):
    # Seed 004's client sets no token: after a lapse its subscriber buys the plan again in the
    # app. When Apple's SUBSCRIBED (RESUBSCRIBE) comes before the app's report, Apple says the
    # subscriber chose this period, so it pays the order the app made for it, and the report
    # is answered 200 rather than 409 for a purchase a renewal order took.
    user = unique(f"resubscribe-tokenless-{first_heard}")
    first_order = api.create_order(user, CLUB)
    purchase = fake_appstore.purchase(CLUB, "auto_renewable", expires_in_seconds=20 * 86400)
    assert api.report(first_order["trade_no"], signed_transaction=purchase["signed_transaction"]).status_code == 200
    stack.db.rows("UPDATE apple_transactions SET expires_date = now() - interval '1 hour' "
                  f"WHERE transaction_id = '{purchase['transaction_id']}'")
    assert entitlement(api, user, "club") is None
    # The paywall opened and left without a word, then opened again and bought: the order of
    # the visit that bought is the one paid, and the app's report of it is answered 200.
    abandoned = api.create_order(user, CLUB)
    order = api.create_order(user, CLUB)
    note = fake_appstore.renewal(purchase["transaction_id"], notification_type="SUBSCRIBED",
                                 expires_in_seconds=30 * 86400, deliver=first_heard == "notification")
    assert jws_payload(note["signed_transaction"]).get("appAccountToken") is None
    assert jws_payload(note["signed_payload"])["subtype"] == "RESUBSCRIBE"
    if first_heard == "notification":
        assert note["delivered_status"] == 200, note
        wait_processed(api, note["notification_uuid"])
        assert api.order(order["trade_no"])["trade_status"] == "TRADE_SUCCESS"
    r = api.report(order["trade_no"], signed_transaction=note["signed_transaction"])
    assert r.status_code == 200, r.text
    if first_heard == "report":
        assert api.post_notification(note["signed_payload"]).status_code == 200
        wait_processed(api, note["notification_uuid"])
    assert entitlement(api, user, "club")
    assert api.order(abandoned["trade_no"])["trade_status"] == "WAIT_BUYER_PAY"
    orders = api.admin_orders(user_id=user)
    assert sorted((o["origin"], o["trade_status"]) for o in orders) == \
        [("order", "TRADE_SUCCESS")] * 2 + [("order", "WAIT_BUYER_PAY")], orders


@pytest.mark.parametrize("first_heard", ["notification", "report"])
def test_a_resubscription_carrying_the_first_orders_token_pays_the_apps_own_order_whoever_comes_first(
        api, fake_appstore, stack, first_heard):
    # The token-bearing twin of the test above (audit storekit2, finding 1). Apple's periods of
    # one subscription carry the token of the purchase that began it, so a StoreKit 2 app's
    # resubscription, reported on the order the app made for it, carries the first order's
    # token. It was 422 account_token_mismatch and nothing was recorded: the paying subscriber
    # had no access until SUBSCRIBED came, and the app was told the purchase failed.
    user = unique(f"resubscribe-token-{first_heard}")
    first_order, purchase, _ = buy(api, fake_appstore, user, CLUB, type="auto_renewable",
                                   expires_in_seconds=20 * 86400)
    stack.db.rows("UPDATE apple_transactions SET expires_date = now() - interval '1 hour' "
                  f"WHERE transaction_id = '{purchase['transaction_id']}'")
    assert entitlement(api, user, "club") is None
    abandoned = api.create_order(user, CLUB)
    order = api.create_order(user, CLUB)
    note = fake_appstore.renewal(purchase["transaction_id"], notification_type="SUBSCRIBED",
                                 expires_in_seconds=30 * 86400, deliver=first_heard == "notification")
    period = jws_payload(note["signed_transaction"])
    assert period["appAccountToken"].lower() == first_order["app_account_token"].lower()
    if first_heard == "notification":
        assert note["delivered_status"] == 200, note
        wait_processed(api, note["notification_uuid"])
        assert api.order(order["trade_no"])["trade_status"] == "TRADE_SUCCESS"
    for attempt in range(2):
        r = api.report(order["trade_no"], signed_transaction=note["signed_transaction"])
        assert r.status_code == 200, r.text
        assert r.json()["order"]["trade_no"] == order["trade_no"]
        assert r.json()["delivery"]["newly_granted"] is (first_heard == "report" and attempt == 0)
        assert entitlement(api, user, "club")
    if first_heard == "report":
        assert stack.db.rows("SELECT trade_no FROM apple_transactions "
                             f"WHERE transaction_id = '{period['transactionId']}'") == [[order["trade_no"]]]
        assert api.post_notification(note["signed_payload"]).status_code == 200
        wait_processed(api, note["notification_uuid"])
    assert api.order(abandoned["trade_no"])["trade_status"] == "WAIT_BUYER_PAY"
    orders = api.admin_orders(user_id=user)
    assert sorted((o["origin"], o["trade_status"]) for o in orders) == \
        [("order", "TRADE_SUCCESS")] * 2 + [("order", "WAIT_BUYER_PAY")], orders


def test_a_lost_renewal_reported_on_a_fresh_order_of_its_subscriber_extends_their_access(
        api, fake_appstore, stack):
    # DID_RENEW is lost; the app's Transaction.updates handler makes an order and reports the
    # renewal on it. The renewal is the subscriber's own (it carries their first order's token),
    # so it is credited on an order of its own, as DID_RENEW would, and the answer is that
    # order. Before, this was 422 account_token_mismatch and the entitlement kept its old
    # expiry. Another user's report of it is still refused.
    user, stranger = unique("renewal-fresh-order"), unique("renewal-fresh-order-other")
    first_order, purchase, _ = buy(api, fake_appstore, user, CLUB, type="auto_renewable",
                                   expires_in_seconds=3600)
    note = fake_appstore.renewal(purchase["transaction_id"], expires_in_seconds=40 * 86400, deliver=False)
    renewed = jws_payload(note["signed_transaction"])
    assert renewed["appAccountToken"].lower() == first_order["app_account_token"].lower()
    fresh = api.create_order(user, CLUB)
    held = None
    for attempt in range(2):
        r = api.report(fresh["trade_no"], signed_transaction=note["signed_transaction"])
        assert r.status_code == 200, r.text
        held = held or r.json()["order"]
        assert r.json()["order"] == held
        assert (held["origin"], held["transaction_id"]) == ("renewal", renewed["transactionId"])
        assert r.json()["delivery"]["newly_granted"] is (attempt == 0)
    assert parse_ms(entitlement(api, user, "club")["expires_at"]) == renewed["expiresDate"]
    assert api.order(fresh["trade_no"])["trade_status"] == "WAIT_BUYER_PAY"

    theirs = api.create_order(stranger, CLUB)
    problem(api.report(theirs["trade_no"], signed_transaction=note["signed_transaction"]), 409,
            "purchase_not_yours")
    assert api.order(theirs["trade_no"])["trade_status"] == "WAIT_BUYER_PAY"
    assert api.entitlements(stranger)["entitlements"] == []

    # The late DID_RENEW finds it credited and credits nothing again.
    assert api.post_notification(note["signed_payload"]).status_code == 200
    wait_processed(api, note["notification_uuid"])
    assert len(api.admin_orders(user_id=user)) == 3
    assert parse_ms(entitlement(api, user, "club")["expires_at"]) == renewed["expiresDate"]


@pytest.mark.parametrize("bought", ["sword_for_an_order", "sword_without_a_token", "club_for_an_order"])
def test_buying_again_what_the_user_owns_is_answered_with_the_order_that_holds_it(
        api, fake_appstore, stack, bought):
    # StoreKit answers the paywall's purchase of something owned (a non-consumable, an active
    # subscription) with the existing transaction, which the app reports on the order it just
    # made. It is the user's already: the answer is the order that holds it, granting nothing
    # again, as a repeat of its report is answered (it was 422 account_token_mismatch, or 409
    # transaction_already_used without a token). Another user's report of it is refused as ever.
    user, stranger = unique("rebuy"), unique("rebuy-other")
    product, kind, name = (CLUB, "auto_renewable", "club") if bought.startswith("club") else \
        (SWORD, "non_consumable", "sword")
    if bought.endswith("without_a_token"):
        purchase = fake_appstore.purchase(product, kind)
        restored = api.receipts(user_id=user, signed_transaction=purchase["signed_transaction"])
        assert restored.status_code == 200, restored.text
        holder = restored.json()["transactions"][0]["trade_no"]
    else:
        first, purchase, _ = buy(api, fake_appstore, user, product, type=kind,
                                 expires_in_seconds=3600 if kind == "auto_renewable" else None)
        holder = first["trade_no"]
    credited = stack.db.scalar(f"SELECT count(*) FROM ledger WHERE transaction_id = '{purchase['transaction_id']}'")
    again = api.create_order(user, product)
    for _ in range(2):
        r = api.report(again["trade_no"], signed_transaction=purchase["signed_transaction"])
        assert r.status_code == 200, r.text
        assert r.json()["order"]["trade_no"] == holder
        assert r.json()["delivery"]["newly_granted"] is False
    assert api.order(again["trade_no"])["trade_status"] == "WAIT_BUYER_PAY"
    assert entitlement(api, user, name)
    assert [o["trade_status"] for o in api.admin_orders(user_id=user)].count("TRADE_SUCCESS") == 1
    assert stack.db.scalar(
        f"SELECT count(*) FROM ledger WHERE transaction_id = '{purchase['transaction_id']}'") == credited

    theirs = api.create_order(stranger, product)
    r = api.report(theirs["trade_no"], signed_transaction=purchase["signed_transaction"])
    if bought.endswith("without_a_token"):
        problem(r, 409, "transaction_already_used")
    else:
        problem(r, 422, "account_token_mismatch")
    assert api.order(theirs["trade_no"])["trade_status"] == "WAIT_BUYER_PAY"
    assert api.entitlements(stranger)["entitlements"] == []


def test_turning_renewal_off_and_on_is_told_to_the_subscribers_backend(api, fake_appstore):
    # A voluntary cancellation is when a win-back flow starts: the backend hears it then, not
    # at EXPIRED a month later. Access does not change, and an older change Apple retries late
    # says nothing.
    user = unique("auto-renew")
    _, purchase, _ = buy(api, fake_appstore, user, CLUB, type="auto_renewable", expires_in_seconds=20 * 86400)
    before = entitlement(api, user, "club")
    off = fake_appstore.notification("DID_CHANGE_RENEWAL_STATUS", subtype="AUTO_RENEW_DISABLED",
                                     transaction_id=purchase["transaction_id"])
    assert wait_processed(api, off["notification_uuid"])["result"] == "auto_renew_changed"
    late = fake_appstore.notification("DID_CHANGE_RENEWAL_STATUS", subtype="AUTO_RENEW_DISABLED",
                                      transaction_id=purchase["transaction_id"], deliver=False)
    time.sleep(0.01)
    on = fake_appstore.notification("DID_CHANGE_RENEWAL_STATUS", subtype="AUTO_RENEW_ENABLED",
                                    transaction_id=purchase["transaction_id"])
    assert wait_processed(api, on["notification_uuid"])["result"] == "auto_renew_changed"
    assert api.post_notification(late["signed_payload"]).status_code == 200  # Apple's retry
    assert wait_processed(api, late["notification_uuid"])["result"] == "superseded"
    assert entitlement(api, user, "club") == before
    r = api.get("/admin/v1/events", admin=True, params={"user_id": user})
    changes = [e["data"] for e in r.json()["events"] if e["type"] == "subscription.auto_renew_changed"]
    assert [(c["auto_renew"], c["notification_uuid"], c["original_transaction_id"]) for c in changes] == [
        (False, off["notification_uuid"], purchase["transaction_id"]),
        (True, on["notification_uuid"], purchase["transaction_id"])], changes


def test_a_cancellation_delivered_after_the_customer_resubscribed_is_not_told(api, fake_appstore):
    # Apple signed AUTO_RENEW_DISABLED, then the expiry and a resubscription; its retry comes
    # last. Telling the backend then that the customer cancelled would start a win-back flow
    # for someone who just paid.
    user = unique("auto-renew-late")
    _, purchase, _ = buy(api, fake_appstore, user, CLUB, type="auto_renewable", expires_in_seconds=3600)
    off = fake_appstore.notification("DID_CHANGE_RENEWAL_STATUS", subtype="AUTO_RENEW_DISABLED",
                                     transaction_id=purchase["transaction_id"], deliver=False)
    time.sleep(0.01)
    expired = fake_appstore.notification("EXPIRED", subtype="VOLUNTARY", transaction_id=purchase["transaction_id"])
    wait_processed(api, expired["notification_uuid"])
    time.sleep(0.01)
    again = fake_appstore.renewal(purchase["transaction_id"], expires_in_seconds=30 * 86400,
                                  notification_type="SUBSCRIBED")
    wait_processed(api, again["notification_uuid"])
    assert api.post_notification(off["signed_payload"]).status_code == 200  # Apple's retry
    assert wait_processed(api, off["notification_uuid"])["result"] == "superseded"
    r = api.get("/admin/v1/events", admin=True, params={"user_id": user})
    assert [e for e in r.json()["events"] if e["type"] == "subscription.auto_renew_changed"] == []
    assert entitlement(api, user, "club") is not None


def test_a_grace_period_after_an_upgrade_to_a_shorter_plan_keeps_access(api, fake_appstore):
    # A yearly plan upgraded to a monthly one: the year it replaced ends where the month
    # began, so its own far expiry takes no grace period away from the month.
    user = unique("upgrade-grace")
    _, purchase, _ = buy(api, fake_appstore, user, CLUB, type="auto_renewable", expires_in_seconds=300 * 86400)
    note = fake_appstore.renewal(purchase["transaction_id"], product_id=CLUB_PLUS, expires_in_seconds=3600)
    assert note["delivered_status"] == 200, note
    wait_processed(api, note["notification_uuid"])
    upgrade = jws_payload(note["signed_transaction"])
    grace = fake_appstore.notification("DID_FAIL_TO_RENEW", subtype="GRACE_PERIOD",
                                       transaction_id=upgrade["transactionId"],
                                       grace_period_expires_in_seconds=6 * 86400)
    assert grace["delivered_status"] == 200, grace
    wait_processed(api, grace["notification_uuid"])
    until = jws_payload(jws_payload(grace["signed_payload"])["data"]["signedRenewalInfo"])["gracePeriodExpiresDate"]
    plus = entitlement(api, user, "club_plus")
    assert plus and parse_ms(plus["expires_at"]) == until, plus
    assert entitlement(api, user, "club") is None


def test_a_period_apple_signs_as_upgraded_from_pays_its_order_and_grants_nothing(api, fake_appstore):
    # The upgrade is bought before the old purchase is reported (its report lost, retried
    # later): Apple now signs the old period isUpgraded, which StoreKit leaves out of the
    # current entitlements. Its order is paid; its product's entitlement is not granted.
    user = unique("upgraded-from")
    order = api.create_order(user, CLUB)
    purchase = fake_appstore.purchase(CLUB, "auto_renewable", app_account_token=order["app_account_token"],
                                      expires_in_seconds=20 * 86400)
    fake_appstore.renewal(purchase["transaction_id"], product_id=CLUB_PLUS, deliver=False)
    old = fake_appstore.transaction(purchase["transaction_id"])["signed_transaction"]
    assert jws_payload(old)["isUpgraded"] is True
    r = api.report(order["trade_no"], signed_transaction=old)
    assert r.status_code == 200, r.text
    assert api.order(order["trade_no"])["trade_status"] == "TRADE_SUCCESS"
    assert entitlement(api, user, "club") is None, "a period upgraded from grants access"


def test_a_renewal_notice_signed_before_an_extension_but_delivered_after_it_keeps_the_extension(
        api, fake_appstore):
    # A DID_RENEW whose first delivery failed comes back (Apple's retry) after the period was
    # extended: it is older news and must not move the period's end back.
    user = unique("extended")
    _, purchase, _ = buy(api, fake_appstore, user, CLUB, type="auto_renewable", expires_in_seconds=3600)
    renewal = fake_appstore.renewal(purchase["transaction_id"], expires_in_seconds=30 * 86400)
    assert renewal["delivered_status"] == 200, renewal
    renewed = jws_payload(renewal["signed_transaction"])
    wait_processed(api, renewal["notification_uuid"])
    late = fake_appstore.notification("DID_RENEW", transaction_id=renewed["transactionId"], deliver=False)
    fake_appstore.call("/fake/v1/subscriptions/state",
                       {"transaction_id": renewed["transactionId"], "expires_in_seconds": 40 * 86400})
    extended = fake_appstore.notification("RENEWAL_EXTENDED", transaction_id=renewed["transactionId"])
    assert extended["delivered_status"] == 200, extended
    until = jws_payload(extended["signed_transaction"])["expiresDate"]
    assert until > renewed["expiresDate"]
    wait_until(lambda: (lambda e: e and parse_ms(e["expires_at"]) == until)(entitlement(api, user, "club")), 15,
               "the extension was not applied")
    assert api.post_notification(late["signed_payload"]).status_code == 200
    wait_processed(api, late["notification_uuid"])
    assert parse_ms(entitlement(api, user, "club")["expires_at"]) == until, "a late renewal notice shortened access"


def test_an_extended_period_still_charts_the_month_its_price_paid_for(api, fake_appstore):
    # MRR divides a price by the months it paid for: a renewal-date extension is free time, so
    # a monthly plan extended by 40 days is still one month's price, not half of it.
    product = P + unique("club.extended").replace("-", "_")
    api.put_product(product, type="auto_renewable", grants={"entitlement": "club"})
    user = unique("extended-mrr")
    _, purchase, _ = buy(api, fake_appstore, user, product, type="auto_renewable")
    fake_appstore.call("/fake/v1/subscriptions/state",
                       {"transaction_id": purchase["transaction_id"], "expires_in_seconds": 70 * 86400})
    extended = fake_appstore.notification("RENEWAL_EXTENDED", transaction_id=purchase["transaction_id"])
    assert extended["delivered_status"] == 200, extended
    wait_processed(api, extended["notification_uuid"])
    today = datetime.utcnow().date().isoformat()
    r = api.get("/admin/v1/charts/mrr", admin=True,
                params={"from": today, "to": today, "product": product, "source": "transactions"})
    assert r.status_code == 200, r.text
    assert [(row["currency"], row["mrr"]) for row in r.json()["rows"]] == [("USD", "6")], r.json()


def test_expired_follows_apples_dates(api, fake_appstore):
    user = unique("expired")
    _, purchase, _ = buy(api, fake_appstore, user, CLUB, type="auto_renewable", expires_in_seconds=3600)
    assert entitlement(api, user, "club")
    note = fake_appstore.notification("EXPIRED", subtype="VOLUNTARY", transaction_id=purchase["transaction_id"])
    assert note["delivered_status"] == 200, note
    wait_processed(api, note["notification_uuid"])
    wait_until(lambda: entitlement(api, user, "club") is None, 15, "the expired subscription is still active")


def test_a_grace_period_keeps_access_until_apples_grace_date_then_it_ends(api, fake_appstore):
    user = unique("grace")
    _, purchase, _ = buy(api, fake_appstore, user, CLUB, type="auto_renewable", expires_in_seconds=3600)
    note = fake_appstore.notification("DID_FAIL_TO_RENEW", subtype="GRACE_PERIOD",
                                      transaction_id=purchase["transaction_id"],
                                      grace_period_expires_in_seconds=6 * 86400)
    assert note["delivered_status"] == 200, note
    renewal_info = jws_payload(jws_payload(note["signed_payload"])["data"]["signedRenewalInfo"])
    grace_ms = renewal_info["gracePeriodExpiresDate"]
    wait_until(lambda: (lambda e: e and parse_ms(e["expires_at"]) == grace_ms)(entitlement(api, user, "club")), 15,
               "access does not last until Apple's gracePeriodExpiresDate")

    note = fake_appstore.notification("GRACE_PERIOD_EXPIRED", transaction_id=purchase["transaction_id"])
    assert note["delivered_status"] == 200
    wait_until(lambda: entitlement(api, user, "club") is None, 15, "access outlived the grace period")


def test_a_grace_period_extends_only_the_latest_period_and_ends_with_its_refund(api, fake_appstore):
    # A month-old first period, a renewal that ended an hour ago, then Apple's grace period: the
    # grace is the renewal's. Refunding that renewal ends it; the first period stays ended.
    user = unique("grace-refund")
    _, purchase, _ = buy(api, fake_appstore, user, CLUB, type="auto_renewable",
                         expires_in_seconds=-30 * 86400)
    assert entitlement(api, user, "club") is None
    renewal = fake_appstore.renewal(purchase["transaction_id"], expires_in_seconds=-3600)
    renewed = jws_payload(renewal["signed_transaction"])
    wait_processed(api, renewal["notification_uuid"])
    assert entitlement(api, user, "club") is None
    note = fake_appstore.notification("DID_FAIL_TO_RENEW", subtype="GRACE_PERIOD",
                                      transaction_id=renewed["transactionId"],
                                      grace_period_expires_in_seconds=14 * 86400)
    assert note["delivered_status"] == 200, note
    wait_until(lambda: entitlement(api, user, "club") is not None, 15, "the grace period did not grant access")
    refund = fake_appstore.notification("REFUND", transaction_id=renewed["transactionId"])
    assert refund["delivered_status"] == 200, refund
    wait_processed(api, refund["notification_uuid"])
    assert entitlement(api, user, "club") is None, "a refunded period's grace still grants access"


def test_the_days_in_a_grace_period_stay_active_in_the_charts_after_it_ends(api, fake_appstore):
    # Bought 10 days ago, expired 5 days ago, then a grace period Apple ends today: the days in
    # grace were days of access, and the charts' history keeps them once the grace is over.
    user = unique("grace-charted")
    now = int(time.time() * 1000)
    purchase = bought_ten_days_ago(api, fake_appstore, user, now)
    note = fake_appstore.notification("DID_FAIL_TO_RENEW", subtype="GRACE_PERIOD",
                                      transaction_id=purchase["transaction_id"],
                                      grace_period_expires_in_seconds=86400)
    assert note["delivered_status"] == 200, note
    wait_processed(api, note["notification_uuid"])
    ended = fake_appstore.notification("GRACE_PERIOD_EXPIRED", transaction_id=purchase["transaction_id"])
    assert ended["delivered_status"] == 200, ended
    wait_processed(api, ended["notification_uuid"])
    assert entitlement(api, user, "club") is None

    in_grace = datetime.utcfromtimestamp((now - 2 * 86400 * 1000) / 1000).date().isoformat()
    r = api.get("/admin/v1/charts/active_subscriptions", admin=True,
                params={"from": in_grace, "to": in_grace, "segment": "product", "source": "transactions"})
    assert r.status_code == 200, r.text
    rows = [row for row in r.json()["rows"] if row["segment"] == CLUB_CHARTED]
    assert rows and rows[0]["active_subscriptions"] == 1, r.json()


def bought_ten_days_ago(api, fake_appstore, user: str, now_ms: int, product: str = CLUB_CHARTED) -> dict:
    """A subscription to `product` bought 10 days before `now_ms`, expired 5 days ago, reported."""
    order = api.create_order(user, product)
    purchase = fake_appstore.call("/fake/v1/purchases", {
        "bundle_id": BUNDLE_ID, "product_id": product, "type": "Auto-Renewable Subscription",
        "environment": "Production", "app_account_token": order["app_account_token"],
        "purchase_date_ms": now_ms - 10 * 86400 * 1000, "expires_in_seconds": -5 * 86400})
    r = api.report(order["trade_no"], signed_transaction=purchase["signed_transaction"])
    assert r.status_code == 200, r.text
    return purchase


def charted_product(api, name: str) -> str:
    """A subscription product of its own, so that a chart filtered by it counts one test's."""
    product = P + unique(name).replace("-", "_")
    api.put_product(product, type="auto_renewable", grants={"entitlement": "club"})
    return product


def day_ago(now_ms: int, days: int) -> str:
    return datetime.utcfromtimestamp((now_ms - days * 86400 * 1000) / 1000).date().isoformat()


def chart_rows(api, name: str, **params) -> list[dict]:
    r = api.get(f"/admin/v1/charts/{name}", admin=True, params=params)
    assert r.status_code == 200, r.text
    return r.json()["rows"]


def chart_rollup_pass(stack) -> None:
    """A pass of the chart rollup (`storekeeper charts-backfill`), taking in what changed."""
    done = subprocess.run([stack.sk.argv[0], "charts-backfill"], env=stack.sk.env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr


def test_a_grace_period_that_ends_in_a_recovery_stays_active_in_the_charts(api, fake_appstore, stack):
    # Bought 10 days ago, expired 5 days ago, then a grace period that Apple recovers today
    # (DID_RENEW, a new period bought now): the subscriber never lost access, so the charts
    # keep the grace days active and see neither churn nor a reactivation.
    product = charted_product(api, "club.recovered")
    user = unique("grace-recovered")
    now = int(time.time() * 1000)
    purchase = bought_ten_days_ago(api, fake_appstore, user, now, product)
    note = fake_appstore.notification("DID_FAIL_TO_RENEW", subtype="GRACE_PERIOD",
                                      transaction_id=purchase["transaction_id"],
                                      grace_period_expires_in_seconds=9 * 86400)
    assert note["delivered_status"] == 200, note
    wait_processed(api, note["notification_uuid"])
    renewal = fake_appstore.renewal(purchase["transaction_id"], expires_in_seconds=25 * 86400,
                                    notification_type="DID_RENEW")
    wait_processed(api, renewal["notification_uuid"])
    assert entitlement(api, user, "club") is not None

    first, today = day_ago(now, 7), day_ago(now, 0)
    asked = {"from": first, "to": today, "product": product}
    active = chart_rows(api, "active_subscriptions", source="transactions", **asked)
    assert [row["active_subscriptions"] for row in active] == [1] * 8, active
    # The rollup answers up to its as_of (this hour's start): the days before today.
    chart_rollup_pass(stack)
    before = {**asked, "to": day_ago(now, 1)}
    r = api.get("/admin/v1/charts/active_subscriptions", admin=True, params=before)
    assert r.status_code == 200 and r.json()["source"] == "rollup", r.text
    assert [row["active_subscriptions"] for row in r.json()["rows"]] == [1] * 7, r.json()
    # Every day before the recovery charts the first period's MRR (the renewal, which pays for
    # 25 days, has its own).
    for source in ("transactions", "auto"):
        mrr = [row["mrr"] for row in chart_rows(api, "mrr", source=source, **before)]
        assert len(mrr) == 7 and mrr[0] != "0" and set(mrr) == {mrr[0]}, (source, mrr)
    churn = chart_rows(api, "churn", **asked)
    assert sum(row["churned"] for row in churn) == 0, churn
    comeback = chart_rows(api, "reactivations", **asked)
    assert sum(row["reactivations"] for row in comeback) == 0, comeback


def test_a_grace_period_delivered_after_its_recovery_reaches_the_rollup(api, fake_appstore, stack):
    # Apple signs the grace period, then the recovery's DID_RENEW, but delivers the grace period
    # last (a retry, or history recovery): processed superseded, yet the charts read it, so the
    # days in grace become active. The rollup's incremental pass must take them in too, not go
    # on answering the lapse `source=transactions` no longer shows.
    product = charted_product(api, "club.late.grace")
    user = unique("grace-late")
    now = int(time.time() * 1000)
    purchase = bought_ten_days_ago(api, fake_appstore, user, now, product)
    late = fake_appstore.notification("DID_FAIL_TO_RENEW", subtype="GRACE_PERIOD",
                                      transaction_id=purchase["transaction_id"],
                                      grace_period_expires_in_seconds=9 * 86400, deliver=False)
    time.sleep(0.05)
    renewal = fake_appstore.renewal(purchase["transaction_id"], expires_in_seconds=25 * 86400,
                                    notification_type="DID_RENEW")
    wait_processed(api, renewal["notification_uuid"])
    asked = {"from": day_ago(now, 7), "to": day_ago(now, 1), "product": product}
    chart_rollup_pass(stack)
    lapsed = [row["active_subscriptions"] for row in chart_rows(api, "active_subscriptions", **asked)]
    assert lapsed[-1] == 0 and lapsed == [
        row["active_subscriptions"]
        for row in chart_rows(api, "active_subscriptions", source="transactions", **asked)], lapsed

    assert api.post_notification(late["signed_payload"]).status_code == 200
    assert wait_processed(api, late["notification_uuid"])["result"] == "superseded"
    done = subprocess.run([stack.sk.argv[0], "charts-backfill", "--changes"], env=stack.sk.env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    transactions = chart_rows(api, "active_subscriptions", source="transactions", **asked)
    assert [row["active_subscriptions"] for row in transactions] == [1] * 7, transactions
    r = api.get("/admin/v1/charts/active_subscriptions", admin=True, params=asked)
    assert r.status_code == 200 and r.json()["source"] == "rollup", r.text
    assert [row["active_subscriptions"] for row in r.json()["rows"]] == [1] * 7, r.json()


def billing_trouble_after_a_renewal(api, fake_appstore, product: str, subtype: str | None) -> tuple[dict, str]:
    """A first period 40 days ago, its renewal ended an hour ago, then Apple's billing retry
    (a grace period with `subtype` GRACE_PERIOD): the first purchase and the renewal's id."""
    user = unique("billing-trouble")
    now = int(time.time() * 1000)
    order = api.create_order(user, product)
    first = fake_appstore.call("/fake/v1/purchases", {
        "bundle_id": BUNDLE_ID, "product_id": product, "type": "Auto-Renewable Subscription",
        "environment": "Production", "app_account_token": order["app_account_token"],
        "purchase_date_ms": now - 40 * 86400 * 1000, "expires_in_seconds": -10 * 86400})
    assert api.report(order["trade_no"], signed_transaction=first["signed_transaction"]).status_code == 200
    renewal = fake_appstore.renewal(first["transaction_id"], expires_in_seconds=-3600)
    wait_processed(api, renewal["notification_uuid"])
    second = jws_payload(renewal["signed_transaction"])["transactionId"]
    failed = fake_appstore.notification("DID_FAIL_TO_RENEW", subtype=subtype, transaction_id=second,
                                        grace_period_expires_in_seconds=6 * 86400 if subtype else None)
    assert failed["delivered_status"] == 200, failed
    wait_processed(api, failed["notification_uuid"])
    return first, second


@pytest.mark.parametrize("subtype,chart,count", [(None, "billing_retry", "in_billing_retry"),
                                                  ("GRACE_PERIOD", "grace_period", "in_grace_period")])
def test_a_refund_of_an_earlier_period_does_not_end_billing_trouble_in_the_charts(
        api, fake_appstore, subtype, chart, count):
    # Apple goes on retrying the renewal's payment whatever happens to a month-old period: only
    # a refund of the period the trouble follows ends it.
    product = charted_product(api, "club.retrying")
    first, _ = billing_trouble_after_a_renewal(api, fake_appstore, product, subtype)
    time.sleep(0.05)
    refund = fake_appstore.refund(first["transaction_id"])
    wait_processed(api, refund["notification_uuid"])
    today = datetime.utcnow().date().isoformat()
    rows = chart_rows(api, chart, **{"from": today, "to": today, "product": product})
    assert [(row[count], row["entered"], row["recovered"]) for row in rows] == [(1, 1, 0)], rows


@pytest.mark.parametrize("how", ["OFFER_REDEEMED", "UPGRADE"])
def test_an_offer_or_an_upgrade_ends_billing_retry_in_the_charts(api, fake_appstore, how):
    # A subscriber in billing retry who redeems an offer, or buys a higher plan, pays again:
    # Storekeeper makes the subscription active, and the chart counts the spell recovered.
    product = charted_product(api, "club.retry.ended")
    _, second = billing_trouble_after_a_renewal(api, fake_appstore, product, None)
    time.sleep(0.05)
    if how == "OFFER_REDEEMED":
        paid = fake_appstore.renewal(second, notification_type="OFFER_REDEEMED", expires_in_seconds=30 * 86400)
    else:
        paid = fake_appstore.renewal(second, product_id=charted_product(api, "club.retry.plus"),
                                     expires_in_seconds=30 * 86400)
    wait_processed(api, paid["notification_uuid"])
    today = datetime.utcnow().date().isoformat()
    rows = chart_rows(api, "billing_retry", **{"from": today, "to": today, "product": product})
    assert [(row["in_billing_retry"], row["entered"], row["recovered"]) for row in rows] == [(0, 1, 1)], rows


def test_an_expiry_without_a_grace_period_adds_no_days_to_the_charts(api, fake_appstore):
    # Expired 5 days ago with no grace period; Apple's EXPIRED arrives now: nothing was active
    # in between, and no grace end may be made up from the notification's date.
    user = unique("expired-charted")
    now = int(time.time() * 1000)
    purchase = bought_ten_days_ago(api, fake_appstore, user, now)
    # Its state known (active, no grace), as after any renewal notice.
    renewed = fake_appstore.notification("DID_RENEW", transaction_id=purchase["transaction_id"])
    assert renewed["delivered_status"] == 200, renewed
    wait_processed(api, renewed["notification_uuid"])
    note = fake_appstore.notification("EXPIRED", subtype="VOLUNTARY", transaction_id=purchase["transaction_id"])
    assert note["delivered_status"] == 200, note
    wait_processed(api, note["notification_uuid"])
    day = datetime.utcfromtimestamp((now - 2 * 86400 * 1000) / 1000).date().isoformat()
    r = api.get("/admin/v1/charts/active_subscriptions", admin=True,
                params={"from": day, "to": day, "segment": "product", "source": "transactions"})
    assert r.status_code == 200, r.text
    rows = [row for row in r.json()["rows"] if row["segment"] == CLUB_CHARTED]
    # The grace test's subscription (same product) may be active that day; this one is not.
    assert sum(row["active_subscriptions"] for row in rows) <= 1, rows
    r = api.get("/admin/v1/charts/active_subscriptions/transactions", admin=True,
                params={"from": day, "to": day, "period": day, "product": CLUB_CHARTED, "limit": 100})
    assert r.status_code == 200, r.text
    assert purchase["transaction_id"] not in {t["transaction_id"] for t in r.json()["transactions"]}


def test_a_failed_renewal_without_grace_period_ends_access_at_apples_date(api, fake_appstore):
    user = unique("billing-retry")
    _, purchase, _ = buy(api, fake_appstore, user, CLUB, type="auto_renewable", expires_in_seconds=3600)
    note = fake_appstore.notification("DID_FAIL_TO_RENEW", transaction_id=purchase["transaction_id"])
    assert note["delivered_status"] == 200, note
    apple_expiry = jws_payload(jws_payload(note["signed_payload"])["data"]["signedTransactionInfo"])["expiresDate"]
    wait_processed(api, note["notification_uuid"])
    current = entitlement(api, user, "club")
    assert current is None or parse_ms(current["expires_at"]) == apple_expiry, \
        f"Apple says the period ended at {apple_expiry}; Storekeeper grants {current}"
    wait_until(lambda: entitlement(api, user, "club") is None, 5, "access continues in billing retry")


@pytest.mark.parametrize("kind,subtype,event", [("DID_FAIL_TO_RENEW", None, "subscription.billing_problem"),
                                               ("EXPIRED", "VOLUNTARY", "subscription.expired")])
def test_a_state_change_signed_before_a_renewal_but_delivered_after_it_changes_nothing(
        api, fake_appstore, stack, kind, subtype, event):
    user = unique("late-state")
    _, purchase, _ = buy(api, fake_appstore, user, CLUB, type="auto_renewable", expires_in_seconds=3600)
    stale = fake_appstore.notification(kind, subtype=subtype, transaction_id=purchase["transaction_id"],
                                       deliver=False)
    time.sleep(0.01)  # Apple signs the renewal later
    renewal = fake_appstore.renewal(purchase["transaction_id"], expires_in_seconds=7200)
    assert renewal["delivered_status"] == 200, renewal
    wait_processed(api, renewal["notification_uuid"])
    assert api.post_notification(stale["signed_payload"]).status_code == 200
    assert wait_processed(api, stale["notification_uuid"])["result"] == "superseded"
    assert stack.db.scalar("SELECT status FROM subscription_states "
                           f"WHERE original_transaction_id = '{purchase['transaction_id']}'") == "active"
    assert entitlement(api, user, "club")
    events = api.get("/admin/v1/events", admin=True, params={"user_id": user}).json()["events"]
    assert not any(e["type"] == event for e in events)


def test_a_renewal_signed_before_a_grace_period_but_delivered_after_it_pays_and_keeps_the_grace(
        api, fake_appstore, stack):
    # A month-old first period; Apple renews it for a period that ended an hour ago, then the
    # next renewal fails into a 14-day grace period. The renewal's notification arrives last: it
    # pays its period, and the grace period Apple began after it still grants access.
    user = unique("late-renewal")
    _, purchase, _ = buy(api, fake_appstore, user, CLUB, type="auto_renewable",
                         expires_in_seconds=-30 * 86400)
    renewal = fake_appstore.renewal(purchase["transaction_id"], expires_in_seconds=-3600, deliver=False)
    renewed = jws_payload(renewal["signed_transaction"])
    time.sleep(0.01)  # Apple signs the billing problem later
    note = fake_appstore.notification("DID_FAIL_TO_RENEW", subtype="GRACE_PERIOD",
                                      transaction_id=renewed["transactionId"],
                                      grace_period_expires_in_seconds=14 * 86400)
    assert note["delivered_status"] == 200, note
    wait_processed(api, note["notification_uuid"])
    assert api.post_notification(renewal["signed_payload"]).status_code == 200
    assert wait_processed(api, renewal["notification_uuid"])["result"] == "renewal_recorded"
    orders = api.admin_orders(user_id=user)
    assert renewed["transactionId"] in {o.get("transaction_id") for o in orders if o["trade_status"] == "TRADE_SUCCESS"}
    state = stack.db.scalar("SELECT status || ' ' || (grace_expires_at > now() + interval '13 days') "
                            f"FROM subscription_states WHERE original_transaction_id = '{purchase['transaction_id']}'")
    assert state == "grace_period true"
    assert entitlement(api, user, "club"), "the late renewal ended the grace period Apple began after it"


# ---------------------------------------------------------------------------------------------
# Other types, admin views, forgeries


def test_a_consumption_request_is_listed_for_admins(api, fake_appstore):
    user = unique("consumption")
    _, purchase, _ = buy(api, fake_appstore, user, GOLD)
    note = fake_appstore.notification("CONSUMPTION_REQUEST", transaction_id=purchase["transaction_id"])
    assert note["delivered_status"] == 200, note
    r = api.get("/admin/v1/consumption-requests", admin=True)
    assert r.status_code == 200
    listed = [n for n in r.json()["notifications"] if n["notification_uuid"] == note["notification_uuid"]]
    assert len(listed) == 1
    assert listed[0]["transaction_id"] == purchase["transaction_id"]
    assert all(n["notification_type"] == "CONSUMPTION_REQUEST" for n in r.json()["notifications"])
    assert api.balance(user) == 100, "a consumption request takes nothing back"


def test_a_test_notification_is_answered_200(api, fake_appstore):
    note = fake_appstore.notification("TEST", bundle_id=BUNDLE_ID)
    assert note["delivered_status"] == 200, note
    n = wait_processed(api, note["notification_uuid"])
    assert n["notification_type"] == "TEST"


def unhandled_count(api):
    text = refreshed_metrics(api)
    line = next(l for l in text.splitlines() if l.startswith('storekeeper_notifications{state="unhandled"}'))
    return int(line.split()[-1])


def test_an_unknown_type_is_kept_unhandled_counted_and_listed(api, fake_appstore):
    before = unhandled_count(api)
    note = fake_appstore.notification("SOMETHING_APPLE_INVENTS_LATER", subtype="SHINY", bundle_id=BUNDLE_ID)
    assert note["delivered_status"] == 200, note
    n = wait_processed(api, note["notification_uuid"], state="unhandled")
    assert n["notification_type"] == "SOMETHING_APPLE_INVENTS_LATER" and n["subtype"] == "SHINY"
    assert n["result"] == "unknown_type" and "processed_at" not in n
    filtered = api.notifications(notification_type="SOMETHING_APPLE_INVENTS_LATER")
    assert [x["notification_uuid"] for x in filtered] == [note["notification_uuid"]]
    assert note["notification_uuid"] in [x["notification_uuid"] for x in api.notifications(state="unhandled")]
    assert unhandled_count(api) == before + 1
    # The processing loop never picks it up: it stays unhandled.
    time.sleep(0.5)
    assert stored(api, note["notification_uuid"])["state"] == "unhandled"


def test_a_notification_for_another_app_is_refused(api, fake_appstore):
    note = fake_appstore.notification("TEST", bundle_id="com.example.someone.else")
    assert note["delivered_status"] == 400, note
    assert stored(api, note["notification_uuid"]) is None


def test_a_tampered_notification_is_400_and_changes_nothing(api, fake_appstore):
    user = unique("tamper")
    order, purchase, _ = buy(api, fake_appstore, user, GOLD)
    note = fake_appstore.refund(purchase["transaction_id"], deliver=False)
    assert note["delivered_status"] is None
    for forged in (tamper_jws_payload(note["signed_payload"]),
                   note["signed_payload"][:-3] + ("AAA" if not note["signed_payload"].endswith("AAA") else "BBB"),
                   "not.a.jws", ""):
        r = api.post_notification(forged)
        assert r.status_code in (400, 422), r.text
        assert r.headers["Content-Type"].startswith("application/problem+json")
    assert stored(api, note["notification_uuid"]) is None
    assert api.order(order["trade_no"])["trade_status"] == "TRADE_SUCCESS"
    assert api.balance(user) == 100
    problem(api.post_notification(tamper_jws_payload(note["signed_payload"])), 400, "invalid_notification")

    # The genuine payload is accepted.
    assert api.post_notification(note["signed_payload"]).status_code == 200
    wait_for_order(api, order["trade_no"], "TRADE_CLOSED")


def test_admin_notification_list_pages_and_filters(api, fake_appstore):
    uuids = [fake_appstore.notification("TEST", bundle_id=BUNDLE_ID)["notification_uuid"] for _ in range(5)]
    seen, cursor = [], None
    while True:
        params = {"notification_type": "TEST", "limit": 2}
        if cursor:
            params["cursor"] = cursor
        r = api.get("/admin/v1/notifications", admin=True, params=params)
        assert r.status_code == 200, r.text
        seen += [n["notification_uuid"] for n in r.json()["notifications"]]
        cursor = r.json().get("next_cursor")
        if not cursor:
            break
    assert len(seen) == len(set(seen))
    assert set(uuids) <= set(seen)
    newest_first = [u for u in seen if u in uuids]
    assert newest_first == list(reversed(uuids))
    problem(api.get("/admin/v1/notifications", params={"limit": 2}), 401, "unauthorized")
    # The cursor is a sequence number: any 1-18 digits is a place to start, anything else is 400.
    assert api.get("/admin/v1/notifications", admin=True, params={"cursor": "0"}).json()["notifications"] == []
    for cursor in ("-1", "abc", "1" * 19):
        r = api.get("/admin/v1/notifications", admin=True, params={"cursor": cursor})
        assert r.status_code == 400 and r.json()["code"] == "invalid_query", (cursor, r.text)


def test_duplicates_delivered_at_once_to_two_instances_apply_once(api, fake_appstore, stack, module_storekeeper):
    import threading

    other = module_storekeeper(stack.db, fake=fake_appstore, share_admin_with=stack.sk)
    user = unique("dup-two")
    order, purchase, _ = buy(api, fake_appstore, user, GOLD)
    note = fake_appstore.refund(purchase["transaction_id"], deliver=False)
    barrier = threading.Barrier(10)
    statuses = [None] * 10

    def deliver(i):
        client = (api if i % 2 else other.client)
        barrier.wait(timeout=30)
        statuses[i] = client.post_notification(note["signed_payload"]).status_code

    threads = [threading.Thread(target=deliver, args=(i,)) for i in range(10)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert statuses == [200] * 10, statuses
    wait_for_order(api, order["trade_no"], "TRADE_CLOSED")
    wait_processed(api, note["notification_uuid"])
    assert api.balance(user) == 0
    refunds = stack.db.scalar(
        f"SELECT count(*) FROM ledger WHERE transaction_id = '{purchase['transaction_id']}' AND kind = 'refund'")
    assert refunds == "1"
    assert [h["reason"] for h in api.admin_order(order["trade_no"])["history"]].count("refunded") == 1


def test_a_refund_of_a_purchase_recorded_without_an_owner_is_not_credited_later(api, fake_appstore, stack,
                                                                               module_storekeeper):
    # Seed 000's legacy post records the transaction with no user; Apple then refunds it. Only a
    # trusted caller can post without a user (a signed-in one always names theirs): an
    # APP_AUTH=none instance on the same database stands in for that legacy app's network.
    legacy = module_storekeeper(db=stack.db, fake=fake_appstore, APP_AUTH="none", APP_JWT_SECRET=None)
    purchase = fake_appstore.purchase(GOLD, "consumable")
    r = legacy.client.receipts(receipt=purchase["receipt"], product_id=GOLD)
    assert r.status_code == 200 and r.json()["transactions"][0]["status"] == "recorded", r.text
    note = fake_appstore.refund(purchase["transaction_id"])
    assert note["delivered_status"] == 200
    wait_until(lambda: (lambda n: n and n["state"] in ("processed", "deferred"))(stored(api, note["notification_uuid"])),
               15, "the refund was never handled")

    # Later someone reports it for an order of theirs: a purchase recorded without an owner
    # and without that order's token is nobody's to claim, so nothing is credited and the
    # refund keeps waiting for the purchase to get an owner.
    user = unique("refunded-unowned")
    order = api.create_order(user, GOLD)
    r = api.report(order["trade_no"], signed_transaction=purchase["signed_transaction"])
    assert r.status_code in (409, 422), r.text
    assert api.order(order["trade_no"])["trade_status"] == "WAIT_BUYER_PAY"
    assert api.balance(user) == 0
    assert stored(api, note["notification_uuid"])["state"] == "deferred"
