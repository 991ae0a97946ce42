"""Issue 26: Apple's CONSUMPTION_REQUEST is answered with Send Consumption Information v2, from
the ledger (the share of the purchase already spent), with the user's consent as the app
recorded it and the configured refund preference; retried durably after a 5xx; nothing sent
without consent. The fake App Store checks each call (token, fields, ranges) and shows what it
received."""

from __future__ import annotations

import time
import uuid

import pytest

from support import buy, problem, unique, user_headers, wait_until

P = "com.example.tests.consumption."
GOLD = P + "gold"
CLUB = P + "club.monthly"
BUNDLE = P + "gold.gems"


@pytest.fixture(scope="module")
def answering(module_launcher):
    # Apple's own timeout (the e2e default is 2 s): a slow answer on a loaded machine must not
    # become a second call, which the tests count.
    stack = module_launcher.stack(api_key=True, CONSUMPTION_RETRY_BASE="1s", APPLE_TIMEOUT="10s",
                                  CONSUMPTION_REFUND_PREFERENCE="by_consumption")
    stack.api.put_product(GOLD, grants={"balance": {"gold": 100}})
    stack.api.put_product(CLUB, type="auto_renewable", grants={"entitlement": "club"})
    stack.api.put_product(BUNDLE, grants={"balance": {"gold": 100, "gems": 10}})
    return stack


def consent(api, user, consented=True, **kw):
    return api.request("PUT", f"/v1/users/{user}/consumption-consent", json={"consented": consented}, **kw)


def spend(api, user, amount):
    r = api.post(f"/v1/users/{user}/balances/gold/spend", json={"amount": amount, "reason": "sword"},
                 headers={"Idempotency-Key": str(uuid.uuid4())})
    assert r.status_code == 201, r.text


def answered(api, note, state):
    """The stored request once its answer reached `state`."""
    def check():
        found = [n for n in api.get("/admin/v1/consumption-requests", admin=True, params={"limit": 200}).json()
                 ["notifications"] if n["notification_uuid"] == note["notification_uuid"]]
        if found and found[0].get("consumption_answer", {}).get("state") == state:
            return found[0]["consumption_answer"]
        return None
    return wait_until(check, 20, f"consumption answer {state}")


def answer_events(api, user):
    r = api.get("/admin/v1/events", admin=True, params={"user_id": user, "type": "consumption.answered"})
    assert r.status_code == 200, r.text
    return r.json()["events"]


def request_consumption(fake, transaction_id):
    note = fake.notification("CONSUMPTION_REQUEST", transaction_id=transaction_id)
    assert note["delivered_status"] == 200, note
    return note


def test_the_answer_says_what_share_of_the_purchase_was_spent(answering):
    api, fake = answering.api, answering.fake
    user = unique("asker")
    _, purchase, _ = buy(api, fake, user, GOLD)
    spend(api, user, 30)
    assert consent(api, user).status_code == 200
    note = request_consumption(fake, purchase["transaction_id"])
    answer = answered(api, note, "sent")
    sent = {"customerConsented": True, "deliveryStatus": "DELIVERED", "consumptionPercentage": 30000,
            "refundPreference": "GRANT_PRORATED", "sampleContentProvided": False}
    assert answer["answer"] == sent and answer["attempts"] == 1
    [call] = fake.consumption_calls(purchase["transaction_id"])
    assert (call["status"], call["environment"], call["body"]) == (202, "Production", sent)
    [event] = answer_events(api, user)
    assert event["data"]["state"] == "sent" and event["data"]["answer"] == sent
    assert event["data"]["transaction_id"] == purchase["transaction_id"]


def test_nothing_spent_asks_for_a_full_refund_and_everything_spent_declines(answering):
    api, fake = answering.api, answering.fake
    user = unique("asker")
    consent(api, user)
    _, untouched, _ = buy(api, fake, user, GOLD)
    answer = answered(api, request_consumption(fake, untouched["transaction_id"]), "sent")
    assert (answer["answer"]["consumptionPercentage"], answer["answer"]["refundPreference"]) == (0, "GRANT_FULL")
    spend(api, user, 100)  # the oldest purchase: the one above
    _, second, _ = buy(api, fake, user, GOLD)
    spend(api, user, 100)
    answer = answered(api, request_consumption(fake, second["transaction_id"]), "sent")
    assert (answer["answer"]["consumptionPercentage"], answer["answer"]["refundPreference"]) == (100000, "DECLINE")


