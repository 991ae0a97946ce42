"""Issue 6, beyond Apple's retries: a notification Apple could not deliver is read back from
the App Store Server API's notification history (the fake serves it, checking the ES256 token
of the in-app purchase key it issued) and applied exactly once."""

from __future__ import annotations

import subprocess
import time

import requests

from support import BUNDLE_ID, buy, free_port, unique, wait_until

GOLD = "com.example.tests.recovery.gold"


def recovering_stack(launcher, **env):
    """A fake that never re-sends, and a Storekeeper that reads its notification history."""
    port = free_port()
    fake = launcher.fake(notify_port=port, retry_schedule="none")
    settings = {**fake.api_env(), "NOTIFICATION_RECOVERY_INTERVAL": "1s", **env}
    sk = launcher.storekeeper(launcher.database(), fake=fake, port=port, **settings)
    sk.client.put_product(GOLD, grants={"balance": {"gold": 100}})
    return sk, fake


def metric(sk, name: str) -> float:
    text = sk.client.get("/metrics", admin=True, timeout=5).text
    values = [line.rpartition(" ")[2] for line in text.splitlines() if line.startswith(name + " ")]
    assert len(values) == 1, (name, text[-800:])
    return float(values[0])


def refunded_while_down(sk, fake, transaction_id: str) -> dict:
    """Refunds at Apple while Storekeeper is stopped (the one attempt fails, none is left to
    come), then starts it again; the refund's notification."""
    assert sk.terminate() == 0
    note = fake.refund(transaction_id)
    assert note["delivered_status"] is None and note["retries_left"] == 0, note
    sk.restart()
    return note


def stored_once(api, note: dict) -> None:
    stored = [n for n in api.notifications(limit=200) if n["notification_uuid"] == note["notification_uuid"]]
    assert len(stored) == 1 and stored[0]["state"] == "processed", stored


def test_a_refund_apple_could_not_deliver_is_recovered_from_the_history_once(launcher):
    sk, fake = recovering_stack(launcher)
    api = sk.client
    user = unique("recovered")
    _, purchase, _ = buy(api, fake, user, GOLD)
    buy(api, fake, user, GOLD)
    assert api.balance(user) == 200

    note = refunded_while_down(sk, fake, purchase["transaction_id"])
    wait_until(lambda: api.balance(user) == 100, 30, "the undelivered refund was never recovered")
    stored_once(api, note)
    # Later passes read the same range again (they overlap): nothing moves twice.
    wait_until(lambda: sk.log().count("notification recovery found nothing new") >= 2, 30,
               "no further recovery pass ran")
    assert api.balance(user) == 100
    assert "undelivered notifications recovered" in sk.log()
    assert metric(sk, 'storekeeper_notification_recovery_failing{environment="production"}') == 0
    assert abs(metric(sk, 'storekeeper_notification_recovery_checked_until_seconds{environment="production"}') - time.time()) < 120


def test_more_undelivered_notifications_than_one_pass_reads_are_all_recovered_by_the_next(launcher):
    # A pass reads at most 100 pages (2,000 notifications at Apple's 20 a page; one a page
    # here): the next pass goes on from Apple's pagination token instead of reading the range
    # from its start again, which never reached what lay past the limit.
    sk, fake = recovering_stack(launcher)
    api = sk.client
    user = unique("recovered-many")
    _, purchase, _ = buy(api, fake, user, GOLD)
    buy(api, fake, user, GOLD)
    fake.set_notification_history_page_size(1)

    assert sk.terminate() == 0
    uuids = [fake.notification("TEST", bundle_id=BUNDLE_ID)["notification_uuid"] for _ in range(100)]
    refund = fake.refund(purchase["transaction_id"])
    assert refund["delivered_status"] is None and refund["retries_left"] == 0, refund
    uuids.append(refund["notification_uuid"])

    sk.restart()
    wait_until(lambda: api.balance(user) == 100, 60, "the refund past the first pass's pages was never recovered")
    assert "reached its page limit; the next pass goes on from there" in sk.log()
    stored = {n["notification_uuid"] for n in api.notifications(limit=200)}
    assert set(uuids) <= stored
    wait_until(lambda: abs(metric(sk, 'storekeeper_notification_recovery_checked_until_seconds{environment="production"}') - time.time()) < 120,
               30, "checked_until never moved past the range")
    assert api.balance(user) == 100


def test_a_key_the_api_refuses_is_logged_and_harms_nothing(launcher):
    sk, fake = recovering_stack(launcher, APPLE_API_KEY_ID="WRONGKEY00")
    wait_until(lambda: "notification history answered 401" in sk.log(), 30,
               "the refused token was not logged")
    wait_until(lambda: metric(sk, 'storekeeper_notification_recovery_failing{environment="production"}') == 1, 10,
               "/metrics does not show the failing recovery")
    assert metric(sk, 'storekeeper_notification_recovery_checked_until_seconds{environment="production"}') == 0
    user = unique("recovery-refused")
    buy(sk.client, fake, user, GOLD)
    assert sk.client.balance(user) == 100


def run_serve(binary, env):
    return subprocess.run([binary, "serve"], env=env, capture_output=True, text=True, timeout=20)


def test_api_settings_come_together_and_the_key_must_be_one(binary, launcher, fresh_db, tmp_path):
    partial = launcher.env(fresh_db, 1, APPLE_API_KEY_ID="KEY0000001")
    result = run_serve(binary, partial)
    assert result.returncode != 0
    assert "APPLE_API_KEY_FILE" in result.stdout + result.stderr

    not_a_key = tmp_path / "key.p8"
    not_a_key.write_text("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n")
    wrong = launcher.env(fresh_db, 1, APPLE_API_KEY_FILE=str(not_a_key), APPLE_API_KEY_ID="K",
                         APPLE_API_ISSUER_ID="I")
    result = run_serve(binary, wrong)
    assert result.returncode != 0
    lines = [line for line in (result.stdout + result.stderr).splitlines() if line.strip()]
    assert "APPLE_API_KEY_FILE" in lines[-1], lines


def test_a_sandbox_refund_apple_sent_once_is_recovered_from_the_sandbox_history(launcher):
    # Apple sends a sandbox notification once, with no retries, and keeps it in the sandbox
    # host's history only: with sandbox purchases accepted, a refund sent while Storekeeper was
    # down is read back from there, as production's are from the production host.
    sk, fake = recovering_stack(launcher, APPLE_ENVIRONMENTS="production,sandbox")
    api = sk.client
    user = unique("recovered-sandbox")
    _, purchase, _ = buy(api, fake, user, GOLD, environment="Sandbox")
    assert api.balance(user) == 100

    note = refunded_while_down(sk, fake, purchase["transaction_id"])
    wait_until(lambda: api.balance(user) == 0, 30, "the undelivered sandbox refund was never recovered")
    stored_once(api, note)
    wait_until(lambda: metric(sk, 'storekeeper_notification_recovery_checked_until_seconds{environment="sandbox"}')
               > time.time() - 120, 30, "the sandbox history's pass was not recorded")
    assert metric(sk, 'storekeeper_notification_recovery_failing{environment="sandbox"}') == 0
