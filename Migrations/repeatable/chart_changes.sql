-- Charts (issue 28, Migrations/0080): a row charts read records the transaction that last
-- wrote it, so the rollup's incremental pass finds what changed since its horizon. Inserts
-- take the column's default; these triggers cover updates (a refund, a renewal's new expiry,
-- a transfer to another user, a grace period).
CREATE OR REPLACE FUNCTION chart_mark_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.chart_xid := pg_current_xact_id();
  RETURN NEW;
END;
$$;

CREATE OR REPLACE TRIGGER apple_transactions_chart_changed BEFORE UPDATE ON apple_transactions
  FOR EACH ROW EXECUTE FUNCTION chart_mark_changed();
CREATE OR REPLACE TRIGGER google_purchases_chart_changed BEFORE UPDATE ON google_purchases
  FOR EACH ROW EXECUTE FUNCTION chart_mark_changed();
CREATE OR REPLACE TRIGGER subscription_states_chart_changed BEFORE UPDATE ON subscription_states
  FOR EACH ROW EXECUTE FUNCTION chart_mark_changed();
CREATE OR REPLACE TRIGGER google_orders_chart_changed BEFORE UPDATE ON google_orders
  FOR EACH ROW EXECUTE FUNCTION chart_mark_changed();
