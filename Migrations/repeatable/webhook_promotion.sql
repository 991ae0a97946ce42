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
SET LOCAL lock_timeout = '5s';

-- Before the trigger: the repair below updates rows, and a transaction that locked one FOR
-- UPDATE (which CREATE TRIGGER's lock lets through) and then writes the table would deadlock
-- with it. EXCLUSIVE waits for those, and keeps every writer out until this commits; reads
-- (the deliveries listing, the backlog gauges) go on. Writers queue behind it while it waits:
-- the timeout fails the run instead, and it can be repeated.
LOCK TABLE webhook_deliveries IN EXCLUSIVE MODE;

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

-- What was finished without the trigger, repaired in the transaction that creates it (its lock
-- keeps every writer out until this commits, so nothing falls between the two). Every versioned
-- migration runs before any definition: a head an instance of the release before 0141 finished
-- after 0141 parked the backlog, and before this file, left the delivery behind it parked with
-- nothing to wake it. Wakes every parked delivery that is the earliest pending one of its user
-- and endpoint, as WebhookQueue.wakeStranded does (one step per user and endpoint with pending
-- deliveries, through webhook_deliveries_user); applied again, it wakes only what is stranded
-- then, which is harmless: a claim parks again what still waits.
WITH RECURSIVE heads AS (
  (SELECT delivery.endpoint_id, delivery.user_id, delivery.id, delivery.next_attempt_at
   FROM webhook_deliveries delivery
   WHERE delivery.state = 'pending'
   ORDER BY delivery.endpoint_id, delivery.user_id, delivery.sequence, delivery.id LIMIT 1)
  UNION ALL
  SELECT n.endpoint_id, n.user_id, n.id, n.next_attempt_at FROM heads h CROSS JOIN LATERAL (
    SELECT delivery.endpoint_id, delivery.user_id, delivery.id, delivery.next_attempt_at
    FROM webhook_deliveries delivery
    WHERE delivery.state = 'pending'
      AND (delivery.endpoint_id, delivery.user_id) > (h.endpoint_id, h.user_id)
    ORDER BY delivery.endpoint_id, delivery.user_id, delivery.sequence, delivery.id LIMIT 1) n)
UPDATE webhook_deliveries delivery SET next_attempt_at = now()
FROM heads h
WHERE delivery.id = h.id AND h.next_attempt_at = 'infinity'
  AND delivery.state = 'pending' AND delivery.next_attempt_at = 'infinity';
