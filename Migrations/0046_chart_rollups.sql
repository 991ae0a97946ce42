-- Charts (issue 28): hourly rollups of the stores' transactions, rebuilt by a leased background
-- pass (ChartRollupService) and by `storekeeper charts-backfill`. A chart whose periods begin
-- at whole UTC hours (every zone with a whole-hour offset) sums these rows instead of the
-- transactions; the answer says as of when (`as_of`, the rollup's lag). Hours are UTC; a row
-- holds what happened in its hour for one key: purchases and their prices, refunds, paid
-- purchases and how many of them were refunded before `as_of` (refund rate, by purchase), and
-- subscription periods that started or ended (actives, trials, MRR).
CREATE TABLE chart_hourly (
  generation     bigint NOT NULL,
  hour           timestamptz NOT NULL,
  store          text NOT NULL,
  environment    text NOT NULL,
  product_id     text NOT NULL,
  country        text NOT NULL,
  currency       text,
  bought         bigint NOT NULL,
  gross          numeric NOT NULL,
  refunds        bigint NOT NULL,
  refunded       numeric NOT NULL,
  paid           bigint NOT NULL,
  paid_amount    numeric NOT NULL,
  paid_refunded  bigint NOT NULL,
  paid_refunded_amount numeric NOT NULL,
  -- Periods that started (every start counts: a key with any is charted) and the net change.
  subscription_starts bigint NOT NULL,
  trial_starts   bigint NOT NULL,
  subscription_delta bigint NOT NULL,
  trial_delta    bigint NOT NULL,
  mrr_delta      numeric NOT NULL
);
CREATE INDEX chart_hourly_generation_hour ON chart_hourly (generation, hour);

-- One row: which generation charts read, the instant it is exact up to (a whole hour), when it
-- was built and how long that took, and the lease of the pass building the next one.
CREATE TABLE chart_rollup_state (
  id            boolean PRIMARY KEY DEFAULT true CHECK (id),
  generation    bigint NOT NULL DEFAULT 0,
  as_of         timestamptz,
  built_at      timestamptz,
  build_ms      bigint,
  lease_until   timestamptz NOT NULL DEFAULT '-infinity'
);
INSERT INTO chart_rollup_state DEFAULT VALUES;
