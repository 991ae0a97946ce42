-- Offerings and placements (issue 27). An offering is a named, ordered list of products with
-- what a paywall shows beside them; a placement (a place in the app: main_shop, onboarding)
-- names the offering its callers get, and its targeting rules (an ordered JSON array the
-- application validates) may choose another one from what the request says and what is known
-- of the user. The offering id `default` that no row defines is the whole active catalog, and
-- the placement `default` that no row defines serves it: clients that read /v1/products today
-- read the same list through /v1/offerings/default.
CREATE TABLE offerings (
  offering_id text PRIMARY KEY CHECK (offering_id ~ '^[a-z0-9_-]{1,64}$'),
  title       text NOT NULL DEFAULT '',
  badge       text NOT NULL DEFAULT '',
  metadata    jsonb NOT NULL DEFAULT '{}',
  revision    bigint NOT NULL DEFAULT 1,
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now()
);

-- The products of an offering, in order. A product removed from the catalog leaves the
-- offerings that listed it; an archived one (active = false) is kept here and not served.
CREATE TABLE offering_products (
  offering_id text NOT NULL REFERENCES offerings (offering_id) ON DELETE CASCADE,
  position    integer NOT NULL CHECK (position >= 0),
  product_id  text NOT NULL REFERENCES products (product_id) ON DELETE CASCADE,
  badge       text NOT NULL DEFAULT '',
  PRIMARY KEY (offering_id, position),
  UNIQUE (offering_id, product_id)
);
CREATE INDEX offering_products_product ON offering_products (product_id);

CREATE TABLE placements (
  placement_id text PRIMARY KEY CHECK (placement_id ~ '^[a-z0-9_-]{1,64}$'),
  -- 'default' needs no row in offerings (the whole catalog); any other must exist.
  offering_id  text NOT NULL,
  rules        jsonb NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(rules) = 'array'),
  revision     bigint NOT NULL DEFAULT 1,
  created_at   timestamptz NOT NULL DEFAULT now(),
  updated_at   timestamptz NOT NULL DEFAULT now()
);

ALTER TABLE admin_audit DROP CONSTRAINT admin_audit_action_check;
ALTER TABLE admin_audit ADD CONSTRAINT admin_audit_action_check
  CHECK (action IN ('product_created', 'product_updated', 'product_deleted',
                    'purchase_transferred', 'webhook_endpoint_created',
                    'webhook_endpoint_updated', 'webhook_endpoint_deleted',
                    'webhook_secret_rotated', 'webhook_events_replayed', 'webhook_test_sent',
                    'ledger_adjusted', 'offering_written', 'offering_deleted',
                    'placement_written', 'placement_deleted', 'experiment_created',
                    'experiment_updated', 'experiment_concluded'));
ALTER TABLE admin_audit DROP CONSTRAINT admin_audit_target_type_check;
ALTER TABLE admin_audit ADD CONSTRAINT admin_audit_target_type_check
  CHECK (target_type IN ('product', 'transaction', 'webhook_endpoint', 'user', 'offering',
                         'placement', 'experiment'));
