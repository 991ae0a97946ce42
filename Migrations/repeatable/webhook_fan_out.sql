-- The fan-out: every event inserted gets a delivery per enabled endpoint whose filter takes
-- it, in the inserting transaction, so an event committed is an event queued. An endpoint
-- gets the events inserted after it was created (or re-enabled); earlier ones are replayed
-- on request. Test events are queued by the action that makes them, for one endpoint only;
-- experiment.exposed is for the event feed only (one per user and experiment).
-- A deleted endpoint (deleted_at, 0139) takes nothing more; the webhook loop removes its row
-- later. The endpoints are locked FOR KEY SHARE, the lock the deliveries' foreign key check
-- takes anyway: it passes the admin's marking (a non-key update), and against that removal it
-- decides under READ COMMITTED instead of failing. Read before the mark committed, an endpoint
-- is re-read at the lock and drops out; if the removal holds the row, the lock waits for that
-- short transaction and the deleted row drops out; held by this insert, the row is skipped by
-- the removal (SKIP LOCKED) until this transaction ends. Without the lock, a statement that
-- read the endpoint before its removal committed would fail the foreign key (23503).
CREATE OR REPLACE FUNCTION webhook_fan_out() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO webhook_deliveries (endpoint_id, event_position, user_id, sequence)
  SELECT w.id, e.position, e.user_id, e.sequence
  FROM inserted_events e
  JOIN webhook_endpoints w
    ON w.enabled AND w.deleted_at IS NULL
       AND (w.event_types IS NULL OR e.type = ANY (w.event_types))
  WHERE e.type NOT IN ('webhook.test', 'experiment.exposed')
  ORDER BY e.position, w.id
  FOR KEY SHARE OF w;
  RETURN NULL;
END;
$$;
CREATE OR REPLACE TRIGGER events_webhook_fan_out AFTER INSERT ON events
  REFERENCING NEW TABLE AS inserted_events
  FOR EACH STATEMENT EXECUTE FUNCTION webhook_fan_out();
