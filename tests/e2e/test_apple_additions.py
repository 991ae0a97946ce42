"""Issue 26, "Apple's 2025-2026 additions": every purchase keeps Apple's `appTransactionId`
(indexed, and the admin API finds a download's purchases and users by it); a purchase made
outside the app is bound at Apple to the user it is assigned to (Set App Account Token, a
durable job shared by the instances), after which the fake signs the token into everything
about it; RESCIND_CONSENT (with `appData`), ONE_TIME_CHARGE, REFUND_REVERSED and REFUND_DECLINED
with their effects and events; Apple's 429 `Retry-After` (a UNIX time in milliseconds) obeyed by
every App Store Server API client, never asking again before it.

Apple's own library (`app-store-server-library`, APPLE_LIBRARY_PYTHON) is the independent check
of what the fake signs (RESCIND_CONSENT's app transaction) and of the fake's Set App Account
Token endpoint (Apple's client calls it)."""

from __future__ import annotations

import json
import re
import subprocess
import uuid
from pathlib import Path

import pytest
import requests

from support import BUNDLE_ID, buy, jws_payload, problem, refreshed_metrics, unique, wait_for_order, wait_until
from test_apple_library_accepts_fake import accepted, apple_python, apple_verify

HERE = Path(__file__).resolve().parent
P = "com.example.tests.additions."
GOLD = P + "gold"
SWORD = P + "sword"
CLUB = P + "club.monthly"


@pytest.fixture(scope="module")
def stack(module_launcher):
    # The fake's in-app purchase key: the App Store Server API clients (and the token sender)
    # are on.
    # Apple's own timeout, not the e2e default of 2 s: the tests count calls to the fake.
    return module_launcher.stack(api_key=True, APPLE_TIMEOUT="10s")


@pytest.fixture(scope="module")
def fake_appstore(stack):
    return stack.fake


@pytest.fixture(scope="module")
def api(stack):
    return stack.api


@pytest.fixture(scope="module", autouse=True)
def catalog(api):
    api.put_product(GOLD, grants={"balance": {"gold": 100}})
    api.put_product(SWORD, type="non_consumable", grants={"entitlement": "sword"})
    api.put_product(CLUB, type="auto_renewable", grants={"entitlement": "club"})


def feed(api, user, type=None):
    params = {"user_id": user, "limit": 200}
    if type:
        params["type"] = type
    r = api.get("/admin/v1/events", admin=True, params=params)
    assert r.status_code == 200, r.text
    return r.json()["events"]


def stored(api, uuid_):
    found = [n for n in api.notifications(limit=200) if n["notification_uuid"] == uuid_]
    return found[0] if found else None


def wait_state(api, uuid_, state="processed"):
    return wait_until(lambda: (lambda n: n if n and n["state"] == state else None)(stored(api, uuid_)),
                      15, f"notification {uuid_} never reached {state}")


def by_app_transaction(api, app_transaction_id, **params):
    return api.get("/admin/v1/transactions", admin=True,
                   params={"app_transaction_id": app_transaction_id, **params})


def rate_limit(fake, count, retry_after_ms, answer="rate_limited"):
    return fake.call("/fake/v1/rate-limit", {"count": count, "retry_after_ms": retry_after_ms, "answer": answer})


# ---------------------------------------------------------------------------------------------
# appTransactionId


