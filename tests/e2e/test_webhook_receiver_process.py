"""Issue 12, webhooks against a real receiver process (tests/e2e/webhook_receiver.py, run with
the system Python): it checks every signature and records what it got in a file, so what it
saw survives its own restart. Events come from the domain itself (orders settled by reports
with the fake App Store's signed transactions, refunds notified by the fake App Store), not SQL.

What the issue asks for and test_webhooks.py does not yet show: one user's order survives a
receiver failing every other request; a receiver down for a while (connection refused) gets
everything afterwards, in order; the feed and the webhooks carry the same events."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from support import buy, free_port, refreshed_metrics, unique, wait_until

FAST = {
    "WEBHOOK_RETRY_BASE": "1s",
    # Long enough that a receiver slowed by a loaded machine is not timed out and sent the
    # same delivery twice; a test about the timeout sets its own.
    "WEBHOOK_TIMEOUT": "10s",
    "WEBHOOK_POLL_INTERVAL": "200ms",
}
RECEIVER = str(Path(__file__).with_name("webhook_receiver.py"))


class ReceiverProcess:
    """tests/e2e/webhook_receiver.py as a child process on `port`, recording into `record`."""

    def __init__(self, port: int, secret: str, record: Path, fail_every_other: bool = False):
        args = [sys.executable, RECEIVER, "--port", str(port), "--secret", secret, "--record", str(record)]
        if fail_every_other:
            args.append("--fail-every-other")
        self.process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.process.stdout.readline() if self.process.stdout else ""
        assert line == f"listening {port}\n", f"receiver did not start: {line!r} {self.process.stderr.read() if self.process.poll() is not None and self.process.stderr else ''}"

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait(10)


def received(record: Path) -> list[dict]:
    if not record.exists():
        return []
    return [json.loads(line) for line in record.read_text().splitlines() if line.strip()]


def received_by(record: Path, user: str) -> list[dict]:
    return [r for r in received(record) if r["event"] and r["event"]["user_id"] == user]


def first_successes(records: list[dict]) -> list[dict]:
    """Each sequence's first 2xx answer, in the order the receiver gave them."""
    seen: set[int] = set()
    out = []
    for r in records:
        sequence = r["event"]["sequence"]
        if 200 <= r["status"] < 300 and sequence not in seen:
            seen.add(sequence)
            out.append(r)
    return out


def feed_of(api, user: str) -> list[dict]:
    r = api.get("/admin/v1/events", admin=True, params={"user_id": user, "limit": 200})
    assert r.status_code == 200, r.text
    return r.json()["events"]


def backlog(api, endpoint_id: str) -> int:
    """Undelivered deliveries of the endpoint, as /metrics shows them once recounted."""
    prefix = f'storekeeper_webhook_backlog{{endpoint_id="{endpoint_id}"}} '
    lines = [l for l in refreshed_metrics(api).splitlines() if l.startswith(prefix)]
    return int(lines[0][len(prefix):]) if lines else 0


def create_endpoint(api, url: str) -> dict:
    r = api.post("/admin/v1/webhook-endpoints", admin=True, json={"url": url})
    assert r.status_code == 201, r.text
    return r.json()


def stack(launcher):
    port = free_port()
    fake = launcher.fake(notify_port=port)
    sk = launcher.storekeeper(launcher.database(), fake=fake, port=port, **FAST)
    gold = unique("com.example.tests.receiver.gold")
    sk.client.put_product(gold, grants={"balance": {"gold": 100}})
    return sk, fake, gold


def assert_in_order_and_complete(api, record: Path, user: str, count: int) -> list[dict]:
    """The receiver got all `count` events of the user, signed, and the first 2xx answer of
    each sequence came in sequence order; no attempt at a sequence came before the previous
    one was answered 2xx. Returns the first successes."""
    everything = list(enumerate(received(record)))  # file order: the order answers were decided
    mine = [(i, r) for i, r in everything if r["event"] and r["event"]["user_id"] == user]
    assert all(r["verified"] for _, r in mine), "a delivery did not verify with the endpoint's secret"
    firsts = first_successes([r for _, r in mine])
    assert [r["event"]["sequence"] for r in firsts] == list(range(1, count + 1)), [
        (r["event"]["sequence"], r["status"]) for _, r in mine]
    delivered_at: dict[int, int] = {}
    for i, r in mine:
        sequence = r["event"]["sequence"]
        if sequence > 1:
            assert sequence - 1 in delivered_at, f"sequence {sequence} was sent before {sequence - 1} was delivered"
        if 200 <= r["status"] < 300:
            delivered_at.setdefault(sequence, i)
    feed = feed_of(api, user)
    assert [e["sequence"] for e in feed] == list(range(1, count + 1))
    assert [r["event"]["id"] for r in firsts] == [e["id"] for e in feed]
    assert all(r["event_id_header"] == r["event"]["id"] for _, r in mine)
    return firsts


