-- Events (issue 12), the writers' half. Every writer appends through one function,
-- storekeeper_append_events, inside the transaction of its change; it takes the user's
-- sequence row lock, computes the user's whole state after the change with
-- storekeeper_user_state (the same function GET /v1/users/{id}/entitlements answers with, so
-- the two cannot disagree), and derives the balance and entitlement events by comparing that
-- state with the one recorded at the user's previous event.

-- The state after the user's last event (what the next change is compared with), and the
-- earliest expiry in it: the sweep finds users whose entitlement ran out with no write at all.
ALTER TABLE user_event_sequences
  ADD COLUMN last_state jsonb,
  ADD COLUMN next_expiry timestamptz;
CREATE INDEX user_event_sequences_next_expiry ON user_event_sequences (next_expiry)
  WHERE next_expiry IS NOT NULL;

-- The feed filtered by user reads this index in feed order.
CREATE INDEX events_user_feed ON events (user_id, xid, position);

-- What a user owns at p_now, in the shape of GET /v1/users/{id}/entitlements: balances summed
-- from the ledger, entitlements derived from paid orders and Apple's transactions (the longest
-- lasting source wins per name; a non-consumable's is forever), owned non-consumables.
CREATE FUNCTION storekeeper_user_state(p_user_id text, p_now timestamptz) RETURNS jsonb
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
BEGIN
  SELECT coalesce(jsonb_object_agg(asset, total), '{}'),
         coalesce(jsonb_object_agg(asset, sandbox) FILTER (WHERE sandbox <> 0), '{}')
  INTO balances, sandbox_balances
  FROM (SELECT asset, sum(amount)::bigint AS total,
               coalesce(sum(amount) FILTER (WHERE environment = 'Sandbox'), 0)::bigint AS sandbox
        FROM ledger WHERE user_id = p_user_id GROUP BY asset) b;

  FOR r IN
    SELECT o.product_id, p.grants->>'entitlement' AS entitlement,
           coalesce(bool_and(o.environment = 'Sandbox'), false) AS sandbox
    FROM orders o JOIN products p ON p.product_id = o.product_id
    WHERE o.user_id = p_user_id AND o.trade_status = 'TRADE_SUCCESS' AND p.type = 'non_consumable'
    GROUP BY 1, 2 ORDER BY o.product_id
  LOOP
    non_consumables := non_consumables || to_jsonb(r.product_id);
    IF r.entitlement IS NOT NULL THEN
      active := active || jsonb_build_object(r.entitlement, jsonb_build_object(
        'product_id', r.product_id, 'source', 'non_consumable', 'sandbox', r.sandbox));
    END IF;
  END LOOP;

  -- Non-renewing: each purchase extends from the later of its payment and the running expiry.
  FOR r IN
    SELECT o.product_id, p.grants->>'entitlement' AS entitlement,
           coalesce((p.grants->>'duration_days')::bigint * o.quantity, 0) AS days,
           (extract(epoch FROM o.paid_at) * 1000)::bigint AS paid_ms,
           coalesce(o.environment = 'Sandbox', false) AS sandbox
    FROM orders o JOIN products p ON p.product_id = o.product_id
    WHERE o.user_id = p_user_id AND o.trade_status = 'TRADE_SUCCESS' AND p.type = 'non_renewing'
      AND p.grants ? 'entitlement'
    ORDER BY o.paid_at, o.trade_no
  LOOP
    v_previous := running -> r.entitlement;
    start_ms := greatest(r.paid_ms, coalesce((v_previous->>'expires_ms')::bigint, 0));
    running := running || jsonb_build_object(r.entitlement, jsonb_build_object(
      'expires_ms', start_ms + r.days * 86400000, 'product_id', r.product_id,
      'source', 'non_renewing',
      'sandbox', r.sandbox AND coalesce((v_previous->>'sandbox')::boolean, true)));
  END LOOP;

  -- Offered in turn: non-renewing, then auto-renewable (Apple's latest expiresDate or grace
  -- period on a transaction not revoked). A later expiry replaces an earlier one; forever stays.
  FOR r IN
    SELECT key AS entitlement, (value->>'expires_ms')::bigint AS expires_ms, value AS entry
    FROM jsonb_each(running)
    UNION ALL
    SELECT entitlement, expires_ms, jsonb_build_object('expires_ms', expires_ms,
             'product_id', product_id, 'source', 'auto_renewable', 'sandbox', sandbox)
    FROM (SELECT p.grants->>'entitlement' AS entitlement, t.product_id,
                 (extract(epoch FROM max(greatest(t.expires_date, s.grace_expires_at))) * 1000)::bigint
                   AS expires_ms,
                 coalesce(bool_and(t.environment = 'Sandbox'), false) AS sandbox
          FROM apple_transactions t
          JOIN products p ON p.product_id = t.product_id
          LEFT JOIN subscription_states s ON s.original_transaction_id = t.original_transaction_id
          WHERE t.user_id = p_user_id AND p.type = 'auto_renewable' AND t.revocation_date IS NULL
            AND p.grants ? 'entitlement'
          GROUP BY 1, 2
          ORDER BY 3 DESC, 2) subscriptions
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

