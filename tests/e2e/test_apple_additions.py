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
import subprocess
import uuid
from pathlib import Path

import pytest
import requests

from support import BUNDLE_ID, buy, jws_payload, problem, unique, wait_for_order, wait_until
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
    return module_launcher.stack(api_key=True)


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


def fake_transaction(fake, transaction_id):
    r = requests.get(f"{fake.url}/fake/v1/transactions/{transaction_id}", timeout=30)
    assert r.status_code == 200, r.text
    return r.json()


def by_app_transaction(api, app_transaction_id, **params):
    return api.get("/admin/v1/transactions", admin=True,
                   params={"app_transaction_id": app_transaction_id, **params})


def rate_limit(fake, count, retry_after_ms):
    return fake.call("/fake/v1/rate-limit", {"count": count, "retry_after_ms": retry_after_ms})


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


