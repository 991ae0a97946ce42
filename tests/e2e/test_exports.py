"""Issue 28, exports: `storekeeper export` streams orders, ledger rows and transactions over a
time range as CSV and JSON lines, a keyset page at a time; what it writes is checked against
the rows as psql reads them, across page boundaries that split purchases made at one instant."""

from __future__ import annotations

import csv
import io
import json
import subprocess

import pytest

from chart_history import History
from support import buy, unique

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


@pytest.mark.parametrize("args", [[], ["refunds"], ["orders"], ["orders", "--from", "2026-01-01"],
                                  ["orders", "--from", "yesterday", "--to", "2026-01-01"],
                                  ["orders", "--from", "2026-01-01", "--to", "2026-02-01", "--format", "xml"],
                                  ["orders", "--from", "2026-01-01", "--to", "2026-02-01", "--page-size", "0"],
                                  ["orders", "--from", "2026-01-01", "--to", "2026-02-01", "--colour"]])
def test_wrong_arguments_are_refused_before_any_query(exported, args):
    stack, _ = exported
    done = export(stack, *args)
    assert done.returncode == 2 and "usage: storekeeper export" in done.stderr and done.stdout == ""