-- Appends p_events (a JSON array of {"type", "data"}) for one user inside the caller's
-- transaction, after the change they describe, followed by the events the change implies:
-- balance.changed and entitlement.granted / extended / changed / revoked, found by comparing
-- the user's state now with the state recorded at their previous event. Entitlements of that
-- state whose time has run out by p_now come first, as entitlement.expired. Every event gets
-- the next number of the user's gap-free sequence and the state after the change. Returns how
-- many events it wrote.
--
-- VOLATILE on purpose: each statement inside takes a fresh snapshot, so the state is read
-- after the sequence row is locked and includes every change committed before it (and, when
-- called from a statement whose data-modifying CTEs it depends on, those CTEs' rows).
CREATE FUNCTION storekeeper_append_events(
  p_user_id text, p_events jsonb, p_now timestamptz, p_cause jsonb DEFAULT NULL
) RETURNS integer
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  last_sequence_ bigint;
  v_before jsonb;
  v_after jsonb;
  explicit jsonb;
  cause jsonb;
  lapsed jsonb;
  kept jsonb;
  derived jsonb := '[]';
  changes jsonb;
  all_events jsonb;
  written integer;
BEGIN
  SELECT s.last_sequence, s.last_state INTO last_sequence_, v_before
  FROM user_event_sequences s WHERE s.user_id = p_user_id FOR UPDATE;
  IF NOT FOUND THEN
    INSERT INTO user_event_sequences (user_id, last_sequence) VALUES (p_user_id, 0)
    ON CONFLICT (user_id) DO NOTHING;
    SELECT s.last_sequence, s.last_state INTO last_sequence_, v_before
    FROM user_event_sequences s WHERE s.user_id = p_user_id FOR UPDATE;
  END IF;
  v_before := coalesce(v_before, '{"balances": {}, "entitlements": []}');
  v_after := storekeeper_user_state(p_user_id, p_now);

  SELECT coalesce(jsonb_agg(jsonb_build_object('id', gen_random_uuid(), 'type', e->>'type',
                                               'data', coalesce(e->'data', '{}')) ORDER BY n), '[]')
  INTO explicit FROM jsonb_array_elements(coalesce(p_events, '[]')) WITH ORDINALITY AS x(e, n);
  cause := CASE WHEN jsonb_array_length(explicit) > 0 THEN jsonb_strip_nulls(jsonb_build_object(
             'type', explicit->0->'type', 'event_id', explicit->0->'id',
             'trade_no', explicit->0->'data'->'trade_no'))
           ELSE coalesce(p_cause, '{"type": "sync"}') END;

  -- Ran out by time since the last event: expired, whatever happens to the name now.
  SELECT coalesce(jsonb_agg(e ORDER BY e->>'entitlement')
                  FILTER (WHERE (e->>'expires_at')::timestamptz <= p_now), '[]'),
         coalesce(jsonb_agg(e) FILTER (WHERE e->>'expires_at' IS NULL
                                         OR (e->>'expires_at')::timestamptz > p_now), '[]')
  INTO lapsed, kept FROM jsonb_array_elements(v_before->'entitlements') e;

  SELECT jsonb_object_agg(k, delta) INTO changes
  FROM (SELECT k, coalesce((v_after->'balances'->>k)::bigint, 0)
                  - coalesce((v_before->'balances'->>k)::bigint, 0) AS delta
        FROM (SELECT jsonb_object_keys(v_after->'balances')
              UNION SELECT jsonb_object_keys(v_before->'balances')) keys(k)) d
  WHERE delta <> 0;
  IF changes IS NOT NULL THEN
    derived := derived || jsonb_build_array(jsonb_build_object('type', 'balance.changed',
      'data', jsonb_build_object('changes', changes,
        'balances', (SELECT jsonb_object_agg(key, value) FROM jsonb_each(v_after->'balances')
                     WHERE changes ? key),
        'cause', cause)));
  END IF;

  SELECT derived || coalesce(jsonb_agg(jsonb_build_object('type', kind, 'data', data)
                               ORDER BY rank, name), '[]')
  INTO derived
  FROM (
    SELECT coalesce(a.e->>'entitlement', b.e->>'entitlement') AS name,
      CASE WHEN b.e IS NULL THEN 'entitlement.granted'
           WHEN a.e IS NULL THEN 'entitlement.revoked'
           WHEN (a.e->>'expires_at') IS NULL AND (b.e->>'expires_at') IS NOT NULL
             OR (a.e->>'expires_at')::timestamptz > (b.e->>'expires_at')::timestamptz
             THEN 'entitlement.extended'
           ELSE 'entitlement.changed' END AS kind,
      CASE WHEN b.e IS NULL THEN 1 WHEN a.e IS NULL THEN 4 ELSE 2 END AS rank,
      coalesce(a.e, b.e) || jsonb_build_object('cause', cause)
        || CASE WHEN a.e IS NOT NULL AND b.e IS NOT NULL
                THEN jsonb_build_object('previous', b.e - 'entitlement') ELSE '{}' END AS data
    FROM (SELECT e FROM jsonb_array_elements(v_after->'entitlements') e) a
    FULL JOIN (SELECT e FROM jsonb_array_elements(kept) e) b
      ON a.e->>'entitlement' = b.e->>'entitlement'
    WHERE a.e IS DISTINCT FROM b.e
  ) diff;

  SELECT coalesce(jsonb_agg(jsonb_build_object('id', gen_random_uuid(), 'type', 'entitlement.expired',
                                               'data', e) ORDER BY n), '[]')
         || explicit
         || coalesce((SELECT jsonb_agg(d || jsonb_build_object('id', gen_random_uuid()) ORDER BY n)
                      FROM jsonb_array_elements(derived) WITH ORDINALITY AS y(d, n)), '[]')
  INTO all_events FROM jsonb_array_elements(lapsed) WITH ORDINALITY AS x(e, n);

  written := jsonb_array_length(all_events);
  IF written = 0 AND v_after - 'user_id' = v_before - 'user_id' THEN
    RETURN 0;
  END IF;

  INSERT INTO events (id, type, user_id, sequence, data, user_state)
  SELECT (e->>'id')::uuid, e->>'type', p_user_id, last_sequence_ + n, e->'data', v_after
  FROM jsonb_array_elements(all_events) WITH ORDINALITY AS x(e, n);

  UPDATE user_event_sequences
  SET last_sequence = last_sequence_ + written, last_state = v_after,
      next_expiry = (SELECT min((e->>'expires_at')::timestamptz)
                     FROM jsonb_array_elements(v_after->'entitlements') e)
  WHERE user_id = p_user_id;
  RETURN written;
END
$$;

-- Users who own something already start from what they own now, so their first event reports
-- what that change did rather than everything they ever had.
INSERT INTO user_event_sequences (user_id, last_sequence, last_state, next_expiry)
SELECT u.user_id, 0, s.state,
       (SELECT min((e->>'expires_at')::timestamptz) FROM jsonb_array_elements(s.state->'entitlements') e)
FROM (SELECT user_id FROM ledger
      UNION SELECT user_id FROM orders WHERE trade_status = 'TRADE_SUCCESS'
      UNION SELECT user_id FROM apple_transactions WHERE user_id IS NOT NULL) u,
     LATERAL (SELECT storekeeper_user_state(u.user_id, now()) AS state) s
ON CONFLICT (user_id) DO NOTHING;
