"""Issue 28, charts: every chart of docs/CHARTS.md over a synthetic history with known answers
(chart_history.py), checked against an independent computation in Python from the raw rows,
in UTC and in zones whose days start at other instants; the transactions behind a point; a
purchase's price as Apple signed it; and the refusals of every parameter."""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone
from decimal import Decimal

import subprocess
import time

import pytest

from chart_history import History, Oracle
from support import BUNDLE_ID, problem, unique, wait_until

CHARTS = ["revenue", "new_customers", "payers", "refund_rate", "active_subscriptions", "active_trials",
          "mrr", "arr", "trial_conversion", "cohorts", "churn", "reactivations", "billing_retry", "grace_period",
          "consumption_requests"]
MONEY = {"gross", "refunded", "net", "revenue", "arppu", "amount", "refunded_amount", "rate_by_count",
         "rate_by_amount", "mrr", "arr", "retention", "conversion_rate", "churn_rate"}

# (from, to, resolution, tz, segment, environment, filters)
CASES = [
    ("2026-01-01", "2026-07-31", "month", "UTC", "none", None, {}),
    ("2026-02-03", "2026-05-17", "week", "America/New_York", "country", None, {}),
    ("2026-03-01", "2026-04-30", "day", "Asia/Tokyo", "product", None, {}),
    ("2026-01-15", "2026-06-10", "month", "UTC", "environment", "all", {}),
    ("2026-01-01", "2026-06-30", "week", "Europe/Berlin", "none", "Sandbox", {}),
    ("2026-01-01", "2026-06-30", "month", "America/New_York", "store", None, {"product": "pro_monthly"}),
    ("2026-02-01", "2026-03-31", "day", "UTC", "none", None, {"country": "DEU"}),
    # Half-hour offsets: no period begins at a whole UTC hour, so the rollup cannot answer.
    ("2026-02-20", "2026-04-10", "week", "Asia/Kolkata", "product", None, {}),
]
ROLLED_UP = {"revenue", "refund_rate", "active_subscriptions", "active_trials", "mrr", "arr"}
# Rolled up per user at exact instants: every zone, Kolkata's included.
BY_USER = {"new_customers", "payers", "cohorts", "trial_conversion"}


def backfill(stack, *args: str, zone: str | None = None) -> str:
    """`storekeeper charts-backfill`, counting payers and cohorts in `zone` (CHARTS_TIME_ZONE)
    when given, else in the instance's (UTC)."""
    env = {**stack.sk.env, "CHARTS_TIME_ZONE": zone} if zone else stack.sk.env
    done = subprocess.run([stack.sk.argv[0], "charts-backfill", *args], env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture(scope="module")
def charted(stack):
    history = History.generate()
    stack.db.server.psql(history.sql(), database=stack.db.name)
    # The instance built its rollup at start, before this history: rebuilt now.
    assert "charts rollup: generation" in backfill(stack)
    return stack, history


def chart(api, name: str, **params) -> dict:
    r = api.get(f"/admin/v1/charts/{name}", admin=True, params=params)
    assert r.status_code == 200, r.text
    return r.json()


def normal(value, key: str | None = None):
    """Server JSON as the oracle spells it: decimal text as Decimal."""
    if isinstance(value, dict):
        return {k: normal(v, k) for k, v in value.items()}
    if isinstance(value, str) and (key in MONEY or key is None):
        return Decimal(value)
    return value


def expected_rows(oracle: Oracle, name: str) -> list[dict]:
    return {
        "revenue": oracle.revenue, "new_customers": oracle.new_customers, "payers": oracle.payers,
        "refund_rate": oracle.refund_rate,
        "active_subscriptions": lambda: oracle.stock(trials=False, money=False),
        "active_trials": lambda: oracle.stock(trials=True, money=False),
        "mrr": lambda: oracle.stock(trials=False, money=True),
        "arr": lambda: oracle.stock(trials=False, money=True, annual=True),
        "trial_conversion": oracle.trial_conversion, "cohorts": oracle.cohorts,
        "churn": oracle.churn, "reactivations": oracle.reactivations,
        "billing_retry": lambda: oracle.billing(grace=False), "grace_period": lambda: oracle.billing(grace=True),
        "consumption_requests": oracle.consumption_requests,
    }[name]()


def row_key(row: dict):
    return (row["start"], row["segment"] or "", row["currency"] or "", row.get("month", 0))


def server_rows(answer: dict) -> list[dict]:
    rows = []
    for row in answer["rows"]:
        out = {}
        for k, v in row.items():
            if k == "cumulative_revenue":
                out[k] = {c: Decimal(a) for c, a in v.items()}
            elif k in MONEY and v is not None:
                out[k] = Decimal(v)
            else:
                out[k] = v
        rows.append(out)
    return sorted(rows, key=row_key)


def now_utc() -> datetime:
    return datetime.now(timezone.utc)


@pytest.mark.parametrize("source", ["auto", "transactions"])
@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[2]}-{c[3]}-{c[4]}-{c[5] or 'prod'}-{'-'.join(c[6].values()) or 'all'}")
@pytest.mark.parametrize("name", CHARTS)
def test_each_chart_matches_an_independent_computation(charted, name, case, source):
    assert_matches_the_oracle(charted, name, case, source)


@pytest.mark.parametrize("source", ["auto", "transactions"])
def test_cohorts_end_with_the_month_the_range_ends_in(charted, source):
    # A range ending on a month's last day (2026-07-31) ends in July: no cohort gets an August
    # row (the oracle and the server once both counted the month after it, with retention 0).
    stack, _ = charted
    answer = chart(stack.api, "cohorts", **case_params("cohorts", CASES[0], source=source))
    months = {(int(r["period"][:4]) * 12 + int(r["period"][5:7]) - 1 + r["month"]) for r in answer["rows"]}
    assert months and max(months) == 2026 * 12 + 6, sorted(months)


def case_params(name: str, case, **more) -> dict:
    """The query of `case` for the chart `name` (cohorts are monthly whatever the case)."""
    frm, to, res, tz, segment, env, filters = case
    params = {"from": frm, "to": to, "resolution": "month" if name == "cohorts" else res, "tz": tz,
              "segment": segment, **filters, **more}
    if env:
        params["environment"] = env
    return params


def assert_matches_the_oracle(charted, name, case, source) -> dict:
    """The chart `name` asked for `case` equals the independent computation; its answer."""
    stack, history = charted
    frm, to, res, tz, segment, env, filters = case
    params = case_params(name, case, source=source)
    res = params["resolution"]
    answer = chart(stack.api, name, **params)
    assert answer["chart"] == name and answer["tz"] == tz and answer["segment"] == segment
    rolled = source == "auto" and (name in BY_USER or (name in ROLLED_UP and tz != "Asia/Kolkata"))
    assert answer["source"] == ("rollup" if rolled else "transactions")
    # The rollup is exact up to its as_of, the transactions up to now.
    at = datetime.fromisoformat(answer["as_of"].replace("Z", "+00:00"))
    assert answer["lag_seconds"] >= 0 and (rolled or answer["lag_seconds"] == 0)
    oracle = Oracle(history, at)
    oracle.setup(frm, to, res, tz, segment, env=None if env == "all" else (env or "Production"), **filters)
    expected = sorted(expected_rows(oracle, name), key=row_key)
    got = server_rows(answer)
    assert len(got) == len(expected), (len(got), len(expected))
    for g, e in zip(got, expected):
        assert g == e
    # A case that checks nothing would pass whatever the server said.
    assert expected
    return answer


