-- Apple's prorated refunds (REFUND_PRORATED below 100000, Migrations/0128) are charted now
-- (docs/CHARTS.md, **Refund**): chart_transactions gains the amount they refunded
-- (`partly_refunded`, the price times the cumulative share) and when (`partly_refunded_at`),
-- which revenue's `refunded` and `net`, refund_rate's `refunded_amount` and a cohort's
-- `cumulative_revenue` take in (repeatable/charts.sql, charts_metrics.sql).
--
-- The instant is kept here: a REFUND notification is the only other record of it, and the
-- rollup's pass must find the refunds that came since its last `as_of` by an index. Apple's
-- revocationDate of the latest notification that raised the share (the chart shows the latest
-- share at the latest refund's time, not each increment at its own), set with the share by
-- NotificationEffects.proratedRefund and cleared by a reversal.
SET LOCAL lock_timeout = '5s';
ALTER TABLE apple_transactions ADD COLUMN prorated_refunded_at timestamptz;
CREATE INDEX apple_transactions_prorated_refunded_at ON apple_transactions (prorated_refunded_at)
  WHERE prorated_refunded_at IS NOT NULL;

-- The shares taken before this release, dated by the first stored notification that brought
-- the share now kept (a redelivery raises nothing); at the purchase when none is stored, which
-- still counts the share, if not on its day.
UPDATE apple_transactions t
SET prorated_refunded_at = coalesce(
  (SELECT coalesce(timestamptz 'epoch'
                     + (n.payload #>> '{transaction,revocationDate}')::numeric::bigint
                       * interval '1 millisecond',
                   n.signed_date, n.received_at)
   FROM apple_notifications n
   WHERE n.transaction_id = t.transaction_id AND n.notification_type = 'REFUND'
     AND n.payload #>> '{transaction,revocationType}' = 'REFUND_PRORATED'
     AND n.payload #>> '{transaction,revocationPercentage}' = t.refunded_milliunits::text
   ORDER BY coalesce(n.signed_date, n.received_at) LIMIT 1),
  t.purchase_date)
WHERE t.refunded_milliunits > 0;

-- What the prorated refunds of a payment had refunded by the pass's `as_of`: the cohort
-- counts' revenue takes it out (ChartSQL.insertPayments).
ALTER TABLE chart_payments ADD COLUMN partly_refunded numeric NOT NULL DEFAULT 0;

-- The rollups hold every unit's refunds without the shares: the next pass rebuilds them all,
-- as Migrations/0143 did (ChartRollupResetTests).
UPDATE chart_rollup_state SET horizon = NULL, counts_horizon = NULL;
