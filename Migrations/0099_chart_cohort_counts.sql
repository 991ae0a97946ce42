-- Charts (issue 28): `cohorts` in UTC from counts kept ahead, as `payers` are (0092), instead
-- of joining every cohort user to all of their payments when the chart is asked (4.9 s over
-- the default bench history). A cohort is a scope's customers (`scope`: an environment, or
-- '*' for all, as chart_customers has it) whose first transaction is in a UTC month, grouped
-- by that transaction's dimensions (`dims` as in chart_payer_counts: store 8, environment 4,
-- product 2, country 1; a dimension out of the grouping is NULL).
--
-- chart_cohort_sizes: how many customers each cohort has.
-- chart_cohort_counts: per cohort and UTC payment month, with `currency` NULL, `payers`, the
-- cohort's distinct users who paid in the month (refunded payments included, as the chart
-- counts them) and `payments`, all their payments; with a currency, `payments` and `revenue`,
-- the payments in it not refunded and their sum (cumulative revenue), `payers` 0. A price
-- above 0 always has its currency (charts.sql), so NULL names no currency of its own.
--
-- Distinct users are counted per user before they are summed (a user is in one cohort per
-- scope), so the counts of disjoint sets of users add up: the incremental pass takes out what
-- the users of its changed units counted and puts back their recount; a rebuild counts all.
CREATE TABLE chart_cohort_sizes (
  scope        text NOT NULL,
  cohort_month timestamp NOT NULL,
  dims         smallint NOT NULL,
  store        text,
  environment  text,
  product_id   text,
  country      text,
  customers    bigint NOT NULL
);
CREATE UNIQUE INDEX chart_cohort_sizes_key ON chart_cohort_sizes
  (scope, dims, cohort_month, store, environment, product_id, country) NULLS NOT DISTINCT;

CREATE TABLE chart_cohort_counts (
  scope        text NOT NULL,
  cohort_month timestamp NOT NULL,
  month        timestamp NOT NULL,
  dims         smallint NOT NULL,
  store        text,
  environment  text,
  product_id   text,
  country      text,
  currency     text,
  payers       bigint NOT NULL,
  payments     bigint NOT NULL,
  revenue      numeric NOT NULL
);
CREATE UNIQUE INDEX chart_cohort_counts_key ON chart_cohort_counts
  (scope, dims, cohort_month, month, store, environment, product_id, country, currency)
  NULLS NOT DISTINCT;

-- The horizon of the last pass that kept the cohort counts (see payer_horizon in 0092).
ALTER TABLE chart_rollup_state ADD COLUMN cohort_horizon xid8;