def test_the_rollup_is_exact_up_to_its_as_of_and_says_how_far_behind_it_is(charted):
    stack, history = charted
    api = stack.api
    params = {"from": "2026-01-10", "to": "2026-01-10", "segment": "product"}
    before = chart(api, "revenue", **params)
    assert before["source"] == "rollup"
    # A purchase the rollup has not seen: the transactions have it at once, the rollup after
    # its next build.
    stack.db.server.psql(
        "INSERT INTO apple_transactions (transaction_id, original_transaction_id, product_id, bundle_id, "
        "environment, quantity, type, purchase_date, user_id, source, price_milliunits, currency, storefront) "
        "VALUES ('8000000001', '8000000001', 'rollup_probe', 'b', 'Production', 1, 'Consumable', "
        "'2026-01-10T12:00:00Z', 'late-user', 'signed_transaction', 2500, 'USD', 'USA')", database=stack.db.name)
    try:
        fresh = chart(api, "revenue", source="transactions", **params)
        assert {r["segment"] for r in fresh["rows"]} - {r["segment"] for r in before["rows"]} == {"rollup_probe"}
        assert chart(api, "revenue", **params)["rows"] == before["rows"]
        backfill(stack)
        after = chart(api, "revenue", **params)
        assert after["source"] == "rollup" and after["rows"] == fresh["rows"]
        metrics = api.get("/metrics", admin=True).text
        lag = [line for line in metrics.splitlines() if line.startswith("storekeeper_chart_rollup_lag_seconds ")]
        assert len(lag) == 1 and 0 <= int(lag[0].split()[1]) < 3600
    finally:
        stack.db.server.psql("DELETE FROM apple_transactions WHERE transaction_id = '8000000001'",
                             database=stack.db.name)
        backfill(stack)


def sql(stack, text: str) -> None:
    stack.db.server.psql(text, database=stack.db.name)


def changed_units(output: str) -> int:
    assert " changed units" in output, output
    return int(output.split(" changed units")[0].rsplit(", ", 1)[1])


# Past ranges, so that the rollup (as of its hour) and the transactions (as of now) agree.
AGREE = [
    {"from": "2026-01-01", "to": "2026-06-30", "resolution": "month", "segment": "product"},
    {"from": "2026-01-05", "to": "2026-04-26", "resolution": "week", "tz": "America/New_York", "segment": "country"},
    {"from": "2026-02-01", "to": "2026-03-31", "resolution": "day", "tz": "Asia/Kolkata", "environment": "all"},
    # UTC, where payers reads its per-period counts (Migrations/0092), weeks cut at both ends.
    {"from": "2026-01-07", "to": "2026-04-22", "resolution": "week", "segment": "store"},
    {"from": "2026-02-01", "to": "2026-03-31", "resolution": "day", "environment": "all"},
]


def sql_rows(stack, text: str) -> str:
    return stack.db.server.psql(text, database=stack.db.name)


PAYER_COUNTS = ("SELECT resolution, period, dims, store, environment, product_id, country, currency, payers, "
                "revenue FROM chart_payer_counts ORDER BY 1, 2, 3, 4, 5, 6, 7, 8")
COHORT_COUNTS = ("SELECT scope, cohort_month, month, dims, store, environment, product_id, country, currency, "
                 "payers, payments, revenue FROM chart_cohort_counts ORDER BY 1, 2, 3, 4, 5, 6, 7, 8, 9")
COHORT_SIZES = ("SELECT scope, cohort_month, dims, store, environment, product_id, country, customers "
                "FROM chart_cohort_sizes ORDER BY 1, 2, 3, 4, 5, 6, 7")


def rollup_equals_transactions(api) -> None:
    for params in AGREE:
        for name in CHARTS:
            asked = {**params, "resolution": "month"} if name == "cohorts" else params
            rolled = chart(api, name, **asked)
            if name in BY_USER or (name in ROLLED_UP and asked.get("tz") != "Asia/Kolkata"):
                assert rolled["source"] == "rollup", (name, asked)
            raw = chart(api, name, source="transactions", **asked)
            assert rolled["rows"] == raw["rows"], (name, asked)
            assert raw["rows"], (name, asked)


def test_the_incremental_pass_takes_in_new_purchases_refunds_renewals_and_transfers(charted):
    stack, history = charted
    api = stack.api
    backfill(stack)
    assert changed_units(backfill(stack, "--changes")) == 0
    # A new customer's purchase, a renewal of a subscription (which ends its previous
    # period early), and a refund of a purchase bought months before.
    sub = next(t for t in sorted(history.txs, key=lambda t: t.purchase)
               if t.is_subscription and not t.is_trial and t.revocation is None and t.environment == "Production"
               and datetime(2026, 2, 1, tzinfo=timezone.utc) <= t.purchase < datetime(2026, 3, 1, tzinfo=timezone.utc)
               and t.price_milli)
    old = next(t for t in history.txs if t.product_id == "coins" and t.revocation is None and t.price_milli
               and t.environment == "Production" and t.user_id
               and datetime(2026, 1, 1, tzinfo=timezone.utc) <= t.purchase < datetime(2026, 2, 1, tzinfo=timezone.utc))
    first = min((t for t in history.txs if t.user_id and t.environment == "Production"), key=lambda t: t.purchase)
    renewal_at = (sub.purchase + timedelta(days=10)).isoformat()
    try:
        sql(stack, "INSERT INTO apple_transactions (transaction_id, original_transaction_id, product_id, bundle_id, "
                   "environment, quantity, type, purchase_date, user_id, source, price_milliunits, currency, storefront) "
                   "VALUES ('8100000001', '8100000001', 'gems', 'b', 'Production', 1, 'Consumable', "
                   "'2026-02-10T12:00:00Z', 'incremental-user', 'signed_transaction', 4990, 'USD', 'USA')")
        # The same user again that day, another product: one payer of the day, two of its products.
        sql(stack, "INSERT INTO apple_transactions (transaction_id, original_transaction_id, product_id, bundle_id, "
                   "environment, quantity, type, purchase_date, user_id, source, price_milliunits, currency, storefront) "
                   "VALUES ('8100000003', '8100000003', 'coins', 'b', 'Production', 1, 'Consumable', "
                   "'2026-02-10T18:00:00Z', 'incremental-user', 'signed_transaction', 990, 'USD', 'USA')")
        sql(stack, "INSERT INTO apple_transactions (transaction_id, original_transaction_id, product_id, bundle_id, "
                   "environment, quantity, type, purchase_date, expires_date, user_id, source, price_milliunits, "
                   f"currency, storefront) VALUES ('8100000002', '{sub.original_transaction_id}', '{sub.product_id}', "
                   f"'b', 'Production', 1, 'Auto-Renewable Subscription', '{renewal_at}', "
                   f"'{renewal_at}'::timestamptz + interval '1 month', '{sub.user_id}', 'signed_transaction', "
                   f"{sub.price_milli}, '{sub.currency}', '{sub.storefront}')")
        assert changed_units(backfill(stack, "--changes")) == 3
        rollup_equals_transactions(api)
        # The refund, after the pass: the rollup shows it only after the next one.
        before = chart(api, "revenue", **{"from": "2026-03-01", "to": "2026-03-31", "resolution": "month"})
        sql(stack, f"UPDATE apple_transactions SET revocation_date = '2026-03-05T10:00:00Z', revocation_reason = 1 "
                   f"WHERE transaction_id = '{old.transaction_id}'")
        stale = chart(api, "revenue", **{"from": "2026-03-01", "to": "2026-03-31", "resolution": "month"})
        assert stale["rows"] == before["rows"]
        # A transfer of a customer's first purchase to another user moves who is new when.
        sql(stack, f"UPDATE apple_transactions SET user_id = 'incremental-heir' "
                   f"WHERE transaction_id = '{first.transaction_id}'")
        assert changed_units(backfill(stack, "--changes")) == 2
        fresh = chart(api, "revenue", **{"from": "2026-03-01", "to": "2026-03-31", "resolution": "month"})
        assert sum(r["refunds"] for r in fresh["rows"]) == sum(r["refunds"] for r in before["rows"]) + 1
        rollup_equals_transactions(api)
        # The payer counts the passes kept are the ones a whole rebuild counts, every grouping.
        kept = sql_rows(stack, PAYER_COUNTS)
        assert kept.count("\n") > 100
        # So are the cohort counts and sizes.
        cohorts = sql_rows(stack, COHORT_COUNTS)
        sizes = sql_rows(stack, COHORT_SIZES)
        assert cohorts.count("\n") > 100 and sizes.count("\n") > 10
        backfill(stack)
        assert sql_rows(stack, PAYER_COUNTS) == kept
        assert sql_rows(stack, COHORT_COUNTS) == cohorts
        assert sql_rows(stack, COHORT_SIZES) == sizes
    finally:
        sql(stack, "DELETE FROM apple_transactions WHERE transaction_id IN ('8100000001', '8100000002', "
                   "'8100000003')")
        sql(stack, f"UPDATE apple_transactions SET revocation_date = NULL, revocation_reason = NULL "
                   f"WHERE transaction_id = '{old.transaction_id}'")
        sql(stack, f"UPDATE apple_transactions SET user_id = '{first.user_id}' "
                   f"WHERE transaction_id = '{first.transaction_id}'")
        # Deleted rows leave no change for a pass to find: a deletion needs the backfill.
        backfill(stack)