def test_every_purchase_keeps_its_app_transaction_id_and_support_finds_the_user_by_it(api, fake_appstore, stack):
    user = unique("reinstall")
    account = unique("account")
    _, first, _ = buy(api, fake_appstore, user, GOLD, apple_account=account)
    _, second, _ = buy(api, fake_appstore, user, SWORD, type="non_consumable", apple_account=account)
    app_transaction_id = first["app_transaction_id"]
    # One Apple Account's download of the app: the same id in every purchase it makes, signed.
    assert second["app_transaction_id"] == app_transaction_id
    assert jws_payload(first["signed_transaction"])["appTransactionId"] == app_transaction_id
    assert stack.db.rows(
        f"SELECT transaction_id FROM apple_transactions WHERE app_transaction_id = '{app_transaction_id}' "
        "ORDER BY transaction_id") == sorted([[first["transaction_id"]], [second["transaction_id"]]])
    # Another account's purchase has another id.
    _, other, _ = buy(api, fake_appstore, unique("other"), GOLD)
    assert other["app_transaction_id"] != app_transaction_id

    r = by_app_transaction(api, app_transaction_id)
    assert r.status_code == 200, r.text
    found = r.json()["transactions"]
    assert {t["transaction_id"] for t in found} == {first["transaction_id"], second["transaction_id"]}
    assert {t["user_id"] for t in found} == {user}
    assert {t["app_transaction_id"] for t in found} == {app_transaction_id}
    # Keyset pages, newest id first.
    page = by_app_transaction(api, app_transaction_id, limit=1).json()
    assert len(page["transactions"]) == 1 and page["next_cursor"]
    rest = by_app_transaction(api, app_transaction_id, cursor=page["next_cursor"]).json()
    assert [t["transaction_id"] for t in page["transactions"] + rest["transactions"]] == \
        sorted([first["transaction_id"], second["transaction_id"]], reverse=True)
    # The per-user listing shows it too.
    mine = api.get(f"/admin/v1/users/{user}/transactions", admin=True).json()["transactions"]
    assert {t["app_transaction_id"] for t in mine} == {app_transaction_id}


def test_the_app_transaction_lookup_is_an_admin_lookup_with_a_required_numeric_id(api):
    assert api.get("/admin/v1/transactions", params={"app_transaction_id": "1"}).status_code == 401
    body = problem(api.get("/admin/v1/transactions", admin=True), 400, "invalid_query")
    assert {e["field"] for e in body["errors"]} == {"app_transaction_id"}
    for bad in ["abc", "1' OR '1'='1", "9" * 65, ""]:
        problem(by_app_transaction(api, bad), 400, "invalid_query")
    problem(api.get("/admin/v1/transactions", admin=True, params={"app_transaction_id": "1", "user_id": "x"}),
            400, "invalid_query")
    r = by_app_transaction(api, "123456789")
    assert r.status_code == 200 and r.json()["transactions"] == []


# ---------------------------------------------------------------------------------------------
# Set App Account Token


def order_of(api, trade_no):
    return api.admin_order(trade_no)["order"]


def test_a_purchase_made_outside_the_app_is_bound_at_apple_to_the_user_it_is_assigned_to(api, fake_appstore):
    user = unique("offercode")
    before = fake_appstore.calls()["set_app_account_token"]
    # An offer code redeemed in the App Store: a subscription without any app account token.
    purchase = fake_appstore.purchase(CLUB, "auto_renewable", expires_in_seconds=3600)
    assert purchase.get("app_account_token") is None
    r = api.receipts(user_id=user, signed_transaction=purchase["signed_transaction"])
    assert r.status_code == 200, r.text
    item = r.json()["transactions"][0]
    assert item["status"] == "settled", item
    token = order_of(api, item["trade_no"])["app_account_token"]

    bound = wait_until(lambda: (lambda t: t if t.get("app_account_token") else None)(
        fake_appstore.transaction(purchase["transaction_id"])), 20, "Apple never got the token")
    assert bound["app_account_token"] == token.lower()
    assert fake_appstore.calls()["set_app_account_token"] == before + 1
    # What Apple signs for the purchase from now on carries the token: the renewal and its
    # notification, so the next period is the user's whichever way it arrives.
    renewal = fake_appstore.renewal(purchase["transaction_id"], expires_in_seconds=7200)
    assert jws_payload(renewal["signed_transaction"])["appAccountToken"] == token.lower()
    renewal_info = jws_payload(jws_payload(renewal["signed_payload"])["data"]["signedRenewalInfo"])
    assert renewal_info["appAccountToken"] == token.lower()
    assert renewal_info["appTransactionId"] == purchase["app_transaction_id"]
    assert renewal["delivered_status"] == 200
    wait_state(api, renewal["notification_uuid"])
    assert api.entitlements(user)["entitlements"][0]["entitlement"] == "club"
    # Sent once: the job is done, a repeat of the receipt changes nothing.
    again = api.receipts(user_id=user, signed_transaction=purchase["signed_transaction"])
    assert again.json()["transactions"][0]["status"] == "restored"
    assert fake_appstore.calls()["set_app_account_token"] == before + 1


