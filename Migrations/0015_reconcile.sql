-- Subscription reconciliation (issue 11): Storekeeper asks Apple's Get All Subscription Statuses
-- for its subscribers and repairs what a lost notification left wrong.

-- One row per pass that had work (the `storekeeper reconcile` command or the background pass);
-- dry runs write nothing.
CREATE TABLE reconcile_runs (
  id          bigserial PRIMARY KEY,
  trigger     text NOT NULL CHECK (trigger IN ('command', 'background')),
  started_at  timestamptz NOT NULL DEFAULT now(),
  finished_at timestamptz,
  checked     integer NOT NULL DEFAULT 0,
  repaired    integer NOT NULL DEFAULT 0,
  errors      integer NOT NULL DEFAULT 0,
  -- Why the pass stopped early (Apple unreachable, rate limited, key refused); NULL if it did not.
  last_error  text
);

-- When each subscription was last compared with Apple, and which pass holds it now (a lease,
-- so instances share the work and never check one subscription at the same time).
CREATE TABLE reconcile_checks (
  original_transaction_id text PRIMARY KEY,
  checked_at              timestamptz,
  lease_until             timestamptz NOT NULL DEFAULT '-infinity',
  last_error              text
);
CREATE INDEX reconcile_checks_checked ON reconcile_checks (checked_at);

-- Every repair: whose subscription, what Storekeeper held, what Apple said it became, when and
-- in which pass.
CREATE TABLE reconcile_repairs (
  id                      bigserial PRIMARY KEY,
  run_id                  bigint NOT NULL REFERENCES reconcile_runs (id),
  user_id                 text NOT NULL,
  original_transaction_id text NOT NULL,
  transaction_id          text NOT NULL,
  kind                    text NOT NULL CHECK (kind IN ('renewed', 'revoked', 'refund_reversed',
                                                        'expiry_changed', 'state_changed')),
  was                     jsonb NOT NULL,
  became                  jsonb NOT NULL,
  created_at              timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX reconcile_repairs_user ON reconcile_repairs (user_id, id);
CREATE INDEX reconcile_repairs_original ON reconcile_repairs (original_transaction_id);