# Asked in the zone the counts are kept in: whole periods from the counts, cut ones (the
# first week, the current month) from the payments.
BERLIN = [
    ("2026-01-01", "2026-06-30", "month", "Europe/Berlin", "none", None, {}),
    ("2026-01-07", "2026-06-30", "week", "Europe/Berlin", "store", None, {}),
    ("2026-02-01", "2026-03-31", "day", "Europe/Berlin", "country", "all", {}),
    ("2026-01-01", "2026-05-31", "month", "Europe/Berlin", "product", "Sandbox", {}),
    ("2026-01-01", "2026-06-30", "month", "Europe/Berlin", "none", None, {"country": "DEU"}),
]
COUNTED = ["payers", "cohorts"]


def all_counts(stack) -> list[str]:
    """Every payer and cohort count, as rows of text."""
    return [sql_rows(stack, q) for q in (PAYER_COUNTS, COHORT_COUNTS, COHORT_SIZES)]


def counts_zone(stack) -> str:
    return sql_rows(stack, "SELECT counts_zone FROM chart_rollup_state").strip()


def test_payers_and_cohorts_are_counted_ahead_in_the_zone_the_operator_chose(charted):
    stack, history = charted
    api = stack.api
    asked = [(name, case) for name in COUNTED for case in BERLIN]
    try:
        assert "payers and cohorts counted in Europe/Berlin (were in UTC)," in backfill(stack, zone="Europe/Berlin")
        assert counts_zone(stack) == "Europe/Berlin"
        answers = [assert_matches_the_oracle(charted, name, case, "auto") for name, case in asked]
        utc = [assert_matches_the_oracle(charted, name, CASES[0], "auto") for name in COUNTED]
        # Every answer names the zone the counts are in, whatever zone it was asked in.
        assert {a["counts_zone"] for a in answers + utc} == {"Europe/Berlin"}
        # The Berlin answers are read from the counts: made wrong, the counts show in them.
        # Another zone's answers (UTC's here) never read them.
        sql(stack, "UPDATE chart_payer_counts SET payers = payers + 1000")
        sql(stack, "UPDATE chart_cohort_counts SET payers = payers + 1000 WHERE currency IS NULL")
        for (name, case), before in zip(asked, answers):
            assert chart(api, name, **case_params(name, case))["rows"] != before["rows"], (name, case)
        for name, before in zip(COUNTED, utc):
            assert chart(api, name, **case_params(name, CASES[0]))["rows"] == before["rows"], name
        # An incremental pass keeps them in Berlin: a purchase at 00:30 on March 1st there is
        # February's in UTC.
        # A rebuild in the zone the counts are already in moved nothing.
        assert "(were in" not in backfill(stack, zone="Europe/Berlin")
        sql(stack, "INSERT INTO apple_transactions (transaction_id, original_transaction_id, product_id, bundle_id, "
                   "environment, quantity, type, purchase_date, user_id, source, price_milliunits, currency, "
                   "storefront) VALUES ('8200000001', '8200000001', 'gems', 'b', 'Production', 1, 'Consumable', "
                   "'2026-02-28T23:30:00Z', 'berlin-midnight-user', 'signed_transaction', 4990, 'EUR', 'DEU')")
        assert changed_units(backfill(stack, "--changes", zone="Europe/Berlin")) == 1
        kept = all_counts(stack)
        for name, case in asked:
            params = case_params(name, case)
            rolled = chart(api, name, **params)
            assert rolled["source"] == "rollup"
            assert rolled["rows"] == chart(api, name, source="transactions", **params)["rows"], (name, case)
        backfill(stack, zone="Europe/Berlin")
        assert all_counts(stack) == kept
        # A pass in another zone cannot take them in: it rebuilds them there, as a UTC rebuild
        # counts them.
        moved = backfill(stack, "--changes")
        assert " changed units" not in moved and "payers and cohorts counted in UTC (were in Europe/Berlin)," in moved
        in_utc = all_counts(stack)
        assert in_utc != kept
        backfill(stack)
        assert all_counts(stack) == in_utc
    finally:
        sql(stack, "DELETE FROM apple_transactions WHERE transaction_id = '8200000001'")
        backfill(stack)
    assert counts_zone(stack) == "UTC"


def test_an_instance_counts_in_its_charts_time_zone_from_its_first_pass(launcher):
    zoned = launcher.stack(CHARTS_TIME_ZONE="America/New_York")
    deadline = time.monotonic() + 60
    while zoned.db.rows("SELECT counts_zone, counts_horizon IS NOT NULL FROM chart_rollup_state") != [
            ["America/New_York", "t"]]:
        assert time.monotonic() < deadline, zoned.sk.log_tail(20)
        time.sleep(0.2)
    # The release before 0119 reads payer_horizon as "UTC counts kept": never set for another zone.
    assert zoned.db.rows("SELECT payer_horizon IS NULL AND cohort_horizon IS NULL FROM chart_rollup_state") == [["t"]]
    rebuilt = [line for line in zoned.sk.log_tail(200).splitlines() if "chart rollup rebuilt" in line]
    assert rebuilt and "America/New_York" in rebuilt[0].replace("\\/", "/"), rebuilt
    # Nothing was counted before the first pass, so nothing moved.
    assert "counted_before_in" not in rebuilt[0], rebuilt


def test_an_answer_over_the_row_cap_is_refused_with_the_field_and_the_limit(charted):
    stack, _ = charted
    api = stack.api
    # 30 products in three years of days: 30 x 1,096 rows, over the cap of 25,000.
    values = ", ".join(
        f"('82000000{i:02d}', '82000000{i:02d}', 'cap_{i:02d}', 'b', 'Production', 1, 'Consumable', "
        f"'2025-06-01T12:00:00Z', 'cap-user', 'signed_transaction', 990, 'USD', 'USA')" for i in range(30))
    sql(stack, "INSERT INTO apple_transactions (transaction_id, original_transaction_id, product_id, bundle_id, "
               "environment, quantity, type, purchase_date, user_id, source, price_milliunits, currency, storefront) "
               f"VALUES {values}")
    try:
        params = {"from": "2024-01-01", "to": "2026-12-31", "source": "transactions"}
        body = problem(api.get("/admin/v1/charts/revenue", admin=True, params={**params, "segment": "product"}),
                       422, "chart_too_large")
        assert [f["field"] for f in body["errors"]] == ["segment"]
        assert body["limit"] == 25000 and body["rows"] > 25000
        # By month, or unsegmented, the same range fits.
        assert chart(api, "revenue", **params, segment="product", resolution="month")["rows"]
        assert chart(api, "revenue", **params)["rows"]
    finally:
        sql(stack, "DELETE FROM apple_transactions WHERE transaction_id LIKE '82000000%'")
        backfill(stack)