def refund(api, fake, transaction_id, type="REFUND"):
    note = fake.refund(transaction_id, notification_type=None if type == "REFUND" else type)
    assert note["delivered_status"] == 200, note
    wait_until(lambda: [n for n in api.notifications(limit=200)
                        if n["notification_uuid"] == note["notification_uuid"] and n["state"] == "processed"],
               15, "refund processed")


def share_after_a_refund_left_80_owed(api, fake, user):
    """Buys 100 gold, spends 80, has Apple refund it, buys 100 gold again: the share of the
    second purchase that Storekeeper tells Apple, and the refund preference."""
    consent(api, user)
    _, first, _ = buy(api, fake, user, GOLD)
    spend(api, user, 80)
    refund(api, fake, first["transaction_id"])
    _, second, _ = buy(api, fake, user, GOLD)
    assert api.balance(user) == 20
    answer = answered(api, request_consumption(fake, second["transaction_id"]), "sent")["answer"]
    return answer["consumptionPercentage"], answer["refundPreference"]


def test_what_a_purchase_repaid_of_a_debt_counts_as_used(answering):
    # REFUND_POLICY=debt: 80 of the second purchase repaid what the refund could not take back.
    assert share_after_a_refund_left_80_owed(answering.api, answering.fake, unique("repayer")) == \
        (80000, "GRANT_PRORATED")


def test_of_a_purchase_crediting_several_assets_the_most_used_one_is_its_share(answering):
    # All 10 gems spent and no gold: summed over assets that would be 10 of 110.
    api, fake = answering.api, answering.fake
    user = unique("bundle")
    consent(api, user)
    _, purchase, _ = buy(api, fake, user, BUNDLE)
    r = api.post(f"/v1/users/{user}/balances/gems/spend", json={"amount": 10, "reason": "gem"},
                 headers={"Idempotency-Key": str(uuid.uuid4())})
    assert r.status_code == 201, r.text
    answer = answered(api, request_consumption(fake, purchase["transaction_id"]), "sent")["answer"]
    assert (answer["consumptionPercentage"], answer["refundPreference"]) == (100000, "DECLINE")


def test_a_reversed_refund_counts_only_what_came_back_to_the_purchase(answering):
    # REFUND_POLICY=debt: the refund took the 40 left and left 60 owed, which the second purchase
    # repaid; the reversal gave the 40 back to the first purchase and the 60 to the second. 60
    # of the first is used, as before the refund, not all of it.
    api, fake = answering.api, answering.fake
    user = unique("reversed")
    consent(api, user)
    _, first, _ = buy(api, fake, user, GOLD)
    spend(api, user, 60)
    refund(api, fake, first["transaction_id"])
    buy(api, fake, user, GOLD)
    refund(api, fake, first["transaction_id"], type="REFUND_REVERSED")
    assert api.balance(user) == 140
    answer = answered(api, request_consumption(fake, first["transaction_id"]), "sent")["answer"]
    assert (answer["consumptionPercentage"], answer["refundPreference"]) == (60000, "GRANT_PRORATED")


def test_a_moved_purchase_s_share_counts_from_the_whole_purchase(answering):
    # 40% refunded (prorated), then an admin moves the 60 left to another user, who spends 30:
    # 30 of the 100 bought, as Apple counts its next prorated refund, not 30 of the 60 moved.
    api, fake = answering.api, answering.fake
    owner, heir = unique("moved-from"), unique("moved-to")
    consent(api, heir)
    _, purchase, _ = buy(api, fake, owner, GOLD)
    note = fake.refund(purchase["transaction_id"], prorated_milliunits=40000)
    assert note["delivered_status"] == 200, note
    wait_until(lambda: api.balance(owner) == 60, 15, "prorated refund")
    r = api.post(f"/admin/v1/transactions/{purchase['transaction_id']}/transfer", admin=True,
                 json={"to_user_id": heir})
    assert r.status_code == 200, r.text
    spend(api, heir, 30)
    answer = answered(api, request_consumption(fake, purchase["transaction_id"]), "sent")["answer"]
    assert (answer["consumptionPercentage"], answer["refundPreference"]) == (30000, "GRANT_PRORATED")


