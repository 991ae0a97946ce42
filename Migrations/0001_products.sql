-- The catalog. Prices are exact decimals (never floating point), normalised to the currency's
-- minor-unit exponent by the application ("6.00" USD, "600" JPY).
CREATE TABLE products (
  product_id  text PRIMARY KEY CHECK (product_id ~ '^[A-Za-z0-9._-]{1,100}$'),
  type        text NOT NULL CHECK (type IN ('consumable', 'non_consumable', 'auto_renewable', 'non_renewing')),
  title       text NOT NULL,
  description text NOT NULL DEFAULT '',
  price       numeric NOT NULL CHECK (price >= 0),
  currency    char(3) NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
  sort_order  integer NOT NULL DEFAULT 0,
  active      boolean NOT NULL DEFAULT true,
  grants      jsonb NOT NULL DEFAULT '{}',
  content     jsonb NOT NULL DEFAULT '{}',
  -- Bumped on every change; the admin ETag is derived from it.
  revision    bigint NOT NULL DEFAULT 1,
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX products_active_order ON products (sort_order, product_id) WHERE active;

-- Every price or currency change, with the name of the admin token that made it.
CREATE TABLE product_price_history (
  id           bigserial PRIMARY KEY,
  product_id   text NOT NULL REFERENCES products (product_id),
  old_price    numeric,
  old_currency char(3),
  new_price    numeric NOT NULL,
  new_currency char(3) NOT NULL,
  changed_by   text NOT NULL,
  changed_at   timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX product_price_history_product ON product_price_history (product_id, id);
