-- The Google Play sweeps, shared by instances through a lease per sweep: the voided purchases
-- sweep (the safety net for voidedPurchaseNotifications that never arrived) and subscription
-- reconciliation through subscriptionsv2.get (for subscription notifications that never did).
CREATE TABLE google_sweeps (
  name          text PRIMARY KEY CHECK (name IN ('voided', 'subscriptions')),
  lease_until   timestamptz NOT NULL DEFAULT '-infinity',
  -- voided: the end of the last window read completely.
  checked_until timestamptz,
  last_run_at   timestamptz,
  last_error    text
);
INSERT INTO google_sweeps (name) VALUES ('voided'), ('subscriptions');

-- Subscriptions are reconciled least recently checked first.
ALTER TABLE google_purchases ADD COLUMN reconciled_at timestamptz;
CREATE INDEX google_purchases_reconcile ON google_purchases (reconciled_at NULLS FIRST)
  WHERE kind = 'subscription' AND revoked_at IS NULL;
