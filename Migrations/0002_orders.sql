-- Orders are created before the purchase. The unit price and currency are a snapshot: a later
-- price change never alters an order.
CREATE TABLE orders (
  trade_no          text PRIMARY KEY CHECK (trade_no ~ '^[A-Za-z0-9_]{1,64}$'),
  user_id           text NOT NULL,
  product_id        text NOT NULL REFERENCES products (product_id),
  quantity          integer NOT NULL CHECK (quantity BETWEEN 1 AND 10),
  unit_price        numeric NOT NULL,
  currency          char(3) NOT NULL,
  amount            numeric NOT NULL,
  app_account_token uuid NOT NULL UNIQUE,
  trade_status      text NOT NULL CHECK (trade_status IN ('WAIT_BUYER_PAY', 'TRADE_SUCCESS', 'TRADE_CLOSED')),
  close_reason      text CHECK (close_reason IN ('cancelled', 'failed', 'expired', 'refunded', 'revoked')),
  -- 'order': created by POST /v1/orders; 'receipt': created for a purchase that had no order.
  origin            text NOT NULL DEFAULT 'order' CHECK (origin IN ('order', 'receipt', 'renewal')),
  transaction_id    text UNIQUE,
  environment       text,
  -- 'pending' while a report waits on Apple; 'failed' when the retries gave up.
  verification      text CHECK (verification IN ('pending', 'failed')),
  created_at        timestamptz NOT NULL DEFAULT now(),
  expires_at        timestamptz NOT NULL,
  paid_at           timestamptz,
  closed_at         timestamptz,
  updated_at        timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX orders_open_expiry ON orders (expires_at) WHERE trade_status = 'WAIT_BUYER_PAY';
CREATE INDEX orders_user ON orders (user_id, trade_no);
CREATE INDEX orders_product ON orders (product_id, trade_no);
CREATE INDEX orders_status ON orders (trade_status, trade_no);

-- Every state change of an order, with its cause.
CREATE TABLE order_events (
  id          bigserial PRIMARY KEY,
  trade_no    text NOT NULL REFERENCES orders (trade_no),
  from_status text,
  to_status   text NOT NULL,
  reason      text,
  cause       text NOT NULL,
  detail      jsonb NOT NULL DEFAULT '{}',
  created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX order_events_trade ON order_events (trade_no, id);
