-- pgbench: the SQL Storekeeper runs to settle one TRADE_SUCCESS report with a signed
-- transaction (ReportProcessor → OrderRepository.reportContext, then SettlementService.settle:
-- lockForSettlement and the one transition statement with its claim, effects and the events
-- it writes through storekeeper_append_events), as the
-- server log shows it with log_statement = all, the values it binds taken from a prepared
-- report. Keep it in step with those functions.
--
-- Report :n of this run is row n of bench_reports (made by bench/reports/run), one per
-- transaction: n = :base + :client_id + :clients * k, with k counting each client's
-- transactions (pgbench keeps a client's variables from one transaction to the next). The
-- prepared report is read in the statement Storekeeper starts with, so that costs no round
-- trip of its own. pgbench would take colons in string literals for variables, so the
-- timestamp formats spell them chr(58).
\set k :k + 1
\set n :base + :client_id + :clients * :k
SELECT b.trade_no AS b_trade_no, b.user_id AS b_user_id, b.token AS b_token, b.tx AS b_tx,
  b.tx_json AS b_tx_json, b.purchase_ms AS b_ms, b.proof_hash AS b_hash, b.detail AS b_detail,
  (SELECT body FROM bench_proof) AS b_body, (SELECT header FROM bench_proof) AS b_header,
  (SELECT header_hash FROM bench_proof) AS b_header_hash, (SELECT rest FROM bench_proof) AS b_rest,
  o.trade_no, o.user_id, o.product_id, o.quantity,
  o.unit_price::text AS price, o.currency, o.amount::text AS amount,
  o.app_account_token::text AS app_account_token, o.trade_status,
  o.close_reason, o.origin, o.transaction_id, o.environment,
  o.verification, to_char(o.created_at AT TIME ZONE 'UTC', replace('YYYY-MM-DD"T"HH24%MI%SS.MS"Z"', '%', chr(58))) AS created_at,
  to_char(o.expires_at AT TIME ZONE 'UTC', replace('YYYY-MM-DD"T"HH24%MI%SS.MS"Z"', '%', chr(58))) AS expires_at,
  to_char(o.paid_at AT TIME ZONE 'UTC', replace('YYYY-MM-DD"T"HH24%MI%SS.MS"Z"', '%', chr(58))) AS paid_at,
  to_char(o.closed_at AT TIME ZONE 'UTC', replace('YYYY-MM-DD"T"HH24%MI%SS.MS"Z"', '%', chr(58))) AS closed_at, p.product_id AS p_product_id, p.type AS p_type, p.title AS p_title, p.description AS p_description, p.currency AS p_currency, p.sort_order AS p_sort_order, p.active AS p_active, p.revision AS p_revision, p.price::text AS p_price, p.grants::text AS p_grants, p.content::text AS p_content, to_char(p.created_at AT TIME ZONE 'UTC', replace('YYYY-MM-DD"T"HH24%MI%SS.MS"Z"', '%', chr(58))) AS p_created_at, to_char(p.updated_at AT TIME ZONE 'UTC', replace('YYYY-MM-DD"T"HH24%MI%SS.MS"Z"', '%', chr(58))) AS p_updated_at,
    o.trade_status = 'TRADE_SUCCESS' AND EXISTS (
      SELECT 1 FROM trade_reports r
      WHERE r.trade_no = o.trade_no AND r.outcome = 'settled' AND r.proof_hash = b.proof_hash::text) AS proof_settled
  FROM bench_reports b JOIN orders o ON o.trade_no = b.trade_no JOIN products p ON p.product_id = o.product_id
  WHERE b.n = :n \gset
BEGIN;
SELECT o.trade_no, o.user_id, o.product_id, o.quantity,
  o.unit_price::text AS price, o.currency, o.amount::text AS amount,
  o.app_account_token::text AS app_account_token, o.trade_status,
  o.close_reason, o.origin, o.transaction_id, o.environment,
  o.verification, to_char(o.created_at AT TIME ZONE 'UTC', replace('YYYY-MM-DD"T"HH24%MI%SS.MS"Z"', '%', chr(58))) AS created_at,
  to_char(o.expires_at AT TIME ZONE 'UTC', replace('YYYY-MM-DD"T"HH24%MI%SS.MS"Z"', '%', chr(58))) AS expires_at,
  to_char(o.paid_at AT TIME ZONE 'UTC', replace('YYYY-MM-DD"T"HH24%MI%SS.MS"Z"', '%', chr(58))) AS paid_at,
  to_char(o.closed_at AT TIME ZONE 'UTC', replace('YYYY-MM-DD"T"HH24%MI%SS.MS"Z"', '%', chr(58))) AS closed_at,
    (SELECT coalesce(jsonb_agg(t.transaction_id), '[]')::text FROM apple_transactions t
     WHERE t.transaction_id = ANY (ARRAY(SELECT jsonb_array_elements_text(:b_tx_json::jsonb)))
       AND t.trade_no IS NOT NULL AND t.trade_no <> o.trade_no) AS used_elsewhere,
    (SELECT coalesce(jsonb_agg(last.transaction_id), '[]')::text FROM (
       SELECT DISTINCT ON (n.transaction_id) n.transaction_id, n.notification_type
       FROM apple_notifications n
       WHERE n.transaction_id = ANY (ARRAY(SELECT jsonb_array_elements_text(:b_tx_json::jsonb)))
         AND '["REFUND", "REVOKE", "REFUND_REVERSED"]'::jsonb ? n.notification_type
       ORDER BY n.transaction_id, n.signed_date DESC NULLS LAST, n.seq DESC) last
     WHERE last.notification_type <> 'REFUND_REVERSED') AS revoked_by_apple
  FROM orders o WHERE o.trade_no = :b_trade_no FOR UPDATE OF o;
WITH claim AS (INSERT INTO apple_transactions (transaction_id, original_transaction_id, product_id, bundle_id,
    environment, quantity, type, app_account_token, trade_no, user_id, source, purchase_date,
    expires_date, revocation_date, revocation_reason, price_milliunits, currency, storefront,
    offer_type, offer_discount_type, is_upgraded)
  VALUES (:b_tx, :b_tx,
    'com.example.bench.gold', 'com.example.bench', 'Production',
    1, 'Consumable', :b_token::uuid,
    :b_trade_no, :b_user_id, 'signed_transaction',(timestamptz 'epoch' + :b_ms::bigint * interval '1 millisecond'), NULL::timestamptz, NULL::timestamptz, NULL, 6000::bigint, 'USD', 'USA',
    NULL::integer, NULL, false) ON CONFLICT (transaction_id) DO UPDATE
    SET trade_no = EXCLUDED.trade_no, user_id = EXCLUDED.user_id
    WHERE apple_transactions.trade_no = EXCLUDED.trade_no
       OR (apple_transactions.trade_no IS NULL
           AND apple_transactions.app_account_token = :b_token::uuid)
  RETURNING transaction_id), changed AS (
    UPDATE orders SET trade_status = 'TRADE_SUCCESS', close_reason = NULL,
      updated_at = now(), closed_at = NULL, verification = NULL,
      paid_at = CASE WHEN :b_tx::text IS NULL THEN paid_at ELSE now() END,
      transaction_id = coalesce(:b_tx::text, transaction_id),
      environment = coalesce('Production'::text, environment),
      quantity = coalesce(NULL::int, quantity),
      amount = CASE WHEN NULL::int IS NULL THEN amount ELSE unit_price * NULL::int END
    WHERE trade_status = 'WAIT_BUYER_PAY' AND trade_no IN (SELECT :b_trade_no::text) AND EXISTS (SELECT 1 FROM claim)  RETURNING *
  ), event AS (
    INSERT INTO order_events (trade_no, from_status, to_status, reason, cause, detail)
    SELECT trade_no, 'WAIT_BUYER_PAY', 'TRADE_SUCCESS', 'paid', 'report',
           :b_detail::jsonb
    FROM changed
  ), effect0 AS (INSERT INTO proof_headers (hash, header) SELECT :b_header_hash, :b_header WHERE EXISTS (SELECT 1 FROM changed) ON CONFLICT (hash) DO NOTHING RETURNING 1), effect1 AS (INSERT INTO proofs (hash, kind, body, header_hash, last_used_at)
  SELECT :b_hash, 'signed_transaction', :b_rest, :b_header_hash::text, now() WHERE EXISTS (SELECT 1 FROM changed) ON CONFLICT (hash) DO UPDATE SET last_used_at = EXCLUDED.last_used_at RETURNING 1), effect2 AS (INSERT INTO trade_reports (trade_no, user_id, product_id, trade_status, proof_kind,
    outcome, attempts, proof_hash, proof_size)
  SELECT trade_no, user_id, product_id, 'TRADE_SUCCESS', 'signed_transaction',
    'settled', 1, :b_hash::text, octet_length(:b_body::text)::integer
  FROM changed RETURNING 1), effect3 AS (UPDATE trade_reports SET outcome = 'settled', next_attempt_at = NULL,
    updated_at = now()
  WHERE trade_no IN (SELECT trade_no FROM changed)
    AND outcome IN ('pending', 'received') RETURNING 1), effect4 AS (INSERT INTO ledger (user_id, asset, amount, kind, trade_no, transaction_id, environment)
  SELECT changed.user_id, g.key, g.value::bigint * changed.quantity, 'grant',
         changed.trade_no, :b_tx, 'Production'
  FROM changed, jsonb_each_text('{"gold": 100}'::jsonb) AS g RETURNING 1), effect5 AS (UPDATE apple_notifications SET state = 'pending'
  WHERE state = 'deferred' AND EXISTS (SELECT 1 FROM changed)
    AND (transaction_id = :b_tx OR original_transaction_id = :b_tx) RETURNING 1), emitted AS (SELECT storekeeper_append_events(g.user_id, g.events, now(), NULL::jsonb) AS written FROM (SELECT c.user_id, '[]'::jsonb || jsonb_agg(jsonb_build_object('type', 'order.paid'::text, 'data', jsonb_strip_nulls(
     jsonb_build_object(
       'trade_no', c.trade_no, 'product_id', c.product_id, 'quantity', c.quantity,
       'amount', c.amount::text, 'currency', c.currency, 'trade_status', c.trade_status,
       'previous_status', 'WAIT_BUYER_PAY'::text, 'close_reason', c.close_reason,
       'reason', 'paid'::text, 'cause', 'report'::text,
       'transaction_id', c.transaction_id, 'environment', c.environment, 'origin', c.origin)))
   ORDER BY c.trade_no) AS events FROM changed c, (SELECT count(*) FROM claim) AS done_claim, (SELECT count(*) FROM effect0) AS done0, (SELECT count(*) FROM effect1) AS done1, (SELECT count(*) FROM effect2) AS done2, (SELECT count(*) FROM effect3) AS done3, (SELECT count(*) FROM effect4) AS done4, (SELECT count(*) FROM effect5) AS done5 GROUP BY c.user_id ORDER BY c.user_id) g) SELECT trade_no, user_id, product_id, quantity,
  unit_price::text AS price, currency, amount::text AS amount,
  app_account_token::text AS app_account_token, trade_status,
  close_reason, origin, transaction_id, environment,
  verification, to_char(created_at AT TIME ZONE 'UTC', replace('YYYY-MM-DD"T"HH24%MI%SS.MS"Z"', '%', chr(58))) AS created_at,
  to_char(expires_at AT TIME ZONE 'UTC', replace('YYYY-MM-DD"T"HH24%MI%SS.MS"Z"', '%', chr(58))) AS expires_at,
  to_char(paid_at AT TIME ZONE 'UTC', replace('YYYY-MM-DD"T"HH24%MI%SS.MS"Z"', '%', chr(58))) AS paid_at,
  to_char(closed_at AT TIME ZONE 'UTC', replace('YYYY-MM-DD"T"HH24%MI%SS.MS"Z"', '%', chr(58))) AS closed_at FROM changed WHERE (SELECT count(*) FROM emitted) >= 0;
COMMIT;
