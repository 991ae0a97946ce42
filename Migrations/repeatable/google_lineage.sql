-- A Google Play purchase that replaces another (an upgrade, downgrade or re-signup names it,
-- linkedPurchaseToken) continues that one's subscription: it keeps the replaced purchase's
-- subscription key (google_purchases.original_transaction_id, 0134; charts.sql,
-- storekeeper_google_subscription), when Storekeeper knows the replaced purchase. On every
-- insert, whichever path or release writes it.
SET LOCAL lock_timeout = '5s';

-- Before the trigger: the repair below updates rows, and a transaction that locked one FOR
-- UPDATE (which CREATE TRIGGER's lock lets through) and then writes the table would deadlock
-- with it. EXCLUSIVE waits for those; plain reads (charts, exports) go on.
LOCK TABLE google_purchases IN EXCLUSIVE MODE;

CREATE OR REPLACE FUNCTION storekeeper_google_lineage() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.original_transaction_id IS NULL AND NEW.linked_purchase_token IS NOT NULL
     AND NEW.linked_purchase_token <> NEW.purchase_token THEN
    SELECT storekeeper_google_subscription(l.order_id, l.purchase_token, l.original_transaction_id)
    INTO NEW.original_transaction_id
    FROM google_purchases l WHERE l.purchase_token = NEW.linked_purchase_token;
  END IF;
  RETURN NEW;
END
$$;

CREATE OR REPLACE TRIGGER google_purchases_lineage BEFORE INSERT ON google_purchases
  FOR EACH ROW EXECUTE FUNCTION storekeeper_google_lineage();

-- What was written without the trigger, repaired in the transaction that creates it (its lock
-- keeps every writer out until this commits, so nothing falls between the two). Every versioned
-- migration runs before any definition: a purchase an instance of the release before 0137
-- recorded after 0137's backfill and before this file got no key, and one that replaced it
-- later took that purchase's own order id from the trigger. 0137's backfill, for every purchase
-- whose line Storekeeper knows: the key of the first purchase of its line (followed through
-- every replacement, bounded: tokens are Google's, a loop is not expected), written only where
-- the purchase's key is another, so applying this again changes nothing. A purchase whose key
-- changed moves to another unit of the rollups, whose pass finds only the new one: they are
-- rebuilt by the next pass (ChartRollup), only when a key changed.
WITH RECURSIVE line (token, ancestor, depth) AS (
  SELECT g.purchase_token, l.purchase_token, 1
  FROM google_purchases g
  JOIN google_purchases l ON l.purchase_token = g.linked_purchase_token
  WHERE l.purchase_token <> g.purchase_token
  UNION ALL
  SELECT line.token, l.purchase_token, line.depth + 1
  FROM line
  JOIN google_purchases a ON a.purchase_token = line.ancestor
  JOIN google_purchases l ON l.purchase_token = a.linked_purchase_token
  WHERE l.purchase_token <> a.purchase_token AND line.depth < 100
),
root AS (
  SELECT DISTINCT ON (line.token) line.token,
         storekeeper_google_subscription(r.order_id, r.purchase_token, r.original_transaction_id)
           AS subscription
  FROM line JOIN google_purchases r ON r.purchase_token = line.ancestor
  ORDER BY line.token, line.depth DESC
),
repaired AS (
  UPDATE google_purchases g SET original_transaction_id = root.subscription
  FROM root
  WHERE g.purchase_token = root.token
    AND storekeeper_google_subscription(g.order_id, g.purchase_token, g.original_transaction_id)
        IS DISTINCT FROM root.subscription
  RETURNING g.purchase_token
)
UPDATE chart_rollup_state SET horizon = NULL, counts_horizon = NULL
WHERE EXISTS (SELECT 1 FROM repaired);