@pytest.fixture(scope="module")
def answering_negative(module_launcher):
    stack = module_launcher.stack(api_key=True, CONSUMPTION_RETRY_BASE="1s", APPLE_TIMEOUT="10s",
                                  CONSUMPTION_REFUND_PREFERENCE="by_consumption", REFUND_POLICY="negative")
    stack.api.put_product(GOLD, grants={"balance": {"gold": 100}})
    return stack


def test_what_a_purchase_made_good_of_a_negative_balance_counts_as_used(answering_negative):
    # REFUND_POLICY=negative: the refund took the balance to -80, and the second purchase made it
    # good; its lot only ever held the 20 above zero.
    stack = answering_negative
    assert share_after_a_refund_left_80_owed(stack.api, stack.fake, unique("negative")) == (80000, "GRANT_PRORATED")


@pytest.fixture(scope="module")
def answering_prorated(module_launcher):
    stack = module_launcher.stack(api_key=True, CONSUMPTION_RETRY_BASE="1s", APPLE_TIMEOUT="10s",
                                  CONSUMPTION_REFUND_PREFERENCE="grant_prorated")
    stack.api.put_product(GOLD, grants={"balance": {"gold": 100}})
    stack.api.put_product(P + "badge", type="non_consumable", grants={"entitlement": "badge"})
    return stack


def test_grant_prorated_is_sent_only_with_a_share_apple_takes(answering_prorated):
    # Apple takes GRANT_PRORATED for a one-time purchase only with a share in (0, 100000): all of
    # it spent declines, a purchase whose use is not measured says no preference.
    api, fake = answering_prorated.api, answering_prorated.fake
    user = unique("prorated")
    consent(api, user)
    _, spent, _ = buy(api, fake, user, GOLD)
    spend(api, user, 100)
    answer = answered(api, request_consumption(fake, spent["transaction_id"]), "sent")["answer"]
    assert (answer["consumptionPercentage"], answer["refundPreference"]) == (100000, "DECLINE")
    _, partly, _ = buy(api, fake, user, GOLD)
    spend(api, user, 1)
    answer = answered(api, request_consumption(fake, partly["transaction_id"]), "sent")["answer"]
    assert (answer["consumptionPercentage"], answer["refundPreference"]) == (1000, "GRANT_PRORATED")
    _, badge, _ = buy(api, fake, user, P + "badge", type="non_consumable")
    answer = answered(api, request_consumption(fake, badge["transaction_id"]), "sent")["answer"]
    assert "consumptionPercentage" not in answer and "refundPreference" not in answer, answer


def test_a_subscription_is_answered_without_a_share(answering):
    api, fake = answering.api, answering.fake
    user = unique("subscriber")
    consent(api, user)
    _, purchase, _ = buy(api, fake, user, CLUB, type="auto_renewable")
    answer = answered(api, request_consumption(fake, purchase["transaction_id"]), "sent")
    # Apple computes a subscription's share itself and refuses one sent.
    assert answer["answer"] == {"customerConsented": True, "deliveryStatus": "DELIVERED",
                                "sampleContentProvided": False}
    assert [c["status"] for c in fake.consumption_calls(purchase["transaction_id"])] == [202]


def test_an_answer_apple_fails_with_a_5xx_is_sent_again(answering):
    api, fake = answering.api, answering.fake
    user = unique("asker")
    consent(api, user)
    _, purchase, _ = buy(api, fake, user, GOLD)
    spend(api, user, 50)
    fake.fail_consumption(2, 503)
    answer = answered(api, request_consumption(fake, purchase["transaction_id"]), "sent")
    assert answer["attempts"] == 3 and answer["answer"]["consumptionPercentage"] == 50000
    assert [c["status"] for c in fake.consumption_calls(purchase["transaction_id"])] == [503, 503, 202]
    assert len(answer_events(api, user)) == 1


