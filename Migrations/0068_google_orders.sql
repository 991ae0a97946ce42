-- Every order Google charged for a purchase (issue 25): a one-time product's one order, a
-- subscription's first order and each renewal's (`GPA.…..0`, `..1`, …). Google refunds per
-- order and prices per order (the Orders API), so the charts read one row per order, and a
-- refund or revocation closes the order it names, not the purchase's first.
CREATE TABLE google_orders (
  order_id        text PRIMARY KEY,
  purchase_token  text NOT NULL REFERENCES google_purchases (purchase_token),
  -- The Storekeeper order it paid (the purchase's own, or the renewal's).
  trade_no        text UNIQUE REFERENCES orders (trade_no),
  renewal         boolean NOT NULL DEFAULT false,
  purchased_at    timestamptz NOT NULL,
  -- A subscription order: the expiry it paid up to when it was first seen.
  expiry_time     timestamptz,
  -- What the buyer paid (orders.get `total`), or until Google answers a subscription plan's
  -- recurring price; both or neither.
  price_micros    bigint,
  currency        text,
  price_source    text CHECK (price_source IN ('plan', 'order')),
  CHECK ((price_micros IS NULL) = (currency IS NULL)),
  CHECK ((price_source IS NULL) = (price_micros IS NULL)),
  -- orders.get is due at price_due_at; NULL once Google answered (or there is nothing to ask).
  price_due_at    timestamptz,
  price_attempts  integer NOT NULL DEFAULT 0,
  price_error     text,
  -- Refunded in full (a void or revocation of this order).
  refunded_at     timestamptz,
  created_at      timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX google_orders_token ON google_orders (purchase_token);
CREATE INDEX google_orders_price_due ON google_orders (price_due_at)
  WHERE price_due_at IS NOT NULL;

-- Quantity-based partial refunds of a multi-quantity purchase taken back so far.
ALTER TABLE google_purchases ADD COLUMN refunded_quantity integer NOT NULL DEFAULT 0
  CHECK (refunded_quantity >= 0);

-- Each entry of voidedpurchases.list applied once, whether a push or the sweep brought it: an
-- order may be refunded in parts (quantity) and then in full, each its own entry.
CREATE TABLE google_voids (
  order_id          text NOT NULL,
  voided_time_ms    bigint NOT NULL,
  purchase_token    text NOT NULL,
  voided_quantity   integer,
  result            text NOT NULL,
  applied_at        timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (order_id, voided_time_ms)
);

-- The orders known before this migration: each purchase's first order (priced by its plan for
-- a subscription, to be asked of the Orders API for a one-time product) and the renewal orders,
-- whose Google order id extends the first's.
INSERT INTO google_orders (order_id, purchase_token, trade_no, purchased_at, expiry_time,
                           price_micros, currency, price_source, price_due_at, refunded_at)
SELECT gp.order_id, gp.purchase_token, gp.trade_no, gp.purchase_time, gp.first_expiry_time,
       gp.price_micros, gp.currency, CASE WHEN gp.price_micros IS NOT NULL THEN 'plan' END,
       CASE WHEN gp.order_id <> gp.purchase_token THEN now() END,
       CASE WHEN gp.replaced_by IS NULL THEN gp.revoked_at END
FROM google_purchases gp
ON CONFLICT (order_id) DO NOTHING;

INSERT INTO google_orders (order_id, purchase_token, trade_no, renewal, purchased_at,
                           price_micros, currency, price_source, price_due_at)
SELECT o.transaction_id, gp.purchase_token, o.trade_no, true, coalesce(o.paid_at, o.created_at),
       gp.price_micros, gp.currency, CASE WHEN gp.price_micros IS NOT NULL THEN 'plan' END, now()
FROM orders o
JOIN google_purchases gp
  ON gp.kind = 'subscription' AND o.transaction_id LIKE gp.order_id || '..%'
WHERE o.store = 'google_play' AND o.origin = 'renewal'
ON CONFLICT (order_id) DO NOTHING;
