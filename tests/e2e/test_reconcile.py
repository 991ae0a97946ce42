"""Issue 11, subscription truth from Apple: a subscriber whose notification was lost (the fake
App Store changed the subscription and sent nothing) is repaired against Get All Subscription
Statuses by `storekeeper reconcile` and by the background pass, through the same effects the
notification would have had; every repair is recorded and counted in /metrics."""

from __future__ import annotations

import subprocess
import time
from datetime import datetime, timezone

import requests

from support import buy, free_port, jws_payload, unique, wait_until

VIP = "com.example.tests.reconcile.vip"
DAY = 86_400


def reconciling_stack(launcher, **env):
    """A fake that never re-sends, and a Storekeeper holding the fake's in-app purchase key."""
    port = free_port()
    fake = launcher.fake(notify_port=port, retry_schedule="none")
    settings = {**fake.api_env(), "RECONCILE_RATE": "200", **env}
    sk = launcher.storekeeper(launcher.database(), fake=fake, port=port, **settings)
    sk.client.put_product(VIP, type="auto_renewable", grants={"entitlement": "vip"})
    return sk, fake


def reconcile(binary, sk, *args, **env):
    full = {**sk.env, **{k: str(v) for k, v in env.items()}}
    return subprocess.run([binary, "reconcile", *args], env=full, capture_output=True, text=True,
                          timeout=60)


def subscribe(sk, fake, prefix: str, expires_in: int = 30 * DAY) -> tuple[str, dict]:
    user = unique(prefix)
    _, purchase, _ = buy(sk.client, fake, user, VIP, type="auto_renewable", expires_in_seconds=expires_in)
    assert vip_expiry(sk, user) is not None
    return user, purchase


def vip_expiry(sk, user: str) -> float | None:
    """When the user's vip entitlement ends (epoch seconds), None without one."""
    for entry in sk.client.entitlements(user)["entitlements"]:
        if entry["entitlement"] == "vip":
            return datetime.fromisoformat(entry["expires_at"].replace("Z", "+00:00")).timestamp()
    return None


def set_state(fake, transaction_id: str, **fields) -> dict:
    return fake.call("/fake/v1/subscriptions/state", {"transaction_id": transaction_id, **fields})


def metric(sk, name: str) -> float:
    text = sk.client.get("/metrics", admin=True, timeout=5).text
    values = [line.rpartition(" ")[2] for line in text.splitlines() if line.startswith(name + " ")]
    assert len(values) == 1, (name, text[-1200:])
    return float(values[0])


def repairs(db) -> list[list[str]]:
    return db.rows("SELECT r.user_id, r.original_transaction_id, r.kind, r.became::text, u.trigger "
                   "FROM reconcile_repairs r JOIN reconcile_runs u ON u.id = r.run_id ORDER BY r.id")


