-- Charts (issue 28): `payers` in UTC from counts kept per period, instead of counting distinct
-- users over every payment of the range when the chart is asked (seconds over two years of a
-- million payments). Distinct users cannot be summed: a week's payers are not its days'
-- payers added up, nor the unsegmented count the segments' sum (a user who paid for two
-- products on one day is one payer). So the count is kept per resolution (UTC day, ISO week,
-- month) and per grouping of the dimensions a request can ask (`dims`, bits: store 8,
-- environment 4, product 2, country 1; a dimension out of the grouping is NULL): no segment
-- or one of store, product, country, each with and without the environment. A request needing
-- another grouping (two of store, product, country at once) or another zone reads
-- chart_payments as before, and so do the periods a range or now cuts.
--
-- The incremental pass (ChartRollup.refresh) keeps the counts exact: for each user with a
-- changed payment it takes out what that user counted in the periods the change touched,
-- recomputed from all of the user's payments there, and puts back the recount after the
-- change; a rebuild counts everything again. Refunds do not change payers (a refunded
-- purchase was still paid for), late purchases and transfers to another user do.
CREATE TABLE chart_payer_counts (
  resolution  text NOT NULL,
  -- The period's first instant as a UTC wall-clock time, as date_trunc gives it.
  period      timestamp NOT NULL,
  dims        smallint NOT NULL,
  store       text,
  environment text,
  product_id  text,
  country     text,
  currency    text,
  payers      bigint NOT NULL,
  revenue     numeric NOT NULL
);
CREATE UNIQUE INDEX chart_payer_counts_key ON chart_payer_counts
  (resolution, dims, period, store, environment, product_id, country, currency) NULLS NOT DISTINCT;
-- A pass drops the keys its changes emptied.
CREATE INDEX chart_payer_counts_empty ON chart_payer_counts (resolution) WHERE payers = 0;

-- The horizon of the last pass that kept these counts: charts read them only when it is the
-- last pass's (an instance of the previous release, during a rolling upgrade, passes without
-- them), and a pass that finds it behind rebuilds everything.
ALTER TABLE chart_rollup_state ADD COLUMN payer_horizon xid8;
