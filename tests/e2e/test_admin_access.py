"""Issue 10, admins: hashed tokens, read and write scopes, the audit trail of every change (and
its listing), failed logins logged and rate limited per address, and the optional admin
listener that keeps the admin API and /metrics off the public port."""

from __future__ import annotations

import hashlib
import secrets
import time

import pytest
import requests

from support import Client, bearer_for_env, free_port, problem, unique

P = "com.example.tests.admins."
WRITER = secrets.token_hex(16)
READER = secrets.token_hex(16)
HASHED = secrets.token_hex(16)
TOKENS = (f"ops:{WRITER},viewer:{READER}:read,"
          f"ci:sha256:{hashlib.sha256(HASHED.encode()).hexdigest()}")


@pytest.fixture(scope="module")
def admin_stack(module_launcher):
    return module_launcher.stack(ADMIN_TOKENS=TOKENS)


@pytest.fixture(scope="module")
def sk(admin_stack):
    return admin_stack.sk


@pytest.fixture(scope="module")
def writer(sk):
    return Client(sk.url, WRITER, bearer_for_env(sk.env))


@pytest.fixture(scope="module")
def reader(sk):
    return Client(sk.url, READER, bearer_for_env(sk.env))


def product_body(price: str = "6.00", title: str = "Gold") -> dict:
    return {"type": "consumable", "title": title, "price": price, "currency": "USD",
            "grants": {"balance": {"gold": 100}}, "content": {"gold": 100}}


def audit(client: Client, **query) -> list[dict]:
    """Every audit entry matching the filters, newest first, following the cursor."""
    return client.admin_pages("/admin/v1/audit", "entries", **query)


# ---------------------------------------------------------------------------------------------
# Tokens and scopes


def test_a_token_configured_as_its_sha256_is_accepted_and_its_digest_is_not(sk):
    hashed = Client(sk.url, HASHED)
    assert hashed.get("/admin/v1/products", admin=True).status_code == 200
    created = hashed.request("PUT", f"/admin/v1/products/{P}hashed", admin=True, json=product_body())
    assert created.status_code == 201, created.text
    assert audit(hashed, target_id=f"{P}hashed")[0]["admin"] == "ci"
    digest = Client(sk.url, hashlib.sha256(HASHED.encode()).hexdigest())
    problem(digest.get("/admin/v1/products", admin=True), 401, "unauthorized")


def test_a_read_token_reads_everything_and_changes_nothing(sk, writer, reader, admin_stack):
    product_id = P + "read.only"
    writer.put_product(product_id, price="6.00")
    for path in ["/admin/v1/products", f"/admin/v1/products/{product_id}",
                 f"/admin/v1/products/{product_id}/price-history", "/admin/v1/orders",
                 "/admin/v1/notifications", "/admin/v1/consumption-requests", "/admin/v1/audit",
                 "/admin/v1/currency-rates"]:
        r = reader.get(path, admin=True)
        assert r.status_code == 200, f"GET {path}: {r.status_code} {r.text}"
        assert reader.request("HEAD", path, admin=True).status_code == 200, path
    before = len(audit(writer))
    refused = [
        reader.request("PUT", f"/admin/v1/products/{product_id}", admin=True, json=product_body("9.00")),
        reader.request("PUT", f"/admin/v1/products/{P}read.new", admin=True, json=product_body()),
        reader.request("PATCH", f"/admin/v1/products/{product_id}", admin=True, json={"price": "9.00"}),
        reader.request("DELETE", f"/admin/v1/products/{product_id}", admin=True),
        reader.request("PUT", "/admin/v1/product-order", admin=True, json={"products": [
            {"product_id": p["product_id"], "revision": p["revision"]}
            for p in writer.get("/admin/v1/products", admin=True).json()["products"]]}),
        reader.post("/admin/v1/transactions/2000000000000001/transfer", admin=True,
                    json={"to_user_id": "erin"}),
        reader.request("PUT", "/admin/v1/currency-rates/USD/EUR/2026-01-01", admin=True, json={"rate": "1.08"}),
        reader.request("DELETE", "/admin/v1/currency-rates/USD/EUR/2026-01-01", admin=True),
    ]
    for r in refused:
        body = problem(r, 403, "insufficient_scope")
        assert "viewer" in body["detail"]
        assert 'error="insufficient_scope"' in r.headers.get("WWW-Authenticate", "")
    assert writer.get(f"/admin/v1/products/{product_id}", admin=True).json()["price"] == "6.00"
    assert writer.get(f"/admin/v1/products/{P}read.new", admin=True).status_code == 404
    assert len(audit(writer)) == before
    assert admin_stack.db.scalar("SELECT count(*) FROM admin_audit WHERE admin = 'viewer'") == "0"


