-- What a user owns at p_now, in the shape of GET /v1/users/{id}/entitlements: the running
-- balances (user_balances, kept by ledger.sql), entitlements derived from paid orders and
-- Apple's transactions and Google Play's purchases (the longest lasting source wins per name; a non-consumable's is
-- forever), owned non-consumables. storekeeper_append_events compares it with the state at
-- the user's previous event, so every change calls it: what it reads must not grow with the
-- user's history. Each lookup starts from the catalog's products of the type it needs and
-- probes the user's paid orders or transactions of that product (orders_user_paid,
-- apple_transactions_user_product), so a thousand gold packs bought cost nothing here. Each
-- probe is a subquery of its own (an aggregate, or OFFSET 0): a generic plan, which cannot know
-- that this user is the one with a thousand orders, would otherwise read all of the user's
-- rows and filter them by product. Most users own no entitlement (they buy consumables): the
-- balances' statement also asks whether any source of one exists, probed the same way, and
-- only then are the entitlements computed; each statement of a function costs a settlement
-- more than the probes (decision 0007).
CREATE OR REPLACE FUNCTION storekeeper_user_state(p_user_id text, p_now timestamptz)
RETURNS jsonb
LANGUAGE plpgsql STABLE AS $$
DECLARE
  now_ms bigint := floor(extract(epoch FROM p_now) * 1000);
  balances jsonb;
  sandbox_balances jsonb;
  non_consumables jsonb := '[]';
  active jsonb := '{}';
  running jsonb := '{}';
  v_previous jsonb;
  v_current jsonb;
  start_ms bigint;
  r record;
  v_list jsonb;
  has_sources boolean;
