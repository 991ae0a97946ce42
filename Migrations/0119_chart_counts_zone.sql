-- Charts (issue 28): `payers` and `cohorts` are counted ahead (0092, 0099) in one zone, which
-- an operator chooses (CHARTS_TIME_ZONE, UTC unless set), so that the zone a team reads its
-- charts in answers from the counts too, instead of counting distinct users when asked
-- (seconds over two years of a large app, in any zone but UTC before this).
--
-- counts_zone: the zone the counts' days, weeks and months begin in.
-- counts_horizon: the horizon of the last pass that kept them in that zone. The previous
-- release keeps UTC counts and reads them when payer_horizon and cohort_horizon are the last
-- pass's; this release sets those two only while it counts in UTC, so an instance of the
-- previous release, during a rolling upgrade, never reads another zone's counts as UTC's, and
-- a pass of it (which counts in UTC and leaves counts_horizon behind) makes the next pass of
-- this release rebuild.
ALTER TABLE chart_rollup_state
  ADD COLUMN counts_zone text NOT NULL DEFAULT 'UTC',
  ADD COLUMN counts_horizon xid8;

-- The counts the previous release kept are UTC's, the default zone's: taken as kept, so that
-- the first pass of this release does not rebuild them for nothing.
UPDATE chart_rollup_state SET counts_horizon = payer_horizon WHERE payer_horizon = cohort_horizon;
