-- Charts (issue 28): the rollup kept up by an incremental pass (ChartRollup.refresh) instead of
-- a whole rebuild each interval, and rollups of the charts that count distinct users.
--
-- What changed since the last pass is found by the writing transaction's id: every row of the
-- tables charts read carries the id of the transaction that last wrote it (`chart_xid`, set by
-- the default on insert and by repeatable/chart_changes.sql on update). A pass re-reads the
-- rows written by transactions at or after the oldest one still running when the previous
-- pass took its snapshot (`chart_rollup_state.horizon`): a transaction that commits late, with
-- a lower id than rows already read, is still at or after that horizon. Rows written before
-- this migration have NULL; the first pass after it rebuilds everything (horizon is NULL).
-- ADD COLUMN without a default, then the default: no rewrite of the existing rows.
ALTER TABLE apple_transactions ADD COLUMN chart_xid xid8;
ALTER TABLE apple_transactions ALTER COLUMN chart_xid SET DEFAULT pg_current_xact_id();
CREATE INDEX apple_transactions_chart_xid ON apple_transactions (chart_xid);
ALTER TABLE google_purchases ADD COLUMN chart_xid xid8;
ALTER TABLE google_purchases ALTER COLUMN chart_xid SET DEFAULT pg_current_xact_id();
CREATE INDEX google_purchases_chart_xid ON google_purchases (chart_xid);
ALTER TABLE subscription_states ADD COLUMN chart_xid xid8;
ALTER TABLE subscription_states ALTER COLUMN chart_xid SET DEFAULT pg_current_xact_id();
CREATE INDEX subscription_states_chart_xid ON subscription_states (chart_xid);

ALTER TABLE chart_rollup_state
  ADD COLUMN horizon xid8,
  ADD COLUMN pass_units bigint,
  ADD COLUMN full_build boolean;

-- What each unit (a subscription: store and original transaction id; a one-time purchase is
-- its own) contributes to chart_hourly, so that a pass takes a changed unit's old share out
-- and puts its new one in. chart_hourly is the sum of these rows by hour and key.
CREATE TABLE chart_unit_hourly (
  unit_store     text NOT NULL,
  unit_id        text NOT NULL,
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
  subscription_starts bigint NOT NULL,
  trial_starts   bigint NOT NULL,
  subscription_delta bigint NOT NULL,
  trial_delta    bigint NOT NULL,
  mrr_delta      numeric NOT NULL
);
CREATE INDEX chart_unit_hourly_unit ON chart_unit_hourly (unit_store, unit_id);
-- A pass adds its deltas to the key's row; the generation and hour lead, as charts read them.
CREATE UNIQUE INDEX chart_hourly_key ON chart_hourly
  (generation, hour, store, environment, product_id, country, currency) NULLS NOT DISTINCT;
DROP INDEX chart_hourly_generation_hour;

-- Each user's first transaction per environment (`scope`) and over all of them (`scope` '*'):
-- new customers and cohorts. The instant is exact, so any zone's days and months cut it.
CREATE TABLE chart_customers (
  user_id     text NOT NULL,
  scope       text NOT NULL,
  first_at    timestamptz NOT NULL,
  unit_store  text NOT NULL,
  unit_id     text NOT NULL,
  store       text NOT NULL,
  environment text NOT NULL,
  product_id  text NOT NULL,
  country     text NOT NULL,
  is_trial    boolean NOT NULL,
  PRIMARY KEY (user_id, scope)
);
CREATE INDEX chart_customers_first ON chart_customers (scope, first_at);
CREATE INDEX chart_customers_unit ON chart_customers (unit_store, unit_id);

-- Each transaction priced above 0 with an owner, at its exact instant: payers and cohorts.
CREATE TABLE chart_payments (
  unit_store     text NOT NULL,
  unit_id        text NOT NULL,
  transaction_id text NOT NULL,
  user_id        text NOT NULL,
  purchased_at   timestamptz NOT NULL,
  store          text NOT NULL,
  environment    text NOT NULL,
  product_id     text NOT NULL,
  country        text NOT NULL,
  currency       text,
  price          numeric NOT NULL,
  refunded       boolean NOT NULL
);
CREATE INDEX chart_payments_unit ON chart_payments (unit_store, unit_id);
CREATE INDEX chart_payments_time ON chart_payments (purchased_at);
CREATE INDEX chart_payments_user ON chart_payments (user_id);

-- Each trial period, whether its subscription paid after it: trial conversion.
CREATE TABLE chart_trials (
  unit_store     text NOT NULL,
  unit_id        text NOT NULL,
  transaction_id text NOT NULL,
  starts_at      timestamptz NOT NULL,
  ends_at        timestamptz NOT NULL,
  store          text NOT NULL,
  environment    text NOT NULL,
  product_id     text NOT NULL,
  country        text NOT NULL,
  converted      boolean NOT NULL
);
CREATE INDEX chart_trials_unit ON chart_trials (unit_store, unit_id);
CREATE INDEX chart_trials_start ON chart_trials (starts_at);
