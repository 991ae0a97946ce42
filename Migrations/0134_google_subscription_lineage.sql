-- A Google Play upgrade, downgrade or re-signup is a new purchase token that names the one it
-- replaces (linkedPurchaseToken). Charts and exports keyed each token's subscription by its own
-- first order, so a subscriber who upgraded churned and a new one started, where Apple keeps one
-- original_transaction_id across the same changes. A purchase that replaced one Storekeeper
-- knew now keeps the subscription it continues (NULL: its own; charts.sql,
-- storekeeper_google_subscription), and the rollups are rebuilt with it.
SET LOCAL lock_timeout = '5s';

ALTER TABLE google_purchases ADD COLUMN original_transaction_id text;

-- Purchases that replaced one: the first purchase of their line, followed through every
-- replacement Storekeeper knows (bounded: tokens are Google's, a loop is not expected).
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
)
UPDATE google_purchases g
SET original_transaction_id = CASE WHEN r.order_id = r.purchase_token
                                   THEN 'token:' || left(md5(r.purchase_token), 16)
                                   ELSE r.order_id END
FROM (SELECT DISTINCT ON (token) token, ancestor FROM line ORDER BY token, depth DESC) root
JOIN google_purchases r ON r.purchase_token = root.ancestor
WHERE g.purchase_token = root.token;

UPDATE chart_rollup_state SET counts_horizon = NULL;
