-- Every Apple transaction Storekeeper has seen, once: transaction_id is unique across all users
-- and orders, which is what makes settlement exactly-once.
CREATE TABLE apple_transactions (
  transaction_id          text PRIMARY KEY,
  original_transaction_id text NOT NULL,
  product_id              text NOT NULL,
  bundle_id               text NOT NULL,
  environment             text NOT NULL,
  quantity                integer NOT NULL,
  type                    text,
  app_account_token       uuid,
  purchase_date           timestamptz NOT NULL,
  expires_date            timestamptz,
  revocation_date         timestamptz,
  revocation_reason       integer,
  -- The order it settled and its user; both NULL for a legacy receipt posted without a user.
  trade_no                text UNIQUE REFERENCES orders (trade_no),
  user_id                 text,
  source                  text NOT NULL CHECK (source IN ('signed_transaction', 'receipt', 'notification')),
  created_at              timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX apple_transactions_original ON apple_transactions (original_transaction_id);
CREATE INDEX apple_transactions_user ON apple_transactions (user_id) WHERE user_id IS NOT NULL;

-- Append-only credits and debits; a balance is the sum of a user's rows for an asset. A refund
-- appends a negative row, so a balance may go negative: shown, not hidden.
CREATE TABLE ledger (
  id             bigserial PRIMARY KEY,
  user_id        text NOT NULL,
  asset          text NOT NULL,
  amount         bigint NOT NULL,
  kind           text NOT NULL CHECK (kind IN ('grant', 'refund', 'refund_reversed')),
  trade_no       text REFERENCES orders (trade_no),
  transaction_id text,
  created_at     timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX ledger_user_asset ON ledger (user_id, asset);
CREATE INDEX ledger_trade ON ledger (trade_no);
