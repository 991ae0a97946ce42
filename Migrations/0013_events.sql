-- Events (issue 12): a transactional outbox. Every change an app's backend cares about inserts
-- one row here in the same database transaction as the change, so there is no event without its
-- change and no change without its event. Webhook delivery (0014) and the admin feed read it.
CREATE TABLE events (
  -- Insertion order across all users. Not commit order, so a feed cursor is not a position
  -- alone (see `xid`).
  position    bigserial PRIMARY KEY,
  id          uuid NOT NULL UNIQUE,
  type        text NOT NULL,
  user_id     text NOT NULL,
  -- Gap-free per user: taken from user_event_sequences under that row's lock.
  sequence    bigint NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  data        jsonb NOT NULL,
  -- The user's whole state after the change, in the shape of GET /v1/users/{id}/entitlements.
  user_state  jsonb NOT NULL,
  -- The inserting transaction. A feed reads in (xid, position) order and only rows with
  -- xid < pg_snapshot_xmin(pg_current_snapshot()): every such transaction has ended, and any
  -- transaction still to commit has a larger xid, so a cursor (xid, position) never skips a row
  -- that commits late.
  xid         xid8 NOT NULL DEFAULT pg_current_xact_id(),
  UNIQUE (user_id, sequence)
);
CREATE INDEX events_feed ON events (xid, position);
CREATE INDEX events_type ON events (type, position);

CREATE TABLE user_event_sequences (
  user_id       text PRIMARY KEY,
  last_sequence bigint NOT NULL
);
