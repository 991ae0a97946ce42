-- The fan-out: every event inserted gets a delivery per enabled endpoint whose filter takes
-- it, in the inserting transaction, so an event committed is an event queued. An endpoint
-- gets the events inserted after it was created (or re-enabled); earlier ones are replayed
-- on request. Test events are queued by the action that makes them, for one endpoint only;
-- experiment.exposed is for the event feed only (one per user and experiment).
CREATE OR REPLACE FUNCTION webhook_fan_out() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO webhook_deliveries (endpoint_id, event_position, user_id, sequence)
  SELECT w.id, e.position, e.user_id, e.sequence
  FROM inserted_events e
  JOIN webhook_endpoints w
    ON w.enabled AND (w.event_types IS NULL OR e.type = ANY (w.event_types))
  WHERE e.type NOT IN ('webhook.test', 'experiment.exposed')
  ORDER BY e.position, w.id;
  RETURN NULL;
END;
$$;
CREATE OR REPLACE TRIGGER events_webhook_fan_out AFTER INSERT ON events
  REFERENCING NEW TABLE AS inserted_events
  FOR EACH STATEMENT EXECUTE FUNCTION webhook_fan_out();