def test_lost_notifications_are_repaired_by_the_command_and_a_dry_run_changes_nothing(binary, launcher):
    sk, fake = reconciling_stack(launcher)
    db = sk_db(launcher, sk)
    refunded, p_refunded = subscribe(sk, fake, "rc-refund")
    cut, p_cut = subscribe(sk, fake, "rc-cut")
    renewed, p_renewed = subscribe(sk, fake, "rc-renew", expires_in=DAY)
    grace, p_grace = subscribe(sk, fake, "rc-grace")
    fine, _ = subscribe(sk, fake, "rc-fine")
    before = {u: vip_expiry(sk, u) for u in (refunded, cut, renewed, grace, fine)}

    # At Apple only: the notifications are lost.
    note = fake.refund(p_refunded["transaction_id"], deliver=False)
    assert note.get("delivered_status") is None, note
    set_state(fake, p_cut["transaction_id"], expires_in_seconds=-60, auto_renew=False)
    renewal = fake.renewal(p_renewed["transaction_id"], expires_in_seconds=40 * DAY, deliver=False)
    set_state(fake, p_grace["transaction_id"], expires_in_seconds=-60, billing_retry=True,
              grace_period_expires_in_seconds=3 * DAY)
    assert {u: vip_expiry(sk, u) for u in before} == before

    dry = reconcile(binary, sk, "--dry-run")
    assert dry.returncode == 0, dry.stdout + dry.stderr
    assert "checked 5, would repair 4, errors 0" in dry.stdout, dry.stdout
    assert "would repair revoked user=" + refunded in dry.stdout
    assert {u: vip_expiry(sk, u) for u in before} == before
    assert db.scalar("SELECT count(*) FROM reconcile_runs") == "0"
    assert db.scalar("SELECT count(*) FROM reconcile_checks") == "0"

    run = reconcile(binary, sk)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "checked 5, repaired 4, errors 0" in run.stdout, run.stdout
    assert vip_expiry(sk, refunded) is None
    assert vip_expiry(sk, cut) is None
    assert abs(vip_expiry(sk, renewed) - (time.time() + 40 * DAY)) < 120
    assert abs(vip_expiry(sk, grace) - (time.time() + 3 * DAY)) < 120
    assert vip_expiry(sk, fine) == before[fine]

    kinds = {(r[0], r[2]) for r in repairs(db)}
    assert kinds == {(refunded, "revoked"), (cut, "expiry_changed"), (cut, "state_changed"),
                     (renewed, "renewed"), (grace, "expiry_changed"), (grace, "state_changed")}, kinds
    assert all(r[4] == "command" for r in repairs(db))
    renewal_row = [r for r in repairs(db) if r[2] == "renewed"][0]
    assert renewal["transaction_id"] in renewal_row[3]
    # The refund closed the order as a notification would, with the reconcile pass as its cause.
    order = sk.client.admin_orders(user_id=refunded)[0]
    assert order["trade_status"] == "TRADE_CLOSED", order
    causes = db.rows(f"SELECT cause, reason FROM order_events WHERE trade_no = '{order['trade_no']}' "
                     "ORDER BY id DESC LIMIT 1")
    assert causes == [["reconcile", "refunded"]], causes
    # The renewal became an order of its own, paid for the subscriber.
    renewal_orders = [o for o in sk.client.admin_orders(user_id=renewed) if o["origin"] == "renewal"]
    assert len(renewal_orders) == 1 and renewal_orders[0]["trade_status"] == "TRADE_SUCCESS", renewal_orders

    # Admins read the repairs, newest first, in pages.
    listed = sk.client.admin_pages("/admin/v1/reconcile/repairs", "repairs", limit=2)
    assert {(r["user_id"], r["kind"]) for r in listed} == kinds
    assert [r["id"] for r in listed] == sorted((r["id"] for r in listed), reverse=True)
    mine = sk.client.admin_pages("/admin/v1/reconcile/repairs", "repairs", user_id=refunded)
    assert [(m["kind"], m["trigger"], m["original_transaction_id"]) for m in mine] == [
        ("revoked", "command", p_refunded["transaction_id"])], mine
    assert mine[0]["was"]["revoked"] is False and mine[0]["became"]["reason"] == "refunded"
    r = sk.client.get("/admin/v1/reconcile/repairs", admin=True, params={"kind": "x"})
    assert r.status_code == 400, r.text
    assert sk.client.get("/admin/v1/reconcile/repairs").status_code == 401

    assert metric(sk, 'storekeeper_reconcile_repairs_total{kind="revoked"}') == 1
    assert metric(sk, 'storekeeper_reconcile_repairs_total{kind="renewed"}') == 1
    assert metric(sk, 'storekeeper_reconcile_repairs_total{kind="expiry_changed"}') == 2
    assert metric(sk, "storekeeper_reconcile_failing") == 0
    assert abs(metric(sk, "storekeeper_reconcile_last_run_seconds") - time.time()) < 120

    # Nothing disagrees any more: a second pass repairs nothing.
    again = reconcile(binary, sk)
    assert again.returncode == 0 and "repaired 0, errors 0" in again.stdout, again.stdout
    assert len(repairs(db)) == len(kinds)


def state_events(sk, user: str) -> list[tuple]:
    r = sk.client.get("/admin/v1/events", admin=True, params={"user_id": user, "limit": 200})
    assert r.status_code == 200, r.text
    return [(e["type"], e["data"].get("status"), "grace_expires_at" in e["data"])
            for e in r.json()["events"] if e["type"].startswith("subscription.")]


