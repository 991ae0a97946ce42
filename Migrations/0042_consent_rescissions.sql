-- Apple's RESCIND_CONSENT: a parent or guardian withdrew consent for the app. Apple names the
-- Apple Account's app download (appTransactionId), not a purchase; the users whose purchases
-- carry it are recorded with it, as they were when the notification was applied.
CREATE TABLE consent_rescissions (
  notification_uuid  text PRIMARY KEY REFERENCES apple_notifications (notification_uuid),
  app_transaction_id text,
  environment        text,
  user_ids           text[] NOT NULL,
  rescinded_at       timestamptz NOT NULL,
  recorded_at        timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX consent_rescissions_app_transaction
  ON consent_rescissions (app_transaction_id) WHERE app_transaction_id IS NOT NULL;