def test_the_history_has_what_the_charts_must_handle(charted):
    _, history = charted
    txs = history.txs
    assert any(t.refunded_at for t in txs) and any(t.is_upgraded for t in txs) and history.grace
    assert any(t.environment == "Sandbox" for t in txs) and any(t.price is None for t in txs)
    assert any(t.is_trial for t in txs)
    renewals = [t for t in txs if t.is_subscription and t.transaction_id != t.original_transaction_id]
    assert len(renewals) > 20


def test_sandbox_is_excluded_unless_asked(charted):
    stack, history = charted
    params = {"from": "2026-01-01", "to": "2026-06-30", "resolution": "month"}

    def count(answer):
        return sum(r["transactions"] for r in answer["rows"])
    default = count(chart(stack.api, "revenue", **params))
    production = count(chart(stack.api, "revenue", environment="Production", **params))
    sandbox = count(chart(stack.api, "revenue", environment="Sandbox", **params))
    everything = count(chart(stack.api, "revenue", environment="all", **params))
    assert default == production == sum(1 for t in history.txs if t.environment == "Production"
                                        and datetime(2026, 1, 1, tzinfo=timezone.utc) <= t.purchase
                                        < datetime(2026, 7, 1, tzinfo=timezone.utc))
    assert sandbox > 0 and everything == production + sandbox


def test_a_purchase_minutes_before_midnight_in_new_york_belongs_to_the_day_before(charted):
    stack, _ = charted
    # 2026-03-07T04:50Z is 23:50 on March 6 in New York (EST); 05:10Z is 00:10 on March 7.
    # After the switch to EDT on March 8, 2026-03-12T03:55Z is 23:55 on March 11.
    def behind(day, tz):
        r = stack.api.get("/admin/v1/charts/revenue/transactions", admin=True,
                          params={"from": "2026-03-01", "to": "2026-03-31", "tz": tz, "period": day, "limit": 200})
        assert r.status_code == 200, r.text
        return {t["purchase_date"] for t in r.json()["transactions"] if t.get("user_id") == "night-owl"}
    assert behind("2026-03-06", "America/New_York") == {"2026-03-07T04:50:00.000Z"}
    assert behind("2026-03-07", "America/New_York") == {"2026-03-07T05:10:00.000Z"}
    assert behind("2026-03-11", "America/New_York") == {"2026-03-12T03:55:00.000Z"}
    assert behind("2026-03-12", "America/New_York") == {"2026-03-12T04:05:00.000Z"}
    assert behind("2026-03-07", "UTC") == {"2026-03-07T04:50:00.000Z", "2026-03-07T05:10:00.000Z"}
    day = chart(stack.api, "revenue", **{"from": "2026-03-06", "to": "2026-03-07", "tz": "America/New_York"})
    assert [r["start"] for r in day["rows"] if r["currency"] == "USD"] == [
        "2026-03-06T05:00:00.000Z", "2026-03-07T05:00:00.000Z"]


def pages(api, name: str, limit: int = 7, **params) -> list[dict]:
    out, cursor = [], None
    while True:
        query = {**params, "limit": limit, **({"cursor": cursor} if cursor else {})}
        r = api.get(f"/admin/v1/charts/{name}/transactions", admin=True, params=query)
        assert r.status_code == 200, r.text
        body = r.json()
        out += body["transactions"]
        cursor = body.get("next_cursor")
        if not cursor:
            return out


@pytest.mark.parametrize("name", ["revenue", "new_customers", "active_subscriptions", "active_trials", "mrr",
                                  "arr", "cohorts", "refund_rate", "trial_conversion", "payers", "churn", "reactivations",
                                  "billing_retry", "grace_period", "consumption_requests"])
def test_the_transactions_behind_each_point_add_up_to_it(charted, name):
    stack, _ = charted
    params = {"from": "2026-01-01", "to": "2026-06-30", "resolution": "month", "tz": "Europe/Berlin"}
    answer = chart(stack.api, name, **params)
    checked = 0
    cohort_revenue: dict = {}  # (cohort, segment) -> currency -> paid so far, by month
    rows = sorted(answer["rows"], key=lambda r: r.get("month", 0))
    for row in rows:
        txs = pages(stack.api, name, period=row["period"], **params)
        if name in ("revenue", "mrr", "arr", "refund_rate", "payers"):
            txs = [t for t in txs if t.get("currency") == row["currency"]]
            if row["currency"] is not None:
                # The point's own currency, listed by the server (what the console asks for).
                assert pages(stack.api, name, period=row["period"], point_currency=row["currency"],
                             **params) == txs
        if name != "consumption_requests":  # Apple may ask about one purchase twice
            assert len({t["transaction_id"] for t in txs}) == len(txs)
        if name == "revenue":
            bought = [t for t in txs if t["event"] in ("purchase", "purchase_and_refund")]
            refunded = [t for t in txs if t["event"] in ("refund", "purchase_and_refund")]
            assert (len(bought), len(refunded)) == (row["transactions"], row["refunds"])
            if row["currency"] is None:
                assert row["gross"] is None and all("price" not in t for t in txs)
            else:
                assert sum(Decimal(t["price"]) for t in bought) == Decimal(row["gross"])
                assert sum(Decimal(t["price"]) for t in refunded) == Decimal(row["refunded"])
        elif name == "new_customers":
            assert len(txs) == row["new_customers"]
        elif name in ("active_subscriptions", "active_trials"):
            assert len(txs) == row[name]
            assert len({t["original_transaction_id"] for t in txs}) == len(txs)
        elif name in ("mrr", "arr"):
            assert len(txs) == row["subscriptions"]
            # ARR is twelve times the MRR of the same periods (docs/CHARTS.md): their prices
            # are the point's, so a point whose listing missed a period could not add up.
            assert sum(Decimal(t["price"]) for t in txs) > 0
        elif name == "cohorts":
            # Without `month`, a cohort's point lists its members' first transactions.
            assert len(txs) == row["cohort_size"] and {t["event"] for t in txs} == {"first_purchase"}
            members = {t["user_id"] for t in txs}
            assert len(members) == row["cohort_size"]
            # With it, that month's payments by those members: its payers are `paying`, and
            # what was not refunded, added over months 0 to this one, is `cumulative_revenue`.
            paid = pages(stack.api, name, period=row["period"], month=row["month"], **params)
            assert {t["event"] for t in paid} <= {"payment", "refunded_payment"}
            assert {t["user_id"] for t in paid} <= members
            assert len({t["user_id"] for t in paid}) == row["paying"], row
            key = (row["period"], row.get("segment"))
            for t in paid:
                if t["event"] == "payment":
                    totals = cohort_revenue.setdefault(key, {})
                    totals[t["currency"]] = totals.get(t["currency"], Decimal(0)) + Decimal(t["price"])
            expected = {c: Decimal(v) for c, v in row["cumulative_revenue"].items()}
            assert {c: v for c, v in cohort_revenue.get(key, {}).items() if v} == \
                {c: v for c, v in expected.items() if v}, row
            checked += len(paid)
        elif name == "refund_rate":
            assert len(txs) == row["transactions"]
            assert sum(1 for t in txs if t["event"] == "refunded") == row["refunded"]
        elif name == "trial_conversion":
            assert len(txs) == row["trials"]
            assert sum(1 for t in txs if t["event"] == "trial_converted") == row["converted"]
        elif name == "payers":
            assert len({t["user_id"] for t in txs}) == row["payers"]
        elif name == "churn":
            assert len(txs) == row["active_at_start"]
            assert sum(1 for t in txs if t["event"] == "churned") == row["churned"]
        elif name == "reactivations":
            assert len(txs) == row["reactivations"] and {t["event"] for t in txs} <= {"reactivation"}
            assert len({t["user_id"] for t in txs}) == row["reactivated_customers"]
        elif name in ("billing_retry", "grace_period"):
            assert len(txs) == row[f"in_{name}"]
            assert len({t["original_transaction_id"] for t in txs}) == len(txs)
        elif name == "consumption_requests":
            assert len(txs) == row["requests"]
            # A page ends between the two requests about one purchase: neither is skipped.
            assert len(pages(stack.api, name, limit=1, period=row["period"], **params)) == row["requests"]
            for answer in ("answered", "skipped_without_consent", "skipped", "failed", "expired", "pending"):
                assert sum(1 for t in txs if t["event"] == answer) == row[answer]
        checked += len(txs)
    assert checked > 0


