"""Google's three-day rule: a credited purchase must be acknowledged (or consumed) at Google,
or Google refunds it. Storekeeper writes the job in the statement that credits, so a process
killed with SIGKILL between the credit and the acknowledgement acknowledges on restart; a
failing acknowledgement is retried with backoff and alerts in /readyz and /metrics a day after
the purchase, two days before Google's deadline."""

from __future__ import annotations

import time

import pytest
import requests

from google_support import FakeGooglePlay
from support import REPO, unique, wait_until


@pytest.fixture(scope="module")
def google(tmp_path_factory):
    fake = FakeGooglePlay(tmp_path_factory.mktemp("google-ack")).start()
    yield fake
    fake.terminate(15)
    fake.forget()


def prepare(sk):
    sk.client.put_product("g.gold", "consumable", grants={"balance": {"gold": 100}})
    sk.client.put_product("g.noads", "non_consumable", grants={})


def google_order(api, user: str, product: str) -> dict:
    r = api.post("/v1/orders", json={"user_id": user, "product_id": product, "store": "google_play"})
    assert r.status_code == 201, r.text
    return r.json()


def report(api, trade_no: str, token: str) -> requests.Response:
    return api.post("/v1/trade-reports", json={"trade_no": trade_no, "trade_status": "TRADE_SUCCESS",
                                               "purchase_token": token})


def open_jobs(db, token: str) -> str | None:
    return db.scalar(f"SELECT count(*) FROM google_acknowledgements WHERE purchase_token = '{token}' "
                     "AND done_at IS NULL")


def test_killed_between_credit_and_acknowledgement_it_acknowledges_on_restart(storekeeper, new_db, google):
    db = new_db()
    sk = storekeeper(db, **google.env_for_storekeeper())
    prepare(sk)
    user = unique("g-kill")
    order = google_order(sk.client, user, "g.noads")
    bought = google.buy("g.noads", obfuscated_account_id=order["obfuscated_account_id"])
    token = bought["purchase_token"]
    # The verification passes; every acknowledgement after it fails, so the process is certain
    # to be killed with the credit committed and Google not yet told.
    google.fault(0, count=1)
    google.fault(503, count=100000)
    try:
        assert report(sk.client, order["trade_no"], token).status_code == 200
        wait_until(lambda: int(db.scalar(
            f"SELECT attempts FROM google_acknowledgements WHERE purchase_token = '{token}'") or 0) >= 1,
            20, "the acknowledgement was tried")
        sk.kill()
    finally:
        google.clear_faults()
    assert open_jobs(db, token) == "1"
    assert google.product_purchase("g.noads", token).get("acknowledgementState", 0) == 0
    sk.restart()
    google.wait_acknowledged("g.noads", token, consumed=False, timeout=30)
    wait_until(lambda: open_jobs(db, token) == "0", 20, "the job is done")
    # Credited once, whatever the restarts.
    assert "g.noads" in sk.client.entitlements(user)["non_consumables"]
    assert db.scalar(f"SELECT count(*) FROM orders WHERE user_id = '{user}' AND trade_status = 'TRADE_SUCCESS'") == "1"


def test_a_failing_acknowledgement_is_retried_until_google_takes_it_before_three_days(storekeeper, new_db, google):
    sk = storekeeper(new_db(), **google.env_for_storekeeper())
    prepare(sk)
    user = unique("g-retry")
    order = google_order(sk.client, user, "g.gold")
    bought = google.buy("g.gold", obfuscated_account_id=order["obfuscated_account_id"])
    google.fault(0, count=1)
    google.fault(500, count=3)
    assert report(sk.client, order["trade_no"], bought["purchase_token"]).status_code == 200
    google.wait_acknowledged("g.gold", bought["purchase_token"], consumed=True, timeout=60)
    # Acknowledged in time, Google's three-day rule refunds nothing.
    google.control("clock/advance", {"seconds": 4 * 86400})
    try:
        refunded = google.control("three-day-rule")["refunded"]
    finally:
        google.control("clock", {"now_ms": int(time.time() * 1000)})
    assert bought["purchase_token"] not in refunded
    assert sk.client.balance(user) == 100


