-- A wallet the game can spend from (issue 26). Spends and backend grants are ledger rows like
-- every other change of a balance; what is new is the record of which credits each debit used
-- (lots, first in first out), so a refund knows how much of its purchase is still there and a
-- consumption answer knows how much of it was used.

ALTER TABLE ledger DROP CONSTRAINT ledger_kind_check;
ALTER TABLE ledger ADD CONSTRAINT ledger_kind_check
  CHECK (kind IN ('grant', 'refund', 'refund_reversed', 'transferred', 'adjustment', 'spend',
                  'reward', 'debt_repaid'));

-- One spend or backend grant, once per (user, Idempotency-Key) for as long as the row exists:
-- unlike idempotency_keys these are never swept, so a key retried a year later spends nothing.
CREATE TABLE wallet_operations (
  id              bigserial PRIMARY KEY,
  user_id         text NOT NULL,
  asset           text NOT NULL,
  kind            text NOT NULL CHECK (kind IN ('spend', 'grant')),
  amount          bigint NOT NULL CHECK (amount > 0),
  -- A grant's environment; a spend's rows take the environment of the credits they use.
  environment     text CHECK (environment IN ('Production', 'Sandbox')),
  reason          text NOT NULL,
  reference       text,
  -- Who asked: "user:<id>" (a signed-in user) or "backend:<key name>" or "anyone".
  caller          text NOT NULL,
  idempotency_key text NOT NULL,
  request_id      text NOT NULL,
  -- The balance of the asset right after the operation, as its answer said.
  balance_after   bigint NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now(),
  UNIQUE (user_id, idempotency_key)
);

ALTER TABLE ledger ADD COLUMN operation_id bigint REFERENCES wallet_operations (id);
-- A refund's row under REFUND_POLICY=debt: what it could not take back and recorded as debt.
ALTER TABLE ledger ADD COLUMN debt bigint NOT NULL DEFAULT 0 CHECK (debt >= 0);

-- What is left of each credit. A purchase is one lot per asset and environment (a reversed
-- refund refills it); a reward or a positive adjustment is a lot of its own. Kept by the
-- ledger's trigger: the sum of a user's open lots of an asset is its balance when that is
-- positive, and 0 otherwise.
CREATE TABLE ledger_lots (
  id          bigserial PRIMARY KEY,
  user_id     text NOT NULL,
  asset       text NOT NULL,
  environment text NOT NULL CHECK (environment IN ('Production', 'Sandbox')),
  trade_no    text,
  -- The ledger row that opened the lot (no foreign key: the trigger writes the lot before the
  -- row it describes is stored).
  ledger_id   bigint NOT NULL,
  credited    bigint NOT NULL CHECK (credited >= 0),
  remaining   bigint NOT NULL CHECK (remaining >= 0),
  UNIQUE (trade_no, asset, environment)
);
-- A debit reads the user's oldest open lots only: its cost does not grow with history.
CREATE INDEX ledger_lots_open ON ledger_lots (user_id, asset, id) WHERE remaining > 0;

-- Which lots each debit row used, and how much of each.
CREATE TABLE ledger_lot_uses (
  ledger_id bigint NOT NULL,
  lot_id    bigint NOT NULL REFERENCES ledger_lots (id),
  amount    bigint NOT NULL CHECK (amount > 0),
  PRIMARY KEY (ledger_id, lot_id)
);
CREATE INDEX ledger_lot_uses_lot ON ledger_lot_uses (lot_id);

-- What refunds could not take back under REFUND_POLICY=debt, repaid by the user's next credits
-- (oldest debt first) and cancelled if Apple reverses the refund.
CREATE TABLE ledger_debts (
  id          bigserial PRIMARY KEY,
  user_id     text NOT NULL,
  asset       text NOT NULL,
  trade_no    text NOT NULL,
  -- The refund's ledger row.
  ledger_id   bigint NOT NULL,
  amount      bigint NOT NULL CHECK (amount > 0),
  outstanding bigint NOT NULL CHECK (outstanding >= 0),
  cancelled   boolean NOT NULL DEFAULT false,
  created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX ledger_debts_open ON ledger_debts (user_id, asset, id) WHERE outstanding > 0;
CREATE INDEX ledger_debts_trade ON ledger_debts (trade_no);

-- The lots of the ledger as it stands, first in first out: each purchase holds what its own rows
-- still hold, each positive adjustment what it gave; what negative adjustments took comes off
-- the oldest lots. Writers wait meanwhile, as for user_balances (0023).
LOCK TABLE ledger IN SHARE ROW EXCLUSIVE MODE;

INSERT INTO ledger_lots (user_id, asset, environment, trade_no, ledger_id, credited, remaining)
SELECT user_id, asset, environment, trade_no, ledger_id, credited, remaining
FROM (SELECT user_id, asset, environment, trade_no, min(id) AS ledger_id,
             coalesce(sum(amount) FILTER (WHERE amount > 0), 0)::bigint AS credited,
             greatest(sum(amount), 0)::bigint AS remaining
      FROM ledger WHERE trade_no IS NOT NULL
      GROUP BY user_id, asset, environment, trade_no
      HAVING coalesce(sum(amount) FILTER (WHERE amount > 0), 0) > 0
      UNION ALL
      SELECT user_id, asset, environment, NULL, id, amount, amount
      FROM ledger WHERE trade_no IS NULL AND amount > 0) lots
ORDER BY ledger_id;

UPDATE ledger_lots l SET remaining = l.remaining - least(l.remaining, greatest(0, x.excess - x.before))
FROM (SELECT o.id, o.before, greatest(0, o.held - greatest(b.total, 0)) AS excess
      FROM (SELECT id, user_id, asset,
                   sum(remaining) OVER (PARTITION BY user_id, asset ORDER BY id) - remaining AS before,
                   sum(remaining) OVER (PARTITION BY user_id, asset) AS held
            FROM ledger_lots) o
      JOIN user_balances b ON b.user_id = o.user_id AND b.asset = o.asset) x
WHERE l.id = x.id AND x.excess > x.before;

-- A spend's answer and its event list the lots its rows used.
CREATE INDEX ledger_operation ON ledger (operation_id) WHERE operation_id IS NOT NULL;
