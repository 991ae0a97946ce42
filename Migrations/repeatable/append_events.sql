-- Appends p_events (a JSON array of {"type", "data"}) for one user inside the caller's
-- transaction, after the change they describe, followed by the events the change implies:
-- balance.changed and entitlement.granted / extended / changed / revoked, found by comparing
-- the user's state now with the state recorded at their previous event. Entitlements of that
-- state whose time has run out by then come first, as entitlement.expired. Every event gets
-- the next number of the user's gap-free sequence and the state after the change. Returns how
-- many events it wrote.
--
-- "Then" is p_now, or the time of the user's previous append if that is later: a caller takes
-- p_now from its clock before it waits for the user's lock (or on an instance whose clock is
-- behind), and a state computed for an earlier time than the last one would grant again an
-- entitlement that append had just found expired. A user's events run forward in time.
--
-- VOLATILE on purpose: each statement inside takes a fresh snapshot, so the state is read
-- after the sequence row is locked and includes every change committed before it (and, when
-- called from a statement whose data-modifying CTEs it depends on, those CTEs' rows).
CREATE OR REPLACE FUNCTION storekeeper_append_events(
  p_user_id text, p_events jsonb, p_now timestamptz, p_cause jsonb DEFAULT NULL
) RETURNS integer
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  last_sequence_ bigint;
  v_now timestamptz;
  v_before jsonb;
  v_after jsonb;
  explicit jsonb;
  cause jsonb;
  expired jsonb := '[]';
  kept jsonb;
  derived jsonb := '[]';
  changes jsonb;
  changed_balances jsonb;
  next_expiry_ timestamptz;
  all_events jsonb;
  written integer;
BEGIN
  SELECT s.last_sequence, s.last_state, greatest(p_now, s.last_state_at)
  INTO last_sequence_, v_before, v_now
  FROM user_event_sequences s WHERE s.user_id = p_user_id FOR UPDATE;
  IF NOT FOUND THEN
    INSERT INTO user_event_sequences (user_id, last_sequence) VALUES (p_user_id, 0)
    ON CONFLICT (user_id) DO NOTHING;
    SELECT s.last_sequence, s.last_state, greatest(p_now, s.last_state_at)
    INTO last_sequence_, v_before, v_now
    FROM user_event_sequences s WHERE s.user_id = p_user_id FOR UPDATE;
  END IF;
  v_before := coalesce(v_before, '{"balances": {}, "entitlements": []}');
  v_after := storekeeper_user_state(p_user_id, v_now);

  IF coalesce(jsonb_array_length(p_events), 0) = 0 THEN
    explicit := '[]';
  ELSIF jsonb_array_length(p_events) = 1 THEN
    -- One event (an order's, most changes): built by an expression, not a query over the array,
    -- which cost a statement of its own in every settlement (issue 23).
    explicit := jsonb_build_array(jsonb_build_object('id', gen_random_uuid(),
      'type', p_events->0->>'type', 'data', coalesce(p_events->0->'data', '{}')));
  ELSE
    SELECT jsonb_agg(jsonb_build_object('id', gen_random_uuid(), 'type', e->>'type',
                                        'data', coalesce(e->'data', '{}')) ORDER BY n)
    INTO explicit FROM jsonb_array_elements(p_events) WITH ORDINALITY AS x(e, n);
  END IF;
  cause := CASE WHEN jsonb_array_length(explicit) > 0 THEN jsonb_strip_nulls(jsonb_build_object(
             'type', explicit->0->'type', 'event_id', explicit->0->'id',
             'trade_no', explicit->0->'data'->'trade_no'))
           ELSE coalesce(p_cause, '{"type": "sync"}') END;

  -- Ran out by time since the last event: expired, whatever happens to the name now. Each
  -- step below is skipped when what it compares is equal (a consumable bought by a user
  -- without entitlements, most changes): the statement a step would run costs more than
  -- comparing two jsonb values, and it would find nothing.
  IF coalesce(jsonb_array_length(v_before->'entitlements'), 0) = 0 THEN
    kept := '[]';
  ELSE
    SELECT coalesce(jsonb_agg(jsonb_build_object('id', gen_random_uuid(),
                                                 'type', 'entitlement.expired', 'data', e)
                              ORDER BY e->>'entitlement')
                    FILTER (WHERE (e->>'expires_at')::timestamptz <= v_now), '[]'),
           coalesce(jsonb_agg(e) FILTER (WHERE e->>'expires_at' IS NULL
                                           OR (e->>'expires_at')::timestamptz > v_now), '[]')
    INTO expired, kept FROM jsonb_array_elements(v_before->'entitlements') e;
  END IF;

  -- The changes and the balances they leave, in one statement (a second one cost every
  -- settlement its start-up, decision 0007).
  IF v_after->'balances' IS DISTINCT FROM v_before->'balances' THEN
    SELECT jsonb_object_agg(k, delta),
           jsonb_object_agg(k, after_value) FILTER (WHERE after_value IS NOT NULL)
    INTO changes, changed_balances
    FROM (SELECT k, coalesce((v_after->'balances'->>k)::bigint, 0)
                    - coalesce((v_before->'balances'->>k)::bigint, 0) AS delta,
                 v_after->'balances'->k AS after_value
          FROM (SELECT jsonb_object_keys(v_after->'balances')
                UNION SELECT jsonb_object_keys(v_before->'balances')) keys(k)) d
    WHERE delta <> 0;
  END IF;
  IF changes IS NOT NULL THEN
    derived := derived || jsonb_build_array(jsonb_build_object('id', gen_random_uuid(),
      'type', 'balance.changed',
      'data', jsonb_build_object('changes', changes, 'balances', changed_balances,
        'cause', cause)));
  END IF;

  IF v_after->'entitlements' IS DISTINCT FROM kept THEN
    SELECT derived || coalesce(jsonb_agg(jsonb_build_object('id', gen_random_uuid(), 'type', kind,
                                                            'data', data)
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
  END IF;

  all_events := expired || explicit || derived;

  written := jsonb_array_length(all_events);
  IF written = 0 AND v_after - 'user_id' = v_before - 'user_id' THEN
    RETURN 0;
  END IF;

  INSERT INTO events (id, type, user_id, sequence, data, user_state)
  SELECT (e->>'id')::uuid, e->>'type', p_user_id, last_sequence_ + n, e->'data', v_after
  FROM jsonb_array_elements(all_events) WITH ORDINALITY AS x(e, n);

  IF coalesce(jsonb_array_length(v_after->'entitlements'), 0) > 0 THEN
    SELECT min((e->>'expires_at')::timestamptz) INTO next_expiry_
    FROM jsonb_array_elements(v_after->'entitlements') e;
  END IF;
  UPDATE user_event_sequences
  SET last_sequence = last_sequence_ + written, last_state = v_after, next_expiry = next_expiry_,
      last_state_at = v_now
  WHERE user_id = p_user_id;
  RETURN written;
END
$$;
