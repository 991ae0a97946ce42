"""Issue 28 with Google Play (issue 25): purchases made through the fake Google Play, and an App
Store history beside them, appear in every chart segmented by `store`, from the transactions and
from the hourly rollup, checked against chart_history's independent computation fed with what
the fake reported (times, prices) and the raw refund instant. Every order is a transaction priced
as the Orders API (orders.get) says the buyer paid: a one-time product's (price times quantity), a
subscription's first order, and each renewal's, a row of its own with its own price under the
subscription's first order id; a test purchase is Sandbox; a voided order is a refund."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass, replace
from datetime import date, datetime, timedelta, timezone
from zoneinfo import ZoneInfo
from decimal import Decimal

import pytest

from chart_history import SUB, History, Oracle, Tx
from google_support import PUSH_AUDIENCE, PUSH_EMAIL, start_pushing_fake
from support import unique, wait_until
from test_charts import BY_USER, CHARTS, ROLLED_UP, changed_units, chart, expected_rows, row_key, server_rows

AUDIENCE = PUSH_AUDIENCE
UTC = timezone.utc


@dataclass
class GoogleTx(Tx):
    """A Google purchase as docs/CHARTS.md reads it: its own store, no storefront."""

    @property
    def store(self) -> str:
        return "google_play"


@pytest.fixture(scope="module")
def google(tmp_path_factory):
    fake = start_pushing_fake(tmp_path_factory.mktemp("google-charts"))
    yield fake
    fake.terminate(15)
    fake.forget()


@pytest.fixture(scope="module")
def charted(module_launcher, module_storekeeper, google):
    db = module_launcher.database()
    sk = module_storekeeper(db, port=google.storekeeper_port, **google.env_for_storekeeper(),
                            SANDBOX_POLICY="credit", GOOGLE_PUBSUB_AUDIENCE=AUDIENCE,
                            GOOGLE_PUBSUB_SERVICE_ACCOUNT=PUSH_EMAIL,
                            GOOGLE_OIDC_JWKS_URL=google.base + "/oauth2/v3/certs")
    api = sk.client
    api.put_product("gc.gold", "consumable", grants={"balance": {"gold": 100}})
    api.put_product("gc.vip", "auto_renewable", grants={"entitlement": "vip"})
    api.put_product("gc.pro", "auto_renewable", grants={"entitlement": "pro"})

    # Whole days before today, so the rollup (exact up to the last whole hour) holds them all.
    day = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0) - timedelta(days=3)
    apple = History()
    apple.add(user_id=unique("charts-apple"), product_id="coins", purchase=day + timedelta(hours=8),
              price_milli=1990, currency="USD", storefront="USA")
    apple.add(user_id=unique("charts-apple"), product_id="pro_monthly", purchase=day + timedelta(hours=9),
              price_milli=9990, currency="USD", storefront="DEU", type=SUB,
              expires=day + timedelta(hours=9, days=30))
    # A trial that converted, so the trial charts have something to check (Google's have none).
    trial = apple.add(user_id=unique("charts-apple"), product_id="pro_monthly", purchase=day + timedelta(hours=1),
                      price_milli=0, offer_type=1, offer_discount_type="FREE_TRIAL", type=SUB,
                      expires=day + timedelta(days=2, hours=1))
    apple.add(user_id=trial.user_id, original_transaction_id=trial.transaction_id, product_id="pro_monthly",
              purchase=day + timedelta(days=2, hours=1), price_milli=9990, type=SUB,
              expires=day + timedelta(days=32, hours=1))
    apple.add(user_id=unique("charts-apple"), product_id="pro_monthly", purchase=day + timedelta(hours=2),
              environment="Sandbox", price_milli=0, offer_type=1, offer_discount_type="FREE_TRIAL", type=SUB,
              expires=day + timedelta(days=7, hours=2))
    db.server.psql(apple.sql(), database=db.name)

    history = History(txs=list(apple.txs))
    purchases = [
        # (hours after `day`, product, kind, fields for the fake)
        (10, "gc.gold", "product", {"quantity": 2}),
        (11, "gc.vip", "subscription", {"period_seconds": 30 * 86400}),
        (12, "gc.pro", "subscription", {"period_seconds": 7 * 86400, "price_micros": 2_500_000, "currency": "EUR"}),
        (13, "gc.vip", "subscription", {"period_seconds": 86400}),  # expired the day after
        (14, "gc.gold", "product", {"test": True}),
        (15, "gc.vip", "subscription", {"period_seconds": 30 * 86400, "test": True, "price_micros": 1_000_000}),
        (16, "gc.gold", "product", {"void": True}),
        (17, "gc.vip", "subscription", {"period_seconds": 30 * 86400, "price_micros": 3_000_000, "void": True}),
        (18, "gc.vip", "subscription", {"period_seconds": 86400, "test": True}),
        # A daily plan renewed twice, each renewal an order of its own at a new price: a row
        # each, under the first order's id.
        (19, "gc.vip", "subscription", {"period_seconds": 86400}),
        # Billing trouble, as Google pushes it: a grace period (production and test), an
        # account hold after the daily plan's expiry; then both lapsed daily subscribers back.
        (30, None, "event", {"of": 1, "event": "grace"}),
        (31, None, "event", {"of": 5, "event": "grace"}),
        (38, None, "event", {"of": 3, "event": "hold"}),
        (40, "gc.vip", "subscription", {"period_seconds": 30 * 86400, "same_user": 3}),
        (19 + 24, None, "renew", {"of": 9, "price_micros": 5_990_000}),
        (44, "gc.vip", "subscription", {"period_seconds": 30 * 86400, "test": True, "same_user": 8}),
        (19 + 48, None, "renew", {"of": 9, "price_micros": 6_990_000}),
    ]
    bought = []
    voided = []
    renewals = []
    events = 0
    try:
        for hours, product, kind, fields in purchases:
            at = day + timedelta(hours=hours)
            # Every push so far applied before the fake's clock moves on: Storekeeper reads the
            # subscription back when it applies a push, and read at a later hour (a loaded
            # machine applies late) it is no longer in the state the push announced.
            wait_until(lambda: applied(db, google), 30, "the pushes so far applied")
            google.control("clock", {"now_ms": int(at.timestamp() * 1000)})
            fields = dict(fields)
            if kind == "renew":
                _, first, first_tx = bought[fields["of"]]
                google.control(f"subscriptions/{first['purchase_token']}/events",
                               {"event": "renew", "price_micros": fields["price_micros"]})
                order_id = f"{first['order_id']}..{sum(r[1]['purchase_token'] == first['purchase_token'] for r in renewals)}"
                wait_until(lambda: db.server.psql(
                    f"SELECT 1 FROM google_orders WHERE order_id = '{order_id}'", database=db.name).strip() == "1",
                    30, f"renewal {order_id} recorded")
                renewals.append((bought[fields["of"]][0], {"purchase_token": first["purchase_token"], "order_id": order_id},
                                 replace(first_tx, transaction_id=order_id, purchase=at,
                                         price_milli=fields["price_micros"] // 1000, expires=at + timedelta(days=1))))
                bought.append(None)
                continue
            if kind == "event":
                token = bought[fields['of']][1]['purchase_token']
                google.control(f"subscriptions/{token}/events", {"event": fields["event"]})
                bought.append(None)
                events += 1
                continue
            void = fields.pop("void", False)
            same = fields.pop("same_user", None)
            user = unique("charts-google") if same is None else bought[same][2].user_id
            body = {"user_id": user, "product_id": product, "store": "google_play"}
            if "quantity" in fields:
                body["quantity"] = fields["quantity"]
            r = api.post("/v1/orders", json=body)
            assert r.status_code == 201, r.text
            order = r.json()
            made = (google.buy if kind == "product" else google.subscribe)(
                product, obfuscated_account_id=order["obfuscated_account_id"], **fields)
            r = api.post("/v1/trade-reports", json={"trade_no": order["trade_no"], "trade_status": "TRADE_SUCCESS",
                                                    "purchase_token": made["purchase_token"]})
            assert r.status_code == 200, r.text
            micros = fields.get("price_micros", 4_990_000 if kind == "subscription" else 990_000)
            if kind == "product":
                micros *= fields.get("quantity", 1)
            period = fields.get("period_seconds")
            bought.append((order, made, GoogleTx(
                transaction_id=made["order_id"], original_transaction_id=made["order_id"], user_id=user,
                product_id=product, purchase=at, environment="Sandbox" if fields.get("test") else "Production",
                storefront=None, currency=fields.get("currency", "USD"), price_milli=micros // 1000,
                expires=at + timedelta(seconds=period) if period else None,
                type=SUB if kind == "subscription" else "Consumable")))
            if void:
                voided.append(bought[-1])
        bought += renewals
    finally:
        google.control("clock", {"now_ms": int(datetime.now(UTC).timestamp() * 1000)})
    bought = [b for b in bought if b is not None]
    wait_until(lambda: db.server.psql(
        "SELECT count(*) FROM google_orders WHERE price_source IS DISTINCT FROM 'order'",
        database=db.name).strip() == "0", 60, "every order priced by the Orders API")
    for order, made, _ in voided:
        google.control("voids", {"purchase_token": made["purchase_token"], "reason": 1})
        wait_until(lambda: api.order(order["trade_no"])["trade_status"] == "TRADE_CLOSED", 30,
                   "refunded by the voided notification")
    for _, made, tx in bought:
        revoked = db.server.psql(
            "SELECT to_char(refunded_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US') FROM google_orders "
            f"WHERE order_id = '{made['order_id']}'", database=db.name).strip()
        tx.revocation = datetime.fromisoformat(revoked).replace(tzinfo=UTC) if revoked else None
        history.txs.append(tx)
    assert sum(t.revocation is not None for t in history.txs) == 2
    # Every subscription notification Google pushed, read raw, as the billing states' facts.
    order_of = {made["purchase_token"]: tx.original_transaction_id for _, made, tx in bought}
    states = {6: ("grace_period", False), 5: ("billing_retry", False), 1: ("ok", True), 2: ("ok", True),
              7: ("ok", True), 4: ("ok", False), 12: ("ok", False), 13: ("ok", False)}

    def pushed():
        out = db.server.psql(
            "SELECT purchase_token, notification_type, message_id, to_char(event_time AT TIME ZONE 'UTC', "
            "'YYYY-MM-DD\"T\"HH24:MI:SS.US') FROM google_notifications WHERE kind = 'subscription' "
            "AND notification_type IS NOT NULL", database=db.name).strip()
        return [line.split("\t") for line in out.splitlines() if line]
    wait_until(lambda: sum(1 for r in pushed() if r[1] in ("5", "6")) == events, 30, "the billing pushes stored")
    for token, kind, message, at in pushed():
        if token in order_of and int(kind) in states:
            state, renews = states[int(kind)]
            history.billing.append(("google_play", order_of[token],
                                    datetime.fromisoformat(at).replace(tzinfo=UTC), message, state, renews))

    done = subprocess.run([sk.argv[0], "charts-backfill"], env=sk.env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return api, history, day, sk


def applied(db, google) -> bool:
    """Whether Storekeeper has applied (or set aside) every push the fake delivered."""
    delivered = {m for m, p in google.pushes().items() if not p.get("withheld")}
    if not delivered:
        return True
    done = db.server.psql(
        "SELECT message_id FROM google_notifications WHERE state <> 'pending' AND message_id IN ("
        + ", ".join(f"'{m}'" for m in delivered) + ")", database=db.name).split()
    return set(done) >= delivered


CASES = [
    ("day", "UTC", "store", None),
    ("day", "America/New_York", "store", "all"),
    ("week", "Europe/Berlin", "environment", "all"),
    ("day", "UTC", "product", "Sandbox"),
    ("month", "Asia/Kolkata", "store", None),
    # The store filter: Google's purchases alone, split by product.
    ("day", "UTC", "product", None, {"store": "google_play"}),
    ("week", "America/New_York", "none", "all", {"store": "google_play"}),
]


@pytest.mark.parametrize("source", ["auto", "transactions"])
@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-{c[1]}-{c[2]}-{c[3] or 'prod'}{'-google' if c[4:] else ''}")
@pytest.mark.parametrize("name", [c for c in CHARTS if c != "consumption_requests"])  # Apple's only
def test_google_purchases_are_charted_beside_the_app_store(charted, name, case, source):
    api, history, day, _ = charted
    res, tz, segment, env, *more = case
    filters = more[0] if more else {}
    if name == "cohorts":
        res = "month"
    frm = (day - timedelta(days=1)).date().isoformat()
    to = datetime.now(UTC).date().isoformat()
    params = {"from": frm, "to": to, "resolution": res, "tz": tz, "segment": segment, "source": source, **filters}
    if env:
        params["environment"] = env
    answer = chart(api, name, **params)
    rolled = source == "auto" and (name in BY_USER or (name in ROLLED_UP and tz != "Asia/Kolkata"))
    assert answer["source"] == ("rollup" if rolled else "transactions")
    at = datetime.fromisoformat(answer["as_of"].replace("Z", "+00:00"))
    # What had happened by the answer's as_of (the rollup's is the last whole hour; the voids
    # came after it).
    seen = History(txs=[replace(t, revocation=t.revocation if t.revocation and t.revocation < at else None)
                        for t in history.txs if t.purchase < at],
                   billing=[b for b in history.billing if b[2] < at])
    oracle = Oracle(seen, at)
    oracle.setup(frm, to, res, tz, segment, env=None if env == "all" else (env or "Production"), **filters)
    expected = sorted(expected_rows(oracle, name), key=row_key)
    assert server_rows(answer) == expected
    # Google trials are not recognised as trials (docs/CHARTS.md): Google alone has none. Churn
    # counts what was active at a period's start, so it has rows only if a period of the range
    # starts after the first purchase and has begun by the answer's as_of (with a day three days
    # ago, not when that day opens a week, nor when the only later week begins in the hours
    # after midnight UTC that are still Sunday in America/New_York).
    assert expected or (filters and name in ("active_trials", "trial_conversion")) or (
        name == "churn" and not a_period_starts_after(
            min(t.purchase for t in seen.txs if t.store == filters.get("store", t.store)), at, frm, to, res, tz))


def a_period_starts_after(first: datetime, as_of: datetime, frm: str, to: str, res: str, tz: str) -> bool:
    """Whether a `res` period inside [frm, to] (days in `tz`) starts after the instant `first`
    and by `as_of`."""
    zone = ZoneInfo(tz)
    day = date.fromisoformat(frm) + timedelta(days=1)
    while day <= date.fromisoformat(to):
        opens = res == "day" or (res == "week" and day.weekday() == 0) or (res == "month" and day.day == 1)
        if opens and first < datetime(day.year, day.month, day.day, tzinfo=zone) <= as_of:
            return True
        day += timedelta(days=1)
    return False


def test_each_store_is_its_own_segment_with_googles_prices(charted):
    api, history, day, _ = charted
    d = day.date().isoformat()
    answer = chart(api, "revenue", **{"from": d, "to": d, "segment": "store", "source": "transactions"})
    got = {(r["segment"], r["currency"]): (r["transactions"], Decimal(r["gross"]) if r["gross"] else None)
           for r in answer["rows"]}
    # Google: four production subscriptions and two one-time products (two units of gold at
    # 0.99, and one), each at what the Orders API said was paid (the voided ones are refunds the
    # day they were voided); the renewals fall on later days. The App Store's two, by Apple's price.
    assert got == {("app_store", "USD"): (3, Decimal("11.98")), ("google_play", "EUR"): (1, Decimal("2.5")),
                   ("google_play", "USD"): (6, Decimal("20.94"))}
    # Each renewal is a transaction of its own, at its own price: the first beside the lapsed
    # daily subscriber's return at 4.99, the second alone.
    for n, count, price in [(1, 2, "10.98"), (2, 1, "6.99")]:
        d2 = (day + timedelta(days=n)).date().isoformat()
        answer = chart(api, "revenue", **{"from": d2, "to": d2, "segment": "store", "source": "transactions"})
        row = next(r for r in answer["rows"] if r["segment"] == "google_play" and r["currency"] == "USD")
        assert (row["transactions"], Decimal(row["gross"])) == (count, Decimal(price))
    # The weekly plan's MRR is its price times 52/12.
    mrr = chart(api, "mrr", **{"from": d, "to": d, "segment": "store", "source": "transactions"})
    row = next(r for r in mrr["rows"] if r["segment"] == "google_play" and r["currency"] == "EUR")
    assert Decimal(row["mrr"]) == Decimal("10.83")
    # The transactions behind a point name Google's order ids, never a purchase token.
    r = api.get("/admin/v1/charts/revenue/transactions", admin=True,
                params={"from": d, "to": d, "period": d, "store": "google_play", "limit": 100})
    assert r.status_code == 200, r.text
    listed = {t["transaction_id"] for t in r.json()["transactions"] if t["event"] == "purchase"}
    assert listed == {t.transaction_id for t in history.txs
                      if t.store == "google_play" and t.environment == "Production" and t.purchase.date() == day.date()}
    assert all(t.startswith("GPA.") for t in listed)


def test_the_incremental_pass_sees_a_google_order_change_its_purchase_row_does_not(charted):
    # A renewal's price recorded late by the Orders API, or one order voided, changes
    # google_orders alone: the pass must still take the subscription in again.
    api, history, day, sk = charted

    def pass_once() -> int:
        done = subprocess.run([sk.argv[0], "charts-backfill", "--changes"], env=sk.env, capture_output=True,
                              text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        return changed_units(done.stdout)

    def both() -> tuple[list, list]:
        # Whole past days, where the rollup (as of its hour) and the transactions agree.
        params = {"from": (day - timedelta(days=1)).date().isoformat(),
                  "to": (day + timedelta(days=2)).date().isoformat(), "resolution": "day", "segment": "store"}
        rolled = chart(api, "revenue", **params)
        assert rolled["source"] == "rollup"
        return rolled["rows"], chart(api, "revenue", source="transactions", **params)["rows"]

    renewal = next(t for t in history.txs if t.store == "google_play" and t.transaction_id.endswith("..1"))
    pass_once()
    rolled, raw = both()
    assert rolled == raw
    psql = sk.env["DATABASE_URL"]
    update = ("UPDATE google_orders SET price_micros = price_micros + 1000000 "
              f"WHERE order_id = '{renewal.transaction_id}'")
    subprocess.run(["psql", psql, "-qAtc", update], check=True, timeout=30)
    try:
        stale, fresh = both()
        assert stale == rolled and fresh != raw
        assert pass_once() == 1
        rolled, raw = both()
        assert rolled == raw == fresh
    finally:
        subprocess.run(["psql", psql, "-qAtc", update.replace("+ 1000000", "- 1000000")], check=True, timeout=30)
        pass_once()


def test_a_renewal_after_a_free_trial_bills_its_own_period(charted, google):
    # Google's first order of a subscription with a free trial pays for 7 days (nothing); each
    # renewal pays for a month. MRR normalises each order by the period it paid for, so a
    # renewal at 9.99 a month is 9.99 of MRR, not 9.99 * 52/12 after the trial's week.
    # (Last in this module: its purchase is not in the history the tests above check.)
    api, _, _, sk = charted
    db_url = sk.env["DATABASE_URL"]
    api.put_product("gc.trial", "auto_renewable", grants={"entitlement": "trial"})
    start = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0) - timedelta(days=10)
    user = unique("charts-trial")
    try:
        google.control("clock", {"now_ms": int(start.timestamp() * 1000)})
        r = api.post("/v1/orders", json={"user_id": user, "product_id": "gc.trial", "store": "google_play"})
        assert r.status_code == 201, r.text
        order = r.json()
        made = google.subscribe("gc.trial", obfuscated_account_id=order["obfuscated_account_id"],
                                trial_seconds=7 * 86400, period_seconds=30 * 86400, price_micros=9_990_000)
        r = api.post("/v1/trade-reports", json={"trade_no": order["trade_no"], "trade_status": "TRADE_SUCCESS",
                                                "purchase_token": made["purchase_token"]})
        assert r.status_code == 200, r.text
        wait_until(lambda: applied_by(sk, google), 30, "the purchase push applied")
        google.control("clock", {"now_ms": int((start + timedelta(days=7)).timestamp() * 1000)})
        google.control(f"subscriptions/{made['purchase_token']}/events", {"event": "renew"})
        renewal = made["order_id"] + "..0"
        wait_until(lambda: psql(db_url, f"SELECT 1 FROM google_orders WHERE order_id = '{renewal}'") == "1",
                   30, "the renewal recorded")
    finally:
        google.control("clock", {"now_ms": int(datetime.now(UTC).timestamp() * 1000)})
    wait_until(lambda: psql(db_url, "SELECT count(*) FROM google_orders WHERE price_source IS DISTINCT FROM "
                                    f"'order' AND purchase_token = '{made['purchase_token']}'") == "0",
               60, "both orders priced by the Orders API")
    day = (start + timedelta(days=8)).date().isoformat()
    mrr = chart(api, "mrr", **{"from": day, "to": day, "segment": "product", "store": "google_play",
                               "source": "transactions"})
    row = next(r for r in mrr["rows"] if r["segment"] == "gc.trial")
    assert (row["currency"], Decimal(row["mrr"])) == ("USD", Decimal("9.99")), row


def test_an_upgrade_continues_its_subscription_rather_than_churning_it(charted, google):
    # Google makes an upgrade a new purchase token naming the one it replaces
    # (linkedPurchaseToken); Apple keeps one original_transaction_id. A subscriber who upgraded
    # is still one subscription: no churn, no second active subscription, the new price's MRR,
    # and the upgrade's transaction under the first one's id. (Last in this module, with
    # trial's: these purchases are not in the history the tests above check; in CHF, and weeks
    # before that history, so no chart above sees them.)
    api, _, _, sk = charted
    db_url = sk.env["DATABASE_URL"]
    api.put_product("gc.basic", "auto_renewable", grants={"entitlement": "basic"})
    api.put_product("gc.premium", "auto_renewable", grants={"entitlement": "premium"})
    start = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0) - timedelta(days=20)
    user = unique("charts-upgrade")

    def buy(product: str, price_micros: int, **fields) -> dict:
        r = api.post("/v1/orders", json={"user_id": user, "product_id": product, "store": "google_play"})
        assert r.status_code == 201, r.text
        order = r.json()
        made = google.subscribe(product, obfuscated_account_id=order["obfuscated_account_id"],
                                period_seconds=30 * 86400, price_micros=price_micros, currency="CHF", **fields)
        r = api.post("/v1/trade-reports", json={"trade_no": order["trade_no"], "trade_status": "TRADE_SUCCESS",
                                                "purchase_token": made["purchase_token"]})
        assert r.status_code == 200, r.text
        wait_until(lambda: applied_by(sk, google), 30, "the purchase push applied")
        return made

    try:
        google.control("clock", {"now_ms": int((start + timedelta(hours=10)).timestamp() * 1000)})
        basic = buy("gc.basic", 4_990_000)
        google.control("clock", {"now_ms": int((start + timedelta(days=5, hours=10)).timestamp() * 1000)})
        premium = buy("gc.premium", 9_990_000, linked_purchase_token=basic["purchase_token"])
    finally:
        google.control("clock", {"now_ms": int(datetime.now(UTC).timestamp() * 1000)})
    tokens = f"'{basic['purchase_token']}', '{premium['purchase_token']}'"
    wait_until(lambda: psql(db_url, "SELECT count(*) FROM google_orders WHERE price_source IS DISTINCT FROM "
                                    f"'order' AND purchase_token IN ({tokens})") == "0",
               60, "both orders priced by the Orders API")
    assert api.get(f"/v1/users/{user}/entitlements").json()["entitlements"][0]["entitlement"] == "premium"

    frm, to = (start + timedelta(days=3)).date().isoformat(), (start + timedelta(days=8)).date().isoformat()
    params = {"from": frm, "to": to, "resolution": "day", "store": "google_play", "segment": "none"}
    done = subprocess.run([sk.argv[0], "charts-backfill"], env=sk.env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    for source in ("transactions", "auto"):
        churn = chart(api, "churn", source=source, **params)["rows"]
        assert [(r["active_at_start"], r["churned"]) for r in churn] == [(1, 0)] * 6, churn
        active = chart(api, "active_subscriptions", source=source, **params)
        assert active["source"] == ("rollup" if source == "auto" else "transactions")
        assert [r["active_subscriptions"] for r in active["rows"]] == [1] * 6, active
        mrr = {r["period"]: Decimal(r["mrr"]) for r in chart(api, "mrr", source=source, **params)["rows"]
               if r["currency"] == "CHF"}
        assert mrr == {(start + timedelta(days=n)).date().isoformat(): Decimal("4.99" if n < 5 else "9.99")
                       for n in range(3, 9)}, mrr
    reactivated = chart(api, "reactivations", source="transactions", **params)["rows"]
    assert sum(r["reactivations"] for r in reactivated) == 0, reactivated
    # The upgrade's transaction names the subscription it continues, as Apple's would.
    day = (start + timedelta(days=5)).date().isoformat()
    r = api.get("/admin/v1/charts/revenue/transactions", admin=True,
                params={"from": day, "to": day, "period": day, "store": "google_play", "limit": 100})
    assert r.status_code == 200, r.text
    assert [(t["transaction_id"], t["original_transaction_id"]) for t in r.json()["transactions"]
            if t["event"] == "purchase"] == [(premium["order_id"], basic["order_id"])]


def psql(url: str, sql: str) -> str:
    return subprocess.run(["psql", url, "-qAtc", sql], capture_output=True, text=True, check=True,
                          timeout=30).stdout.strip()


def applied_by(sk, google) -> bool:
    delivered = {m for m, p in google.pushes().items() if not p.get("withheld")}
    done = psql(sk.env["DATABASE_URL"], "SELECT message_id FROM google_notifications WHERE state <> 'pending'").split()
    return set(done) >= delivered
