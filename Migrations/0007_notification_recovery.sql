-- How far the notification history of the App Store Server API has been read, and which
-- instance is reading it now (a lease, so many instances take turns).
CREATE TABLE notification_recovery (
  id            int PRIMARY KEY CHECK (id = 1),
  checked_until timestamptz,
  lease_until   timestamptz NOT NULL DEFAULT '-infinity',
  last_error    text,
  updated_at    timestamptz NOT NULL DEFAULT now()
);
INSERT INTO notification_recovery (id) VALUES (1);
