-- Answers to Apple's CONSUMPTION_REQUEST notifications (issue 26): each request is a durable
-- job that a worker on any instance claims (its lease is next_attempt_at, pushed forward while
-- it works) and answers with Send Consumption Information within Apple's 12 hours, from the
-- ledger, retrying with backoff.

-- Whether a user consented to their consumption data going to Apple, as the app records it.
-- No row is no consent: Apple refuses any answer without it, so none is sent.
CREATE TABLE consumption_consents (
  user_id    text PRIMARY KEY,
  consented  boolean NOT NULL,
  -- Who recorded it: "user:<id>", "backend:<key name>" or "anyone".
  caller     text NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE consumption_answers (
  notification_uuid text PRIMARY KEY REFERENCES apple_notifications (notification_uuid),
  transaction_id    text NOT NULL,
  environment       text NOT NULL CHECK (environment IN ('Production', 'Sandbox')),
  -- Apple's window: 12 hours after it signed the request.
  deadline          timestamptz NOT NULL,
  state             text NOT NULL DEFAULT 'pending'
                      CHECK (state IN ('pending', 'sent', 'skipped', 'failed')),
  attempts          integer NOT NULL DEFAULT 0,
  next_attempt_at   timestamptz NOT NULL DEFAULT now(),
  -- The body sent to Apple (or, skipped, what would have been), and why it ended as it did.
  answer            jsonb,
  outcome           text,
  last_error        text,
  user_id           text,
  created_at        timestamptz NOT NULL DEFAULT now(),
  answered_at       timestamptz
);
CREATE INDEX consumption_answers_due ON consumption_answers (next_attempt_at)
  WHERE state = 'pending';
