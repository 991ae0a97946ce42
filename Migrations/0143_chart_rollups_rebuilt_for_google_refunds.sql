-- charts.sql of 0141 counts a chargeback (void, revocation) of the latest order of a Google
-- Play purchase another replaced as a refund, where 0137's did not. The rollups hold the
-- refunds as 0137's definition classified them, and a pass recomputes only the units whose rows
-- changed, so released 0141 without a reset left them so for good: `source=auto` disagreed with
-- `source=transactions` on refunds, refund rate and revenue net of refunds. The next pass
-- rebuilds every rollup: `horizon` for chart_hourly's refund measures, `counts_horizon` for
-- the cohort counts' unrefunded payments (either alone makes ChartRollup rebuild all; both say
-- what is stale). ChartRollupResetTests checks that a release changing charts.sql resets them.
--
-- Also the release of google_lineage.sql and experiment_pauses.sql repairing what an instance
-- of the previous release wrote between 0136/0137 and the creation of their triggers.
SET LOCAL lock_timeout = '5s';
UPDATE chart_rollup_state SET horizon = NULL, counts_horizon = NULL;
