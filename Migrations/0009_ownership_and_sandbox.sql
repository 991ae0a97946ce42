-- Ownership (issue 10): an admin may move a purchase to another user. The old order closes as
-- 'transferred' (its grant debited), a new order of origin 'transfer' is paid for the new owner.
ALTER TABLE orders DROP CONSTRAINT orders_close_reason_check;
ALTER TABLE orders ADD CONSTRAINT orders_close_reason_check
  CHECK (close_reason IN ('cancelled', 'failed', 'expired', 'refunded', 'revoked', 'transferred'));
ALTER TABLE orders DROP CONSTRAINT orders_origin_check;
ALTER TABLE orders ADD CONSTRAINT orders_origin_check
  CHECK (origin IN ('order', 'receipt', 'renewal', 'transfer'));

ALTER TABLE ledger DROP CONSTRAINT ledger_kind_check;
ALTER TABLE ledger ADD CONSTRAINT ledger_kind_check
  CHECK (kind IN ('grant', 'refund', 'refund_reversed', 'transferred'));

-- Sandbox money: every ledger row says which Apple environment paid for it.
ALTER TABLE ledger ADD COLUMN environment text NOT NULL DEFAULT 'Production'
  CHECK (environment IN ('Production', 'Sandbox'));