def active_on(api, day: str) -> set[str]:
    return {t["user_id"] for t in pages(api, "active_subscriptions", period=day, **{"from": day, "to": day})}


def test_a_grace_period_keeps_a_subscription_active_until_it_ends(charted):
    stack, history = charted
    original, grace_end = next(iter(history.grace.items()))
    last = max((t for t in history.txs if t.original_transaction_id == original), key=lambda t: t.purchase)
    assert grace_end > last.expires + timedelta(days=2)
    user = last.user_id
    # At the close of the day its paid period ended, only the grace period keeps it.
    assert user in active_on(stack.api, last.expires.date().isoformat())
    assert user in active_on(stack.api, (grace_end.date() - timedelta(days=1)).isoformat())
    assert user not in active_on(stack.api, (grace_end.date() + timedelta(days=1)).isoformat())


def test_an_upgrade_is_one_subscription_and_not_a_refund(charted):
    stack, history = charted
    old = next(t for t in history.txs if t.is_upgraded)
    new = next(t for t in history.txs if t.original_transaction_id == old.original_transaction_id
               and t.product_id == "pro_yearly")
    day = old.revocation.date().isoformat()
    users = [t["user_id"] for t in pages(stack.api, "active_subscriptions", period=day, **{"from": day, "to": day})]
    assert users.count(old.user_id) == 1
    refunds = pages(stack.api, "revenue", period=day, **{"from": day, "to": day})
    assert old.transaction_id not in {t["transaction_id"] for t in refunds if t["event"] == "refund"}
    assert new.transaction_id in {t["transaction_id"] for t in refunds if t["event"] == "purchase"}


def test_revenue_is_the_price_apple_signed_not_the_catalogs(stack):
    api, fake = stack.api, stack.fake
    product = "com.example.tests.charts.gold"
    api.put_product(product, price="6.00", currency="USD", grants={"balance": {"gold": 10}})
    user = unique("charts")
    order = api.create_order(user, product)
    purchase = fake.call("/fake/v1/purchases", {
        "bundle_id": BUNDLE_ID, "product_id": product, "type": "Consumable", "quantity": 1,
        "environment": "Production", "app_account_token": order["app_account_token"],
        "price": 4321, "currency": "EUR"})
    r = api.report(order["trade_no"], signed_transaction=purchase["signed_transaction"])
    assert r.status_code == 200, r.text
    today = datetime.now(timezone.utc).date().isoformat()
    # Now, not as of the rollup's last build (which has not seen it yet).
    answer = chart(api, "revenue", **{"from": today, "to": today, "product": product, "segment": "country",
                                      "source": "transactions"})
    assert [(r["currency"], r["gross"], r["segment"], r["transactions"]) for r in answer["rows"]] == [
        ("EUR", "4.321", "USA", 1)]


def prorated_refund(stack, transaction_id: str, share: int) -> None:
    note = stack.fake.refund(transaction_id, prorated_milliunits=share)
    assert note["delivered_status"] == 200, note
    wait_until(lambda: [n for n in stack.api.notifications(limit=200)
                        if n["notification_uuid"] == note["notification_uuid"] and n["state"] == "processed"],
               15, "prorated refund processed")


def money_rows(api, name: str, product: str, day_from: str, day_to: str, **more) -> list[tuple]:
    keys = {"revenue": ("transactions", "gross", "refunds", "refunded", "net"),
            "refund_rate": ("transactions", "refunded", "amount", "refunded_amount", "rate_by_amount")}[name]
    answer = chart(api, name, **{"from": day_from, "to": day_to, "resolution": "day", "product": product, **more})
    return [(r["period"], *(r[k] for k in keys)) for r in answer["rows"]
            if any(r[k] not in (0, "0", None) for k in keys)]


def test_an_apple_prorated_refund_is_charted_at_its_share_when_it_came(stack):
    """docs/CHARTS.md, **Refund**: Apple's REFUND_PRORATED of 60% of a 9.99 purchase (Apple signs
    9990) is 5.994 refunded and 3.996 net on the refund's day, not a refund by count; refund rate
    by amount 0.6 on the purchase's day; the cohort keeps 3.996. A second, larger share replaces
    the first at its own time. The rollup, after a pass, answers the same as the transactions."""
    api, fake = stack.api, stack.fake
    product = unique("com.example.tests.charts.prorated")
    api.put_product(product, price="9.99", currency="USD", grants={"balance": {"gold": 100}})
    user = unique("charts-prorated")
    order = api.create_order(user, product)
    purchase = fake.call("/fake/v1/purchases", {
        "bundle_id": BUNDLE_ID, "product_id": product, "type": "Consumable", "quantity": 1,
        "environment": "Production", "app_account_token": order["app_account_token"],
        "price": 9990, "currency": "USD"})
    r = api.report(order["trade_no"], signed_transaction=purchase["signed_transaction"])
    assert r.status_code == 200, r.text
    tid = purchase["transaction_id"]
    prorated_refund(stack, tid, 60000)
    today = datetime.now(timezone.utc).date().isoformat()
    raw = {"source": "transactions"}
    assert money_rows(api, "revenue", product, today, today, **raw) == [
        (today, 1, "9.99", 0, "5.994", "3.996")]
    assert money_rows(api, "refund_rate", product, today, today, **raw) == [
        (today, 1, 0, "9.99", "5.994", "0.6")]
    listed = pages(api, "revenue", period=today, **{"from": today, "to": today, "product": product})
    assert [(t["transaction_id"], t["event"]) for t in listed] == [(tid, "purchase_and_partial_refund")]

    # Moved into the past, where the rollup (exact up to the start of this hour) answers too.
    def moved(refunded_at: str) -> None:
        sql(stack, f"UPDATE apple_transactions SET purchase_date = '2026-11-10T10:00:00Z', "
                   f"prorated_refunded_at = '{refunded_at}' WHERE transaction_id = '{tid}'")
        backfill(stack, "--changes")

    def both(name: str) -> list[tuple]:
        rolled = money_rows(api, name, product, "2026-11-01", "2026-11-30")
        assert chart(api, name, **{"from": "2026-11-01", "to": "2026-11-30", "resolution": "day",
                                   "product": product})["source"] == "rollup"
        assert rolled == money_rows(api, name, product, "2026-11-01", "2026-11-30", **raw), name
        return rolled

    def cohort(**more) -> dict:
        rows = chart(api, "cohorts", **{"from": "2026-11-01", "to": "2026-11-30", "resolution": "month",
                                        "product": product, **more})["rows"]
        return {r["month"]: r["cumulative_revenue"] for r in rows}

    moved("2026-11-12T09:30:00Z")
    assert both("revenue") == [("2026-11-10", 1, "9.99", 0, "0", "9.99"),
                               ("2026-11-12", 0, "0", 0, "5.994", "-5.994")]
    assert both("refund_rate") == [("2026-11-10", 1, 0, "9.99", "5.994", "0.6")]
    assert cohort() == cohort(**raw) == {0: {"USD": "3.996"}}
    listed = pages(api, "revenue", period="2026-11-12", **{"from": "2026-11-12", "to": "2026-11-12",
                                                            "product": product})
    assert [(t["transaction_id"], t["event"]) for t in listed] == [(tid, "partial_refund")]

    # Apple raises the share to 75%: the notification alone has the next pass recompute the
    # unit (its latest share, at its own time, now); moved to the 20th, the share is charted
    # there whole, as the latest refund's.
    prorated_refund(stack, tid, 75000)
    backfill(stack, "--changes")
    assert sql_rows(stack, f"SELECT trim_scale(sum(u.refunded)) FROM chart_unit_hourly u "
                           f"JOIN apple_transactions t ON t.original_transaction_id = u.unit_id "
                           f"WHERE t.transaction_id = '{tid}'").strip() == "7.4925"
    moved("2026-11-20T09:30:00Z")
    assert both("revenue") == [("2026-11-10", 1, "9.99", 0, "0", "9.99"),
                               ("2026-11-20", 0, "0", 0, "7.4925", "-7.4925")]
    assert both("refund_rate") == [("2026-11-10", 1, 0, "9.99", "7.4925", "0.75")]
    assert cohort() == cohort(**raw) == {0: {"USD": "2.4975"}}

    # A full refund then refunds the rest, at its own time: the share stays where it was.
    fake.refund(tid)
    wait_until(lambda: api.order(order["trade_no"])["trade_status"] == "TRADE_CLOSED", 15, "refunded")
    sql(stack, f"UPDATE apple_transactions SET revocation_date = '2026-11-25T09:30:00Z' "
               f"WHERE transaction_id = '{tid}'")
    backfill(stack, "--changes")
    assert both("revenue") == [("2026-11-10", 1, "9.99", 0, "0", "9.99"),
                               ("2026-11-20", 0, "0", 0, "7.4925", "-7.4925"),
                               ("2026-11-25", 0, "0", 1, "2.4975", "-2.4975")]
    assert both("refund_rate") == [("2026-11-10", 1, 1, "9.99", "9.99", "1")]
    assert cohort() == cohort(**raw) == {0: {}}