def test_a_slow_apple_leases_only_the_answer_being_sent(answering):
    # Each claimed job is leased for its own call: claimed 20 at once, a slow Apple let the
    # leases of the last ones run out while the first were sent, and another instance sent
    # them too.
    api, fake, db = answering.api, answering.fake, answering.db
    purchases = []
    for _ in range(3):
        user = unique("slow-asker")
        consent(api, user)
        purchases.append(buy(api, fake, user, GOLD)[1])
    fake.call("/fake/v1/consumption/faults", {"hold_ms": 1500})
    try:
        notes = [request_consumption(fake, p["transaction_id"]) for p in purchases]
        uuids = ", ".join(f"'{n['notification_uuid']}'" for n in notes)
        leased = (f"SELECT count(*) FROM consumption_answers WHERE notification_uuid IN ({uuids}) "
                  "AND state = 'pending' AND next_attempt_at > now()")
        seen = set()
        for _ in range(80):
            seen.add(int(db.scalar(leased)))
            time.sleep(0.05)
        assert max(seen) == 1, seen
        for note in notes:
            answered(api, note, "sent")
    finally:
        fake.call("/fake/v1/consumption/faults", {"hold_ms": 0})
    assert all(len(fake.consumption_calls(p["transaction_id"])) == 1 for p in purchases)


def test_an_answer_not_taken_within_apples_window_fails(answering):
    api, fake, db = answering.api, answering.fake, answering.db
    user = unique("late")
    consent(api, user)
    _, purchase, _ = buy(api, fake, user, GOLD)
    fake.fail_consumption(100, 500)
    try:
        note = request_consumption(fake, purchase["transaction_id"])
        wait_until(lambda: len(fake.consumption_calls(purchase["transaction_id"])) >= 1, 20, "a first attempt")
        assert answered(api, note, "pending")["attempts"] >= 1
        # Apple's 12 hours, run out: the job is given up, not sent late.
        db.rows(f"UPDATE consumption_answers SET deadline = now() - interval '1 second', next_attempt_at = now() "
                f"WHERE notification_uuid = '{note['notification_uuid']}'")
        answer = answered(api, note, "failed")
        calls = len(fake.consumption_calls(purchase["transaction_id"]))
    finally:
        fake.fail_consumption(0)
    assert answer["outcome"] == "window_passed" and "500" in answer["last_error"]
    assert all(c["status"] == 500 for c in fake.consumption_calls(purchase["transaction_id"]))
    assert len(fake.consumption_calls(purchase["transaction_id"])) == calls
    [event] = answer_events(api, user)
    assert (event["data"]["state"], event["data"]["outcome"]) == ("failed", "window_passed")


def test_a_request_about_a_purchase_not_yet_reported_is_answered_once_it_is(answering):
    api, fake = answering.api, answering.fake
    user = unique("early")
    consent(api, user)
    order = api.create_order(user, GOLD)
    purchase = fake.purchase(GOLD, "consumable", app_account_token=order["app_account_token"])
    note = request_consumption(fake, purchase["transaction_id"])
    wait_until(lambda: (lambda a: a if a.get("last_error") else None)(answered(api, note, "pending")), 20,
               "a first attempt")
    assert fake.consumption_calls(purchase["transaction_id"]) == []
    r = api.report(order["trade_no"], signed_transaction=purchase["signed_transaction"])
    assert r.status_code == 200, r.text
    answer = answered(api, note, "sent")
    assert answer["answer"]["consumptionPercentage"] == 0 and answer["answer"]["refundPreference"] == "GRANT_FULL"


def test_without_consent_nothing_is_sent(answering):
    api, fake = answering.api, answering.fake
    user = unique("private")
    _, purchase, _ = buy(api, fake, user, GOLD)
    consent(api, user, consented=False)
    answer = answered(api, request_consumption(fake, purchase["transaction_id"]), "skipped")
    assert answer["outcome"] == "no_consent" and "answer" not in answer
    assert fake.consumption_calls(purchase["transaction_id"]) == []
    [event] = answer_events(api, user)
    assert (event["data"]["state"], event["data"]["outcome"]) == ("skipped", "no_consent")


