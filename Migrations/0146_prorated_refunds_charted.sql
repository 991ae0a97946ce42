-- When Apple's prorated refund of a purchase (REFUND_PRORATED below 100000, Migrations/0128)
-- came, so that the charts can count its share at its time (docs/CHARTS.md, **Refund**).
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