def test_a_purchase_made_in_the_app_is_not_sent_again(api, fake_appstore, stack):
    before = fake_appstore.calls()["set_app_account_token"]
    order, purchase, _ = buy(api, fake_appstore, unique("inapp"), GOLD)
    assert stack.db.scalar(
        f"SELECT count(*) FROM app_account_token_jobs WHERE original_transaction_id = '{purchase['transaction_id']}'"
    ) == "0"
    assert fake_appstore.calls()["set_app_account_token"] == before


def test_a_transfer_binds_the_purchase_to_its_new_owner(api, fake_appstore):
    alice, bob = unique("from"), unique("to")
    order, purchase, _ = buy(api, fake_appstore, alice, SWORD, type="non_consumable")
    r = api.request("POST", f"/admin/v1/transactions/{purchase['transaction_id']}/transfer", admin=True,
                    json={"to_user_id": bob, "reason": "changed accounts"})
    assert r.status_code == 200, r.text
    token = r.json()["order"]["app_account_token"]
    assert token != order["app_account_token"]
    wait_until(lambda: fake_appstore.transaction(purchase["transaction_id"]).get("app_account_token")
               == token.lower(), 20, "Apple never got the new owner's token")


def test_a_429_makes_the_sender_wait_for_apples_instant_and_no_request_comes_early(api, fake_appstore, stack):
    calls = fake_appstore.calls()
    # Longer than one request may wait (5 s): the job is put back, not before Apple's instant.
    rate_limit(fake_appstore, 1, 7000)
    purchase = fake_appstore.purchase(GOLD, "consumable")
    user = unique("limited")
    assert api.receipts(user_id=user, signed_transaction=purchase["signed_transaction"]).status_code == 200
    wait_until(lambda: fake_appstore.transaction(purchase["transaction_id"]).get("app_account_token"),
               40, "the token was never sent after the 429")
    after = fake_appstore.calls()
    assert after["rate_limited"] == calls["rate_limited"] + 1
    assert after["rate_limited_early"] == calls["rate_limited_early"]
    row = stack.db.rows(
        "SELECT state, attempts FROM app_account_token_jobs "
        f"WHERE original_transaction_id = '{purchase['transaction_id']}'")
    assert row == [["sent", "2"]]


def test_jobs_are_shared_by_two_instances_and_each_is_sent_once(module_launcher, stack, api, fake_appstore):
    second = module_launcher.storekeeper(stack.db, fake=fake_appstore, share_admin_with=stack.sk,
                                         **fake_appstore.api_env())
    before = fake_appstore.calls()["set_app_account_token"]
    purchases = [fake_appstore.purchase(GOLD, "consumable") for _ in range(8)]
    for index, purchase in enumerate(purchases):
        client = api if index % 2 else second.client
        r = client.receipts(user_id=unique("shared"), signed_transaction=purchase["signed_transaction"])
        assert r.status_code == 200, r.text
    wait_until(lambda: all(fake_appstore.transaction(p["transaction_id"]).get("app_account_token")
                           for p in purchases), 30, "not every token was sent")
    wait_until(lambda: stack.db.scalar(
        "SELECT count(*) FROM app_account_token_jobs WHERE state = 'sent' AND original_transaction_id IN ("
        + ",".join(f"'{p['transaction_id']}'" for p in purchases) + ")") == "8", 10, "jobs not all sent")
    assert fake_appstore.calls()["set_app_account_token"] == before + 8
    metrics = refreshed_metrics(api)
    sent = [line for line in metrics.splitlines() if line.startswith('storekeeper_app_account_tokens{state="sent"}')]
    assert len(sent) == 1 and int(sent[0].split()[-1]) >= 8, sent
    assert 'storekeeper_app_account_tokens{state="failed"} ' in metrics
    second.terminate()


