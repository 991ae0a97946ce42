"""Deleting a webhook endpoint (audit 4, finding 1): the admin's call marks it, and the webhook
loop removes its deliveries and row later, in batches. Events written meanwhile (payments,
spends, refunds, on any instance) neither wait for the deletion nor fail on the deliveries'
foreign key, and the deleted endpoint is gone for admins at once and sent nothing more."""

from __future__ import annotations

import threading
import time
import uuid

from support import buy, problem, refreshed_metrics, unique, wait_until
from test_webhooks import FAST, Receiver, create_endpoint, deliveries

# Delivered rows as WEBHOOK_RETENTION keeps them: more than two removal batches (1,000 each).
HISTORY = 2500


def spend(client, user: str, timeout: float = 30):
    return client.post(f"/v1/users/{user}/balances/gold/spend", json={"amount": 1, "reason": "e2e"},
                       headers={"Idempotency-Key": str(uuid.uuid4())}, timeout=timeout)


def two_instances(launcher):
    """A fake App Store notifying the first instance; a second one on the same database."""
    stack = launcher.stack(**FAST)
    other = launcher.storekeeper(stack.db, fake=stack.fake, share_admin_with=stack.sk, **FAST)
    return stack, other.client


def test_a_deletion_holds_up_no_spend_and_fails_no_refund_and_its_endpoint_is_sent_nothing_more(launcher):
    stack, b = two_instances(launcher)
    a, db, fake = stack.sk.client, stack.db, stack.fake
    gold = unique("com.example.tests.webhooks.deleted.gold")
    a.put_product(gold, grants={"balance": {"gold": 100}})
    # Every attempt fails, so the endpoint's deliveries stay pending and are retried.
    receiver = Receiver(lambda event: 503)
    try:
        endpoint = create_endpoint(a, receiver.url)["id"]
        spender, refunded = unique("wh-spender"), unique("wh-refunded")
        buy(a, fake, spender, gold)
        _, purchase, _ = buy(a, fake, refunded, gold)
        note = fake.refund(purchase["transaction_id"], deliver=False)
        db.rows(f"""INSERT INTO webhook_deliveries (endpoint_id, event_position, user_id, sequence, state,
                                                    attempts, delivered_at)
                    SELECT '{endpoint}', (SELECT min(position) FROM events), 'history-' || g, 1, 'delivered',
                           1, now()
                    FROM generate_series(1, {HISTORY}) g""")
        db.rows(f"""INSERT INTO webhook_attempts (delivery_id, duration_ms, outcome, status_code)
                    SELECT id, 5, 'delivered', 200 FROM webhook_deliveries
                    WHERE endpoint_id = '{endpoint}' AND user_id LIKE 'history-%'""")
        wait_until(lambda: receiver.requests, 20, "an attempt to the endpoint")

        answers: list = []
        deleter = threading.Thread(target=lambda: answers.append(
            a.request("DELETE", f"/admin/v1/webhook-endpoints/{endpoint}", admin=True, timeout=60)))
        stored = f"SELECT state FROM apple_notifications WHERE notification_uuid = '{note['notification_uuid']}'"
        # The audit row is the deletion's last write: held back here, the deletion keeps its
        # transaction open after it changed the endpoint's row, as a long cascade once did.
        with db.holding("LOCK TABLE admin_audit IN SHARE MODE"):
            deleter.start()
            wait_until(lambda: db.scalar("SELECT count(*) FROM pg_locks WHERE NOT granted "
                                         "AND relation = 'admin_audit'::regclass") != "0",
                       30, "the deletion reached its audit row")
            # Written on the other instance meanwhile: neither waits for the deletion. (Before,
            # each waited on the foreign key check, then failed it: 500, and the refund failed
            # for good.)
            spent = spend(b, spender, timeout=10)
            assert spent.status_code == 201, spent.text
            assert b.post_notification(note["signed_payload"]).status_code == 200
            wait_until(lambda: db.scalar(stored) == "processed", 20, "the refund applied meanwhile")
            assert a.balance(refunded) == 0
        deleter.join(timeout=60)
        assert answers and answers[0].status_code == 204, answers

        # Gone for admins at once, though its rows are removed later.
        problem(a.get(f"/admin/v1/webhook-endpoints/{endpoint}", admin=True), 404, "webhook_endpoint_not_found")
        problem(b.request("DELETE", f"/admin/v1/webhook-endpoints/{endpoint}", admin=True), 404)
        listed = a.get("/admin/v1/webhook-endpoints", admin=True).json()["endpoints"]
        assert endpoint not in [e["id"] for e in listed]
        assert deliveries(a, endpoint_id=endpoint) == []
        assert f'endpoint_id="{endpoint}"' not in refreshed_metrics(a)
        # Its pending deliveries (the spend's and refund's, retried every second) are never sent.
        time.sleep(0.5)
        sent = len(receiver.requests)
        time.sleep(3)
        assert len(receiver.requests) == sent
        # The loop removes the history in batches, then the row.
        wait_until(lambda: db.scalar(f"SELECT count(*) FROM webhook_deliveries WHERE endpoint_id = '{endpoint}'")
                   == "0", 60, "the deleted endpoint's deliveries removed")
        wait_until(lambda: db.scalar(f"SELECT count(*) FROM webhook_endpoints WHERE id = '{endpoint}'") == "0",
                   30, "the deleted endpoint's row removed")
        assert a.balance(spender) == 99
    finally:
        receiver.close()


def test_endpoints_created_and_deleted_while_both_instances_spend_fail_no_spend(launcher):
    stack, b = two_instances(launcher)
    a, fake = stack.sk.client, stack.fake
    gold = unique("com.example.tests.webhooks.cycled.gold")
    a.put_product(gold, grants={"balance": {"gold": 100000}})
    users = [unique("wh-cycling") for _ in range(4)]
    for user in users:
        buy(a, fake, user, gold)
    stop = threading.Event()
    answers: list[int] = []
    failures: list[str] = []

    def spender(client, user):
        while not stop.is_set():
            r = spend(client, user)
            answers.append(r.status_code)
            if r.status_code >= 500:
                failures.append(r.text[:200])

    threads = [threading.Thread(target=spender, args=(a if i % 2 else b, u)) for i, u in enumerate(users)]
    for t in threads:
        t.start()
    try:
        for _ in range(15):
            endpoint = create_endpoint(a, "http://127.0.0.1:9/unused")["id"]
            time.sleep(0.3)
            r = b.request("DELETE", f"/admin/v1/webhook-endpoints/{endpoint}", admin=True)
            assert r.status_code == 204, r.text
    finally:
        stop.set()
        for t in threads:
            t.join(timeout=60)
    assert not failures, f"{len(failures)} of {len(answers)} spends failed: {failures[:3]}"
    assert answers and set(answers) == {201}, set(answers)
