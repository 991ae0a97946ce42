-- Promotion (0142): a delivery leaving pending (delivered, or failed when given up) wakes the
-- earliest delivery still pending for its user and endpoint if a claim parked it
-- (next_attempt_at = 'infinity', WebhookQueue+Claim.swift); the ones after it wait for that
-- one in turn. A trigger, so that every release's finishing UPDATE promotes, in its own
-- transaction: the release before parking (0137) knows nothing of parked rows, and its
-- instances run during a roll, after a migrate job until the first new instance starts, and
-- after a rollback.
-- Why no parked row is missed: a claim parks a delivery only while it holds the one that
-- delivery waits for (FOR SHARE, SKIP LOCKED). So the UPDATE firing this trigger either waited
-- for that claim to commit, or the claim found the row locked or finished and parked nothing.
-- Each statement below takes its own snapshot (a volatile function under READ COMMITTED, as
-- every transaction finishing a delivery is), after that wait, and sees the parked row.
-- (WebhookQueue.record's promotion before 0142 was one statement with one snapshot, so it had
-- to update the next row even when not parked in order to re-read it.) A row locked by a claim
-- that parked nothing reads as not parked and is not waited for.
-- Two deliveries of one user finishing at once (a sender back after its lease ran out, beside
-- the replayed event that went out meanwhile) may each find the other still pending and
-- promote nothing: WebhookQueue.wakeStranded wakes what waits behind both within a minute.
-- Creating the trigger takes SHARE ROW EXCLUSIVE on webhook_deliveries, so writes queue behind
-- it while it waits for the lock: the timeout fails the run instead, and it can be repeated.
SET LOCAL lock_timeout = '5s';
CREATE OR REPLACE FUNCTION webhook_promote_next() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  next_id bigint;
  next_at timestamptz;
BEGIN
  SELECT delivery.id, delivery.next_attempt_at INTO next_id, next_at
  FROM webhook_deliveries delivery
  WHERE delivery.endpoint_id = NEW.endpoint_id AND delivery.user_id = NEW.user_id
    AND delivery.state = 'pending'
  ORDER BY delivery.sequence, delivery.id
  LIMIT 1;
  IF next_at = 'infinity' THEN
    UPDATE webhook_deliveries delivery SET next_attempt_at = now()
    WHERE delivery.id = next_id AND delivery.state = 'pending'
      AND delivery.next_attempt_at = 'infinity';
  END IF;
  RETURN NULL;
END;
$$;
CREATE OR REPLACE TRIGGER webhook_deliveries_promote_next AFTER UPDATE OF state ON webhook_deliveries
  FOR EACH ROW WHEN (OLD.state = 'pending' AND NEW.state <> 'pending')
  EXECUTE FUNCTION webhook_promote_next();
