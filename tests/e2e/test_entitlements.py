"""Issue 5: GET /v1/users/{user_id}/entitlements — balances from the ledger, active entitlements
with expires_at (non-renewing from payment, auto-renewable from Apple's expiresDate, forever for
a non-consumable), owned non-consumables."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from urllib.parse import quote

import pytest

from support import buy, jws_payload, problem, unique

P = "com.example.tests.entitlements."


@pytest.fixture(scope="module", autouse=True)
def catalog(api):
    api.put_product(P + "gold", grants={"balance": {"gold": 100, "gems": 2}})
    api.put_product(P + "noads", type="non_consumable", grants={})
    api.put_product(P + "premium", type="non_consumable", grants={"entitlement": "premium"})
    api.put_product(P + "vip.week", type="non_renewing", grants={"entitlement": "vip", "duration_days": 7})
    api.put_product(P + "club.monthly", type="auto_renewable", grants={"entitlement": "club"})


def parse(text):
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def test_a_user_with_nothing_has_the_empty_shape(api):
    user = unique("nobody")
    assert api.entitlements(user) == {"user_id": user, "balances": {}, "sandbox_balances": {}, "entitlements": [],
                                      "non_consumables": []}


def test_everything_a_user_owns_has_its_shape(api, fake_appstore):
    user = unique("owner")
    buy(api, fake_appstore, user, P + "gold", quantity=2)
    buy(api, fake_appstore, user, P + "noads", type="non_consumable")
    buy(api, fake_appstore, user, P + "premium", type="non_consumable")
    _, _, week = buy(api, fake_appstore, user, P + "vip.week", type="non_renewing")
    _, club, _ = buy(api, fake_appstore, user, P + "club.monthly", type="auto_renewable", expires_in_seconds=3600)

    owned = api.entitlements(user)
    assert owned["user_id"] == user
    assert owned["balances"] == {"gold": 200, "gems": 4}
    assert owned["non_consumables"] == sorted([P + "noads", P + "premium"])
    by_name = {e["entitlement"]: e for e in owned["entitlements"]}
    assert set(by_name) == {"premium", "vip", "club"}
    assert [e["entitlement"] for e in owned["entitlements"]] == sorted(by_name)

    assert by_name["premium"].get("expires_at") is None
    assert by_name["premium"]["product_id"] == P + "premium"
    assert by_name["premium"]["source"] == "non_consumable"

    paid = parse(week.json()["order"]["paid_at"])
    assert abs(parse(by_name["vip"]["expires_at"]) - (paid + timedelta(days=7))) < timedelta(seconds=2)
    assert by_name["vip"]["source"] == "non_renewing"

    apple_expiry = jws_payload(club["signed_transaction"])["expiresDate"]
    club_expiry = parse(by_name["club"]["expires_at"])
    assert int(club_expiry.timestamp() * 1000) == apple_expiry, "auto-renewable expiry is Apple's expiresDate"
    assert by_name["club"]["source"] == "auto_renewable"


def test_an_expired_subscription_is_not_active(api, fake_appstore):
    user = unique("lapsed")
    buy(api, fake_appstore, user, P + "club.monthly", type="auto_renewable", expires_in_seconds=-60)
    assert api.entitlements(user)["entitlements"] == []


def test_user_ids_are_path_encoded_and_checked(api, fake_appstore):
    guest = "guest:" + unique("g")
    buy(api, fake_appstore, guest, P + "gold")
    assert api.get(f"/v1/users/{quote(guest, safe='')}/entitlements").json()["balances"]["gold"] == 100
    problem(api.get("/v1/users/bad%01user/entitlements"), 400, "invalid_user_id")


def test_a_user_id_with_a_slash_reads_its_own_entitlements(api, fake_appstore):
    user = "team/" + unique("slash")
    buy(api, fake_appstore, user, P + "gold")
    r = api.get(f"/v1/users/{quote(user, safe='')}/entitlements")
    assert r.status_code == 200, r.text
    assert r.json()["user_id"] == user
    assert r.json()["balances"]["gold"] == 100
