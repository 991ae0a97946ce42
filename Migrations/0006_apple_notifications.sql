-- App Store Server Notifications V2, stored before they are answered and processed afterwards.
CREATE TABLE apple_notifications (
  notification_uuid       text PRIMARY KEY,
  -- Arrival order, for keyset pages.
  seq                     bigserial UNIQUE,
  notification_type       text NOT NULL,
  subtype                 text,
  environment             text,
  signed_date             timestamptz,
  transaction_id          text,
  original_transaction_id text,
  payload                 jsonb NOT NULL,
  -- 'pending': not yet applied; 'deferred': its transaction is unknown so far; 'processed';
  -- 'failed': applying it raised an error (kept in result for admins).
  state                   text NOT NULL CHECK (state IN ('pending', 'deferred', 'processed', 'failed')),
  result                  text,
  attempts                integer NOT NULL DEFAULT 0,
  received_at             timestamptz NOT NULL DEFAULT now(),
  processed_at            timestamptz
);

CREATE INDEX apple_notifications_pending ON apple_notifications (received_at) WHERE state = 'pending';
CREATE INDEX apple_notifications_transaction ON apple_notifications (transaction_id);
CREATE INDEX apple_notifications_original ON apple_notifications (original_transaction_id);
CREATE INDEX apple_notifications_type ON apple_notifications (notification_type, received_at);

-- Grace periods and renewal state reported by Apple, per subscription.
CREATE TABLE subscription_states (
  original_transaction_id text PRIMARY KEY,
  grace_expires_at        timestamptz,
  status                  text,
  updated_at              timestamptz NOT NULL DEFAULT now()
);
