-- Every report a client sent, with its outcome. Reports waiting on Apple are retried by a
-- background worker (FOR UPDATE SKIP LOCKED) until next_attempt_at passes give_up_at.
CREATE TABLE trade_reports (
  id              bigserial PRIMARY KEY,
  trade_no        text REFERENCES orders (trade_no),
  user_id         text,
  trade_status    text NOT NULL,
  proof_kind      text CHECK (proof_kind IN ('receipt', 'signed_transaction')),
  proof           text,
  proof_hash      text,
  reason          text,
  product_id      text,
  outcome         text NOT NULL CHECK (outcome IN ('received', 'settled', 'pending', 'invalid', 'rejected', 'closed', 'unchanged', 'gave_up')),
  outcome_code    text,
  attempts        integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz,
  give_up_at      timestamptz,
  last_error      text,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX trade_reports_due ON trade_reports (next_attempt_at) WHERE outcome = 'pending';
CREATE INDEX trade_reports_trade ON trade_reports (trade_no, id);