def test_one_users_order_survives_a_receiver_failing_every_other_request(launcher, tmp_path):
    sk, fake, gold = stack(launcher)
    api = sk.client
    record = tmp_path / "every-other.jsonl"
    port = free_port()
    endpoint = create_endpoint(api, f"http://127.0.0.1:{port}/hooks")
    receiver = ReceiverProcess(port, endpoint["secret"], record, fail_every_other=True)
    try:
        users = [unique("rcv-flaky"), unique("rcv-flaky")]
        purchases = {u: [buy(api, fake, u, gold)[1] for _ in range(2)] for u in users}
        for u in users:
            note = fake.refund(purchases[u][0]["transaction_id"])
            assert note["delivered_status"] == 200, note
        # Per user: two purchases (order.paid, balance.changed each) and a refund
        # (purchase.refunded, order.closed, balance.changed).
        for u in users:
            wait_until(lambda u=u: len(first_successes(received_by(record, u))) >= 7, 60,
                       f"{u}'s seven events through the failing receiver")
        for u in users:
            firsts = assert_in_order_and_complete(api, record, u, 7)
            assert firsts[-1]["event"]["user_state"] == api.entitlements(u)
            assert firsts[-1]["event"]["user_state"]["balances"] == {"gold": 100}
        everything = received(record)
        failed = [r for r in everything if r["status"] == 500]
        # Every second request was refused; each refused one was tried again and got through.
        assert len(failed) == len(everything) // 2 and failed
        assert all(any(s["event"]["id"] == f["event"]["id"] and 200 <= s["status"] < 300 for s in everything)
                   for f in failed)
    finally:
        receiver.stop()


def test_a_receiver_down_for_a_while_gets_everything_afterwards_in_order(launcher, tmp_path):
    sk, fake, gold = stack(launcher)
    api = sk.client
    record = tmp_path / "down.jsonl"
    port = free_port()
    endpoint = create_endpoint(api, f"http://127.0.0.1:{port}/hooks")
    receiver = ReceiverProcess(port, endpoint["secret"], record)
    try:
        user, other = unique("rcv-down"), unique("rcv-down-other")
        first = buy(api, fake, user, gold)[1]
        wait_until(lambda: len(received_by(record, user)) == 2, 20, "the first purchase's events while up")
        # Answered is not yet recorded as delivered: stopping before that would have the second
        # one sent again later (at least once), which is not what this test looks at.
        wait_until(lambda: backlog(api, endpoint["id"]) == 0, 30, "the first events recorded as delivered")
        receiver.stop()  # from here every attempt is a refused connection

        second = buy(api, fake, user, gold)[1]
        buy(api, fake, other, gold)
        assert fake.refund(first["transaction_id"])["delivered_status"] == 200
        assert fake.refund(second["transaction_id"])["delivered_status"] == 200

        def refused():
            listed = api.admin_pages("/admin/v1/webhook-deliveries", "deliveries", endpoint_id=endpoint["id"])
            return [d for d in listed if any(a["outcome"] == "connection_failed" for a in d["attempts"])]
        wait_until(lambda: len(refused()) >= 2, 20, "attempts refused while the receiver is down")
        assert backlog(api, endpoint["id"]) > 0
        assert len(received_by(record, user)) == 2

        receiver = ReceiverProcess(port, endpoint["secret"], record)  # the same port, a new process
        # User: 2 + 2 (second purchase) + 3 + 3 (two refunds); the other user: 2.
        wait_until(lambda: len(first_successes(received_by(record, user))) >= 10, 60,
                   "every event of the user after the receiver came back")
        wait_until(lambda: len(first_successes(received_by(record, other))) >= 2, 20, "the other user's events")
        firsts = assert_in_order_and_complete(api, record, user, 10)
        assert_in_order_and_complete(api, record, other, 2)
        assert [r["event"]["type"] for r in firsts] == [
            "order.paid", "balance.changed", "order.paid", "balance.changed",
            "purchase.refunded", "order.closed", "balance.changed",
            "purchase.refunded", "order.closed", "balance.changed"]
        assert firsts[-1]["event"]["user_state"] == api.entitlements(user)
        assert firsts[-1]["event"]["user_state"]["balances"] == {"gold": 0}
        wait_until(lambda: backlog(api, endpoint["id"]) == 0, 30, "the backlog drained")
    finally:
        receiver.stop()


def test_the_feed_and_the_webhooks_carry_the_same_events(launcher, tmp_path):
    sk, fake, gold = stack(launcher)
    api = sk.client
    record = tmp_path / "same.jsonl"
    port = free_port()
    endpoint = create_endpoint(api, f"http://127.0.0.1:{port}/hooks")
    receiver = ReceiverProcess(port, endpoint["secret"], record)
    try:
        user = unique("rcv-same")
        purchase = buy(api, fake, user, gold)[1]
        assert fake.refund(purchase["transaction_id"])["delivered_status"] == 200
        wait_until(lambda: len(received_by(record, user)) >= 5 and len(feed_of(api, user)) >= 5, 20,
                   "the purchase's and the refund's events in both")
        feed = feed_of(api, user)
        sent = [r["event"] for r in first_successes(received_by(record, user))]
        assert len(feed) == len(sent) == 5
        # Field by field, so a difference says where it is; then the whole objects.
        for key in ("id", "type", "sequence", "user_id", "created_at", "data", "user_state"):
            assert [e[key] for e in sent] == [e[key] for e in feed], key
        assert sent == feed
        assert [e["type"] for e in feed] == [
            "order.paid", "balance.changed", "purchase.refunded", "order.closed", "balance.changed"]
    finally:
        receiver.stop()