def test_a_family_sharing_copy_grants_access_and_is_no_revenue(stack):
    """Apple gives each family member their own transaction of a purchase shared with them
    (inAppOwnershipType FAMILY_SHARED). It grants what the purchase grants; the money is the
    purchaser's, counted once, never again for each member of the family."""
    api, fake = stack.api, stack.fake
    product = "com.example.tests.charts.family_vip"
    api.put_product(product, type="auto_renewable", price="7.00", currency="SEK",
                    grants={"entitlement": "family_vip"})
    today = datetime.now(timezone.utc).date().isoformat()

    def overview_sek() -> tuple[int, str]:
        r = api.get("/admin/v1/overview", admin=True, params={"days": 1})
        assert r.status_code == 200, r.text
        rows = [d for d in r.json()["daily"] if d["currency"] == "SEK" and d["day"] == today]
        return (rows[0]["paid_orders"], rows[0]["revenue"]) if rows else (0, "0")

    def sign(user_token: str | None, ownership: str) -> dict:
        body = {"bundle_id": BUNDLE_ID, "product_id": product, "type": "Auto-Renewable Subscription",
                "environment": "Production", "price": 7000, "currency": "SEK",
                "in_app_ownership_type": ownership}
        if user_token is not None:
            body["app_account_token"] = user_token
        return fake.call("/fake/v1/purchases", body)

    before = overview_sek()
    buyer, member = unique("family-buyer"), unique("family-member")
    order = api.create_order(buyer, product)
    bought = sign(order["app_account_token"], "PURCHASED")
    assert api.report(order["trade_no"], signed_transaction=bought["signed_transaction"]).status_code == 200
    shared = sign(None, "FAMILY_SHARED")
    r = api.receipts(user_id=member, signed_transaction=shared["signed_transaction"])
    assert r.status_code == 200, r.text
    assert "family_vip" in {e["entitlement"] for e in api.entitlements(member)["entitlements"]}

    r = api.get(f"/admin/v1/users/{member}/transactions", admin=True)
    assert r.status_code == 200, r.text
    assert [(t["transaction_id"], t["family_shared"]) for t in r.json()["transactions"]] == [
        (shared["transaction_id"], True)]
    r = api.get(f"/admin/v1/users/{buyer}/transactions", admin=True)
    assert [t["family_shared"] for t in r.json()["transactions"]] == [False]

    answer = chart(api, "revenue", **{"from": today, "to": today, "product": product,
                                      "source": "transactions"})
    assert [(r["currency"], Decimal(r["gross"]), r["transactions"]) for r in answer["rows"]] == [
        ("SEK", Decimal("7"), 1)]
    listed = pages(stack.api, "revenue", period=today, product=product)
    assert [t["transaction_id"] for t in listed] == [bought["transaction_id"]]
    subscribers = pages(stack.api, "active_subscriptions", period=today, product=product)
    assert {t["user_id"] for t in subscribers} == {buyer}
    # The overview counts orders: the member's order (made by the restore) is not a payment.
    paid, revenue = overview_sek()
    assert paid == before[0] + 1 and Decimal(revenue) == Decimal(before[1]) + Decimal("7.00")
    # Nor once an admin moves the copy to another user: the member's order no longer holds the
    # transaction, its payment's event still names it.
    r = api.request("POST", f"/admin/v1/transactions/{shared['transaction_id']}/transfer", admin=True,
                    json={"to_user_id": unique("family-heir")})
    assert r.status_code == 200, r.text
    assert overview_sek() == (paid, revenue)


def test_churn_counts_by_the_instants_periods_start_when_local_midnight_happens_twice(stack):
    """The Azores set clocks back from 01:00 to 00:00 on 2025-10-26: local midnight happens
    twice, and the period of that day starts at the later one (01:00Z). A subscription bought at
    00:30Z is local Oct 26 but started before that period: it is active at its start. One that
    ended at 00:30Z churned in Oct 25's period, which ran until 01:00Z."""
    api = stack.api
    rows = [("8300000001", "2025-10-26T00:30:00Z", "2025-11-26T00:30:00Z", "dst-stayer"),
            ("8300000002", "2025-09-26T00:30:00Z", "2025-10-26T00:30:00Z", "dst-leaver")]
    try:
        for tid, bought, expires, user in rows:
            sql(stack, "INSERT INTO apple_transactions (transaction_id, original_transaction_id, product_id, "
                       "bundle_id, environment, quantity, type, purchase_date, expires_date, user_id, source, "
                       "price_milliunits, currency, storefront) VALUES "
                       f"('{tid}', '{tid}', 'dst_sub', 'b', 'Production', 1, 'Auto-Renewable Subscription', "
                       f"'{bought}', '{expires}', '{user}', 'signed_transaction', 990, 'USD', 'PRT')")
        answer = chart(api, "churn", **{"from": "2025-10-24", "to": "2025-10-27", "tz": "Atlantic/Azores",
                                        "product": "dst_sub"})
        got = {r["period"]: (r["active_at_start"], r["churned"]) for r in answer["rows"]}
        assert got == {"2025-10-24": (1, 0), "2025-10-25": (1, 1), "2025-10-26": (1, 0), "2025-10-27": (1, 0)}
    finally:
        sql(stack, "DELETE FROM apple_transactions WHERE transaction_id IN ('8300000001', '8300000002')")