# ---------------------------------------------------------------------------------------------
# The audit trail


def test_product_changes_are_audited_with_before_after_request_and_address(writer, admin_stack):
    product_id = P + "audited"
    path = f"/admin/v1/products/{product_id}"
    created = writer.request("PUT", path, admin=True, json=product_body("6.00"),
                             headers={"X-Request-Id": "audit-put-1"})
    assert created.status_code == 201, created.text
    patched = writer.request("PATCH", path, admin=True, json={"price": "7.00"},
                             headers={"X-Request-Id": "audit-patch-1", "If-Match": created.headers["ETag"]})
    assert patched.status_code == 200, patched.text
    stale = writer.request("PATCH", path, admin=True, json={"price": "8.00"},
                           headers={"If-Match": created.headers["ETag"]})
    assert stale.status_code == 412
    deleted = writer.request("DELETE", path, admin=True, headers={"X-Request-Id": "audit-delete-1"})
    assert deleted.status_code == 204, deleted.text

    entries = audit(writer, target_id=product_id)
    assert [e["action"] for e in entries] == ["product_deleted", "product_updated", "product_created"]
    deletion, update, creation = entries
    for entry, request_id in [(creation, "audit-put-1"), (update, "audit-patch-1"), (deletion, "audit-delete-1")]:
        assert entry["admin"] == "ops" and entry["target_type"] == "product"
        assert entry["request_id"] == request_id
        assert entry["client_address"] == "127.0.0.1"
        assert entry["created_at"].endswith("Z")
    assert "before" not in creation and creation["after"]["price"] == "6.00"
    assert creation["after"]["product_id"] == product_id
    assert (update["before"]["price"], update["after"]["price"]) == ("6.00", "7.00")
    assert update["after"]["revision"] == update["before"]["revision"] + 1
    assert deletion["before"]["price"] == "7.00" and "after" not in deletion
    assert deletion["id"] > update["id"] > creation["id"]
    # The row is in the database itself, with the same request id.
    stored = admin_stack.db.rows(
        f"SELECT action, request_id, client_address, before->>'price', after->>'price' FROM admin_audit "
        f"WHERE target_id = '{product_id}' ORDER BY id")
    assert stored == [["product_created", "audit-put-1", "127.0.0.1", "", "6.00"],
                      ["product_updated", "audit-patch-1", "127.0.0.1", "6.00", "7.00"],
                      ["product_deleted", "audit-delete-1", "127.0.0.1", "7.00", ""]]


def test_a_transfer_is_audited_with_the_owner_before_and_after(writer, admin_stack):
    gold = P + "transfer.gold"
    writer.put_product(gold)
    alice, erin = unique("alice"), unique("erin")
    order = writer.create_order(alice, gold)
    purchase = admin_stack.fake.purchase(gold, "consumable", app_account_token=order["app_account_token"])
    assert writer.report(order["trade_no"], signed_transaction=purchase["signed_transaction"]).status_code == 200
    tx = purchase["transaction_id"]
    moved = writer.post(f"/admin/v1/transactions/{tx}/transfer", admin=True,
                        json={"to_user_id": erin, "reason": "changed accounts"},
                        headers={"X-Request-Id": "audit-transfer-1"})
    assert moved.status_code == 200, moved.text
    again = writer.post(f"/admin/v1/transactions/{tx}/transfer", admin=True, json={"to_user_id": erin})
    assert again.status_code == 409, "refused: no second audit row"

    [entry] = audit(writer, target_id=tx)
    assert entry["action"] == "purchase_transferred" and entry["target_type"] == "transaction"
    assert entry["admin"] == "ops" and entry["request_id"] == "audit-transfer-1"
    assert entry["client_address"] == "127.0.0.1"
    assert entry["before"] == {"user_id": alice, "trade_no": order["trade_no"]}
    assert entry["after"] == {"user_id": erin, "trade_no": moved.json()["order"]["trade_no"],
                              "reason": "changed accounts"}


