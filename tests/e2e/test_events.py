"""Issue 12 (events): every change is an event written with it, numbered per user without gaps and
carrying the user's whole state afterwards; GET /admin/v1/events is the feed."""

from __future__ import annotations

import pytest

from support import buy, error_fields, problem, unique, wait_until

P = "com.example.tests.events."
GOLD = P + "gold"
CLUB = P + "club.monthly"


@pytest.fixture(scope="module", autouse=True)
def catalog(api):
    api.put_product(GOLD, grants={"balance": {"gold": 100}})
    api.put_product(CLUB, type="auto_renewable", grants={"entitlement": "club"})


def feed(api, **params):
    r = api.get("/admin/v1/events", admin=True, params=params)
    assert r.status_code == 200, r.text
    return r.json()


def events_of(api, user, count):
    """The user's events once `count` of them are final in the feed."""
    return wait_until(lambda: (lambda page: page["events"] if len(page["events"]) >= count else None)(
        feed(api, user_id=user, limit=200)), 15, f"{user} never had {count} events in the feed")


def test_a_purchase_a_refund_and_a_renewal_come_in_order_with_the_state_after_each(api, fake_appstore):
    user = unique("events")
    order, purchase, _ = buy(api, fake_appstore, user, GOLD)
    assert events_of(api, user, 2)[-1]["user_state"] == api.entitlements(user)

    note = fake_appstore.refund(purchase["transaction_id"])
    assert note["delivered_status"] == 200, note
    refunded = events_of(api, user, 5)
    assert refunded[-1]["user_state"] == api.entitlements(user)
    assert refunded[-1]["user_state"]["balances"] == {"gold": 0}

    _, club, _ = buy(api, fake_appstore, user, CLUB, type="auto_renewable", expires_in_seconds=120)
    renewal = fake_appstore.renewal(club["transaction_id"], expires_in_seconds=30 * 86400)
    assert renewal["delivered_status"] == 200, renewal
    events = events_of(api, user, 10)

    assert [e["type"] for e in events] == [
        "order.paid", "balance.changed",
        "purchase.refunded", "order.closed", "balance.changed",
        "order.paid", "entitlement.granted",
        "subscription.renewed", "order.paid", "entitlement.extended",
    ]
    assert [e["sequence"] for e in events] == list(range(1, 11))
    assert all(e["user_id"] == user for e in events)
    assert len({e["id"] for e in events}) == 10
    assert events[0]["data"]["trade_no"] == order["trade_no"]
    assert events[2]["data"]["transaction_id"] == purchase["transaction_id"]
    assert events[3]["data"]["close_reason"] == "refunded"
    assert events[4]["data"]["changes"] == {"gold": -100}
    assert events[4]["data"]["cause"]["type"] == "purchase.refunded"
    assert events[9]["data"]["entitlement"] == "club"
    assert events[9]["data"]["previous"]["expires_at"] < events[9]["data"]["expires_at"]
    assert events[-1]["user_state"] == api.entitlements(user)

    # The whole feed, read page by page from the start, carries the same events in that order.
    seen, after = [], None
    while True:
        page = feed(api, limit=3, **({"after": after} if after else {}))
        seen += [e["id"] for e in page["events"] if e["user_id"] == user]
        after = page["next_cursor"]
        if not page["has_more"]:
            break
    assert seen == [e["id"] for e in events]
    # Nothing new: an empty page that keeps the reader's place.
    again = feed(api, after=after)
    assert again["events"] == [] and again["next_cursor"] == after

    typed = feed(api, user_id=user, type="order.paid")["events"]
    assert [e["sequence"] for e in typed] == [1, 6, 9]

    # One user's feed, page by page, in sequence order; its cursor is read on in that feed
    # only (the whole feed's order differs, and a reader switching could skip events).
    first = feed(api, user_id=user, limit=4)
    mine = feed(api, user_id=user, after=first["next_cursor"], limit=50)
    assert [e["sequence"] for e in first["events"] + mine["events"]] == list(range(1, 11))
    for params in ({}, {"user_id": user + "-other"}):
        body = problem(api.get("/admin/v1/events", admin=True, params={"after": first["next_cursor"], **params}),
                       400, "invalid_query")
        assert "after" in error_fields(body), body


def test_the_feed_is_for_admins_and_checks_every_parameter(api):
    assert api.get("/admin/v1/events").status_code == 401
    for params, field in [({"limit": "0"}, "limit"), ({"limit": "201"}, "limit"), ({"limit": "x"}, "limit"),
                          ({"type": "order.eaten"}, "type"), ({"after": "not-a-cursor"}, "after"),
                          ({"after": "!!"}, "after"), ({"user_id": "bad\x01user"}, "user_id"),
                          ({"since": "1"}, "since")]:
        body = problem(api.get("/admin/v1/events", admin=True, params=params), 400, "invalid_query")
        assert field in error_fields(body), body
