-- Charts (issue 28): Google's orders (0068) are chart rows of their own, so the incremental
-- pass must see them change too: a renewal's order inserted, its price recorded later by the
-- Orders API, one order voided or revoked while the purchase row stays as it was. Marked as
-- 0080 marks the other tables; rows written before this migration were rebuilt by the first
-- pass after 0080, which cannot have run before this file in the same release.
ALTER TABLE google_orders ADD COLUMN chart_xid xid8;
ALTER TABLE google_orders ALTER COLUMN chart_xid SET DEFAULT pg_current_xact_id();
CREATE INDEX google_orders_chart_xid ON google_orders (chart_xid);
CREATE INDEX google_orders_refunded ON google_orders (refunded_at) WHERE refunded_at IS NOT NULL;
