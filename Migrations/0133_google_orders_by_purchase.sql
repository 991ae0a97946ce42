-- Exports read the stores' transactions a store at a time, each page's keys from the store's
-- own table in purchase order: App Store rows on apple_transactions_purchase_date, Google
-- Play's on this index. Read through chart_transactions' UNION ALL, every page sorted the rest
-- of the range, and an export took time quadratic in its rows (Exporter).
SET LOCAL lock_timeout = '5s';
CREATE INDEX google_orders_purchased_at ON google_orders (purchased_at, order_id);