def test_the_audit_listing_filters_and_pages_newest_first(sk, writer):
    hashed = Client(sk.url, HASHED)
    ids = [P + f"page.{i}" for i in range(5)]
    for i, product_id in enumerate(ids):
        (writer if i % 2 == 0 else hashed).put_product(product_id)
    writer.request("PATCH", f"/admin/v1/products/{ids[0]}", admin=True, json={"title": "Renamed"})

    everything = audit(writer)
    assert [e["id"] for e in everything] == sorted((e["id"] for e in everything), reverse=True)
    assert len({e["id"] for e in everything}) == len(everything)

    first = writer.get("/admin/v1/audit", admin=True, params={"action": "product_created", "limit": 2})
    assert first.status_code == 200, first.text
    page = first.json()
    assert len(page["entries"]) == 2 and page["next_cursor"] == str(page["entries"][-1]["id"])
    paged = audit(writer, action="product_created", limit=2)
    assert [e["id"] for e in paged[:2]] == [e["id"] for e in page["entries"]]
    created_here = [e["target_id"] for e in paged if e["target_id"] in ids]
    assert created_here == list(reversed(ids))
    assert all(e["action"] == "product_created" for e in paged)

    by_ci = [e["target_id"] for e in audit(writer, admin="ci") if e["target_id"] in ids]
    assert by_ci == [ids[3], ids[1]]
    assert [e["action"] for e in audit(writer, target_id=ids[0])] == ["product_updated", "product_created"]
    assert audit(writer, admin="ops", action="product_updated", target_id=ids[0])[0]["after"]["title"] == "Renamed"
    assert audit(writer, target_id=P + "never.touched") == []
    past_the_end = writer.get("/admin/v1/audit", admin=True, params={"cursor": "1"})
    assert past_the_end.json() == {"entries": []}

    for params, field in [({"action": "product_burned"}, "action"), ({"limit": "0"}, "limit"),
                          ({"cursor": "abc"}, "cursor"), ({"admin": ""}, "admin"), ({"who": "ops"}, "who")]:
        body = problem(writer.get("/admin/v1/audit", admin=True, params=params), 400, "invalid_query")
        assert field in {e["field"] for e in body["errors"]}, (params, body)
    problem(writer.get("/admin/v1/audit"), 401, "unauthorized")


# ---------------------------------------------------------------------------------------------
# Failed logins


def test_a_failed_login_is_logged_with_address_path_and_reason_but_not_the_token(sk):
    guess = "guess-" + secrets.token_hex(12)
    r = requests.get(sk.url + "/admin/v1/orders", headers={"Authorization": f"Bearer {guess}"}, timeout=10)
    problem(r, 401, "unauthorized")
    r = requests.get(sk.url + "/admin/v1/audit", timeout=10)
    problem(r, 401, "unauthorized")

    def failures():
        return [line for line in sk.log_lines_json() if line.get("msg") == "admin authentication failed"]

    deadline = time.monotonic() + 5
    while len(failures()) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    lines = failures()
    assert {(line["path"], line["reason"]) for line in lines} >= {
        ("/admin/v1/orders", "unknown_token"), ("/admin/v1/audit", "missing_bearer_token")}, lines
    assert all(line["level"] == "warning" and line["client_address"] == "127.0.0.1" for line in lines)
    log = sk.log()
    assert guess not in log
    for token in (WRITER, READER, HASHED):
        assert token not in log


