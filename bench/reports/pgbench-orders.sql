-- pgbench's side of bench/reports/run and bench/reports/cost: :total orders
-- open and each with its creation event as the API makes them, the values each one's report
-- binds (bench_reports, row n for report n of settle.sql), the proof body every report stores
-- (:body, a real signed transaction: the same length as the ones Storekeeper stores), and the
-- one-row table of the INSERT baseline. Run with psql -v total=N -v users=U -v body=TEXT: order g
-- is user (g - 1) % U + 1's, so with U < N users come back, each order in a slot of its own.
-- With its JOSE header and the rest apart, as 0085 stores a signed transaction.
CREATE TABLE bench_proof (body text NOT NULL, header text, header_hash text, rest text);
INSERT INTO bench_proof VALUES (:'body', split_part(:'body', '.', 1),
  encode(sha256(convert_to(split_part(:'body', '.', 1), 'UTF8')), 'hex'),
  substr(:'body', length(split_part(:'body', '.', 1)) + 2));
CREATE TABLE bench_reports (n int PRIMARY KEY, trade_no text, user_id text, token uuid, tx text,
  tx_json text, purchase_ms bigint, proof_hash text, detail text);
WITH made AS (
  INSERT INTO orders (trade_no, user_id, product_id, quantity, unit_price, currency, amount,
                      app_account_token, trade_status, expires_at, open_slot)
  SELECT 'PGB' || lpad(g::text, 30, '0'), 'pgbench:' || (1 + (g - 1) % :users), 'com.example.bench.gold',
         1, 0.99, 'USD', 0.99, gen_random_uuid(), 'WAIT_BUYER_PAY', now() + interval '1 day',
         1 + (g - 1) / :users
  FROM generate_series(1, :total) g
  RETURNING trade_no, user_id, app_account_token
), numbered AS (
  SELECT substr(trade_no, 4)::int AS n, trade_no, user_id, app_account_token,
         (8000000000000000 + substr(trade_no, 4)::bigint)::text AS tx FROM made
)
INSERT INTO bench_reports
SELECT n, trade_no, user_id, app_account_token, tx, jsonb_build_array(tx)::text,
       (extract(epoch FROM now()) * 1000)::bigint, encode(sha256(('pgbench ' || n)::bytea), 'hex'),
       jsonb_build_object('environment', 'Production', 'transaction_id', tx, 'previous_close_reason', null)::text
FROM numbered;
INSERT INTO order_events (trade_no, to_status, reason, cause)
SELECT trade_no, 'WAIT_BUYER_PAY', 'created', 'api' FROM bench_reports;
CREATE TABLE one_row (id bigserial PRIMARY KEY, v integer NOT NULL);
ANALYZE;
