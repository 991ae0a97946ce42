-- The wallet's writers (0035): a spend's ledger rows, and what a refund can take back.

-- Writes the ledger rows of spend p_operation: p_amount of p_asset out of the user's oldest
-- lots, one row per environment those lots were paid in (so sandbox_balances stays the part of
-- the balance the sandbox paid for), in the order their first lot comes. The ledger's trigger
-- then takes each row out of the oldest lots of its environment, which are exactly the lots
-- counted here. The caller holds the user's lock and has checked the balance.
CREATE OR REPLACE FUNCTION storekeeper_wallet_debit(
  p_user_id text, p_asset text, p_amount bigint, p_operation bigint
) RETURNS integer
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  v_left bigint := p_amount;
  v_take bigint;
  planned jsonb := '{}';
  envs text[] := '{}';
  env text;
  r record;
BEGIN
  FOR r IN
    SELECT l.environment, l.remaining FROM ledger_lots l
    WHERE l.user_id = p_user_id AND l.asset = p_asset AND l.remaining > 0
    ORDER BY l.id
  LOOP
    EXIT WHEN v_left = 0;
    v_take := least(v_left, r.remaining);
    IF NOT planned ? r.environment THEN
      envs := envs || r.environment;
      planned := planned || jsonb_build_object(r.environment, 0);
    END IF;
    planned := planned || jsonb_build_object(r.environment,
                                             (planned->>r.environment)::bigint + v_take);
    v_left := v_left - v_take;
  END LOOP;
  -- The lots hold the balance whenever it is positive; should they ever hold less, the rest is
  -- still taken (the balance was checked) and stays unattributed rather than refusing a spend
  -- the balance allows.
  IF v_left > 0 THEN
    IF NOT planned ? 'Production' THEN
      envs := envs || 'Production'::text;
      planned := planned || jsonb_build_object('Production', 0);
    END IF;
    planned := planned || jsonb_build_object('Production',
                                             (planned->>'Production')::bigint + v_left);
  END IF;
  FOREACH env IN ARRAY envs LOOP
    INSERT INTO ledger (user_id, asset, amount, kind, environment, operation_id)
    VALUES (p_user_id, p_asset, -(planned->>env)::bigint, 'spend', env, p_operation);
  END LOOP;
  RETURN coalesce(array_length(envs, 1), 0);
END
$$;

-- What a refund of order p_trade_no can take back, per asset: `owed` is what the purchase's
-- rows still hold less what earlier refunds of it left owed (`ledger_debts`: a prorated refund's
-- debt, which a later full refund must not take again; a repayment of that debt is a row of the
-- order too, so this does not change as it is repaid), `recovered` the part of it its lots still
-- have (the rest was spent). One row per asset, in the purchase's environment (its grants'), as
-- a transfer takes it: the order's rows of another environment (a sandbox credit that repaid
-- its debt) count with the rest. REFUND_POLICY decides what happens to the difference
-- (Ledger.refund).
CREATE OR REPLACE FUNCTION storekeeper_refund_plan(p_trade_no text)
RETURNS TABLE (user_id text, asset text, environment text, owed bigint, recovered bigint)
LANGUAGE sql STABLE AS $$
  SELECT g.user_id, g.asset, g.environment, g.owed,
         least(g.owed, coalesce((SELECT sum(l.remaining) FROM ledger_lots l
                                 WHERE l.trade_no = p_trade_no AND l.asset = g.asset
                                   AND l.user_id = g.user_id), 0))::bigint
  FROM (SELECT x.user_id, x.asset,
               coalesce(min(x.environment) FILTER (WHERE x.kind = 'grant'),
                        min(x.environment)) AS environment,
               (sum(x.amount)
                - coalesce((SELECT sum(d.outstanding) FROM ledger_debts d
                            WHERE d.trade_no = p_trade_no AND d.asset = x.asset
                              AND d.user_id = x.user_id), 0))::bigint AS owed
        FROM ledger x WHERE x.trade_no = p_trade_no
        GROUP BY x.user_id, x.asset) g
  WHERE g.owed > 0
$$;

