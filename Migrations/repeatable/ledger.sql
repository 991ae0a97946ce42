-- The ledger's guards: its running balances (user_balances) and its append-only rule.

-- Each row adds itself as it is inserted: a BEFORE trigger, because a settlement writes its
-- ledger rows and appends its events in one statement, and AFTER triggers would run only once
-- that statement (and its storekeeper_user_state) is done. The user's event-sequence row is
-- locked first: every change of a user takes that lock anyway (storekeeper_append_events, and
-- EventOutbox.lock in user order for changes of several users) before it commits, so it adds
-- no wait, and two transactions adding to one user's assets in different orders cannot
-- deadlock on the balance rows.
CREATE OR REPLACE FUNCTION storekeeper_ledger_balance() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO user_event_sequences AS s (user_id, last_sequence) VALUES (NEW.user_id, 0)
  ON CONFLICT (user_id) DO UPDATE SET last_sequence = s.last_sequence;
  INSERT INTO user_balances AS b (user_id, asset, total, sandbox)
  VALUES (NEW.user_id, NEW.asset, NEW.amount,
          CASE WHEN NEW.environment = 'Sandbox' THEN NEW.amount ELSE 0 END)
  ON CONFLICT (user_id, asset) DO UPDATE
    SET total = b.total + EXCLUDED.total, sandbox = b.sandbox + EXCLUDED.sandbox;
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
