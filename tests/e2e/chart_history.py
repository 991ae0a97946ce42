"""A synthetic purchase history with known answers, for tests/e2e/test_charts.py.

`History.generate(seed)` makes products, transactions and grace periods deterministically
(consumables in three currencies, refunds, sandbox and receipt-only purchases, subscriptions
with trials, renewals bought early, an upgrade, a refunded renewal, a billing grace period, and
purchases minutes either side of midnight in New York and Tokyo); `History.sql()` loads it.

`Oracle` computes every chart from these rows in plain Python (zoneinfo for the zones,
Decimal for money): an independent reading of docs/CHARTS.md, sharing no code or SQL with
Storekeeper's.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, timezone
from decimal import ROUND_HALF_UP, Decimal
from zoneinfo import ZoneInfo

UTC = timezone.utc
SUB = "Auto-Renewable Subscription"
PRODUCTS = {
    "coins": "consumable",
    "gems": "consumable",
    "pro_monthly": "auto_renewable",
    "pro_yearly": "auto_renewable",
}
# Storefront -> (currency, price of coins in milliunits).
STOREFRONTS = {"USA": ("USD", 990), "DEU": ("EUR", 1090), "JPN": ("JPY", 160000)}
MONTHLY = {"USA": 9990, "DEU": 10990, "JPN": 1500000}
YEARLY = {"USA": 59990, "DEU": 64990, "JPN": 9000000}


def add_months(t: datetime, n: int) -> datetime:
    month = t.month - 1 + n
    year = t.year + month // 12
    month = month % 12 + 1
    day = min(t.day, [31, 29 if year % 4 == 0 else 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1])
    return t.replace(year=year, month=month, day=day)


@dataclass
class Tx:
    transaction_id: str
    original_transaction_id: str
    user_id: str | None
    product_id: str
    purchase: datetime
    environment: str = "Production"
    storefront: str | None = "USA"
    currency: str | None = "USD"
    price_milli: int | None = 990
    expires: datetime | None = None
    revocation: datetime | None = None
    is_upgraded: bool = False
    offer_type: int | None = None
    offer_discount_type: str | None = None
    type: str | None = "Consumable"
    source: str = "signed_transaction"

    # The facts every chart reads, spelled as docs/CHARTS.md defines them.
    @property
    def store(self) -> str:
        return "app_store"

    @property
    def country(self) -> str:
        return self.storefront or "unknown"

    @property
    def price(self) -> Decimal | None:
        return None if self.price_milli is None else Decimal(self.price_milli) / 1000

    @property
    def refunded_at(self) -> datetime | None:
        return None if self.is_upgraded else self.revocation

    @property
    def is_trial(self) -> bool:
        # docs/CHARTS.md: an introductory offer (offerType 1) that is FREE_TRIAL or free.
        return self.offer_type == 1 and (self.offer_discount_type == "FREE_TRIAL" or self.price_milli == 0)

    @property
    def is_subscription(self) -> bool:
        return (self.type == SUB or PRODUCTS.get(self.product_id) == "auto_renewable") and self.expires is not None


@dataclass
class History:
    txs: list[Tx] = field(default_factory=list)
    grace: dict[str, datetime] = field(default_factory=dict)
    # Billing notifications: (store, subscription, at, id, state, renews), state as
    # chart_billing_spells names it ('ok' for one that ends trouble); and CONSUMPTION_REQUESTs:
    # (uuid, transaction_id, environment, requested_at, state, outcome).
    billing: list[tuple] = field(default_factory=list)
    consumption: list[tuple] = field(default_factory=list)
    counter: int = 0

    def next_id(self) -> str:
        self.counter += 1
        return f"9{self.counter:09d}"

    def add(self, **kw) -> Tx:
        tid = self.next_id()
        kw.setdefault("original_transaction_id", tid)
        tx = Tx(transaction_id=tid, **kw)
        self.txs.append(tx)
        return tx

    @staticmethod
    def generate(seed: int = 28) -> "History":
        rng = random.Random(seed)
        h = History()
        start = datetime(2026, 1, 1, tzinfo=UTC)
        used: set[datetime] = set()

        def moment(days: float) -> datetime:
            while True:
                t = start + timedelta(seconds=rng.randrange(int(days * 86400)))
                t = t.replace(microsecond=0)
                if t not in used:
                    used.add(t)
                    return t

        users = [f"user-{i:03d}" for i in range(40)]
        home = {u: rng.choice(list(STOREFRONTS)) for u in users}
        # Consumables: refunds, sandbox, receipts without a price, purchases without an owner.
        for _ in range(160):
            u = rng.choice(users)
            sf = home[u]
            cur, price = STOREFRONTS[sf]
            product = rng.choice(["coins", "gems"])
            t = moment(150)
            kind = rng.random()
            tx = h.add(user_id=u, product_id=product, purchase=t, storefront=sf, currency=cur,
                       price_milli=price * (2 if product == "gems" else 1))
            if kind < 0.12:
                tx.revocation = t + timedelta(days=rng.randint(1, 20), hours=rng.randint(0, 23))
            elif kind < 0.22:
                tx.environment = "Sandbox"
            elif kind < 0.26:
                tx.storefront = tx.currency = tx.price_milli = None
                tx.type = None
                tx.source = "receipt"
            elif kind < 0.28:
                tx.user_id = None
        # Subscriptions: a trial first or not, monthly renewals, some bought two hours early.
        for i in range(36):
            u = f"sub-{i:03d}"
            sf = rng.choice(list(STOREFRONTS))
            cur = STOREFRONTS[sf][0]
            env = "Sandbox" if i % 9 == 8 else "Production"
            t = moment(120)
            original = None
            if rng.random() < 0.6:
                trial = h.add(user_id=u, product_id="pro_monthly", purchase=t, expires=t + timedelta(days=7),
                              storefront=sf, currency=cur, price_milli=0, offer_type=1,
                              offer_discount_type="FREE_TRIAL", type=SUB, environment=env)
                original = trial.transaction_id
                t = trial.expires
                if rng.random() < 0.35 and i not in (3, 5, 7, 10, 11):
                    continue  # the trial lapsed
            periods = rng.randint(1, 5)
            if i in (10, 11):
                periods = max(periods, 3)
            for k in range(periods):
                buy = t - timedelta(hours=2) if k > 0 and rng.random() < 0.3 else t
                end = add_months(t, 1)
                kw = dict(user_id=u, product_id="pro_monthly", purchase=buy, expires=end, storefront=sf,
                          currency=cur, price_milli=MONTHLY[sf], type=SUB, environment=env)
                if i in (10, 11) and k == 1:
                    # A free month of a promotional offer (offerType 2), which Apple also signs
                    # FREE_TRIAL: a paid subscription going on, not a trial.
                    kw.update(price_milli=0, offer_type=2, offer_discount_type="FREE_TRIAL")
                if original:
                    kw["original_transaction_id"] = original
                tx = h.add(**kw)
                original = original or tx.transaction_id
                t = end
            if i == 3:
                # A refunded renewal: the period ends at the refund.
                tx.revocation = tx.purchase + timedelta(days=10)
            if i == 5:
                # An upgrade to yearly halfway through the last month.
                at = tx.purchase + timedelta(days=15)
                tx.is_upgraded = True
                tx.revocation = at
                h.add(user_id=u, product_id="pro_yearly", purchase=at, expires=add_months(at, 12),
                      storefront=sf, currency=cur, price_milli=YEARLY[sf], type=SUB,
                      original_transaction_id=original, environment=env)
            if i == 7:
                # Billing failed at the last expiry; Apple granted a 16-day grace period.
                h.grace[original] = tx.expires + timedelta(days=16)
        # Minutes either side of midnight in New York (EST and, after March 8, EDT) and Tokyo.
        for stamp in ["2026-03-07T04:50:00", "2026-03-07T05:10:00", "2026-03-12T03:55:00",
                      "2026-03-12T04:05:00", "2026-04-20T14:58:00", "2026-04-20T15:02:00"]:
            t = datetime.fromisoformat(stamp).replace(tzinfo=UTC)
            h.add(user_id="night-owl", product_id="coins", purchase=t, storefront="USA", currency="USD",
                  price_milli=4990)
        h.lapses_and_trouble()
        return h

    APPLE_BILLING = {"grace": ("DID_FAIL_TO_RENEW", "GRACE_PERIOD", "grace_period", False),
                     "retry": ("DID_FAIL_TO_RENEW", None, "billing_retry", False),
                     "grace_expired": ("GRACE_PERIOD_EXPIRED", None, "billing_retry", False),
                     "renewed": ("DID_RENEW", "BILLING_RECOVERY", "ok", True),
                     "expired": ("EXPIRED", "BILLING_RETRY", "ok", False),
                     "resubscribed": ("SUBSCRIBED", "RESUBSCRIBE", "ok", False),
                     "offer": ("OFFER_REDEEMED", None, "ok", True),
                     "upgraded": ("DID_CHANGE_RENEWAL_PREF", "UPGRADE", "ok", True),
                     "refunded": ("REFUND", None, "ok", False)}

    def apple_billing(self, original: str, at: datetime, event: str, transaction_id: str | None = None):
        self.billing.append(("app_store", original, at, f"bill-{len(self.billing):04d}", event, transaction_id))

    def lapses_and_trouble(self):
        """Subscribers who lapse and come back, billing retry and grace periods as Apple
        notified them, and consumption requests answered every way (no randomness: the rest
        of the history stays as it was)."""
        d = lambda s: datetime.fromisoformat(s).replace(tzinfo=UTC)  # noqa: E731
        sub = dict(product_id="pro_monthly", type=SUB)
        # Lapsed in February after billing retry, back in March on the same subscription.
        a = self.add(user_id="comeback-1", purchase=d("2026-01-10T08:00:00"), expires=d("2026-02-10T08:00:00"),
                     price_milli=MONTHLY["USA"], **sub)
        self.apple_billing(a.original_transaction_id, d("2026-02-10T08:00:05"), "retry")
        self.apple_billing(a.original_transaction_id, d("2026-03-05T08:00:00"), "expired")
        self.apple_billing(a.original_transaction_id, d("2026-03-20T21:30:00"), "resubscribed")
        b = a
        for start in ("2026-03-20T21:30:00", "2026-04-20T21:30:00"):
            b = self.add(user_id="comeback-1", purchase=d(start), expires=add_months(d(start), 1),
                         price_milli=MONTHLY["USA"], original_transaction_id=a.original_transaction_id, **sub)
        # Lapsed in Japan, back on another subscription (yearly) in April.
        c = self.add(user_id="comeback-2", purchase=d("2026-02-01T15:30:00"), expires=d("2026-03-01T15:30:00"),
                     storefront="JPN", currency="JPY", price_milli=MONTHLY["JPN"], **sub)
        self.add(user_id="comeback-2", product_id="pro_yearly", purchase=d("2026-04-05T02:00:00"),
                 expires=d("2027-04-05T02:00:00"), storefront="JPN", currency="JPY", price_milli=YEARLY["JPN"],
                 type=SUB)
        # A grace period that recovered: the renewal came four days late, the days in grace
        # stayed days of access.
        e = self.add(user_id="recovering", purchase=d("2026-02-05T12:00:00"), expires=d("2026-03-05T12:00:00"),
                     storefront="DEU", currency="EUR", price_milli=MONTHLY["DEU"], **sub)
        self.apple_billing(e.original_transaction_id, d("2026-03-05T12:00:00"), "grace")
        self.apple_billing(e.original_transaction_id, d("2026-03-09T12:00:00"), "renewed")
        self.add(user_id="recovering", purchase=d("2026-03-09T12:00:00"), expires=d("2026-04-09T12:00:00"),
                 storefront="DEU", currency="EUR", price_milli=MONTHLY["DEU"],
                 original_transaction_id=e.original_transaction_id, **sub)
        # The grace period of the generated history, then billing retry, then expiry.
        for original, grace_end in self.grace.items():
            last = max((t for t in self.txs if t.original_transaction_id == original), key=lambda t: t.purchase)
            self.apple_billing(original, last.expires, "grace")
            self.apple_billing(original, grace_end, "grace_expired")
            self.apple_billing(original, grace_end + timedelta(days=20), "expired")
        # A sandbox subscription in billing retry, and a notification about one never seen.
        sandbox = next(t for t in self.txs if t.environment == "Sandbox" and t.is_subscription)
        self.apple_billing(sandbox.original_transaction_id, sandbox.expires, "grace")
        self.apple_billing(sandbox.original_transaction_id, sandbox.expires + timedelta(days=3), "grace_expired")
        s1 = self.add(user_id="comeback-sandbox", purchase=d("2026-01-20T10:00:00"), expires=d("2026-02-20T10:00:00"),
                      environment="Sandbox", price_milli=MONTHLY["USA"], **sub)
        self.add(user_id="comeback-sandbox", purchase=d("2026-03-25T10:00:00"), expires=d("2026-04-25T10:00:00"),
                 environment="Sandbox", price_milli=MONTHLY["USA"], original_transaction_id=s1.transaction_id,
                 **sub)
        self.apple_billing("1999999999", d("2026-02-02T00:00:00"), "retry")
        # Consumption requests: two days after a purchase (Apple asks when a refund is requested).
        answers = [("sent", "accepted"), ("skipped", "no_consent"), ("skipped", "policy"), ("failed", "refused"),
                   ("failed", "window_passed"), ("pending", None), ("sent", "accepted"), ("skipped", "no_consent")]
        bought = [t for t in self.txs if t.product_id in ("coins", "gems") and t.user_id and t.price_milli
                  and t.user_id != "night-owl"]
        for i, t in enumerate(bought[:24]):
            state, outcome = answers[i % len(answers)]
            at = t.purchase + timedelta(days=2, hours=i % 5)
            self.consumption.append((f"cons-{i:04d}", t.transaction_id, t.environment, at, state, outcome))
        # Apple may ask about one purchase twice (the customer asked again).
        for i, t in enumerate(bought[:2]):
            self.consumption.append((f"cons-{i:04d}-again", t.transaction_id, t.environment,
                                     t.purchase + timedelta(days=2, hours=6), "sent", "accepted"))
        self.consumption.append(("cons-sub", b.transaction_id, "Production", b.purchase + timedelta(days=1),
                                 "sent", "accepted"))
        self.consumption.append(("cons-unknown", "1888888888", "Production", d("2026-03-03T03:03:03"),
                                 "failed", "window_passed"))
        # Billing trouble ended otherwise, added last so that nothing above changes. Billing
        # retry that recovered four days late: the period ended, the renewal is a reactivation.
        f = self.add(user_id="retry-recovered", purchase=d("2026-02-12T09:00:00"), expires=d("2026-03-12T09:00:00"),
                     storefront="DEU", currency="EUR", price_milli=MONTHLY["DEU"], **sub)
        self.apple_billing(f.original_transaction_id, d("2026-03-12T09:00:05"), "retry")
        self.apple_billing(f.original_transaction_id, d("2026-03-16T09:00:00"), "renewed")
        self.add(user_id="retry-recovered", purchase=d("2026-03-16T09:00:00"), expires=d("2026-04-16T09:00:00"),
                 storefront="DEU", currency="EUR", price_milli=MONTHLY["DEU"],
                 original_transaction_id=f.original_transaction_id, **sub)
        # Billing retry that a refund of an earlier period does not end (Apple retries on).
        g = self.add(user_id="retry-refund", purchase=d("2026-01-15T10:00:00"), expires=d("2026-02-15T10:00:00"),
                     price_milli=MONTHLY["USA"], **sub)
        self.add(user_id="retry-refund", purchase=d("2026-02-15T10:00:00"), expires=d("2026-03-15T10:00:00"),
                 price_milli=MONTHLY["USA"], original_transaction_id=g.original_transaction_id, **sub)
        self.apple_billing(g.original_transaction_id, d("2026-03-15T10:00:05"), "retry")
        self.apple_billing(g.original_transaction_id, d("2026-03-20T10:00:00"), "refunded", g.transaction_id)
        self.apple_billing(g.original_transaction_id, d("2026-05-14T10:00:00"), "expired")
        # Billing retry ended by an offer the subscriber redeemed, and by an upgrade.
        for user, start, product, prices, event in (
                ("retry-offer", "2026-02-03T11:00:00", "pro_monthly", MONTHLY, "offer"),
                ("retry-upgrade", "2026-02-04T11:00:00", "pro_yearly", YEARLY, "upgraded")):
            o = self.add(user_id=user, purchase=d(start), expires=add_months(d(start), 1),
                         price_milli=MONTHLY["USA"], **sub)
            self.apple_billing(o.original_transaction_id, o.expires + timedelta(seconds=5), "retry")
            paid = o.expires + timedelta(days=7)
            self.apple_billing(o.original_transaction_id, paid, event)
            self.add(user_id=user, product_id=product, purchase=paid,
                     expires=add_months(paid, 12 if product == "pro_yearly" else 1), price_milli=prices["USA"],
                     type=SUB, original_transaction_id=o.original_transaction_id)

    def billing_events(self) -> list[tuple]:
        """(store, subscription, at, id, state, renews) of every billing notification."""
        out = []
        for store, original, at, nid, event, *rest in self.billing:
            if store == "app_store":
                kind, _, state, renews = self.APPLE_BILLING[event]
                # A refund ends trouble only of the period it followed: the latest bought before.
                if kind in ("REFUND", "REVOKE"):
                    before = [t for t in self.txs if t.store == store and t.original_transaction_id == original
                              and t.purchase <= at]
                    latest = max(before, key=lambda t: (t.purchase, t.transaction_id), default=None)
                    if latest is None or latest.transaction_id != rest[0]:
                        continue
            else:
                state, renews = event, rest[0]
            out.append((store, original, at, nid, state, renews))
        return out

    def sql(self) -> str:
        def lit(v) -> str:
            if v is None:
                return "NULL"
            if isinstance(v, bool):
                return "true" if v else "false"
            if isinstance(v, int):
                return str(v)
            if isinstance(v, datetime):
                return f"'{v.isoformat()}'::timestamptz"
            return "'" + str(v).replace("'", "''") + "'"

        parts = ["INSERT INTO products (product_id, type, title, price, currency) VALUES " + ", ".join(
            f"({lit(p)}, {lit(t)}, {lit(p)}, 1.00, 'USD')" for p, t in PRODUCTS.items())
            + " ON CONFLICT DO NOTHING;"]
        rows = []
        for t in self.txs:
            rows.append("(" + ", ".join(lit(v) for v in [
                t.transaction_id, t.original_transaction_id, t.product_id, "com.example.storekeeper",
                t.environment, 1, t.type, t.purchase, t.expires, t.revocation, 1 if t.revocation else None,
                t.user_id, t.source, t.price_milli, t.currency, t.storefront, t.offer_type,
                t.offer_discount_type, t.is_upgraded]) + ")")
        parts.append(
            "INSERT INTO apple_transactions (transaction_id, original_transaction_id, product_id, bundle_id, "
            "environment, quantity, type, purchase_date, expires_date, revocation_date, revocation_reason, "
            "user_id, source, price_milliunits, currency, storefront, offer_type, offer_discount_type, "
            "is_upgraded) VALUES " + ",\n".join(rows) + ";")
        if self.grace:
            parts.append("INSERT INTO subscription_states (original_transaction_id, grace_expires_at, status) VALUES "
                         + ", ".join(f"({lit(o)}, {lit(g)}, 'grace_period')" for o, g in self.grace.items()) + ";")
        notes = []
        for store, original, at, nid, event, *rest in self.billing:
            if store == "app_store":
                kind, subtype, _, _ = self.APPLE_BILLING[event]
                notes.append((nid, kind, subtype, "Production", at, original, rest[0]))
        for uuid, tid, env, at, _, _ in self.consumption:
            notes.append((uuid, "CONSUMPTION_REQUEST", None, env, at, None, tid))
        if notes:
            parts.append(
                "INSERT INTO apple_notifications (notification_uuid, notification_type, subtype, environment, "
                "signed_date, original_transaction_id, transaction_id, payload, state) VALUES " + ", ".join(
                    "(" + ", ".join(lit(v) for v in (n + (None,))[:7]) + ", '{}'::jsonb, 'processed')"
                    for n in notes) + ";")
        if self.consumption:
            # A pending answer is due in the far future, so the instance's answerer leaves it be.
            parts.append(
                "INSERT INTO consumption_answers (notification_uuid, transaction_id, environment, deadline, state, "
                "outcome, next_attempt_at) VALUES " + ", ".join(
                    f"({lit(u)}, {lit(tid)}, {lit(env)}, {lit(at + timedelta(hours=12))}, {lit(state)}, "
                    f"{lit(outcome)}, '9999-01-01'::timestamptz)" for u, tid, env, at, state, outcome
                    in self.consumption) + ";")
        return "\n".join(parts)


def q(x: Decimal, places: str) -> Decimal:
    return x.quantize(Decimal(places), rounding=ROUND_HALF_UP)


def ratio(a, b) -> Decimal | None:
    return None if not b else q(Decimal(a) / Decimal(b), "0.0001")


@dataclass
class Period:
    tx: Tx
    start: datetime
    end: datetime

    @property
    def monthly(self) -> Decimal | None:
        t = self.tx
        if t.is_trial or t.price is None:
            return None
        seconds = Decimal(int((t.expires - t.purchase).total_seconds()))
        if t.expires - t.purchase >= timedelta(days=27):
            return t.price / max(1, q(seconds / 2629746, "1"))
        return t.price * 52 / 12 / max(1, q(seconds / 604800, "1"))


class Oracle:
    """Each chart of docs/CHARTS.md from the raw rows."""

    def __init__(self, history: History, now: datetime):
        self.h = history
        self.now = now

    # --- the request ------------------------------------------------------------------------
    def setup(self, frm: str, to: str, res: str = "day", tz: str = "UTC", segment: str = "none",
              env: str | None = "Production", currency: str | None = None,
              rates: dict[str, list[tuple[date, Decimal]]] | None = None, **filters):
        # `?currency=`: rates per currency into `currency`, (valid_from, rate) in any order.
        self.cur = currency
        self.rates = rates or {}
        self.zone = ZoneInfo(tz)
        self.res = res
        self.segment = segment
        self.env = env
        self.filters = {k: v for k, v in filters.items() if v is not None}
        self.from_day = date.fromisoformat(frm)
        self.to_day = date.fromisoformat(to)
        self.from_at = self.local(self.from_day)
        self.to_at = self.local(self.to_day + timedelta(days=1))
        self.limit_at = min(self.to_at, self.now)

    def rate(self, currency: str | None, at: datetime) -> Decimal | None:
        if self.cur is None or currency is None:
            return None
        if currency == self.cur:
            return Decimal(1)
        day = at.astimezone(UTC).date()
        valid = [(d, r) for d, r in self.rates.get(currency, []) if d <= day]
        return max(valid)[1] if valid else None

    def conv(self, t: Tx) -> tuple[str | None, Decimal | None]:
        """The transaction's currency and price as the chart reports them: converted at the rate
        of its purchase's UTC day, or as signed when none applies."""
        r = self.rate(t.currency, t.purchase)
        return (t.currency, t.price) if r is None else (self.cur, t.price * r)

    def local(self, d: date) -> datetime:
        return datetime(d.year, d.month, d.day, tzinfo=self.zone).astimezone(UTC)

    def trunc(self, d: date) -> date:
        if self.res == "day":
            return d
        if self.res == "week":
            return d - timedelta(days=d.weekday())
        return d.replace(day=1)

    def step(self, d: date) -> date:
        if self.res == "day":
            return d + timedelta(days=1)
        if self.res == "week":
            return d + timedelta(days=7)
        return (d.replace(day=28) + timedelta(days=4)).replace(day=1)

    def key(self, t: datetime) -> date:
        return self.trunc(t.astimezone(self.zone).date())

    def buckets(self) -> list[tuple[date, datetime, datetime]]:
        out = []
        k = self.trunc(self.from_day)
        while k <= self.to_day:
            start = self.local(max(k, self.from_day))
            end = self.local(min(self.step(k), self.to_day + timedelta(days=1)))
            if start < self.now:
                out.append((k, start, end))
            k = self.step(k)
        return out

    def seg(self, t: Tx):
        return {"none": None, "store": t.store, "product": t.product_id, "country": t.country,
                "environment": t.environment}[self.segment]

    def env_ok(self, t: Tx) -> bool:
        return self.env is None or t.environment == self.env

    def kept(self, t: Tx) -> bool:
        f = self.filters
        return (self.env_ok(t) and f.get("store", t.store) == t.store
                and f.get("product", t.product_id) == t.product_id and f.get("country", t.country) == t.country)

    def in_range(self, t: datetime | None) -> bool:
        return t is not None and self.from_at <= t < self.to_at

    @staticmethod
    def stamp(t: datetime) -> str:
        return t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"

    def fill(self, agg: dict, measures) -> list[dict]:
        keys = sorted({(s, c) for (_, s, c) in agg}, key=lambda x: (x[0] is None, x[0] or "", x[1] is None, x[1] or ""))
        rows = []
        for k, start, end in self.buckets():
            for s, c in keys:
                row = {"period": max(k, self.from_day).isoformat(), "start": self.stamp(start),
                       "end": self.stamp(end), "segment": s, "currency": c}
                row.update(measures(agg.get((k, s, c)), c))
                rows.append(row)
        return rows

    # --- the charts ---------------------------------------------------------------------------
    def revenue(self) -> list[dict]:
        agg: dict = {}
        for t in self.h.txs:
            if not self.kept(t):
                continue
            currency, price = self.conv(t)
            for when, refund in ((t.purchase, False), (t.refunded_at, True)):
                if self.in_range(when):
                    a = agg.setdefault((self.key(when), self.seg(t), currency), [0, 0, Decimal(0), Decimal(0)])
                    a[1 if refund else 0] += 1
                    if price is not None:
                        a[3 if refund else 2] += price

        def m(a, c):
            a = a or [0, 0, Decimal(0), Decimal(0)]
            money = c is not None
            return {"transactions": a[0], "refunds": a[1], "gross": a[2] if money else None,
                    "refunded": a[3] if money else None, "net": a[2] - a[3] if money else None}
        return self.fill(agg, m)

    def firsts(self) -> list[Tx]:
        best: dict[str, Tx] = {}
        for t in self.h.txs:
            if t.user_id is None or not self.env_ok(t):
                continue
            b = best.get(t.user_id)
            if b is None or (t.purchase, t.transaction_id) < (b.purchase, b.transaction_id):
                best[t.user_id] = t
        return [t for t in best.values() if self.kept(t)]

    def new_customers(self) -> list[dict]:
        agg: dict = {}
        for t in self.firsts():
            if self.in_range(t.purchase):
                a = agg.setdefault((self.key(t.purchase), self.seg(t), None), [0, 0])
                a[0] += 1
                a[1] += t.is_trial
        return self.fill(agg, lambda a, c: {"new_customers": (a or [0, 0])[0], "started_with_trial": (a or [0, 0])[1]})

    def payers(self) -> list[dict]:
        agg: dict = {}
        for t in self.h.txs:
            if self.kept(t) and self.in_range(t.purchase) and t.price and t.user_id is not None:
                currency, price = self.conv(t)
                a = agg.setdefault((self.key(t.purchase), self.seg(t), currency), [set(), Decimal(0)])
                a[0].add(t.user_id)
                a[1] += price

        def m(a, c):
            if a is None:
                return {"payers": 0, "revenue": Decimal(0), "arppu": None}
            return {"payers": len(a[0]), "revenue": a[1], "arppu": q(a[1] / len(a[0]), "0.01")}
        return self.fill(agg, m)

    def refund_rate(self) -> list[dict]:
        agg: dict = {}
        for t in self.h.txs:
            if self.kept(t) and self.in_range(t.purchase) and t.price:
                currency, price = self.conv(t)
                a = agg.setdefault((self.key(t.purchase), self.seg(t), currency), [0, 0, Decimal(0), Decimal(0)])
                a[0] += 1
                a[2] += price
                if t.refunded_at is not None:
                    a[1] += 1
                    a[3] += price

        def m(a, c):
            a = a or [0, 0, Decimal(0), Decimal(0)]
            return {"transactions": a[0], "refunded": a[1], "amount": a[2], "refunded_amount": a[3],
                    "rate_by_count": ratio(a[1], a[0]), "rate_by_amount": ratio(a[3], a[2])}
        return self.fill(agg, m)

    def periods(self) -> list[Period]:
        groups: dict[tuple[str, str], list[Tx]] = {}
        for t in self.h.txs:
            if t.is_subscription:
                groups.setdefault((t.store, t.original_transaction_id), []).append(t)
        out = []
        for (_, original), txs in groups.items():
            txs.sort(key=lambda t: (t.purchase, t.transaction_id))
            for i, t in enumerate(txs):
                end = t.expires
                nxt = txs[i + 1].purchase if i + 1 < len(txs) else None
                g = self.h.grace.get(original)
                if nxt is None and g is not None and g > t.expires:
                    end = g
                # A grace period Apple began before the next period (a recovery) kept access.
                if nxt is not None and nxt > t.expires and t.store == "app_store":
                    g = self.grace_end(original, t.purchase, nxt)
                    if g is not None and g > t.expires:
                        end = g
                for cut in (nxt, t.refunded_at):
                    if cut is not None:
                        end = min(end, cut)
                out.append(Period(t, t.purchase, end))
        return out

    def grace_end(self, original: str, since: datetime, until: datetime) -> datetime | None:
        """The end of a grace period Apple began for the subscription between `since` and
        `until`: the next notification that left grace unpaid (Apple's grace date is not in the
        history's notifications), or never."""
        es = sorted((at, nid, event) for store, o, at, nid, event, *_ in self.h.billing
                    if store == "app_store" and o == original)
        ends = []
        for i, (at, _, event) in enumerate(es):
            if event == "grace" and since <= at < until:
                out = [a for a, _, e in es[i + 1:] if e in ("grace_expired", "expired", "retry")]
                ends.append(out[0] if out else datetime.max.replace(tzinfo=UTC))
        return max(ends) if ends else None

    def stock(self, trials: bool, money: bool, annual: bool = False) -> list[dict]:
        ps = [p for p in self.periods() if self.kept(p.tx) and p.tx.is_trial == trials and p.start < self.limit_at
              and p.end > p.start and (not money or p.tx.price is not None)]
        keys = {(self.seg(p.tx), self.conv(p.tx)[0] if money else None) for p in ps}
        agg = {(None, s, c): None for s, c in keys}
        rows = self.fill(agg, lambda a, c: {})
        for row in rows:
            close = min(datetime.fromisoformat(row["end"].replace("Z", "+00:00")), self.now)
            live = [p for p in ps if p.start < close <= p.end and (self.seg(p.tx), self.conv(p.tx)[0] if money else None)
                    == (row["segment"], row["currency"])]
            if money:
                total = sum(((p.monthly or Decimal(0)) * (self.rate(p.tx.currency, p.start) or 1) for p in live),
                            Decimal(0)) * (12 if annual else 1)
                row.update({"subscriptions": len(live), "arr" if annual else "mrr": q(total, "0.01")})
            else:
                row["active_trials" if trials else "active_subscriptions"] = len(live)
        return rows

    def trial_conversion(self) -> list[dict]:
        agg: dict = {}
        txs = self.h.txs
        for p in self.periods():
            t = p.tx
            if not (self.kept(t) and t.is_trial and self.in_range(p.start)):
                continue
            converted = any(c.store == t.store and c.original_transaction_id == t.original_transaction_id
                            and c.purchase >= p.start and not c.is_trial and c.price for c in txs)
            a = agg.setdefault((self.key(p.start), self.seg(t), None), [0, 0, 0])
            a[0] += 1
            a[1] += converted
            a[2] += (not converted) and p.end > self.now

        def m(a, c):
            a = a or [0, 0, 0]
            return {"trials": a[0], "converted": a[1], "pending": a[2], "conversion_rate": ratio(a[1], a[0])}
        return self.fill(agg, m)

    def cohorts(self) -> list[dict]:
        month = lambda t: t.astimezone(self.zone).date().replace(day=1)  # noqa: E731
        members: dict[tuple[date, object], set[str]] = {}
        for t in self.firsts():
            if self.in_range(t.purchase):
                members.setdefault((month(t.purchase), self.seg(t)), set()).add(t.user_id)
        # The month of the range's last instant (limit_at is the first instant after it).
        last = month(self.limit_at - timedelta(microseconds=1))
        pays = [t for t in self.h.txs if t.user_id is not None and self.env_ok(t) and t.price and t.purchase < self.limit_at]
        rows = []
        for (cm, s), users in members.items():
            i, m = 0, cm
            while m <= last:
                paying = {t.user_id for t in pays if t.user_id in users and month(t.purchase) == m}
                cum: dict[str, Decimal] = {}
                for t in pays:
                    if t.user_id in users and month(t.purchase) <= m and t.refunded_at is None:
                        currency, price = self.conv(t)
                        cum[currency] = cum.get(currency, Decimal(0)) + price
                start = self.local(cm)
                end = self.local((cm.replace(day=28) + timedelta(days=4)).replace(day=1))
                rows.append({"period": cm.isoformat(), "start": self.stamp(start), "end": self.stamp(end),
                             "segment": s, "currency": None, "month": i, "cohort_size": len(users),
                             "paying": len(paying), "retention": ratio(len(paying), len(users)),
                             "cumulative_revenue": cum})
                i += 1
                m = (m.replace(day=28) + timedelta(days=4)).replace(day=1)
        return rows

    # --- subscription movement, billing trouble, consumption requests ---------------------------
    def paid_periods(self) -> list[Period]:
        return [p for p in self.periods() if self.env_ok(p.tx) and not p.tx.is_trial and p.end > p.start]

    def churn(self) -> list[dict]:
        runs: dict[tuple[str, str], list[Period]] = {}
        for p in self.paid_periods():
            runs.setdefault((p.tx.store, p.tx.original_transaction_id), []).append(p)
        span_end: dict[int, datetime] = {}
        for ps in runs.values():
            ps.sort(key=lambda p: (p.start, p.tx.transaction_id))
            run: list[Period] = []
            reach = None
            for p in ps + [None]:
                if p is None or (reach is not None and p.start > reach):
                    for r in run:
                        span_end[id(r)] = max(x.end for x in run)
                    run = []
                if p is not None:
                    run.append(p)
                    reach = p.end if reach is None else max(reach, p.end)
        agg: dict = {}
        for k, start, end in self.buckets():
            for ps in runs.values():
                for p in ps:
                    if self.kept(p.tx) and p.start < start <= p.end:
                        a = agg.setdefault((k, self.seg(p.tx), None), [0, 0])
                        a[0] += 1
                        a[1] += span_end[id(p)] < min(end, self.now)

        def m(a, c):
            a = a or [0, 0]
            return {"active_at_start": a[0], "churned": a[1], "churn_rate": ratio(a[1], a[0])}
        return self.fill(agg, m)

    def reactivations(self) -> list[dict]:
        by_user: dict[str, list[Period]] = {}
        for p in self.paid_periods():
            if p.tx.user_id is not None:
                by_user.setdefault(p.tx.user_id, []).append(p)
        agg: dict = {}
        for user, ps in by_user.items():
            ps.sort(key=lambda p: (p.start, p.tx.store, p.tx.transaction_id))
            reach = None
            for p in ps:
                if reach is not None and reach < p.start and self.kept(p.tx) and self.in_range(p.start):
                    a = agg.setdefault((self.key(p.start), self.seg(p.tx), None), [0, set()])
                    a[0] += 1
                    a[1].add(user)
                reach = p.end if reach is None else max(reach, p.end)
        return self.fill(agg, lambda a, c: {"reactivations": a[0] if a else 0,
                                            "reactivated_customers": len(a[1]) if a else 0})

    def spells(self) -> list[tuple]:
        """(tx, state, start, end, prev_state, recovered) of every spell out of 'ok'."""
        groups: dict[tuple[str, str], list[tuple]] = {}
        for e in self.h.billing_events():
            groups.setdefault((e[0], e[1]), []).append(e)
        out = []
        for (store, original), es in groups.items():
            es.sort(key=lambda e: (e[2], e[3]))
            for i, (_, _, at, _, state, _) in enumerate(es):
                if state == "ok":
                    continue
                before = [t for t in self.h.txs if t.store == store and t.original_transaction_id == original
                          and t.purchase <= at]
                if not before:
                    continue
                tx = max(before, key=lambda t: (t.purchase, t.transaction_id))
                nxt = es[i + 1] if i + 1 < len(es) else None
                end = nxt[2] if nxt else datetime.max.replace(tzinfo=UTC)
                prev = es[i - 1][4] if i > 0 else "ok"
                out.append((tx, state, at, end, prev, bool(nxt and nxt[5])))
        return out

    def billing(self, grace: bool) -> list[dict]:
        states = {"grace_period"} if grace else {"grace_period", "billing_retry"}
        spells = [s for s in self.spells() if s[1] in states and self.kept(s[0])]
        agg: dict = {}
        for k, start, end in self.buckets():
            close = min(end, self.now)
            for tx, _, s, e, _, _ in spells:
                if s < close <= e:
                    agg.setdefault((k, self.seg(tx), None), [0, 0, 0])[0] += 1
        for tx, _, s, e, prev, recovered in spells:
            if prev not in states and self.in_range(s):
                agg.setdefault((self.key(s), self.seg(tx), None), [0, 0, 0])[1] += 1
            if recovered and self.in_range(e):
                agg.setdefault((self.key(e), self.seg(tx), None), [0, 0, 0])[2] += 1
        name = "in_grace_period" if grace else "in_billing_retry"
        return self.fill(agg, lambda a, c: dict(zip([name, "entered", "recovered"], a or [0, 0, 0])))

    ANSWERS = ["answered", "skipped_without_consent", "skipped", "failed", "expired", "pending"]

    def consumption_requests(self) -> list[dict]:
        known = {t.transaction_id: t for t in self.h.txs if t.store == "app_store"}
        agg: dict = {}
        for _, tid, env, at, state, outcome in self.h.consumption:
            t = known.get(tid)
            about = Tx(transaction_id=tid, original_transaction_id=tid, user_id=None,
                       product_id=t.product_id if t else "unknown", purchase=at, environment=env,
                       storefront=t.storefront if t else None)
            if not (self.kept(about) and self.in_range(at)):
                continue
            answer = {("sent", "accepted"): "answered", ("skipped", "no_consent"): "skipped_without_consent",
                      ("failed", "window_passed"): "expired"}.get((state, outcome)) or {
                "skipped": "skipped", "failed": "failed", "pending": "pending"}[state]
            a = agg.setdefault((self.key(at), self.seg(about), None), {n: 0 for n in ["requests"] + self.ANSWERS})
            a["requests"] += 1
            a[answer] += 1
        return self.fill(agg, lambda a, c: a or {n: 0 for n in ["requests"] + self.ANSWERS})