def test_a_non_renewing_pass_is_consumed_so_it_can_be_bought_again(storekeeper, new_db, google):
    # Google sells a one-time product again only once it is consumed; a pass that is bought
    # again to extend it must be, where a non-consumable is only acknowledged.
    sk = storekeeper(new_db(), **google.env_for_storekeeper())
    prepare(sk)
    sk.client.put_product("g.pass", "non_renewing", grants={"entitlement": "pass", "duration_days": 30})
    user = unique("g-pass")
    for _ in range(2):
        order = google_order(sk.client, user, "g.pass")
        bought = google.buy("g.pass", obfuscated_account_id=order["obfuscated_account_id"])
        assert report(sk.client, order["trade_no"], bought["purchase_token"]).status_code == 200
        google.wait_acknowledged("g.pass", bought["purchase_token"], consumed=True, timeout=30)
    assert [e["entitlement"] for e in sk.client.entitlements(user)["entitlements"]] == ["pass"]


def test_a_pass_only_acknowledged_by_an_earlier_release_is_consumed_by_its_migration(storekeeper, new_db, google):
    # Passes credited before consumption was their rule were acknowledged only, and Google
    # would never sell them again: 0127 turns their jobs into consume jobs. (The pass here is
    # sold as a non-consumable first, which is acknowledged, as every pass was.)
    db = new_db()
    sk = storekeeper(db, **google.env_for_storekeeper())
    prepare(sk)
    sk.client.put_product("g.pass.old", "non_consumable", grants={})
    user = unique("g-pass-old")
    order = google_order(sk.client, user, "g.pass.old")
    bought = google.buy("g.pass.old", obfuscated_account_id=order["obfuscated_account_id"])
    assert report(sk.client, order["trade_no"], bought["purchase_token"]).status_code == 200
    google.wait_acknowledged("g.pass.old", bought["purchase_token"], consumed=False, timeout=30)
    wait_until(lambda: open_jobs(db, bought["purchase_token"]) == "0", 20, "the job is done")
    assert google.product_purchase("g.pass.old", bought["purchase_token"]).get("consumptionState", 0) == 0
    db.server.psql("UPDATE products SET type = 'non_renewing' WHERE product_id = 'g.pass.old'", database=db.name)
    migration = (REPO / "Migrations" / "0127_google_passes_consumed.sql").read_text()
    db.server.psql(f"BEGIN; {migration} COMMIT;", database=db.name)
    google.wait_acknowledged("g.pass.old", bought["purchase_token"], consumed=True, timeout=30)
    wait_until(lambda: open_jobs(db, bought["purchase_token"]) == "0", 20, "the consume job is done")


def test_an_acknowledgement_open_a_day_after_purchase_alerts_in_readyz_and_metrics(storekeeper, new_db, google):
    db = new_db()
    sk = storekeeper(db, **google.env_for_storekeeper())
    prepare(sk)
    user = unique("g-late")
    order = google_order(sk.client, user, "g.gold")
    # Bought 30 hours ago on Google's clock, and Google refusing every acknowledgement since.
    google.control("clock", {"now_ms": int(time.time() * 1000) - 30 * 3600 * 1000})
    try:
        bought = google.buy("g.gold", obfuscated_account_id=order["obfuscated_account_id"])
    finally:
        google.control("clock", {"now_ms": int(time.time() * 1000)})
    google.fault(0, count=1)
    google.fault(503, count=100000)
    try:
        assert report(sk.client, order["trade_no"], bought["purchase_token"]).status_code == 200
        ready = wait_until(
            lambda: next((p for p in requests.get(sk.url + "/readyz", timeout=5).json().get("problems", [])
                          if p["code"] == "google_acknowledgements_overdue"), None),
            20, "the overdue acknowledgement is a readiness problem")
        assert ready["count"] == 1
        assert "refunds" in ready["detail"]
        metrics = sk.client.get("/metrics", admin=True).text
        assert "storekeeper_google_acknowledgements_overdue 1" in metrics
        age = next(line for line in metrics.splitlines()
                   if line.startswith("storekeeper_google_acknowledgement_oldest_age_seconds "))
        assert 29 * 3600 <= int(age.split()[1]) <= 31 * 3600
        last_error = db.scalar("SELECT last_error FROM google_acknowledgements")
        assert last_error and "503" in last_error
    finally:
        google.clear_faults()
    google.wait_acknowledged("g.gold", bought["purchase_token"], consumed=True, timeout=60)
    wait_until(lambda: not any(p["code"] == "google_acknowledgements_overdue" for p in
                               requests.get(sk.url + "/readyz", timeout=5).json().get("problems", [])),
               20, "the alert clears once Google takes it")
