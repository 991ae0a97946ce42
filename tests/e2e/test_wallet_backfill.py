"""Migration 0035 gives every ledger that existed before the wallet its lots: each purchase holds
what its own rows still hold, each positive adjustment what it gave, and what negative
adjustments took comes off the oldest lots, so the open lots of an asset add up to its balance
when that is positive. A database is migrated to just before 0035, given random histories of
purchases, refunds, reversals, transfers and adjustments, then migrated to the end; the lots are
compared with the rule computed here from the raw ledger rows, and a spend on the migrated
database uses them oldest first."""

from __future__ import annotations

import random
import shutil
import subprocess
import uuid
from collections import defaultdict

from support import REPO, free_port

WALLET_MIGRATION = 35
ASSETS = ("gold", "gems")


def migrate(binary, env, directory) -> None:
    result = subprocess.run([binary, "migrate"], env={**env, "MIGRATIONS_DIR": str(directory)},
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr


def history(rng: random.Random, users: list[str]) -> tuple[list[str], list[tuple]]:
    """Orders (trade numbers) and ledger rows (user, asset, amount, kind, trade_no, environment)
    in the order they happened, as the server before the wallet wrote them."""
    trades: list[str] = []
    rows: list[tuple] = []
    for user in users:
        asset = rng.choice(ASSETS)
        purchases: list[tuple[str, int, str]] = []
        refunded: set[str] = set()
        for _ in range(rng.randint(1, 12)):
            step = rng.random()
            if step < 0.45 or not purchases:
                trade = "bf" + uuid.uuid4().hex[:20]
                amount = rng.randint(1, 50) * 10
                environment = "Sandbox" if rng.random() < 0.2 else "Production"
                trades.append(trade)
                purchases.append((trade, amount, environment))
                rows.append((user, asset, amount, "grant", trade, environment))
            elif step < 0.6:
                trade, amount, environment = rng.choice(purchases)
                if trade in refunded:
                    refunded.discard(trade)
                    rows.append((user, asset, amount, "refund_reversed", trade, environment))
                else:
                    refunded.add(trade)
                    rows.append((user, asset, -amount, rng.choice(["refund", "transferred"]), trade,
                                 environment))
            elif step < 0.8:
                rows.append((user, asset, rng.randint(1, 300), "adjustment", None,
                             rng.choice(["Production", "Sandbox"])))
            else:
                rows.append((user, asset, -rng.randint(1, 400), "adjustment", None, "Production"))
    return trades, rows


def sql_text(value) -> str:
    return "NULL" if value is None else "'" + str(value).replace("'", "''") + "'"


def expected_lots(ledger: list[tuple]) -> dict[int, tuple]:
    """The rule, from the raw rows: ledger id of the lot's first row -> (user, asset, environment,
    trade_no, credited, remaining)."""
    by_owner: dict[tuple[str, str], list[tuple]] = defaultdict(list)
    for row in ledger:
        by_owner[(row[1], row[2])].append(row)
    lots: dict[int, tuple] = {}
    for (user, asset), rows in by_owner.items():
        balance = sum(r[3] for r in rows)
        own: list[list] = []
        per_trade: dict[str, list[tuple]] = defaultdict(list)
        for r in rows:
            if r[5] is not None:
                per_trade[r[5]].append(r)
            elif r[3] > 0:
                own.append([r[0], r[6], None, r[3], r[3]])
        for trade, trade_rows in per_trade.items():
            credited = sum(r[3] for r in trade_rows if r[3] > 0)
            if credited > 0:
                own.append([min(r[0] for r in trade_rows), trade_rows[0][6], trade, credited,
                            max(sum(r[3] for r in trade_rows), 0)])
        own.sort()
        excess = sum(lot[4] for lot in own) - max(balance, 0)
        for ledger_id, environment, trade, credited, remaining in own:
            taken = min(remaining, excess)
            excess -= taken
            lots[ledger_id] = (user, asset, environment, trade, credited, remaining - taken)
        assert excess == 0
    return lots


def test_the_wallet_migration_gives_existing_ledgers_their_lots_oldest_taken_first(launcher, binary, tmp_path):
    before = tmp_path / "Migrations"
    before.mkdir()
    for path in (REPO / "Migrations").glob("*.sql"):
        if int(path.name[:4]) < WALLET_MIGRATION:
            shutil.copy(path, before)
    db = launcher.database()
    env = launcher.env(db, free_port())
    migrate(binary, env, before)
    assert db.scalar("SELECT to_regclass('ledger_lots') IS NULL") == "t"

    rng = random.Random(20261202)
    users = [f"backfill-{i}" for i in range(40)]
    trades, rows = history(rng, users)
    statements = ["INSERT INTO products (product_id, type, title, price, currency) "
                  "VALUES ('com.example.backfill', 'consumable', 'Backfill', 1, 'USD');"]
    owner = {r[4]: r[0] for r in rows if r[4] is not None}
    for trade in trades:
        statements.append(
            "INSERT INTO orders (trade_no, user_id, product_id, quantity, unit_price, currency, amount,"
            " app_account_token, trade_status, expires_at, paid_at) VALUES "
            f"({sql_text(trade)}, {sql_text(owner[trade])}, 'com.example.backfill', 1, 1, 'USD', 1,"
            f" '{uuid.uuid4()}', 'TRADE_SUCCESS', now(), now());")
    for user, asset, amount, kind, trade, environment in rows:
        statements.append(
            "INSERT INTO ledger (user_id, asset, amount, kind, trade_no, environment) VALUES "
            f"({sql_text(user)}, {sql_text(asset)}, {amount}, {sql_text(kind)}, {sql_text(trade)},"
            f" {sql_text(environment)});")
    db.server.psql("BEGIN;\n" + "\n".join(statements) + "\nCOMMIT;", database=db.name)

    migrate(binary, env, REPO / "Migrations")

    ledger = [(int(i), u, a, int(amount), k, t or None, e) for i, u, a, amount, k, t, e in db.rows(
        "SELECT id, user_id, asset, amount, kind, coalesce(trade_no, ''), environment FROM ledger ORDER BY id")]
    assert len(ledger) == len(rows)
    expected = expected_lots(ledger)
    actual = {int(ledger_id): (u, a, e, t or None, int(credited), int(remaining))
              for ledger_id, u, a, e, t, credited, remaining in db.rows(
                  "SELECT ledger_id, user_id, asset, environment, coalesce(trade_no, ''), credited, remaining"
                  " FROM ledger_lots")}
    assert actual == expected
    # The history reached every case: refunds, reversals, lots emptied by negative adjustments,
    # and a balance below zero.
    kinds = {r[4] for r in ledger}
    assert {"grant", "refund", "refund_reversed", "transferred", "adjustment"} <= kinds
    assert any(0 == lot[5] < lot[4] and lot[3] is not None and
               sum(r[3] for r in ledger if r[5] == lot[3]) > 0 for lot in expected.values())
    balances = {(u, a): int(t) for u, a, t in db.rows("SELECT user_id, asset, total FROM user_balances")}
    assert any(total < 0 for total in balances.values())
    for (user, asset), total in balances.items():
        held = sum(lot[5] for lot in expected.values() if (lot[0], lot[1]) == (user, asset))
        assert held == max(total, 0), (user, asset)

    # The server takes the migrated ledger as its own: a spend uses the oldest open lots first.
    sk = launcher.storekeeper(db)
    spender, asset = max(balances, key=lambda owner: (len([lot for lot in expected.values()
                                                           if lot[:2] == owner and lot[5] > 0]), owner))
    open_lots = sorted((ledger_id, lot[5]) for ledger_id, lot in expected.items()
                       if lot[:2] == (spender, asset) and lot[5] > 0)
    assert len(open_lots) >= 2
    amount = open_lots[0][1] + 1
    r = sk.client.post(f"/v1/users/{spender}/balances/{asset}/spend", json={"amount": amount, "reason": "sword"},
                    headers={"Idempotency-Key": str(uuid.uuid4())})
    assert r.status_code == 201, r.text
    assert r.json()["balance"] == balances[(spender, asset)] - amount
    used = [(int(ledger_id), int(used)) for ledger_id, used in db.rows(
        "SELECT l.ledger_id, u.amount FROM ledger_lot_uses u JOIN ledger_lots l ON l.id = u.lot_id"
        f" JOIN ledger s ON s.id = u.ledger_id WHERE s.user_id = {sql_text(spender)} AND s.kind = 'spend'"
        " ORDER BY l.id")]
    assert used == [(open_lots[0][0], open_lots[0][1]), (open_lots[1][0], 1)]
