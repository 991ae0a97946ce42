-- A Google Play upgrade, downgrade or re-signup is a new purchase token that names the one it
-- replaces (linkedPurchaseToken). Charts and exports keyed each token's subscription by its own
-- first order, so a subscriber who upgraded churned and a new one started, where Apple keeps one
-- original_transaction_id across the same changes. A purchase that replaced one Storekeeper
-- knew keeps the subscription it continues (NULL: its own; charts.sql,
-- storekeeper_google_subscription), set on insert (google_lineage.sql) and, for the purchases
-- recorded before, by 0137 in a transaction of its own: here only the column, so the table's
-- exclusive lock lasts no longer than adding it.
SET LOCAL lock_timeout = '5s';

ALTER TABLE google_purchases ADD COLUMN original_transaction_id text;
