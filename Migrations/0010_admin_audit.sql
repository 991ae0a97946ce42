-- Who did what (issue 10): every change an admin makes, written in the transaction of the
-- change itself, so a change without its audit row (or the reverse) cannot commit.
CREATE TABLE admin_audit (
  id             bigserial PRIMARY KEY,
  admin          text NOT NULL,
  action         text NOT NULL CHECK (action IN ('product_created', 'product_updated',
                                                 'product_deleted', 'purchase_transferred')),
  target_type    text NOT NULL CHECK (target_type IN ('product', 'transaction')),
  target_id      text NOT NULL,
  before         jsonb,
  after          jsonb,
  request_id     text NOT NULL,
  client_address text NOT NULL,
  created_at     timestamptz NOT NULL DEFAULT now()
);

-- The listing pages newest first by id, filtered by admin or target.
CREATE INDEX admin_audit_admin ON admin_audit (admin, id);
CREATE INDEX admin_audit_target ON admin_audit (target_id, id);
