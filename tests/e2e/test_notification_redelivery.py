"""Issue 6: a notification Storekeeper could not take is not lost. Apple re-sends a V2
notification that was not answered with 200-206 (production only, 1, 12, 24, 48 and 72 hours
after the previous attempt); the fake App Store does the same on a shortened schedule. While
Storekeeper is down, or up without its database (503), the refund waits at Apple, and lands
exactly once when a retry gets through. This stops the shared PostgreSQL server: the suite must
run sequentially."""

from __future__ import annotations

import requests

from support import buy, pg_start, pg_stop, unique, wait_until

GOLD = "com.example.tests.redelivery.gold"
SCHEDULE = "1,1,1,2,2,3,3,5,5,8"


def results(history: dict) -> list[str]:
    return [attempt["send_attempt_result"] for attempt in history["send_attempts"]]


def settled(fake, uuid: str) -> dict:
    return wait_until(lambda: (lambda h: h if h["retries_left"] == 0 else None)(fake.delivery_history(uuid)), 60,
                      f"the fake never stopped retrying {uuid}")


def stack_with_a_buyer(launcher, label: str, packs: int):
    """A fake that retries on the short schedule, and a user who bought `packs` gold packs."""
    stack = launcher.stack(retry_schedule=SCHEDULE)
    stack.api.put_product(GOLD, grants={"balance": {"gold": 100}})
    user = unique(label)
    purchases = [buy(stack.api, stack.fake, user, GOLD)[1] for _ in range(packs)]
    assert stack.api.balance(user) == 100 * packs
    return stack, user, purchases[0]


def test_a_refund_sent_while_storekeeper_is_down_lands_once_after_it_restarts(launcher):
    stack, user, purchase = stack_with_a_buyer(launcher, "redeliver-down", packs=1)
    api, fake = stack.api, stack.fake

    assert stack.sk.terminate() == 0
    note = fake.refund(purchase["transaction_id"])
    assert note["delivered_status"] is None, note
    assert note["retries_left"] == 10

    stack.sk.restart()
    wait_until(lambda: api.balance(user) == 0, 30, "the re-sent refund never lowered the balance")
    history = settled(fake, note["notification_uuid"])
    assert results(history)[0] == "SOCKET_ISSUE"
    assert results(history)[-1] == "SUCCESS"
    assert results(history).count("SUCCESS") == 1
    assert api.balance(user) == 0
    stored = [n for n in api.notifications(limit=200) if n["notification_uuid"] == note["notification_uuid"]]
    assert len(stored) == 1 and stored[0]["state"] == "processed", stored


def test_a_refund_answered_503_while_the_database_is_down_lands_once_when_it_returns(launcher):
    stack, user, purchase = stack_with_a_buyer(launcher, "redeliver-503", packs=2)
    api, fake = stack.api, stack.fake

    pg_stop()
    try:
        note = fake.refund(purchase["transaction_id"])
        # Storekeeper could not store it durably, so it must not say 200: Apple will retry.
        assert note["delivered_status"] == 503, note
        assert note["retries_left"] == 10
    finally:
        pg_start()

    wait_until(lambda: requests.get(stack.sk.url + "/readyz", timeout=5).status_code == 200, 30,
               "/readyz did not recover after PostgreSQL came back")
    wait_until(lambda: api.balance(user) == 100, 45, "the re-sent refund never lowered the balance")
    history = settled(fake, note["notification_uuid"])
    assert results(history)[0] == "UNSUCCESSFUL_HTTP_RESPONSE_CODE"
    assert history["send_attempts"][0]["status"] == 503
    assert results(history)[-1] == "SUCCESS"
    assert api.balance(user) == 100
    order = api.admin_orders(user_id=user)
    assert sorted(o["trade_status"] for o in order) == ["TRADE_CLOSED", "TRADE_SUCCESS"], order