def test_a_repaired_billing_problem_and_expiry_write_the_events_their_notifications_would(binary, launcher):
    """Lost DID_FAIL_TO_RENEW (with and without a grace period) and a lost EXPIRED after a
    billing retry: each repair writes the event the notification would have, and the expiry
    is repaired although billing retry and expired give the same access."""
    sk, fake = reconciling_stack(launcher)
    db = sk_db(launcher, sk)
    retry, p_retry = subscribe(sk, fake, "rc-retry")
    grace, p_grace = subscribe(sk, fake, "rc-grace-event")
    set_state(fake, p_retry["transaction_id"], expires_in_seconds=-60, billing_retry=True)
    set_state(fake, p_grace["transaction_id"], expires_in_seconds=-60, billing_retry=True,
              grace_period_expires_in_seconds=3 * DAY)
    run = reconcile(binary, sk)
    assert run.returncode == 0 and "checked 2, repaired 2, errors 0" in run.stdout, run.stdout
    assert state_events(sk, retry) == [("subscription.billing_problem", "billing_retry", False)]
    assert state_events(sk, grace) == [("subscription.billing_problem", "grace_period", True)]
    # The lost notification arrives after all (Apple's retry, or the history read back): the
    # state is recorded already, and its event is not written twice.
    late = fake.notification("DID_FAIL_TO_RENEW", transaction_id=p_retry["transaction_id"])
    assert late["delivered_status"] == 200, late
    wait_until(lambda: [n for n in sk.client.notifications(limit=200)
                        if n["notification_uuid"] == late["notification_uuid"] and n["state"] == "processed"],
               15, "the late notification processed")
    assert state_events(sk, retry) == [("subscription.billing_problem", "billing_retry", False)]

    set_state(fake, p_retry["transaction_id"], billing_retry=False, auto_renew=False)
    run = reconcile(binary, sk)
    assert run.returncode == 0 and "repaired 1, errors 0" in run.stdout, run.stdout
    assert state_events(sk, retry) == [("subscription.billing_problem", "billing_retry", False),
                                       ("subscription.expired", None, False)]
    assert db.scalar("SELECT status FROM subscription_states WHERE original_transaction_id = '%s'"
                     % p_retry["transaction_id"]) == "expired"
    again = reconcile(binary, sk)
    assert again.returncode == 0 and "repaired 0, errors 0" in again.stdout, again.stdout


def sk_db(launcher, sk):
    return next(db for db in launcher.databases if db.url == sk.env["DATABASE_URL"])


def test_the_background_pass_repairs_a_lost_refund(launcher):
    sk, fake = reconciling_stack(launcher, RECONCILE_INTERVAL="1s")
    db = sk_db(launcher, sk)
    user, purchase = subscribe(sk, fake, "rc-background")
    fake.refund(purchase["transaction_id"], deliver=False)
    wait_until(lambda: vip_expiry(sk, user) is None, 30, "the background pass did not repair the refund")
    rows = repairs(db)
    assert [(r[0], r[2], r[4]) for r in rows] == [(user, "revoked", "background")], rows
    assert metric(sk, 'storekeeper_reconcile_repairs_total{kind="revoked"}') == 1
    # Later passes check it again (it is due every second here), find it consistent, and never
    # repair it twice.
    checked = "SELECT checked_at FROM reconcile_checks WHERE original_transaction_id = '%s'" % (
        purchase["transaction_id"])
    first = db.scalar(checked)
    wait_until(lambda: db.scalar(checked) != first, 30, "no later pass checked it again")
    wait_until(lambda: "reconcile pass found nothing to repair" in sk.log(), 30,
               "the later pass did not report")
    assert len(repairs(db)) == 1