def test_every_parameter_is_checked(stack):
    api = stack.api
    bad = {
        "from": "2026-02-30", "to": "yesterday", "resolution": "hour", "tz": "Mars/Olympus;drop",
        "segment": "user", "store": "steam", "product": "a b", "country": "usa", "environment": "Staging",
        "colour": "red",
    }
    body = problem(api.get("/admin/v1/charts/revenue", admin=True, params=bad), 422, "invalid_chart_query")
    assert {f["field"] for f in body["errors"]} == set(bad)
    # A range over three years, from after to, a zone PostgreSQL does not know.
    for params, field in [({"from": "2023-01-01", "to": "2026-06-30"}, "from"),
                          ({"from": "2026-06-02", "to": "2026-06-01"}, "from"),
                          ({"tz": "Mars/Olympus"}, "tz"),
                          ({"resolution": "week"}, "resolution")]:
        body = problem(api.get("/admin/v1/charts/cohorts", admin=True, params=params), 422, "invalid_chart_query")
        assert [f["field"] for f in body["errors"]] == [field], params
    problem(api.get("/admin/v1/charts/ltv_by_horoscope", admin=True), 404, "chart_not_found")
    problem(api.get("/admin/v1/charts/revenue/transactions", admin=True), 422, "invalid_chart_query")
    body = problem(api.get("/admin/v1/charts/revenue/transactions", admin=True,
                           params={"period": "2026-03-01", "point_currency": "usd"}), 422, "invalid_chart_query")
    assert [f["field"] for f in body["errors"]] == ["point_currency"]
    body = problem(api.get("/admin/v1/charts/revenue/transactions", admin=True,
                           params={"period": "2026-01-01", "limit": "0", "cursor": "\x7f"}), 422)
    assert {f["field"] for f in body["errors"]} == {"limit", "cursor"}
    # Only a cohort's point has months, each a whole number from 0 to 1200.
    for chart_name, month in [("revenue", "1"), ("cohorts", "-1"), ("cohorts", "1201"), ("cohorts", "1.5"),
                              ("cohorts", "x"), ("cohorts", "00001")]:
        body = problem(api.get(f"/admin/v1/charts/{chart_name}/transactions", admin=True,
                               params={"period": "2026-01-01", "month": month}), 422, "invalid_chart_query")
        assert [f["field"] for f in body["errors"]] == ["month"], (chart_name, month)
    assert api.get("/admin/v1/charts/cohorts/transactions", admin=True,
                   params={"period": "2026-01-01", "month": "0"}).status_code == 200
    assert api.get("/admin/v1/charts/revenue").status_code == 401
    # Three years of days answer: the bound is a size, not a refusal of what fits.
    answer = chart(api, "revenue", **{"from": "2024-01-01", "to": "2026-12-31"})
    assert answer["from"] == "2024-01-01"


# ---------------------------------------------------------------------------------------------
# Currency conversion with the admin's rate table

RATES = {"EUR": [(date(2026, 1, 1), Decimal("1.08")), (date(2026, 3, 1), Decimal("1.1034"))],
         # None before February: January's yen stay yen, reported as unconverted.
         "JPY": [(date(2026, 2, 1), Decimal("0.00671"))]}
MONEY_CHARTS = ["revenue", "payers", "refund_rate", "mrr", "arr", "cohorts"]


@pytest.fixture(scope="module")
def rated(charted):
    stack, history = charted
    written = []
    for currency, rates in RATES.items():
        for day, rate in rates:
            path = f"/admin/v1/currency-rates/USD/{currency}/{day.isoformat()}"
            r = stack.api.request("PUT", path, admin=True, json={"rate": str(rate)})
            assert r.status_code == 201, r.text
            written.append(path)
    yield stack, history
    for path in written:
        assert stack.api.request("DELETE", path, admin=True).status_code == 204


@pytest.mark.parametrize("case", [CASES[0], CASES[1], CASES[2], CASES[5], CASES[7]],
                         ids=lambda c: f"{c[2]}-{c[3]}-{c[4]}")
@pytest.mark.parametrize("name", MONEY_CHARTS)
def test_money_charts_convert_each_transaction_at_the_rate_of_its_day(rated, name, case):
    stack, history = rated
    frm, to, res, tz, segment, env, filters = case
    if name == "cohorts":
        res = "month"
    params = {"from": frm, "to": to, "resolution": res, "tz": tz, "segment": segment, "currency": "USD", **filters}
    answer = chart(stack.api, name, **params)
    # Converted money is read from the transactions, never the rollup (which keeps currencies).
    assert answer["source"] == "transactions" and answer["currency"] == "USD"
    at = datetime.fromisoformat(answer["as_of"].replace("Z", "+00:00"))
    oracle = Oracle(history, at)
    oracle.setup(frm, to, res, tz, segment, env="Production", currency="USD", rates=RATES, **filters)
    expected = sorted(expected_rows(oracle, name), key=row_key)
    assert server_rows(answer) == expected and expected
    # What no rate converted is named, not dropped: its rows keep their own currency.
    currencies = {r["currency"] for r in expected} | {c for r in expected for c in r.get("cumulative_revenue", {})}
    assert answer["unconverted"] == sorted(c for c in currencies if c not in (None, "USD"))


def test_yen_before_the_first_rate_are_reported_unconverted(rated):
    stack, _ = rated
    answer = chart(stack.api, "revenue", **{"from": "2026-01-01", "to": "2026-02-28", "resolution": "month",
                                            "currency": "USD"})
    assert answer["unconverted"] == ["JPY"]
    assert {r["currency"] for r in answer["rows"] if r["period"] == "2026-01-01"} >= {"USD", "JPY"}
    assert "EUR" not in {r["currency"] for r in answer["rows"]}
    # The points' transactions carry the converted price too.
    txs = pages(stack.api, "revenue", period="2026-02-01", **{"from": "2026-01-01", "to": "2026-02-28",
                                                                "resolution": "month", "currency": "USD"})
    feb = next(r for r in answer["rows"] if r["period"] == "2026-02-01" and r["currency"] == "USD")
    bought = [t for t in txs if t["event"] in ("purchase", "purchase_and_refund") and t.get("currency") == "USD"]
    assert sum(Decimal(t["price"]) for t in bought) == Decimal(feb["gross"])


def test_the_rate_table_is_checked_and_bounded(stack):
    api = stack.api
    path = "/admin/v1/currency-rates/USD/GBP/2026-05-01"
    r = api.request("PUT", path, admin=True, json={"rate": "1.27"})
    assert r.status_code == 201, r.text
    assert r.json()["rate"] == "1.27" and r.json()["valid_from"] == "2026-05-01"
    r = api.request("PUT", path, admin=True, json={"rate": "1.2712"})
    assert r.status_code == 200 and r.json()["rate"] == "1.2712"
    listed = api.get("/admin/v1/currency-rates", admin=True, params={"reporting_currency": "USD"}).json()["rates"]
    assert {(x["currency"], x["valid_from"], x["rate"]) for x in listed} >= {("GBP", "2026-05-01", "1.2712")}
    assert api.get("/admin/v1/currency-rates", admin=True, params={"reporting_currency": "CHF"}).json() == {
        "rates": []}
    for bad in ["0", "0.000", "-1", "1e3", "1,5", "", "1.", ".5", "1234567890123", "1.0000000000001", 1.5]:
        body = problem(api.request("PUT", path, admin=True, json={"rate": bad}), 422, "validation_failed")
        assert [f["field"] for f in body["errors"]] == ["rate"], bad
    body = problem(api.request("PUT", "/admin/v1/currency-rates/usd/XXQ/2026-02-30", admin=True,
                               json={"rate": "1", "colour": "red"}), 422, "validation_failed")
    assert {f["field"] for f in body["errors"]} == {"reporting", "currency", "valid_from", "colour"}
    body = problem(api.request("PUT", "/admin/v1/currency-rates/USD/USD/2026-01-01", admin=True,
                               json={"rate": "1"}), 422, "validation_failed")
    assert [f["field"] for f in body["errors"]] == ["currency"]
    problem(api.get("/admin/v1/currency-rates", admin=True, params={"reporting_currency": "usd"}), 422,
            "validation_failed")
    assert api.request("DELETE", path, admin=True).status_code == 204
    problem(api.request("DELETE", path, admin=True), 404, "currency_rate_not_found")
    assert api.request("PUT", path, json={"rate": "1"}).status_code == 401
    # Conversion is for money: a count cannot be converted, and the code must be ISO 4217.
    for name, currency in [("new_customers", "USD"), ("revenue", "XXQ"), ("churn", "EUR")]:
        body = problem(api.get(f"/admin/v1/charts/{name}", admin=True, params={"currency": currency}), 422,
                       "invalid_chart_query")
        assert [f["field"] for f in body["errors"]] == ["currency"]