-- What a refund of p_units of the p_quantity order p_trade_no paid for can take back (Google's
-- quantity-based partial refunds, and the full refund of what such refunds left): the same
-- shape as storekeeper_refund_plan, with `owed` that share of what the order's credits gave,
-- never more than its rows still hold. A share, not what is left, so a partial refund whose
-- debt is still open does not make the next refund take that part twice.
CREATE OR REPLACE FUNCTION storekeeper_refund_plan_share(
  p_trade_no text, p_units integer, p_quantity integer
) RETURNS TABLE (user_id text, asset text, environment text, owed bigint, recovered bigint)
LANGUAGE sql STABLE AS $$
  SELECT g.user_id, g.asset, g.environment, g.owed, least(g.owed, coalesce(l.remaining, 0))
  FROM (SELECT x.user_id, x.asset, x.environment,
               least(sum(x.amount),
                     coalesce(sum(x.amount) FILTER (WHERE x.kind = 'grant'), 0)
                       * p_units / greatest(p_quantity, 1))::bigint AS owed
        FROM ledger x WHERE x.trade_no = p_trade_no
        GROUP BY x.user_id, x.asset, x.environment
        HAVING sum(x.amount) > 0) g
  LEFT JOIN ledger_lots l
    ON l.trade_no = p_trade_no AND l.asset = g.asset AND l.environment = g.environment
  WHERE g.owed > 0
$$;

-- What Apple's prorated refund of order p_trade_no's purchase can take back when the share
-- Apple refunded in all grows from p_before to p_milliunits (of 100000; Apple's percentage
-- counts from the whole purchase, so each REFUND_PRORATED names the cumulative share): the same
-- shape as storekeeper_refund_plan_share, with `owed` that share of what the purchase credited
-- when it was bought, followed back through admin transfers (an order a transfer paid was
-- credited only what was left of it), never more than the order's rows still hold. The share is
-- rounded (half away from zero) once, as a whole: `owed` is the rounded cumulative share less
-- the rounded share already taken, so however Apple splits a refund, the takes add up to one
-- rounding of the final share rather than gaining up to half a unit at each step.
CREATE OR REPLACE FUNCTION storekeeper_refund_plan_prorated(
  p_trade_no text, p_milliunits integer, p_before integer
) RETURNS TABLE (user_id text, asset text, environment text, owed bigint, recovered bigint)
LANGUAGE sql STABLE AS $$
  WITH RECURSIVE chain (trade_no, depth) AS (
    SELECT p_trade_no, 0
    UNION ALL
    SELECT e.detail ->> 'from_trade_no', c.depth + 1
    FROM chain c JOIN order_events e ON e.trade_no = c.trade_no
    WHERE e.reason = 'created_for_transfer' AND e.detail ? 'from_trade_no' AND c.depth < 100),
  bought AS (
    SELECT x.asset, sum(x.amount) FILTER (WHERE x.kind = 'grant') AS credited
    FROM ledger x
    WHERE x.trade_no = (SELECT c.trade_no FROM chain c ORDER BY c.depth DESC LIMIT 1)
    GROUP BY x.asset)
  SELECT g.user_id, g.asset, g.environment, g.owed, least(g.owed, coalesce(l.remaining, 0))
  FROM (SELECT s.user_id, s.asset, s.environment,
               least(s.held, round(s.credited * p_milliunits / 100000)
                             - round(s.credited * greatest(p_before, 0) / 100000))::bigint AS owed
        FROM (SELECT x.user_id, x.asset, x.environment, sum(x.amount) AS held,
                     coalesce((SELECT b.credited FROM bought b WHERE b.asset = x.asset),
                              sum(x.amount) FILTER (WHERE x.kind = 'grant'), 0)::numeric
                       AS credited
              FROM ledger x WHERE x.trade_no = p_trade_no
              GROUP BY x.user_id, x.asset, x.environment
              HAVING sum(x.amount) > 0) s) g
  LEFT JOIN ledger_lots l
    ON l.trade_no = p_trade_no AND l.asset = g.asset AND l.environment = g.environment
  WHERE g.owed > 0
$$;

-- The previous release's form (before 0145), which its instances call with the share a refund
-- adds during a rolling upgrade: the same rounding of that increment as they did.
CREATE OR REPLACE FUNCTION storekeeper_refund_plan_prorated(p_trade_no text, p_milliunits integer)
RETURNS TABLE (user_id text, asset text, environment text, owed bigint, recovered bigint)
LANGUAGE sql STABLE AS $$
  SELECT * FROM storekeeper_refund_plan_prorated(p_trade_no, p_milliunits, 0)
$$;

-- Order p_trade_no and those admin transfers moved its purchase from (`created_for_transfer`),
-- the first at the greatest depth: the purchase's history as Apple knows it, one transaction.
CREATE OR REPLACE FUNCTION storekeeper_transfer_chain(p_trade_no text)
RETURNS TABLE (trade_no text, depth integer)
LANGUAGE sql STABLE AS $$
  WITH RECURSIVE chain (trade_no, depth) AS (
    SELECT p_trade_no, 0
    UNION ALL
    SELECT e.detail ->> 'from_trade_no', c.depth + 1
    FROM chain c JOIN order_events e ON e.trade_no = c.trade_no
    WHERE e.reason = 'created_for_transfer' AND e.detail ? 'from_trade_no' AND c.depth < 100)
  SELECT c.trade_no, c.depth FROM chain c
