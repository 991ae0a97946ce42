-- The charts' Google orders (repeatable/charts.sql) are read by purchase time (a chart's or an
-- export's range) and each asks whether a later order of its purchase exists: one index for
-- each, so neither reads every order.
CREATE INDEX google_orders_purchased ON google_orders (purchased_at, order_id);
CREATE INDEX google_orders_token_purchased ON google_orders (purchase_token, purchased_at, order_id);
-- Its prefix serves what this served.
DROP INDEX google_orders_token;
