-- charts.sql of this release ends an App Store subscription period that a billing grace period
-- followed at the end of that grace (chart_apple_grace_end), not at its expiry, also when a
-- later period of the subscription followed it: a grace that ended in a recovery (DID_RENEW)
-- kept its days active, where before the recovery's renewal cleared the grace end and turned
-- those days into churn and a reactivation. The rollups hold the periods as the previous
-- definition ended them, and a pass recomputes only the units whose rows changed, so the next
-- pass rebuilds every rollup (`horizon` for chart_hourly's actives and MRR, `counts_horizon`
-- for the per-user counts). ChartRollupResetTests checks that a release changing charts.sql
-- resets them. Nothing is stored anew: the grace periods are read from the notifications
-- Apple sent (apple_notifications keeps them whole), which instances of the previous release
-- store alike, so rows written before and during a rolling upgrade chart the same way.
SET LOCAL lock_timeout = '5s';
UPDATE chart_rollup_state SET horizon = NULL, counts_horizon = NULL;
--
-- Also the release of charts_metrics.sql's chart_billing_spells built from the notifications
-- that move subscription_states: OFFER_REDEEMED and DID_CHANGE_RENEWAL_PREF/UPGRADE end billing
-- trouble as recoveries, and a REFUND or REVOKE ends it only when it revokes the period the
-- trouble followed, not an earlier one. The charts it serves read the notifications, never the
-- rollups, so it needs no reset of its own.