def test_consent_is_the_users_own_to_record(answering):
    api = answering.api
    user = unique("consenting")
    r = api.get(f"/v1/users/{user}/consumption-consent")
    assert r.status_code == 200 and r.json()["consented"] is False
    assert consent(api, user).json()["consented"] is True
    assert api.get(f"/v1/users/{user}/consumption-consent").json()["consented"] is True
    problem(consent(api, user, headers=user_headers(unique("other"))), 403, "user_mismatch")
    r = api.request("PUT", f"/v1/users/{user}/consumption-consent", json={})
    problem(r, 422, "validation_failed")
    r = api.request("PUT", f"/v1/users/{user}/consumption-consent", json={"consented": "yes"})
    problem(r, 422, "validation_failed")


def apple_token(fake, bundle_id):
    """A Server API token as Apple's libraries sign it, with the fake's key (PyJWT, ES256)."""
    import time

    import jwt

    now = int(time.time())
    claims = {"iss": fake.api_issuer_id, "iat": now, "exp": now + 600, "aud": "appstoreconnect-v1",
              "bid": bundle_id}
    return jwt.encode(claims, fake.api_key.read_text(), algorithm="ES256", headers={"kid": fake.api_key_id})


@pytest.mark.parametrize("body, refused", [
    ({"customerConsented": False, "deliveryStatus": "DELIVERED", "sampleContentProvided": False}, "Consented"),
    ({"deliveryStatus": "DELIVERED", "sampleContentProvided": False}, "Consented"),
    ({"customerConsented": True, "deliveryStatus": "LOST", "sampleContentProvided": False}, "DeliveryStatus"),
    ({"customerConsented": True, "deliveryStatus": "DELIVERED"}, "SampleContentProvided"),
    ({"customerConsented": True, "deliveryStatus": "DELIVERED", "sampleContentProvided": False,
      "consumptionPercentage": 100001}, "ConsumptionPercentage"),
    ({"customerConsented": True, "deliveryStatus": "UNDELIVERED_OTHER", "sampleContentProvided": False,
      "consumptionPercentage": 500}, "ConsumptionPercentage"),
    ({"customerConsented": True, "deliveryStatus": "DELIVERED", "sampleContentProvided": False,
      "consumptionPercentage": 0, "refundPreference": "GRANT_PRORATED"}, "ConsumptionPercentage"),
    ({"customerConsented": True, "deliveryStatus": "DELIVERED", "sampleContentProvided": False,
      "consumptionPercentage": 100000, "refundPreference": "GRANT_PRORATED"}, "ConsumptionPercentage"),
    ({"customerConsented": True, "deliveryStatus": "DELIVERED", "sampleContentProvided": False,
      "refundPreference": "MAYBE"}, "RefundPreference"),
    ({"customerConsented": True, "deliveryStatus": "DELIVERED", "sampleContentProvided": False,
      "playTime": 3}, "Unknown field"),
])
def test_the_fake_refuses_what_apple_refuses(answering, body, refused):
    import requests

    from support import BUNDLE_ID

    fake = answering.fake
    purchase = fake.purchase(GOLD, "consumable")
    url = f"{fake.url}/inApps/v2/transactions/consumption/{purchase['transaction_id']}"
    r = requests.put(url, json=body, headers={"Authorization": "Bearer " + apple_token(fake, BUNDLE_ID)}, timeout=30)
    assert r.status_code == 400 and refused in r.json()["errorMessage"], r.text
    assert requests.put(url, json=body, timeout=30).status_code == 401
    good = {"customerConsented": True, "deliveryStatus": "DELIVERED", "sampleContentProvided": True,
            "consumptionPercentage": 1, "refundPreference": "GRANT_PRORATED"}
    ok = requests.put(url, json=good, headers={"Authorization": "Bearer " + apple_token(fake, BUNDLE_ID)}, timeout=30)
    assert ok.status_code == 202, ok.text
    # Another app's token does not reach this app's transactions.
    other = requests.put(url, json=good, headers={"Authorization": "Bearer " + apple_token(fake, "com.example.other")},
                         timeout=30)
    assert other.status_code == 404