def test_the_fake_filters_the_transaction_history_as_apple_does_for_apples_own_client(fake_appstore):
    # The fake answered every filtered history with the whole history, so a request Apple
    # would answer with none passed on both transactions.
    account = unique("history-account")
    gold = fake_appstore.purchase(GOLD, "consumable", apple_account=account)
    club = fake_appstore.purchase(CLUB, "auto_renewable", apple_account=account, expires_in_seconds=3600)
    request = {"base_url": fake_appstore.url, "key_pem": fake_appstore.api_key.read_text(),
               "key_id": fake_appstore.api_key_id, "issuer_id": fake_appstore.api_issuer_id,
               "bundle_id": BUNDLE_ID, "environment": "Production", "calls": [
                   {"history": gold["transaction_id"]},
                   {"history": gold["transaction_id"], "filters": {"productIds": ["nope"]}},
                   {"history": gold["transaction_id"], "filters": {"productIds": [GOLD]}},
                   {"history": gold["transaction_id"], "filters": {"productTypes": ["AUTO_RENEWABLE"]}},
                   {"history": gold["transaction_id"], "filters": {"productIds": [GOLD, CLUB], "revoked": False}},
                   {"history": gold["transaction_id"], "filters": {"revoked": True}},
                   {"history": gold["transaction_id"], "filters": {"startDate": 2000, "endDate": 1000}},
               ]}
    done = subprocess.run([apple_python(), str(HERE / "apple_library_client.py")], input=json.dumps(request),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    both = sorted([gold["transaction_id"], club["transaction_id"]])
    answers = json.loads(done.stdout)
    assert sorted(answers[0]["transaction_ids"]) == both
    assert answers[1:6] == [
        {"status": 200, "transaction_ids": []},
        {"status": 200, "transaction_ids": [gold["transaction_id"]]},
        {"status": 200, "transaction_ids": [club["transaction_id"]]},
        {"status": 200, "transaction_ids": answers[4]["transaction_ids"]},
        {"status": 200, "transaction_ids": []},
    ]
    assert sorted(answers[4]["transaction_ids"]) == both
    assert answers[6] == {"status": 400, "error_code": 4000016}


def test_the_fake_serves_set_app_account_token_to_apples_own_client(fake_appstore):
    purchase = fake_appstore.purchase(GOLD, "consumable")
    renewal_base = fake_appstore.purchase(CLUB, "auto_renewable", expires_in_seconds=3600)
    renewal = fake_appstore.renewal(renewal_base["transaction_id"], deliver=False)
    sandbox = fake_appstore.purchase(GOLD, "consumable", environment="Sandbox")
    shared = fake_appstore.call("/fake/v1/purchases", {
        "bundle_id": BUNDLE_ID, "product_id": SWORD, "type": "Non-Consumable", "quantity": 1,
        "environment": "Production", "in_app_ownership_type": "FAMILY_SHARED"})
    token = str(uuid.uuid4())

    def call(calls, environment="Production", base=fake_appstore.url):
        request = {"base_url": base, "key_pem": fake_appstore.api_key.read_text(),
                   "key_id": fake_appstore.api_key_id, "issuer_id": fake_appstore.api_issuer_id,
                   "bundle_id": BUNDLE_ID, "environment": environment, "calls": calls}
        done = subprocess.run([apple_python(), str(HERE / "apple_library_client.py")], input=json.dumps(request),
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    answers = call([
        {"original_transaction_id": purchase["transaction_id"], "app_account_token": token},
        {"original_transaction_id": "2999999999999999", "app_account_token": token},
        {"original_transaction_id": purchase["transaction_id"], "app_account_token": "not-a-uuid"},
        {"original_transaction_id": renewal["transaction_id"], "app_account_token": token},
        # A sandbox purchase is unknown to production.
        {"original_transaction_id": sandbox["transaction_id"], "app_account_token": token},
        # A family member's copy takes no token (FamilyTransactionNotSupportedError).
        {"original_transaction_id": shared["transaction_id"], "app_account_token": token},
    ])
    assert answers == [
        {"status": 200},
        {"status": 404, "error_code": 4040010},
        {"status": 400, "error_code": 4000183},
        {"status": 400, "error_code": 4000187},
        {"status": 404, "error_code": 4040010},
        {"status": 400, "error_code": 4000185},
    ]
    assert fake_appstore.transaction(purchase["transaction_id"])["app_account_token"] == token
    assert jws_payload(fake_appstore.transaction(purchase["transaction_id"])["signed_transaction"])[
        "appAccountToken"] == token
    assert call([{"original_transaction_id": sandbox["transaction_id"], "app_account_token": token}],
                environment="Sandbox", base=fake_appstore.url + "/sandbox") == [{"status": 200}]
    # Without Apple's bearer token, nothing.
    r = requests.put(f"{fake_appstore.url}/inApps/v1/transactions/{purchase['transaction_id']}/appAccountToken",
                     json={"appAccountToken": token}, timeout=30)
    assert r.status_code == 401


# ---------------------------------------------------------------------------------------------
# Notification types


def test_a_refund_reversed_twice_gives_back_what_the_refund_took_exactly_once(api, fake_appstore, stack):
    user = unique("reversed")
    order, purchase, _ = buy(api, fake_appstore, user, GOLD)
    assert fake_appstore.refund(purchase["transaction_id"])["delivered_status"] == 200
    wait_for_order(api, order["trade_no"], "TRADE_CLOSED")
    assert api.balance(user) == 0
    note = fake_appstore.refund(purchase["transaction_id"], notification_type="REFUND_REVERSED")
    assert note["delivered_status"] == 200
    wait_state(api, note["notification_uuid"])
    # Delivered again (Apple retries): nothing more.
    assert api.post_notification(note["signed_payload"]).status_code == 200
    again = fake_appstore.refund(purchase["transaction_id"], notification_type="REFUND_REVERSED")
    wait_state(api, again["notification_uuid"])
    assert stored(api, again["notification_uuid"])["result"] == "not_refunded"
    assert wait_for_order(api, order["trade_no"], "TRADE_SUCCESS")
    assert api.balance(user) == 100
    assert stack.db.rows(f"SELECT kind, amount FROM ledger WHERE transaction_id = '{purchase['transaction_id']}' "
                         "ORDER BY id") == [["grant", "100"], ["refund", "-100"], ["refund_reversed", "100"]]
    reversed_events = feed(api, user, "purchase.refund_reversed")
    assert len(reversed_events) == 1
    assert reversed_events[0]["data"]["notification_uuid"] == note["notification_uuid"]


def test_one_time_charge_settles_the_order_whose_token_it_carries_once(api, fake_appstore, stack):
    user = unique("charged")
    order = api.create_order(user, GOLD)
    purchase = fake_appstore.purchase(GOLD, "consumable", app_account_token=order["app_account_token"])
    # No report: the notification alone says it was paid.
    note = fake_appstore.notification("ONE_TIME_CHARGE", transaction_id=purchase["transaction_id"])
    assert note["delivered_status"] == 200, note
    wait_state(api, note["notification_uuid"])
    assert stored(api, note["notification_uuid"])["result"] == "settled"
    paid = wait_for_order(api, order["trade_no"], "TRADE_SUCCESS")
    assert paid["transaction_id"] == purchase["transaction_id"]
    assert api.balance(user) == 100
    assert api.post_notification(note["signed_payload"]).status_code == 200
    # The app's report afterwards is a repeat.
    assert api.report(order["trade_no"], signed_transaction=purchase["signed_transaction"]).status_code == 200
    assert api.balance(user) == 100
    charged = feed(api, user, "purchase.charged")
    assert len(charged) == 1 and charged[0]["data"]["trade_no"] == order["trade_no"]
    assert charged[0]["data"]["transaction_id"] == purchase["transaction_id"]
    assert [e["type"] for e in feed(api, user, "order.paid")] == ["order.paid"]


def test_one_time_charge_after_the_report_only_tells_the_backend(api, fake_appstore):
    user = unique("reported")
    order, purchase, _ = buy(api, fake_appstore, user, GOLD)
    note = fake_appstore.notification("ONE_TIME_CHARGE", transaction_id=purchase["transaction_id"])
    wait_state(api, note["notification_uuid"])
    assert stored(api, note["notification_uuid"])["result"] == "already_settled"
    assert api.balance(user) == 100
    assert len(feed(api, user, "purchase.charged")) == 1


def test_one_time_charge_of_a_purchase_naming_no_order_waits_for_its_report(api, fake_appstore):
    user = unique("waits")
    purchase = fake_appstore.purchase(GOLD, "consumable")
    note = fake_appstore.notification("ONE_TIME_CHARGE", transaction_id=purchase["transaction_id"])
    wait_state(api, note["notification_uuid"], "deferred")
    assert api.receipts(user_id=user, signed_transaction=purchase["signed_transaction"]).status_code == 200
    wait_state(api, note["notification_uuid"])
    assert api.balance(user) == 100
    assert len(feed(api, user, "purchase.charged")) == 1


def test_the_admin_view_of_a_notification_hands_out_no_proof_of_the_purchase(api, fake_appstore):
    # A purchase nobody has claimed yet is credited to whoever posts its signed transaction
    # first: an admin view (a read token, the console) must not give that proof away.
    owner, stranger = unique("owner"), unique("stranger")
    purchase = fake_appstore.purchase(GOLD, "consumable")
    note = fake_appstore.notification("ONE_TIME_CHARGE", transaction_id=purchase["transaction_id"])
    wait_state(api, note["notification_uuid"], "deferred")
    [view] = api.notifications(transaction_id=purchase["transaction_id"])
    text = json.dumps(view)
    assert "signedTransactionInfo" not in text and "signedRenewalInfo" not in text
    # What is shown is still what Apple signed, decoded.
    assert view["payload"]["transaction"]["transactionId"] == purchase["transaction_id"]
    for candidate in re.findall(r"eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+", text):
        taken = api.receipts(user_id=stranger, signed_transaction=candidate)
        assert taken.status_code != 200, taken.text
    assert api.balance(stranger) == 0
    assert api.receipts(user_id=owner, signed_transaction=purchase["signed_transaction"]).status_code == 200
    assert api.balance(owner) == 100


def test_a_declined_refund_is_recorded_and_changes_nothing(api, fake_appstore):
    user = unique("declined")
    order, purchase, _ = buy(api, fake_appstore, user, GOLD)
    note = fake_appstore.notification("REFUND_DECLINED", transaction_id=purchase["transaction_id"])
    wait_state(api, note["notification_uuid"])
    assert stored(api, note["notification_uuid"])["result"] == "refund_declined"
    assert api.order(order["trade_no"])["trade_status"] == "TRADE_SUCCESS"
    assert api.balance(user) == 100
    declined = feed(api, user, "purchase.refund_declined")
    assert len(declined) == 1 and declined[0]["data"]["transaction_id"] == purchase["transaction_id"]


def test_rescind_consent_is_recorded_for_every_user_of_the_app_download(api, fake_appstore, stack):
    account = unique("family")
    first, second = unique("minor"), unique("minor-again")
    _, purchase, _ = buy(api, fake_appstore, first, GOLD, apple_account=account)
    # The same Apple Account signed in as another user after re-installing.
    buy(api, fake_appstore, second, GOLD, apple_account=account)
    note = fake_appstore.notification("RESCIND_CONSENT", transaction_id=purchase["transaction_id"])
    assert note["delivered_status"] == 200, note
    body = jws_payload(note["signed_payload"])
    assert "data" not in body
    app = jws_payload(body["appData"]["signedAppTransactionInfo"])
    assert app["appTransactionId"] == purchase["app_transaction_id"]
    wait_state(api, note["notification_uuid"])
    listed = stored(api, note["notification_uuid"])
    assert (listed["result"], listed["environment"]) == ("consent_rescinded", "Production")
    assert stack.db.rows(
        "SELECT app_transaction_id, array_to_string(user_ids, ',') FROM consent_rescissions "
        f"WHERE notification_uuid = '{note['notification_uuid']}'") == \
        [[purchase["app_transaction_id"], ",".join(sorted([first, second]))]]
    for user in (first, second):
        events = feed(api, user, "consent.rescinded")
        assert len(events) == 1
        assert events[0]["data"]["app_transaction_id"] == purchase["app_transaction_id"]
        assert api.balance(user) == 100
    # Delivered again: recorded once.
    assert api.post_notification(note["signed_payload"]).status_code == 200
    assert stack.db.scalar("SELECT count(*) FROM consent_rescissions "
                           f"WHERE app_transaction_id = '{purchase['app_transaction_id']}'") == "1"


def test_apples_library_accepts_rescind_consent_and_its_app_transaction(fake_appstore):
    purchase = fake_appstore.purchase(GOLD, "consumable", environment="Sandbox")
    note = fake_appstore.notification("RESCIND_CONSENT", transaction_id=purchase["transaction_id"],
                                      deliver=False)
    signed_app = jws_payload(note["signed_payload"])["appData"]["signedAppTransactionInfo"]
    notification, app = (accepted(a) for a in apple_verify(fake_appstore.root_pem, "Sandbox", [
        ("notification", note["signed_payload"]), ("app_transaction", signed_app)]))
    assert notification["notificationType"] == "RESCIND_CONSENT"
    assert notification["appData"]["bundleId"] == BUNDLE_ID
    assert (app["appTransactionId"], app["bundleId"], app["receiptType"]) == \
        (purchase["app_transaction_id"], BUNDLE_ID, "Sandbox")
    transaction = accepted(apple_verify(fake_appstore.root_pem, "Sandbox",
                                        [("transaction", purchase["signed_transaction"])])[0])
    assert transaction["appTransactionId"] == purchase["app_transaction_id"]


# ---------------------------------------------------------------------------------------------
# 429 on the other Server API clients


def test_a_receipt_judged_through_the_server_api_waits_out_apples_429(api, fake_appstore):
    user = unique("receipt429")
    order = api.create_order(user, GOLD)
    purchase = fake_appstore.purchase(GOLD, "consumable", app_account_token=order["app_account_token"])
    calls = fake_appstore.calls()
    # Two 429s a second apart: within what one request waits, so the report settles at once.
    rate_limit(fake_appstore, 2, 1000)
    r = api.report(order["trade_no"], receipt=purchase["app_receipt"])
    assert r.status_code in (200, 202), r.text
    wait_for_order(api, order["trade_no"], "TRADE_SUCCESS", timeout=30)
    after = fake_appstore.calls()
    assert after["rate_limited"] == calls["rate_limited"] + 2
    assert after["rate_limited_early"] == calls["rate_limited_early"]


def test_apples_retryable_not_found_is_waited_out_not_taken_for_an_answer(api, fake_appstore, stack):
    # Right after a purchase Apple may answer 404 "Account not found. Please try again."
    # (4040002): a receipt judged through the Server API is not refused as unknown, and a
    # token job is not given up.
    user = unique("notfound-retry")
    order = api.create_order(user, GOLD)
    purchase = fake_appstore.purchase(GOLD, "consumable", app_account_token=order["app_account_token"])
    rate_limit(fake_appstore, 2, 0, answer="account_not_found_retryable")
    r = api.report(order["trade_no"], receipt=purchase["app_receipt"])
    assert r.status_code in (200, 202), r.text
    wait_for_order(api, order["trade_no"], "TRADE_SUCCESS", timeout=60)
    outside = fake_appstore.purchase(GOLD, "consumable")
    rate_limit(fake_appstore, 1, 0, answer="account_not_found_retryable")
    assert api.receipts(user_id=unique("notfound-token"), signed_transaction=outside["signed_transaction"]).status_code == 200
    wait_until(lambda: fake_appstore.transaction(outside["transaction_id"]).get("app_account_token"),
               60, "the token was never sent after Apple's retryable 404")
    row = stack.db.rows("SELECT state FROM app_account_token_jobs "
                        f"WHERE original_transaction_id = '{outside['transaction_id']}'")
    assert row == [["sent"]]


def test_a_family_sharing_copy_is_never_sent_a_token(api, fake_appstore, stack):
    # Apple takes no app account token for a family member's copy (4000185) and never signs
    # one into it: no job is queued for one, and the fake refuses as Apple does.
    before = fake_appstore.calls()["set_app_account_token"]
    shared = fake_appstore.call("/fake/v1/purchases", {
        "bundle_id": BUNDLE_ID, "product_id": SWORD, "type": "Non-Consumable", "quantity": 1,
        "environment": "Production", "in_app_ownership_type": "FAMILY_SHARED"})
    r = api.receipts(user_id=unique("family-member"), signed_transaction=shared["signed_transaction"])
    assert r.status_code == 200, r.text
    assert stack.db.scalar("SELECT count(*) FROM app_account_token_jobs "
                           f"WHERE original_transaction_id = '{shared['transaction_id']}'") == "0"
    assert fake_appstore.calls()["set_app_account_token"] == before
