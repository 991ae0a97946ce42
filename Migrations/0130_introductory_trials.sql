-- charts.sql: a trial is an introductory offer (offerType 1) only, as docs/CHARTS.md says;
-- Apple signs FREE_TRIAL for free promotional, offer-code and win-back periods too, which the
-- rollups counted as trials (the subscriber churned, then reactivated). The rollups were built
-- with the old definition: the next pass rebuilds them whole (ChartRollup: counts not kept).
SET LOCAL lock_timeout = '5s';
UPDATE chart_rollup_state SET counts_horizon = NULL;
