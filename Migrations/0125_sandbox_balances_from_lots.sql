-- user_balances.sandbox becomes what the sandbox's lots hold (repeatable/ledger.sql): it was
-- the sum of the sandbox's rows, which a refund, transfer or adjustment that took a sandbox lot
-- (or a sandbox credit that made a negative balance good) left larger than the balance for
-- good. Only the rows that differ are written.
WITH held AS (
  SELECT user_id, asset, sum(remaining)::bigint AS sandbox FROM ledger_lots
  WHERE environment = 'Sandbox' GROUP BY user_id, asset)
UPDATE user_balances b SET sandbox = coalesce(h.sandbox, 0)
FROM user_balances x LEFT JOIN held h ON h.user_id = x.user_id AND h.asset = x.asset
WHERE x.user_id = b.user_id AND x.asset = b.asset AND b.sandbox <> coalesce(h.sandbox, 0);
