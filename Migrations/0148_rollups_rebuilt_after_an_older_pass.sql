-- Charts: some of what the rollups hold is computed by this release's Swift, not by the
-- repeatable SQL every instance reads (0146's prorated refunds: ChartSQL+Refresh.swift). During
-- a rolling upgrade an instance of the previous release may take the rollup lease: its pass
-- rebuilds or recomputes units without what it does not know, and moves `horizon` on (which
-- clears a reset such as 0146's), so this release's next pass would only go on incrementally.
--
-- rollup_horizon: the horizon of the last pass of this release (or a later one), set with
-- `horizon` by each of its passes (ChartRollup.pass). The previous release does not know the
-- column and leaves it behind: a pass finding `horizon IS DISTINCT FROM rollup_horizon`
-- rebuilds every rollup, as 0119's counts_horizon does for the counts.
--
-- NULL here: the next pass rebuilds, which 0146's reset asks for anyway.
SET LOCAL lock_timeout = '5s';
ALTER TABLE chart_rollup_state ADD COLUMN rollup_horizon xid8;
