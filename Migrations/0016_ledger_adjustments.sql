-- Manual adjustments (issue 14): support grants or takes back an amount of an asset by hand,
-- with a reason. The adjustment row says who and why; the ledger row it writes (kind
-- 'adjustment') moves the balance, so the ledger stays the one source of balances.
CREATE TABLE ledger_adjustments (
  id              bigserial PRIMARY KEY,
  user_id         text NOT NULL,
  asset           text NOT NULL,
  amount          bigint NOT NULL CHECK (amount <> 0),
  environment     text NOT NULL CHECK (environment IN ('Production', 'Sandbox')),
  reason          text NOT NULL,
  admin           text NOT NULL,
  -- The client's Idempotency-Key: a retried request returns the adjustment already made.
  idempotency_key text,
  request_id      text NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now(),
  UNIQUE (admin, idempotency_key)
);
CREATE INDEX ledger_adjustments_user ON ledger_adjustments (user_id, id);

ALTER TABLE ledger ADD COLUMN adjustment_id bigint REFERENCES ledger_adjustments (id);
ALTER TABLE ledger DROP CONSTRAINT ledger_kind_check;
ALTER TABLE ledger ADD CONSTRAINT ledger_kind_check
  CHECK (kind IN ('grant', 'refund', 'refund_reversed', 'transferred', 'adjustment'));
-- The user's ledger page reads newest first by id.
CREATE INDEX ledger_user_id ON ledger (user_id, id);

ALTER TABLE admin_audit DROP CONSTRAINT admin_audit_action_check;
ALTER TABLE admin_audit ADD CONSTRAINT admin_audit_action_check
  CHECK (action IN ('product_created', 'product_updated', 'product_deleted',
                    'purchase_transferred', 'webhook_endpoint_created',
                    'webhook_endpoint_updated', 'webhook_endpoint_deleted',
                    'webhook_secret_rotated', 'webhook_events_replayed', 'webhook_test_sent',
                    'ledger_adjusted'));
ALTER TABLE admin_audit DROP CONSTRAINT admin_audit_target_type_check;
ALTER TABLE admin_audit ADD CONSTRAINT admin_audit_target_type_check
  CHECK (target_type IN ('product', 'transaction', 'webhook_endpoint', 'user'));

-- The console's overview sums paid orders per day over recent days.
CREATE INDEX orders_paid_at ON orders (paid_at) WHERE paid_at IS NOT NULL;
