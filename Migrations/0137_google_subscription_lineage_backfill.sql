-- The purchases recorded before 0134 that replaced one (an upgrade, downgrade or re-signup):
-- each keeps the first order of the purchase its line of replacements began with, followed
-- through every replacement Storekeeper knows (bounded: tokens are Google's, a loop is not
-- expected). Its own transaction, after 0134's: only the rows it changes are locked, and those
-- are purchases long replaced. Then the rollups are rebuilt with the new keys (ChartRollup:
-- counts not kept). Purchases an instance of the previous release records later get theirs
-- from the insert trigger (google_lineage.sql) once this release's definitions are applied.
SET LOCAL lock_timeout = '5s';

WITH RECURSIVE line (token, ancestor, depth) AS (
  SELECT g.purchase_token, l.purchase_token, 1
  FROM google_purchases g
  JOIN google_purchases l ON l.purchase_token = g.linked_purchase_token
  WHERE l.purchase_token <> g.purchase_token AND g.original_transaction_id IS NULL
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
