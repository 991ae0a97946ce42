-- Webhooks (issue 12): endpoints an app's backend registers, one delivery per event and
-- matching endpoint, and every attempt made to deliver it.
CREATE TABLE webhook_endpoints (
  id                          uuid PRIMARY KEY,
  url                         text NOT NULL CHECK (length(url) BETWEEN 1 AND 2048),
  -- NULL: every event type.
  event_types                 text[] CHECK (cardinality(event_types) BETWEEN 1 AND 50),
  enabled                     boolean NOT NULL DEFAULT true,
  -- Signing secrets are kept in clear: they must be read back to sign (see docs/SECURITY.md).
  secret                      text NOT NULL,
  -- The secret before the last rotation, still signing until its deadline.
  previous_secret             text,
  previous_secret_expires_at  timestamptz,
  -- Why the endpoint was disabled automatically (NULL when enabled, or disabled by an admin).
  disabled_reason             text,
  -- Since when every attempt to this endpoint has failed (NULL after a success).
  failing_since               timestamptz,
  last_success_at             timestamptz,
  created_at                  timestamptz NOT NULL DEFAULT now(),
  updated_at                  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE webhook_deliveries (
  id               bigserial PRIMARY KEY,
  endpoint_id      uuid NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
  event_position   bigint NOT NULL REFERENCES events (position),
  -- Copied from the event: the order rule (per user and endpoint, by sequence) reads them here.
  user_id          text NOT NULL,
  sequence         bigint NOT NULL,
  kind             text NOT NULL DEFAULT 'event' CHECK (kind IN ('event', 'replay', 'test')),
  -- pending: to be sent (or being sent: then next_attempt_at is the sender's lease);
  -- delivered: a 2xx came back; failed: given up after the retry window.
  state            text NOT NULL DEFAULT 'pending'
                   CHECK (state IN ('pending', 'delivered', 'failed')),
  attempts         integer NOT NULL DEFAULT 0,
  next_attempt_at  timestamptz NOT NULL DEFAULT now(),
  first_attempt_at timestamptz,
  delivered_at     timestamptz,
  last_error       text,
  created_at       timestamptz NOT NULL DEFAULT now()
);
-- What the senders look for: due work per endpoint, and earlier undelivered events of a user.
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (endpoint_id, next_attempt_at, id)
  WHERE state = 'pending';
CREATE INDEX webhook_deliveries_user ON webhook_deliveries (endpoint_id, user_id, sequence, id)
  WHERE state = 'pending';
CREATE INDEX webhook_deliveries_event ON webhook_deliveries (event_position);
CREATE INDEX webhook_deliveries_listing ON webhook_deliveries (endpoint_id, id);
-- Finished deliveries are purged after WEBHOOK_RETENTION, oldest first.
CREATE INDEX webhook_deliveries_finished ON webhook_deliveries (created_at)
  WHERE state <> 'pending';

CREATE TABLE webhook_attempts (
  id            bigserial PRIMARY KEY,
  delivery_id   bigint NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
  attempted_at  timestamptz NOT NULL DEFAULT now(),
  duration_ms   integer NOT NULL,
  outcome       text NOT NULL
                CHECK (outcome IN ('delivered', 'http_error', 'timeout', 'connection_failed')),
  status_code   integer,
  -- The start of the receiver's answer, bounded, for admins reading why it failed.
  response_excerpt text CHECK (length(response_excerpt) <= 1024),
  error         text CHECK (length(error) <= 500)
);
CREATE INDEX webhook_attempts_delivery ON webhook_attempts (delivery_id, id);

-- The fan-out: every event inserted gets a delivery per enabled endpoint whose filter takes
-- it, in the inserting transaction, so an event committed is an event queued. An endpoint
-- gets the events inserted after it was created (or re-enabled); earlier ones are replayed
-- on request. Test events are queued by the action that makes them, for one endpoint only.
CREATE FUNCTION webhook_fan_out() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO webhook_deliveries (endpoint_id, event_position, user_id, sequence)
  SELECT w.id, e.position, e.user_id, e.sequence
  FROM inserted_events e
  JOIN webhook_endpoints w
    ON w.enabled AND (w.event_types IS NULL OR e.type = ANY (w.event_types))
  WHERE e.type <> 'webhook.test'
  ORDER BY e.position, w.id;
  RETURN NULL;
END;
$$;
CREATE TRIGGER events_webhook_fan_out AFTER INSERT ON events
  REFERENCING NEW TABLE AS inserted_events
  FOR EACH STATEMENT EXECUTE FUNCTION webhook_fan_out();

-- Admin changes to endpoints are audited like every other admin write.
ALTER TABLE admin_audit DROP CONSTRAINT admin_audit_action_check;
ALTER TABLE admin_audit ADD CONSTRAINT admin_audit_action_check CHECK (action IN (
  'product_created', 'product_updated', 'product_deleted', 'purchase_transferred',
  'webhook_endpoint_created', 'webhook_endpoint_updated', 'webhook_endpoint_deleted',
  'webhook_secret_rotated', 'webhook_events_replayed', 'webhook_test_sent'));
ALTER TABLE admin_audit DROP CONSTRAINT admin_audit_target_type_check;
ALTER TABLE admin_audit ADD CONSTRAINT admin_audit_target_type_check CHECK (target_type IN (
  'product', 'transaction', 'webhook_endpoint'));
