-- Experiments (issue 27): one placement's audience split between 2-4 offerings by weight.
-- Assignment is a hash of the experiment id and the user id (the application's), so it needs
-- no row to be the same on every instance; a row here records a user's first exposure, and
-- paid orders of that user within attribution_hours after it count for the variant.
CREATE TABLE experiments (
  experiment_id     text PRIMARY KEY CHECK (experiment_id ~ '^[a-z0-9_-]{1,64}$'),
  placement_id      text NOT NULL REFERENCES placements (placement_id),
  status            text NOT NULL CHECK (status IN ('running', 'paused', 'concluded')),
  -- [{"variant": "a", "offering_id": "...", "weight": 50}, ...], 2 to 4 of them.
  variants          jsonb NOT NULL CHECK (jsonb_typeof(variants) = 'array'),
  attribution_hours integer NOT NULL CHECK (attribution_hours BETWEEN 1 AND 8760),
  winner            text,
  revision          bigint NOT NULL DEFAULT 1,
  created_at        timestamptz NOT NULL DEFAULT now(),
  updated_at        timestamptz NOT NULL DEFAULT now(),
  concluded_at      timestamptz,
  CHECK ((status = 'concluded') = (winner IS NOT NULL))
);
-- One experiment at a time decides a placement (running or paused: paused serves the
-- placement's own offering and keeps its place).
CREATE UNIQUE INDEX experiments_one_per_placement ON experiments (placement_id)
  WHERE status <> 'concluded';

CREATE TABLE experiment_exposures (
  experiment_id text NOT NULL REFERENCES experiments (experiment_id),
  user_id       text NOT NULL,
  variant       text NOT NULL,
  exposed_at    timestamptz NOT NULL,
  PRIMARY KEY (experiment_id, user_id)
);
CREATE INDEX experiment_exposures_variant ON experiment_exposures (experiment_id, variant);
