-- An experiment's pauses (issue 27): while paused, the placement serves its own offering to
-- everyone, so an order paid then that names no offering was not made from a variant, and the
-- results leave it out of the attribution window as they do an order paid after the
-- conclusion. The experiments table held only the current status: each pause is a row.
SET LOCAL lock_timeout = '5s';

CREATE TABLE experiment_pauses (
  experiment_id text NOT NULL REFERENCES experiments (experiment_id),
  paused_at     timestamptz NOT NULL,
  -- NULL while it lasts (a conclusion ends the window anyway).
  resumed_at    timestamptz,
  PRIMARY KEY (experiment_id, paused_at),
  CHECK (resumed_at IS NULL OR resumed_at >= paused_at)
);

-- An experiment paused now was paused at its last update at the latest.
INSERT INTO experiment_pauses (experiment_id, paused_at)
SELECT experiment_id, updated_at FROM experiments WHERE status = 'paused';