def test_repeated_wrong_tokens_get_429_until_the_window_passes(storekeeper):
    sk = storekeeper(ADMIN_AUTH_FAILURE_WINDOW="3s")

    def guess(attempt):
        return requests.get(sk.url + "/admin/v1/products",
                            headers={"Authorization": f"Bearer wrong-{attempt}-0123456789abcdef"}, timeout=10)

    for attempt in range(10):
        problem(guess(attempt), 401, "unauthorized")
    refused = guess(10)
    body = problem(refused, 429, "too_many_failures")
    retry_after = int(refused.headers["Retry-After"])
    assert 1 <= retry_after <= 3, refused.headers
    assert sk.client.admin_token not in body["detail"]
    assert sk.client.get("/v1/products").status_code == 200, "the public API is unaffected"
    assert "admin authentication refused: too many failures" in sk.log()
    time.sleep(retry_after + 0.2)
    problem(guess(11), 401, "unauthorized")


def test_the_right_token_is_served_while_wrong_ones_from_its_address_get_429(storekeeper):
    # Every test client is 127.0.0.1, as every client is the proxy's address behind a proxy
    # when TRUSTED_PROXIES is unset: someone else's wrong tokens must not lock the admin out.
    sk = storekeeper(ADMIN_AUTH_FAILURE_LIMIT="3")
    wrong = {"Authorization": "Bearer wrong-token-0123456789abcdef"}
    for _ in range(3):
        problem(requests.get(sk.url + "/admin/v1/products", headers=wrong, timeout=10), 401, "unauthorized")
    for _ in range(3):
        served = sk.client.get("/admin/v1/products", admin=True)
        assert served.status_code == 200, served.text
        # The guesser still gets 429, and its wrong tokens go on counting.
        problem(requests.get(sk.url + "/admin/v1/products", headers=wrong, timeout=10), 429,
                "too_many_failures")
    written = sk.client.request("PUT", f"/admin/v1/products/{P}locked-out", admin=True, json=product_body())
    assert written.status_code == 201, written.text
    problem(requests.get(sk.url + "/metrics", headers=wrong, timeout=10), 429, "too_many_failures")
    assert sk.client.get("/metrics", admin=True).status_code == 200


def test_the_default_limit_is_ten_failures_a_minute(storekeeper):
    sk = storekeeper()
    for attempt in range(10):
        r = requests.get(sk.url + "/admin/v1/orders",
                         headers={"Authorization": f"Bearer wrong-{attempt}-0123456789abcdef"}, timeout=10)
        assert r.status_code == 401
    refused = requests.get(sk.url + "/admin/v1/orders",
                           headers={"Authorization": "Bearer wrong-10-0123456789abcdef"}, timeout=10)
    problem(refused, 429, "too_many_failures")
    assert 50 <= int(refused.headers["Retry-After"]) <= 60
    assert sk.client.get("/admin/v1/orders", admin=True).status_code == 200


# ---------------------------------------------------------------------------------------------
# The admin listener


def test_a_separate_admin_listener_takes_the_admin_api_and_metrics_off_the_public_port(storekeeper):
    admin_port = free_port()
    sk = storekeeper(ADMIN_PORT=admin_port)
    admin = Client(f"http://127.0.0.1:{admin_port}", sk.admin_token)

    assert admin.get("/healthz").status_code == 200
    created = admin.request("PUT", f"/admin/v1/products/{P}listener", admin=True, json=product_body())
    assert created.status_code == 201, created.text
    assert admin.get("/admin/v1/audit", admin=True).json()["entries"][0]["target_id"] == P + "listener"
    problem(admin.get("/metrics"), 401, "unauthorized")
    metrics = admin.get("/metrics", admin=True)
    assert metrics.status_code == 200 and "storekeeper_orders" in metrics.text
    problem(admin.get("/admin/v1/orders"), 401, "unauthorized")
    problem(admin.get("/v1/products"), 404, "not_found")

    for path in ["/admin/v1/products", f"/admin/v1/products/{P}listener", "/admin/v1/audit", "/metrics"]:
        problem(sk.client.get(path, admin=True), 404, "not_found")
    problem(sk.client.request("PUT", f"/admin/v1/products/{P}other", admin=True, json=product_body()),
            404, "not_found")
    assert sk.client.get("/healthz").status_code == 200
    assert sk.client.get("/readyz").status_code == 200
    public = sk.client.get("/v1/products")
    assert public.status_code == 200
    assert [p["product_id"] for p in public.json()["products"]] == [P + "listener"]
    order = sk.client.create_order(unique("user"), P + "listener")
    assert order["trade_status"] == "WAIT_BUYER_PAY"
    assert f'"port":{admin_port}' in sk.log().replace(" ", "")


