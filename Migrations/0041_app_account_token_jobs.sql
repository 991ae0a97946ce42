-- Set App Account Token calls still owed to Apple: a purchase made outside the app (an offer
-- code, a promoted purchase) carries no token until Storekeeper, having assigned it to a user,
-- tells Apple the token of the order that now holds it. One row per purchase (its original
-- transaction): a later assignment replaces the token and starts the row again. Shared by every
-- instance through FOR UPDATE SKIP LOCKED; `next_attempt_at` is also the lease of a claim.
CREATE TABLE app_account_token_jobs (
  original_transaction_id text PRIMARY KEY,
  environment             text NOT NULL,
  app_account_token       uuid NOT NULL,
  user_id                 text NOT NULL,
  trade_no                text NOT NULL,
  state                   text NOT NULL DEFAULT 'pending'
                          CHECK (state IN ('pending', 'sent', 'failed')),
  attempts                integer NOT NULL DEFAULT 0,
  next_attempt_at         timestamptz NOT NULL DEFAULT now(),
  last_error              text,
  queued_at               timestamptz NOT NULL DEFAULT now(),
  finished_at             timestamptz
);

CREATE INDEX app_account_token_jobs_due
  ON app_account_token_jobs (next_attempt_at) WHERE state = 'pending';