$$;

-- How much of what purchase p_trade_no credited is used, per asset: what the purchase still
-- gives (its own rows: the credit, less its refund or transfer, plus a reversal's refill; not
-- the debt_repaid rows other credits wrote for it while its refund's debt stands) less what
-- its lots still hold. So whatever took from its lots counts (a spend, a repayment of another
-- purchase's debt, another purchase's refund under REFUND_POLICY=negative) and so does the part
-- of its credit that made a negative balance good or repaid a debt when it came, which its lot
-- never held; what the purchase's own refund took back does not. A debt_repaid row that a later
-- reversal of its refund gave back (the ledger's trigger: those before its last
-- refund_reversed row of that asset and environment) counts like the refund rows it goes with:
-- the reversal's credit went to the lot that repaid it, not to this purchase's, and counting
-- that credit alone made the purchase look used by what it repaid. `credited` is what the
-- purchase's grants gave when it was bought, followed back through admin transfers (as
-- storekeeper_refund_plan_prorated does: Apple counts a share from the whole purchase, and an
-- order a transfer paid was credited only what was left of it), and `used` is never more.
CREATE OR REPLACE FUNCTION storekeeper_purchase_use(p_trade_no text)
RETURNS TABLE (asset text, credited bigint, used bigint)
LANGUAGE sql STABLE AS $$
  WITH bought AS (
    SELECT x.asset, sum(x.amount) FILTER (WHERE x.kind = 'grant') AS credited
    FROM ledger x
    WHERE x.trade_no = (SELECT c.trade_no FROM storekeeper_transfer_chain(p_trade_no) c
                        ORDER BY c.depth DESC LIMIT 1)
    GROUP BY x.asset)
  SELECT g.asset, g.credited,
         least(g.credited, greatest(0, g.held - coalesce(l.remaining, 0)))::bigint
  FROM (SELECT x.asset,
               coalesce((SELECT b.credited FROM bought b WHERE b.asset = x.asset),
                        sum(x.amount) FILTER (WHERE x.kind = 'grant'), 0)::bigint AS credited,
               sum(x.amount)::bigint AS held
        FROM ledger x
        WHERE x.trade_no = p_trade_no
          AND (x.kind <> 'debt_repaid'
               OR x.id < (SELECT max(y.id) FROM ledger y
                          WHERE y.trade_no = p_trade_no AND y.asset = x.asset
                            AND y.environment = x.environment AND y.kind = 'refund_reversed'))
        GROUP BY x.asset) g
  LEFT JOIN (SELECT l.asset, sum(l.remaining)::bigint AS remaining FROM ledger_lots l
             WHERE l.trade_no = p_trade_no GROUP BY l.asset) l ON l.asset = g.asset
  WHERE g.credited > 0
$$;

-- What Apple's REFUND_REVERSED of order p_trade_no's prorated refunds gives back, per asset and
-- environment: what those refunds took (their rows) and what credits since repaid of the debt
-- they left (debt_repaid rows), along the transfer chain, since the chain's last reversal in
-- that asset and environment. The refunds of an order a transfer moved the purchase away from
-- are that order's rows, and the transfer moved only what they left, so they come back to the
-- current owner; debt still standing is cancelled, not given. For an order never moved this is
-- what Ledger.reverse gives back (its grants less what its rows hold).
CREATE OR REPLACE FUNCTION storekeeper_prorated_refunds_taken(p_trade_no text)
RETURNS TABLE (asset text, environment text, amount bigint)
LANGUAGE sql STABLE AS $$
  WITH chain AS (SELECT c.trade_no FROM storekeeper_transfer_chain(p_trade_no) c),
  reversed AS (
    SELECT y.asset, y.environment, max(y.id) AS id FROM ledger y
    WHERE y.trade_no IN (SELECT trade_no FROM chain) AND y.kind = 'refund_reversed'
    GROUP BY y.asset, y.environment)
  SELECT x.asset, x.environment, (-sum(x.amount))::bigint
  FROM ledger x
  LEFT JOIN reversed r ON r.asset = x.asset AND r.environment = x.environment
  WHERE x.trade_no IN (SELECT trade_no FROM chain) AND x.kind IN ('refund', 'debt_repaid')
    AND x.id > coalesce(r.id, 0)
  GROUP BY x.asset, x.environment
  HAVING sum(x.amount) < 0
$$;