def test_the_admin_listener_limits_each_address_as_the_app_port_does(storekeeper):
    # A right token is never refused for wrong ones, so only the address's rate bounds how fast
    # tokens are guessed on the admin port; health probes stay unlimited.
    admin_port = free_port()
    sk = storekeeper(ADMIN_PORT=admin_port, RATE_LIMIT_PER_ADDRESS="1/min,burst=3")
    admin = Client(f"http://127.0.0.1:{admin_port}", sk.admin_token)
    wrong = {"Authorization": "Bearer wrong-token-0123456789abcdef"}
    base = f"http://127.0.0.1:{admin_port}"
    statuses = [requests.get(f"{base}/admin/v1/orders", headers=wrong, timeout=10).status_code
                for _ in range(3)]
    assert statuses == [401, 401, 401]
    problem(requests.get(f"{base}/admin/v1/orders", headers=wrong, timeout=10), 429, "rate_limited")
    refused = admin.get("/metrics", admin=True)
    problem(refused, 429, "rate_limited")
    assert 1 <= int(refused.headers["Retry-After"]) <= 60
    assert admin.get("/healthz").status_code == 200


# ---------------------------------------------------------------------------------------------
# /metrics (issue 22): a credential on every listener, and no count of the orders per scrape

METRICS = secrets.token_hex(16)


@pytest.mark.parametrize("configured", ["plain", "sha256"])
def test_metrics_need_an_admin_token_or_the_metrics_token(storekeeper, configured):
    value = METRICS if configured == "plain" else "sha256:" + hashlib.sha256(METRICS.encode()).hexdigest()
    sk = storekeeper(ADMIN_TOKENS=TOKENS, METRICS_TOKEN=value)

    def scrape(token=None):
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return requests.get(sk.url + "/metrics", headers=headers, timeout=10)

    refused = scrape()
    problem(refused, 401, "unauthorized")
    assert refused.headers["WWW-Authenticate"].startswith("Bearer")
    assert "storekeeper_" not in refused.text
    problem(scrape("wrong-token-0123456789abcdef"), 401, "unauthorized")
    problem(scrape(hashlib.sha256(METRICS.encode()).hexdigest()), 401, "unauthorized")
    for token in (READER, WRITER, METRICS):
        r = scrape(token)
        assert r.status_code == 200, r.text
        assert "storekeeper_orders{" in r.text and "storekeeper_http_requests_total" in r.text
    # The metrics token opens /metrics and nothing else.
    problem(requests.get(sk.url + "/admin/v1/products", headers={"Authorization": f"Bearer {METRICS}"},
                         timeout=10), 401, "unauthorized")