BEGIN
  -- Each EXISTS is a superset of what a loop below reads: when none holds, every loop would
  -- find nothing.
  SELECT coalesce(jsonb_object_agg(asset, total), '{}'),
         coalesce(jsonb_object_agg(asset, sandbox) FILTER (WHERE sandbox <> 0), '{}'),
         EXISTS (SELECT 1 FROM products p
                 CROSS JOIN LATERAL (SELECT 1 FROM orders o
                                     WHERE o.user_id = p_user_id AND o.product_id = p.product_id
                                       AND o.trade_status = 'TRADE_SUCCESS' LIMIT 1) paid
                 WHERE p.type IN ('non_consumable', 'non_renewing'))
         OR EXISTS (SELECT 1 FROM products p
                    CROSS JOIN LATERAL (SELECT 1 FROM apple_transactions t
                                        WHERE t.user_id = p_user_id AND t.product_id = p.product_id
                                        LIMIT 1) paid
                    WHERE p.type = 'auto_renewable')
         OR EXISTS (SELECT 1 FROM products p
                    CROSS JOIN LATERAL (SELECT 1 FROM google_purchases g
                                        WHERE g.user_id = p_user_id AND g.product_id = p.product_id
                                        LIMIT 1) paid
                    WHERE p.type = 'auto_renewable')
  INTO balances, sandbox_balances, has_sources
  FROM user_balances WHERE user_id = p_user_id;
  IF NOT has_sources THEN
    RETURN jsonb_build_object('user_id', p_user_id, 'balances', balances,
      'sandbox_balances', sandbox_balances, 'entitlements', '[]'::jsonb,
      'non_consumables', '[]'::jsonb);
  END IF;

  FOR r IN
    SELECT p.product_id, p.grants->>'entitlement' AS entitlement, paid.sandbox
    FROM products p
    CROSS JOIN LATERAL (
      SELECT count(*) AS n, coalesce(bool_and(o.environment = 'Sandbox'), false) AS sandbox
      FROM orders o
      WHERE o.user_id = p_user_id AND o.product_id = p.product_id
        AND o.trade_status = 'TRADE_SUCCESS') paid
    WHERE p.type = 'non_consumable' AND paid.n > 0
    ORDER BY p.product_id
  LOOP
    non_consumables := non_consumables || to_jsonb(r.product_id);
    IF r.entitlement IS NOT NULL THEN
      active := active || jsonb_build_object(r.entitlement, jsonb_build_object(
        'product_id', r.product_id, 'source', 'non_consumable', 'sandbox', r.sandbox));
    END IF;
  END LOOP;

  -- Non-renewing: each purchase extends from the later of its payment and the running expiry.
  -- It rests on the purchases since the name last lapsed: a purchase after a lapse starts a new
  -- stretch, whose `sandbox` is its own.
  FOR r IN
    SELECT p.product_id, p.grants->>'entitlement' AS entitlement,
           coalesce((p.grants->>'duration_days')::bigint * o.quantity, 0) AS days,
           (extract(epoch FROM o.paid_at) * 1000)::bigint AS paid_ms,
           coalesce(o.environment = 'Sandbox', false) AS sandbox
    FROM products p
    CROSS JOIN LATERAL (
      SELECT o.quantity, o.paid_at, o.trade_no, o.environment
      FROM orders o
      WHERE o.user_id = p_user_id AND o.product_id = p.product_id
        AND o.trade_status = 'TRADE_SUCCESS'
      -- Kept a subquery: probed by (user, product) whatever a generic plan guesses of the user.
      OFFSET 0) o
    WHERE p.type = 'non_renewing' AND p.grants ? 'entitlement'
    ORDER BY o.paid_at, o.trade_no
  LOOP
    v_previous := running -> r.entitlement;
    start_ms := greatest(r.paid_ms, coalesce((v_previous->>'expires_ms')::bigint, 0));
    running := running || jsonb_build_object(r.entitlement, jsonb_build_object(
      'expires_ms', start_ms + r.days * 86400000, 'product_id', r.product_id,
      'source', 'non_renewing',
      'sandbox', r.sandbox AND (start_ms = r.paid_ms
                                OR coalesce((v_previous->>'sandbox')::boolean, true))));
  END LOOP;

  -- Offered in turn: non-renewing, then auto-renewable (Apple's latest expiresDate or grace
  -- period on a transaction not revoked, ended early by an upgrade). A later expiry replaces an
  -- earlier one; forever stays.
  FOR r IN
    SELECT key AS entitlement, (value->>'expires_ms')::bigint AS expires_ms, value AS entry
    FROM jsonb_each(running)
    UNION ALL
    SELECT entitlement, expires_ms, jsonb_build_object('expires_ms', expires_ms,
             'product_id', product_id, 'source', 'auto_renewable', 'sandbox', sandbox)
    FROM (SELECT p.grants->>'entitlement' AS entitlement, p.product_id, paid.expires_ms,
                 paid.sandbox
          FROM products p
          CROSS JOIN LATERAL (
            SELECT (extract(epoch FROM max(sub.ends)) * 1000)::bigint AS expires_ms,
                   -- Resting on the subscription whose period (or grace) ends last, not on
                   -- expired periods before it; of equals, a production one. Not on what is
                   -- still in effect at p_now: that would change with no event to record it.
                   coalesce((array_agg(sub.sandbox ORDER BY sub.ends DESC NULLS LAST, sub.sandbox))[1],
                            false) AS sandbox
            FROM (
              SELECT per.sandbox,
                     CASE WHEN after.cut IS NOT NULL THEN least(per.expires_date, after.cut)
                          WHEN after.outlived THEN per.expires_date
                          ELSE greatest(per.expires_date, s.grace_expires_at) END AS ends
              -- Per subscription, this product's latest period not revoked. A transaction
              -- Apple says was upgraded from grants nothing more (StoreKit leaves it out of
              -- the current entitlements).
              FROM (SELECT t.original_transaction_id, t.environment = 'Sandbox' AS sandbox,
                           max(t.expires_date) AS expires_date,
                           (array_agg(t.purchase_date ORDER BY t.expires_date DESC NULLS LAST,
                                                    t.purchase_date DESC))[1]
                             AS began
                    FROM apple_transactions t
                    WHERE t.user_id = p_user_id AND t.product_id = p.product_id
                      AND t.revocation_date IS NULL AND NOT t.is_upgraded
                    GROUP BY 1, 2) per
              -- One pass over the subscription's rows, revoked or not: a later purchase of
              -- another of its products (an upgrade or crossgrade, which Apple starts at once)
              -- ends this period when it begins; a downgrade begins at the renewal date, so it
              -- cuts nothing. Apple's grace period extends the subscription's latest period
              -- only: not one another product replaced, nor one before a latest period that
              -- was refunded (a row of the subscription begun since expires later, revoked
              -- or not).
              CROSS JOIN LATERAL (
                SELECT min(n.purchase_date) FILTER (
                         WHERE n.product_id <> p.product_id AND n.purchase_date > per.began) AS cut,
                       -- Not the period an upgrade replaced (it began before this one): a
                       -- yearly plan upgraded to a monthly one must not take the grace away.
                       coalesce(bool_or(n.expires_date > per.expires_date
                                        AND n.purchase_date >= per.began), false) AS outlived
                FROM apple_transactions n
                WHERE n.original_transaction_id = per.original_transaction_id) after
              LEFT JOIN subscription_states s
                ON s.original_transaction_id = per.original_transaction_id) sub) paid
          WHERE p.type = 'auto_renewable' AND p.grants ? 'entitlement'
          -- Google Play's subscriptions of the same products: the latest expiry Google gave
          -- on a purchase not voided (google_purchases_user_product).
          UNION ALL
          SELECT p.grants->>'entitlement', p.product_id, gpaid.expires_ms, gpaid.sandbox
          FROM products p
          CROSS JOIN LATERAL (
            SELECT (extract(epoch FROM max(g.expiry_time)) * 1000)::bigint AS expires_ms,
                   coalesce((array_agg(g.environment = 'Sandbox'
                     ORDER BY g.expiry_time DESC NULLS LAST, g.environment = 'Sandbox'))[1],
                     false) AS sandbox
            FROM google_purchases g
            WHERE g.user_id = p_user_id AND g.product_id = p.product_id
              AND g.revoked_at IS NULL) gpaid
          WHERE p.type = 'auto_renewable' AND p.grants ? 'entitlement'
          -- Equal expiries: by product, then a production source before a sandbox one, so that
          -- an App Store and a Google Play subscription of one product always show the same.
          ORDER BY 3 DESC, 2, 4) subscriptions
    WHERE expires_ms IS NOT NULL
  LOOP
    CONTINUE WHEN r.expires_ms <= now_ms;
    v_current := active -> r.entitlement;
    IF v_current IS NULL
       OR (v_current ? 'expires_ms' AND (v_current->>'expires_ms')::bigint < r.expires_ms) THEN
      active := active || jsonb_build_object(r.entitlement, r.entry);
    END IF;
  END LOOP;

  SELECT coalesce(jsonb_agg(
           jsonb_build_object('entitlement', key, 'product_id', value->'product_id',
                              'source', value->'source', 'sandbox', value->'sandbox')
           || CASE WHEN value ? 'expires_ms' THEN jsonb_build_object('expires_at', to_char(
                (timestamptz 'epoch' + (value->>'expires_ms')::bigint * interval '1 millisecond')
                AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')) ELSE '{}' END
           ORDER BY key), '[]')
  INTO v_list FROM jsonb_each(active);

  RETURN jsonb_build_object('user_id', p_user_id, 'balances', balances,
    'sandbox_balances', sandbox_balances, 'entitlements', v_list,
    'non_consumables', non_consumables);
END
$$;
