-- What Apple's prorated refunds of a one-time purchase took back so far, in milliunits of
-- percent (Apple's revocationPercentage, which counts from the whole purchase): a later one
-- takes only what it adds, and one delivered again nothing (NotificationEffects.proratedRefund).
SET LOCAL lock_timeout = '5s';
ALTER TABLE apple_transactions ADD COLUMN refunded_milliunits integer NOT NULL DEFAULT 0
  CHECK (refunded_milliunits BETWEEN 0 AND 100000);
