-- A user's entitlements found from the catalog's products of each kind, not from every order
-- and transaction the user ever made (repeatable/user_state.sql, issue 23): a player who
-- bought a thousand gold packs had all thousand orders read on every change of theirs.
-- IF NOT EXISTS: on a large deployment, build both by hand first with CREATE INDEX
-- CONCURRENTLY (docs/DEPLOYMENT.md); this file then only drops the index the second replaces.
CREATE INDEX IF NOT EXISTS orders_user_paid ON orders (user_id, product_id, paid_at)
  WHERE trade_status = 'TRADE_SUCCESS';
CREATE INDEX IF NOT EXISTS apple_transactions_user_product
  ON apple_transactions (user_id, product_id) WHERE user_id IS NOT NULL;
-- Every lookup by user alone is served by the new index's first column.
DROP INDEX IF EXISTS apple_transactions_user;
