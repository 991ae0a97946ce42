-- The ledger's guards: its running balances (user_balances), its lots (ledger_lots: what is
-- left of each credit, 0035) and its append-only rule.

-- Takes up to p_wanted from lot p_lot for debit row p_ledger_id, recording the use; returns what
-- it took. Each FOR loop of the trigger reads its rows as they were when it began, so the lot's
-- remainder is read again here.
CREATE OR REPLACE FUNCTION storekeeper_ledger_take(p_ledger_id bigint, p_lot bigint, p_wanted bigint)
RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
  v_take bigint;
BEGIN
  SELECT least(l.remaining, p_wanted) INTO v_take FROM ledger_lots l WHERE l.id = p_lot FOR UPDATE;
  IF coalesce(v_take, 0) <= 0 THEN
    RETURN 0;
  END IF;
  UPDATE ledger_lots SET remaining = remaining - v_take WHERE id = p_lot;
  INSERT INTO ledger_lot_uses AS u (ledger_id, lot_id, amount) VALUES (p_ledger_id, p_lot, v_take)
  ON CONFLICT (ledger_id, lot_id) DO UPDATE SET amount = u.amount + EXCLUDED.amount;
  RETURN v_take;
END
$$;

-- Each row adds itself as it is inserted: a BEFORE trigger, because a settlement writes its
-- ledger rows and appends its events in one statement, and AFTER triggers would run only once
-- that statement (and its storekeeper_user_state) is done. The user's event-sequence row is
-- locked first: every change of a user takes that lock anyway (storekeeper_append_events, and
-- EventOutbox.lock in user order for changes of several users) before it commits, so it adds
-- no wait, and two transactions adding to one user's assets in different orders cannot
-- deadlock on the balance rows.
CREATE OR REPLACE FUNCTION storekeeper_ledger_balance() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  v_total bigint;
  v_left bigint;
  v_take bigint;
  v_lot bigint;
  v_repaid_id bigint;
  v_repay bigint;
  -- How much the user's sandbox lots gained or lost: `user_balances.sandbox` is what they hold.
  v_sandbox bigint := 0;
  r record;
  d record;
  repayments jsonb := '[]';