def test_a_scrape_reads_none_of_the_counted_tables(storekeeper, launcher):
    """Orders, notifications, token jobs by state and the webhook backlog are counted in the
    background: a scrape reads them from memory, so it costs the database nothing however
    often it comes. The instance's sessions give up on a lock after 1 s, so a scrape that read
    a locked table would leave its gauges out instead of waiting."""
    db = launcher.database()
    sk = storekeeper(db, METRICS_REFRESH_INTERVAL="1h", SWEEP_INTERVAL="1h",
                     DATABASE_URL=db.url + "?options=-c%20lock_timeout%3D1s")
    first = sk.client.get("/metrics", admin=True)
    assert first.status_code == 200, first.text
    counted = ("storekeeper_orders{", "storekeeper_notifications{", "storekeeper_google_notifications{",
               "storekeeper_app_account_tokens{", "storekeeper_webhook_backlog{")

    def counts(text: str) -> list[str]:
        return [l for l in text.splitlines() if l.startswith(counted)]
    assert len(counts(first.text)) >= 5, first.text
    with db.holding("LOCK TABLE orders, apple_notifications, google_notifications, app_account_token_jobs, "
                    "webhook_endpoints, webhook_deliveries, events IN ACCESS EXCLUSIVE MODE"):
        for _ in range(5):
            r = sk.client.get("/metrics", admin=True)
            assert r.status_code == 200, r.text
            assert counts(r.text) == counts(first.text)
    assert "storekeeper_metrics_unread_sources 0" in first.text
    # The same lock with a scrape's own reads in it does fail them, so the timeout is in force:
    # those gauges are left out and counted, the rest still answered.
    with db.holding("LOCK TABLE trade_reports IN ACCESS EXCLUSIVE MODE"):
        r = sk.client.get("/metrics", admin=True)
        assert r.status_code == 200, r.text
        assert "storekeeper_metrics_unread_sources 1" in r.text
        assert "storekeeper_reports_pending{" not in r.text
        assert counts(r.text) == counts(first.text)


def test_long_admin_reads_do_not_hold_the_connections_payments_need(storekeeper, launcher):
    """Charts, exports and admin listings read through connections of their own: three charts
    stuck behind a lock take every one of those (and wait for each other), and an order is
    still made, on the connections payments use."""
    import threading
    db = launcher.database()
    sk = storekeeper(db, DB_POOL_SIZE="2", DB_READ_POOL_SIZE="1")
    api = sk.client
    product = unique("reads_apart").replace("-", "_")
    api.put_product(product)
    statuses: list[int] = []
    charts = [threading.Thread(target=lambda: statuses.append(api.get(
        "/admin/v1/charts/revenue", admin=True, timeout=120,
        params={"from": "2026-01-01", "to": "2026-01-31", "source": "transactions"}).status_code))
        for _ in range(3)]
    try:
        with db.holding("LOCK TABLE apple_transactions IN ACCESS EXCLUSIVE MODE"):
            for thread in charts:
                thread.start()
            deadline = time.monotonic() + 60
            while db.scalar("SELECT count(*) FROM pg_locks WHERE NOT granted "
                            "AND relation = 'apple_transactions'::regclass") == "0":
                assert time.monotonic() < deadline, "no chart reached the locked table"
                time.sleep(0.05)
            for _ in range(3):
                r = api.post_order(unique("payer"), product)
                assert r.status_code == 201, r.text
            metrics = api.get("/metrics", admin=True).text
            assert 'storekeeper_db_sessions{pool="reads"} 1' in metrics, metrics
    finally:
        for thread in charts:
            thread.join(timeout=120)
    # Once the lock is gone the charts are answered (or, past the pool's wait, told to retry).
    assert len(statuses) == 3 and set(statuses) <= {200, 503}, statuses


def test_tokens_read_from_a_secret_file_with_its_trailing_newline_still_work(storekeeper):
    # `kubectl create secret --from-file`, Docker secrets and `echo "$TOKEN" > file` end the
    # value with a newline; a presented token never carries one, so it is dropped.
    token, metrics = secrets.token_hex(16), secrets.token_hex(16)
    sk = storekeeper(ADMIN_TOKENS=f"ops:{token}\n", METRICS_TOKEN=f"{metrics}\n")
    r = requests.get(sk.url + "/admin/v1/products", headers={"Authorization": f"Bearer {token}"}, timeout=10)
    assert r.status_code == 200, r.text
    r = requests.get(sk.url + "/metrics", headers={"Authorization": f"Bearer {metrics}"}, timeout=10)
    assert r.status_code == 200, r.text
