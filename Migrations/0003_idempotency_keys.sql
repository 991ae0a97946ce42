-- Idempotency-Key records, scoped per user. A row is inserted 'in_flight' before the work and
-- completed with the response; the sweeper removes rows older than the retention window.
CREATE TABLE idempotency_keys (
  user_id         text NOT NULL,
  key             text NOT NULL,
  request_hash    text NOT NULL,
  state           text NOT NULL CHECK (state IN ('in_flight', 'done')),
  response_status integer,
  response_body   bytea,
  created_at      timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (user_id, key)
);

CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);