def rate_audit(api, target: str) -> list[dict]:
    """The audit entries of one rate (`reporting/currency/valid_from`), newest first."""
    return api.admin_pages("/admin/v1/audit", "entries", target_id=target)


def test_every_rate_change_is_audited_with_the_rate_before_and_after(stack):
    api = stack.api
    target = "USD/SEK/2026-07-01"
    path = f"/admin/v1/currency-rates/{target}"
    created = api.request("PUT", path, admin=True, json={"rate": "0.0952"}, headers={"X-Request-Id": "rate-put-1"})
    assert created.status_code == 201, created.text
    updated = api.request("PUT", path, admin=True, json={"rate": "0.0961"}, headers={"X-Request-Id": "rate-put-2"})
    assert updated.status_code == 200, updated.text
    # Refused writes of this rate leave nothing: bad input, no token.
    problem(api.request("PUT", path, admin=True, json={"rate": "-1"}), 422, "validation_failed")
    problem(api.request("PUT", path, admin=True, json={"rate": "1", "colour": "red"}), 422, "validation_failed")
    assert api.request("PUT", path, json={"rate": "1"}).status_code == 401
    deleted = api.request("DELETE", path, admin=True, headers={"X-Request-Id": "rate-delete-1"})
    assert deleted.status_code == 204, deleted.text
    # Deleting it again is answered as before, and audits nothing either.
    problem(api.request("DELETE", path, admin=True, headers={"X-Request-Id": "rate-delete-2"}), 404,
            "currency_rate_not_found")

    entries = rate_audit(api, target)
    assert [e["action"] for e in entries] == ["currency_rate_deleted", "currency_rate_written",
                                              "currency_rate_written"]
    deletion, update, creation = entries
    for entry, request_id in [(creation, "rate-put-1"), (update, "rate-put-2"), (deletion, "rate-delete-1")]:
        assert entry["admin"] == "ops" and entry["target_type"] == "currency_rate"
        assert entry["target_id"] == target and entry["request_id"] == request_id
        assert entry["client_address"] == "127.0.0.1"
    key = {"reporting_currency": "USD", "currency": "SEK", "valid_from": "2026-07-01"}
    # The states are the rate as the API answered it: before is absent for a new rate, after
    # for a removed one.
    assert "before" not in creation and creation["after"] == created.json()
    assert update["before"] == created.json() and update["after"] == updated.json()
    assert deletion["before"] == updated.json() and "after" not in deletion
    assert {k: creation["after"][k] for k in key} == key
    assert (update["before"]["rate"], update["after"]["rate"]) == ("0.0952", "0.0961")
    assert deletion["id"] > update["id"] > creation["id"]
    # The listing's action filter knows both actions.
    written = api.admin_pages("/admin/v1/audit", "entries", action="currency_rate_written")
    assert {e["id"] for e in written} >= {creation["id"], update["id"]}
    assert all(e["action"] == "currency_rate_written" for e in written)

    # A rate never written: a refused put and a delete leave no audit row.
    missing = "USD/NOK/2026-07-01"
    problem(api.request("PUT", f"/admin/v1/currency-rates/{missing}", admin=True, json={"rate": "1.5.0"}),
            422, "validation_failed")
    problem(api.request("DELETE", f"/admin/v1/currency-rates/{missing}", admin=True), 404,
            "currency_rate_not_found")
    assert rate_audit(api, missing) == []
    assert stack.db.scalar(
        "SELECT count(*) FROM admin_audit WHERE target_type = 'currency_rate' "
        f"AND target_id IN ('{target}', '{missing}')") == "3"


def test_the_rate_table_holds_at_most_ten_thousand_rates(stack):
    api = stack.api
    stack.db.server.psql(
        "INSERT INTO currency_rates (reporting_currency, currency, valid_from, rate, updated_by) "
        "SELECT 'CHF', 'EUR', date '2000-01-01' + i, 0.95, 'test' FROM generate_series(0, 9999) i",
        database=stack.db.name)
    try:
        problem(api.request("PUT", "/admin/v1/currency-rates/CHF/USD/2026-01-01", admin=True,
                            json={"rate": "0.88"}), 409, "currency_rates_full")
        # Refused: nothing written, nothing audited.
        assert rate_audit(api, "CHF/USD/2026-01-01") == []
        # A rate already there may still be corrected.
        r = api.request("PUT", "/admin/v1/currency-rates/CHF/EUR/2000-01-01", admin=True, json={"rate": "0.96"})
        assert r.status_code == 200, r.text
    finally:
        stack.db.server.psql("DELETE FROM currency_rates WHERE reporting_currency = 'CHF'", database=stack.db.name)


def test_a_rollup_built_in_a_half_hour_zone_session_is_the_utc_hours(charted):
    # The rollup's hours are UTC hours whatever the session's time zone: built by a session in
    # Kolkata (PGTZ, or a database whose timezone is set so), its hours began at :30 UTC, so a
    # UTC chart counted purchases on the wrong day (or fell back to the transactions).
    stack, _ = charted
    env = {**stack.sk.env, "PGTZ": "Asia/Kolkata"}
    done = subprocess.run([stack.sk.argv[0], "charts-backfill"], env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert stack.db.scalar("SELECT count(*) FROM chart_rollup_state WHERE as_of <> "
                           "date_trunc('hour', as_of, 'UTC')") == "0"
    rollup_equals_transactions(stack.api)



def test_the_overviews_days_are_utc_days_whatever_the_databases_time_zone(launcher):
    """The overview's window starts at a UTC midnight N-1 days back. Subtracting days from a
    timestamptz counts calendar days in the session's zone, so on a database whose zone keeps
    daylight saving time the window began an hour off whenever a change fell inside it."""
    db = launcher.database()
    db.rows(f"ALTER DATABASE \"{db.name}\" SET timezone = 'America/New_York'")
    # The first window (1-366 days) that contains one of New York's changes of clock.
    [[days]] = db.rows("""
        SELECT min(n) FROM generate_series(1, 366) n
        WHERE date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' - make_interval(days => n - 1)
           <> (date_trunc('day', now() AT TIME ZONE 'UTC') - make_interval(days => n - 1)) AT TIME ZONE 'UTC'""")
    stack = launcher.stack(db=db)
    api, fake = stack.api, stack.fake
    product = "com.example.tests.charts.overview_zone"
    api.put_product(product, price="3.00", currency="NOK", grants={"balance": {"gold": 1}})
    orders = []
    for _ in range(2):
        order = api.create_order(unique("zone-buyer"), product)
        bought = fake.purchase(product, "consumable", app_account_token=order["app_account_token"])
        assert api.report(order["trade_no"], signed_transaction=bought["signed_transaction"]).status_code == 200
        orders.append(order["trade_no"])
    start = (f"(date_trunc('day', now() AT TIME ZONE 'UTC') - make_interval(days => {days} - 1)) "
             "AT TIME ZONE 'UTC'")
    db.rows(f"UPDATE orders SET paid_at = {start} - interval '30 minutes' WHERE trade_no = '{orders[0]}'")
    db.rows(f"UPDATE orders SET paid_at = {start} + interval '30 minutes' WHERE trade_no = '{orders[1]}'")
    r = api.get("/admin/v1/overview", admin=True, params={"days": days})
    assert r.status_code == 200, r.text
    paid = [(d["day"], d["paid_orders"]) for d in r.json()["daily"]]
    [[first_day]] = db.rows(f"SELECT to_char({start} AT TIME ZONE 'UTC', 'YYYY-MM-DD')")
    assert paid == [(first_day, 1)], (days, paid)