def test_two_instances_at_once_repair_each_subscription_once(binary, launcher):
    sk, fake = reconciling_stack(launcher, RECONCILE_RATE="20", RECONCILE_BATCH_SIZE="2")
    db = sk_db(launcher, sk)
    users = []
    for _ in range(6):
        user, purchase = subscribe(sk, fake, "rc-pair")
        fake.refund(purchase["transaction_id"], deliver=False)
        users.append(user)
    argv = [binary, "reconcile"]
    procs = [subprocess.Popen(argv, env=sk.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(2)]
    outputs = [p.communicate(timeout=60) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outputs
    rows = repairs(db)
    assert sorted(r[0] for r in rows) == sorted(users), rows
    assert all(r[2] == "revoked" for r in rows)
    assert all(vip_expiry(sk, u) is None for u in users)
    repaired = sum(int(out.rsplit("repaired ", 1)[1].split(",")[0]) for out, _ in outputs)
    assert repaired == 6, outputs
    # Each refund closed its order once: one refund event per order.
    assert db.scalar("SELECT count(*) FROM order_events WHERE reason = 'refunded'") == "6"


def test_apple_unreachable_leaves_entitlements_and_reports_the_error(binary, launcher):
    sk, fake = reconciling_stack(launcher)
    db = sk_db(launcher, sk)
    user, purchase = subscribe(sk, fake, "rc-down")
    fake.refund(purchase["transaction_id"], deliver=False)
    before = vip_expiry(sk, user)
    closed = f"http://127.0.0.1:{free_port()}"

    run = reconcile(binary, sk, APPLE_API_URL=closed, APPLE_API_SANDBOX_URL=closed)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "checked 0, repaired 0, errors 0; stopped: subscription statuses unreachable" in run.stdout, run.stdout
    assert vip_expiry(sk, user) == before
    assert db.scalar("SELECT count(*) FROM reconcile_repairs") == "0"
    assert metric(sk, "storekeeper_reconcile_failing") == 1
    # The lease was given back: the next pass, with Apple back, repairs it at once.
    assert db.scalar("SELECT count(*) FROM reconcile_checks WHERE lease_until > now()") == "0"
    run = reconcile(binary, sk)
    assert run.returncode == 0 and "repaired 1" in run.stdout, run.stdout
    assert vip_expiry(sk, user) is None
    assert metric(sk, "storekeeper_reconcile_failing") == 0


def test_a_refused_key_is_an_operator_error(binary, launcher):
    sk, fake = reconciling_stack(launcher, APPLE_API_KEY_ID="WRONGKEY00", RECONCILE_INTERVAL="1s")
    user, purchase = subscribe(sk, fake, "rc-key")
    fake.refund(purchase["transaction_id"], deliver=False)
    run = reconcile(binary, sk)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "refused the key (401)" in run.stdout and "APPLE_API_KEY_ID" in run.stdout, run.stdout

    def readyz_problem():
        body = requests.get(sk.url + "/readyz", timeout=5).json()
        return [p for p in body.get("problems", []) if p["setting"] == "APPLE_API_KEY_ID"]
    problems = wait_until(readyz_problem, 30, "/readyz does not name the refused key")
    assert problems[0]["apple_status"] == 401
    assert vip_expiry(sk, user) is not None


def test_reconcile_needs_the_api_key(binary, launcher, fresh_db):
    env = launcher.env(fresh_db, 1)
    result = subprocess.run([binary, "reconcile"], env=env, capture_output=True, text=True, timeout=20)
    assert result.returncode == 2
    assert "APPLE_API_KEY_FILE" in result.stderr
    result = subprocess.run([binary, "reconcile", "--limit", "x"], env=env, capture_output=True, text=True,
                            timeout=20)
    assert result.returncode == 2


def test_a_renewal_into_a_product_not_in_the_catalog_is_an_error_not_a_repair(binary, launcher):
    # Apple renewed the subscription into a product the catalog does not have: nothing can be
    # recorded, so no pass may claim a repair (and every later one claim it again).
    # Its other repair (the subscription has expired since, that notice lost too) is made
    # all the same.
    sk, fake = reconciling_stack(launcher)
    db = sk_db(launcher, sk)
    _, purchase = subscribe(sk, fake, "rc-unlisted", expires_in=DAY)
    note = fake.renewal(purchase["transaction_id"], product_id="com.example.tests.reconcile.unlisted",
                        deliver=False)
    set_state(fake, jws_payload(note["signed_transaction"])["transactionId"], expires_in_seconds=-60,
              auto_renew=False)
    run = reconcile(binary, sk)
    assert "repaired 1, errors 1" in run.stdout, run.stdout + run.stderr
    run = reconcile(binary, sk)
    assert "repaired 0, errors 1" in run.stdout, run.stdout + run.stderr
    assert [r[2] for r in repairs(db)] == ["state_changed"]


def renewed_events(sk, user: str) -> list[dict]:
    r = sk.client.get("/admin/v1/events", admin=True, params={"user_id": user, "limit": 200})
    assert r.status_code == 200, r.text
    return [e["data"] for e in r.json()["events"] if e["type"] == "subscription.renewed"]


def test_a_repaired_renewal_and_its_late_did_renew_announce_the_period_once(binary, launcher):
    """A lost DID_RENEW: the repair writes the `subscription.renewed` the notification would
    have, naming the period as it would; Apple's retry delivering it afterwards writes none."""
    sk, fake = reconciling_stack(launcher)
    user, purchase = subscribe(sk, fake, "rc-renew-once", expires_in=DAY)
    held = fake.renewal(purchase["transaction_id"], expires_in_seconds=40 * DAY, deliver=False)
    period = jws_payload(held["signed_transaction"])
    run = reconcile(binary, sk)
    assert run.returncode == 0 and "repaired 1, errors 0" in run.stdout, run.stdout + run.stderr
    [repaired] = renewed_events(sk, user)
    assert repaired["reconcile_repair"] == "renewed", repaired
    assert repaired["transaction_id"] == period["transactionId"], repaired
    assert repaired["original_transaction_id"] == purchase["transaction_id"], repaired
    assert repaired["product_id"] == VIP, repaired
    assert repaired["expires_at"] == datetime.fromtimestamp(
        period["expiresDate"] / 1000, tz=timezone.utc).isoformat(timespec="milliseconds").replace(
        "+00:00", "Z"), repaired

    assert sk.client.post_notification(held["signed_payload"]).status_code == 200
    wait_until(lambda: [n for n in sk.client.notifications(limit=200)
                        if n["notification_uuid"] == held["notification_uuid"]
                        and n["state"] == "processed"],
               15, "the late DID_RENEW processed")
    assert [e["transaction_id"] for e in renewed_events(sk, user)] == [period["transactionId"]]
    assert abs(vip_expiry(sk, user) - period["expiresDate"] / 1000) < 1


def test_a_refund_reversal_the_pass_repaired_is_not_undone_by_an_older_proof(binary, launcher):
    """A restore showed Apple's refund (its REFUND lost) and applied it; Apple reversed it and
    that notification was lost too, so the pass reinstated the purchase. The app posting the
    proof it kept from between the two must not take the purchase back again."""
    sk, fake = reconciling_stack(launcher)
    user, purchase = subscribe(sk, fake, "rc-shown-refund")
    fake.refund(purchase["transaction_id"], deliver=False)
    refunded = fake.transaction(purchase["transaction_id"])["signed_transaction"]
    assert jws_payload(refunded).get("revocationDate")
    assert sk.client.receipts(user_id=user, signed_transaction=refunded).status_code == 200
    assert vip_expiry(sk, user) is None
    time.sleep(0.01)
    fake.refund(purchase["transaction_id"], notification_type="REFUND_REVERSED", deliver=False)
    run = reconcile(binary, sk)
    assert run.returncode == 0 and "repaired 1, errors 0" in run.stdout, run.stdout + run.stderr
    assert vip_expiry(sk, user) is not None
    r = sk.client.receipts(user_id=user, signed_transaction=refunded)
    assert r.status_code == 200, r.text
    assert vip_expiry(sk, user) is not None, "an older proof took the reinstated purchase back"
    refunds = sk_db(launcher, sk).rows(
        f"SELECT count(*) FROM events WHERE user_id = '{user}' AND type = 'purchase.refunded'")
    assert refunds == [["1"]]
