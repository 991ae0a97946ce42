-- Charts: some of what the rollups hold is computed by this release's Swift, not by the
-- repeatable SQL every instance reads (0146's prorated refunds: ChartSQL+Refresh.swift). During
-- a rolling upgrade an instance of the previous release may take the rollup lease: its pass
-- rebuilds or recomputes units without what it does not know, and moves `horizon` on (which
-- clears a reset such as 0146's), so this release's next pass would only go on incrementally.
--
-- rollup_built_at: the `built_at` of the last pass of this release (or a later one), copied by
-- each of its passes (ChartRollup.pass). Every release's pass stamps `built_at` with the clock;
-- the previous release does not know this column and leaves it behind, so a pass finding
-- `built_at IS DISTINCT FROM rollup_built_at` rebuilds every rollup, as 0119's counts_horizon
-- does for the counts. (Not a copy of `horizon`: a long transaction anywhere pins the snapshot's
-- xmin, and an older pass would then write the very horizon this release's last pass did.)
--
-- NULL here: the next pass rebuilds, which 0146's reset asks for anyway.
SET LOCAL lock_timeout = '5s';
ALTER TABLE chart_rollup_state ADD COLUMN rollup_built_at timestamptz;