BEGIN
  INSERT INTO user_event_sequences AS s (user_id, last_sequence) VALUES (NEW.user_id, 0)
  ON CONFLICT (user_id) DO UPDATE SET last_sequence = s.last_sequence;
  -- The balance before this row is what the upsert returns less the row: one statement, where
  -- a read before the upsert was a second one on every ledger row (issue 23).
  INSERT INTO user_balances AS b (user_id, asset, total, sandbox)
  VALUES (NEW.user_id, NEW.asset, NEW.amount, 0)
  ON CONFLICT (user_id, asset) DO UPDATE SET total = b.total + EXCLUDED.total
  RETURNING b.total - NEW.amount INTO v_total;

  -- The lots (0035), under the same lock: what is left of each credit, first in first out.
  IF NEW.amount > 0 THEN
    v_left := NEW.amount;
    -- A reversed refund cancels what that refund still counted as debt.
    IF NEW.kind = 'refund_reversed' THEN
      UPDATE ledger_debts SET outstanding = 0, cancelled = true
      WHERE trade_no = NEW.trade_no AND asset = NEW.asset AND outstanding > 0;
    END IF;
    -- A negative balance is made good first: the lot holds only what is above zero.
    IF v_total < 0 THEN
      v_left := v_left - least(v_left, -v_total);
    END IF;
    -- A reversed refund puts back what that refund took, where it took it: the lots its own
    -- rows took from (this purchase's first, then others, under REFUND_POLICY=negative) and
    -- those later credits repaid its debt from (its debt_repaid rows), since its last
    -- reversal. That money is theirs, so their own refunds can take it back. A lot whose
    -- purchase was refunded meanwhile and still owes what it could not take back repays that
    -- debt from what it gets, as it would have had it held it. A reversal is a row per
    -- environment (Ledger.reverse), each giving back that environment's rows; the reversal's
    -- rows of one statement are not each other's "last reversal".
    IF NEW.kind = 'refund_reversed' AND v_left > 0 THEN
      FOR r IN
        SELECT u.lot_id, u.amount, lot.trade_no AS lot_trade_no, lot.environment AS lot_environment
        FROM ledger x JOIN ledger_lot_uses u ON u.ledger_id = x.id
        JOIN ledger_lots lot ON lot.id = u.lot_id
        WHERE x.trade_no = NEW.trade_no AND x.asset = NEW.asset
          AND x.kind IN ('refund', 'debt_repaid') AND x.environment = NEW.environment
          AND x.id > coalesce((SELECT max(y.id) FROM ledger y
                               WHERE y.trade_no = NEW.trade_no AND y.asset = NEW.asset
                                 AND y.kind = 'refund_reversed'
                                 AND y.environment = NEW.environment), 0)
        ORDER BY x.id, u.lot_id
      LOOP
        EXIT WHEN v_left = 0;
        v_take := least(v_left, r.amount);
        v_left := v_left - v_take;
        FOR d IN
          SELECT o.id, o.outstanding FROM ledger_debts o
          WHERE o.user_id = NEW.user_id AND o.asset = NEW.asset AND o.trade_no = r.lot_trade_no
            AND o.outstanding > 0
          ORDER BY o.id FOR UPDATE
        LOOP
          EXIT WHEN v_take = 0;
          v_repay := least(v_take, d.outstanding);
          UPDATE ledger_debts SET outstanding = outstanding - v_repay WHERE id = d.id;
          repayments := repayments || jsonb_build_object(
            'trade_no', r.lot_trade_no, 'amount', v_repay, 'lot', r.lot_id,
            'environment', r.lot_environment);
          v_take := v_take - v_repay;
        END LOOP;
        UPDATE ledger_lots SET remaining = remaining + v_take WHERE id = r.lot_id;
        IF r.lot_environment = 'Sandbox' THEN
          v_sandbox := v_sandbox + v_take;
        END IF;
      END LOOP;
    END IF;
    -- Then what refunds could not take back, oldest debt first: this credit pays it before
    -- anything is spendable.
    FOR r IN
      SELECT o.id, o.trade_no, o.outstanding FROM ledger_debts o
      WHERE o.user_id = NEW.user_id AND o.asset = NEW.asset AND o.outstanding > 0
      ORDER BY o.id FOR UPDATE
    LOOP
      EXIT WHEN v_left = 0;
      v_take := least(v_left, r.outstanding);
      UPDATE ledger_debts SET outstanding = outstanding - v_take WHERE id = r.id;
      repayments := repayments || jsonb_build_object('trade_no', r.trade_no, 'amount', v_take);
      v_left := v_left - v_take;
    END LOOP;
    INSERT INTO ledger_lots AS l (user_id, asset, environment, trade_no, ledger_id, credited,
                                  remaining)
    VALUES (NEW.user_id, NEW.asset, NEW.environment, NEW.trade_no, NEW.id, NEW.amount, v_left)
    ON CONFLICT (trade_no, asset, environment) DO UPDATE
      SET credited = l.credited + EXCLUDED.credited, remaining = l.remaining + EXCLUDED.remaining
    RETURNING l.id INTO v_lot;
    IF NEW.environment = 'Sandbox' THEN
      v_sandbox := v_sandbox + v_left;
    END IF;
    -- Each repayment is a debit of its own, tied to the refunded purchase (so a reversal of
    -- that refund gives it back) and to the lot that paid it: this credit's, or the lot a
    -- reversal gave back to.
    -- (Skipped when there are none: even an empty loop is a statement for every credit.)
    IF repayments <> '[]' THEN
      FOR r IN SELECT e->>'trade_no' AS trade_no, (e->>'amount')::bigint AS amount,
                      coalesce((e->>'lot')::bigint, v_lot) AS lot,
                      coalesce(e->>'environment', NEW.environment) AS environment
               FROM jsonb_array_elements(repayments) e
      LOOP
        INSERT INTO ledger (user_id, asset, amount, kind, trade_no, environment)
        VALUES (NEW.user_id, NEW.asset, -r.amount, 'debt_repaid', r.trade_no, r.environment)
        RETURNING id INTO v_repaid_id;
        INSERT INTO ledger_lot_uses (ledger_id, lot_id, amount) VALUES (v_repaid_id, r.lot, r.amount);
      END LOOP;
    END IF;
  ELSIF NEW.amount < 0 AND NEW.kind <> 'debt_repaid' THEN
    v_left := -NEW.amount;
    -- A purchase taken back (refund, transfer) comes out of its own lot first; then, as every
    -- other debit, out of the oldest lots of its environment, then of any. What no lot holds
    -- takes the balance below zero.
    -- (One statement for the three: a lot met again finds itself empty.)
    FOR r IN SELECT u.id, u.environment FROM (
               SELECT 1 AS pass, l.id, l.environment FROM ledger_lots l
               WHERE NEW.kind IN ('refund', 'transferred') AND NEW.trade_no IS NOT NULL
                 AND l.trade_no = NEW.trade_no AND l.asset = NEW.asset AND l.remaining > 0
               UNION ALL
               SELECT 2, l.id, l.environment FROM ledger_lots l
               WHERE l.user_id = NEW.user_id AND l.asset = NEW.asset AND l.remaining > 0
                 AND l.environment = NEW.environment
               UNION ALL
               SELECT 3, l.id, l.environment FROM ledger_lots l
               WHERE l.user_id = NEW.user_id AND l.asset = NEW.asset AND l.remaining > 0) u
             ORDER BY u.pass, u.id
    LOOP
      EXIT WHEN v_left = 0;
      v_take := storekeeper_ledger_take(NEW.id, r.id, v_left);
      v_left := v_left - v_take;
      IF r.environment = 'Sandbox' THEN
        v_sandbox := v_sandbox - v_take;
      END IF;
    END LOOP;
  END IF;
  -- Only when a sandbox lot changed: a production purchase pays no second statement.
  IF v_sandbox <> 0 THEN
    UPDATE user_balances SET sandbox = sandbox + v_sandbox
    WHERE user_id = NEW.user_id AND asset = NEW.asset;
  END IF;
  IF NEW.debt > 0 THEN
    INSERT INTO ledger_debts (user_id, asset, trade_no, ledger_id, amount, outstanding)
    VALUES (NEW.user_id, NEW.asset, NEW.trade_no, NEW.id, NEW.debt, NEW.debt);
  END IF;
  RETURN NEW;
END
$$;

CREATE OR REPLACE TRIGGER ledger_balance BEFORE INSERT ON ledger
  FOR EACH ROW EXECUTE FUNCTION storekeeper_ledger_balance();

-- A refund is a new row, never an edit: a changed or deleted row would leave the sums wrong.
CREATE OR REPLACE FUNCTION storekeeper_ledger_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'the ledger is append-only: % is refused', TG_OP
    USING ERRCODE = 'restrict_violation';
END
$$;

CREATE OR REPLACE TRIGGER ledger_append_only BEFORE UPDATE OR DELETE OR TRUNCATE ON ledger
  FOR EACH STATEMENT EXECUTE FUNCTION storekeeper_ledger_append_only();
