-- Google Play's real-time developer notifications (Pub/Sub pushes), stored before they are
-- answered, deduplicated by Pub/Sub's messageId, and applied by reading the purchase's state
-- back from the Developer API (a notification only says that something changed).
CREATE TABLE google_notifications (
  message_id        text PRIMARY KEY,
  -- Arrival order, for listings.
  seq               bigserial UNIQUE,
  subscription      text NOT NULL,
  package_name      text NOT NULL,
  kind              text NOT NULL
    CHECK (kind IN ('one_time_product', 'subscription', 'voided_purchase', 'test')),
  notification_type integer,
  purchase_token    text,
  event_time        timestamptz,
  data              jsonb NOT NULL,
  -- 'pending': to apply (again at next_attempt_at, when Google could not be asked);
  -- 'processed': applied (result says what it did); 'ignored': recorded without effect
  -- (another package, a test, a token nobody reported); 'failed': applying it raised an error.
  state             text NOT NULL CHECK (state IN ('pending', 'processed', 'ignored', 'failed')),
  result            text,
  attempts          integer NOT NULL DEFAULT 0,
  next_attempt_at   timestamptz,
  received_at       timestamptz NOT NULL DEFAULT now(),
  processed_at      timestamptz
);

CREATE INDEX google_notifications_due ON google_notifications (next_attempt_at)
  WHERE state = 'pending';
CREATE INDEX google_notifications_token ON google_notifications (purchase_token);

-- A purchase another one replaced (an upgrade, downgrade or re-signup names it in
-- linkedPurchaseToken) stops granting: its expiry is cut to the replacement.
ALTER TABLE google_purchases ADD COLUMN replaced_by text;
