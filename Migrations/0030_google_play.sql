-- Google Play as a second store (issue 25) on the same catalog, orders, ledger and events.

-- A product names its Google Play product id (a subscription's id for a subscription) and, for
-- a subscription, the base plan it sells; NULL means the same id as the App Store's and any
-- base plan. Each Google id names one product, so a purchase read back from Google maps to
-- exactly one entry of the catalog.
ALTER TABLE products ADD COLUMN google_product_id text
  CHECK (google_product_id ~ '^[A-Za-z0-9._-]{1,100}$');
ALTER TABLE products ADD COLUMN google_base_plan_id text
  CHECK (google_base_plan_id ~ '^[a-z0-9][a-z0-9-]{0,62}$');
CREATE UNIQUE INDEX products_google_id ON products ((coalesce(google_product_id, product_id)));

-- Which store an order is paid in. A Google Play order's app_account_token is also the
-- obfuscatedAccountId the app passes to BillingFlowParams: 122 random bits, unique per order.
ALTER TABLE orders ADD COLUMN store text NOT NULL DEFAULT 'app_store'
  CHECK (store IN ('app_store', 'google_play'));

-- A Google purchase token is a report's proof, stored like the others.
ALTER TABLE trade_reports DROP CONSTRAINT trade_reports_proof_kind_check;
ALTER TABLE trade_reports ADD CONSTRAINT trade_reports_proof_kind_check
  CHECK (proof_kind IN ('receipt', 'signed_transaction', 'google_purchase'));
ALTER TABLE proofs DROP CONSTRAINT proofs_kind_check;
ALTER TABLE proofs ADD CONSTRAINT proofs_kind_check
  CHECK (kind IN ('receipt', 'signed_transaction', 'google_purchase'));

-- Every Google Play purchase Storekeeper has verified, once: the primary key on the purchase
-- token is the exactly-once guarantee across all users, as apple_transactions' is for Apple.
CREATE TABLE google_purchases (
  purchase_token        text PRIMARY KEY,
  package_name          text NOT NULL,
  kind                  text NOT NULL CHECK (kind IN ('product', 'subscription')),
  -- The catalog's product, and the id Google knows it by.
  product_id            text NOT NULL,
  google_product_id     text NOT NULL,
  -- Google's orderId (GPA.…): what the order's transaction_id holds.
  order_id              text NOT NULL,
  quantity              integer NOT NULL,
  obfuscated_account_id text,
  environment           text NOT NULL CHECK (environment IN ('Production', 'Sandbox')),
  purchase_time         timestamptz NOT NULL,
  -- Subscriptions: when access ends unless renewed.
  expiry_time           timestamptz,
  linked_purchase_token text,
  state                 text,
  revoked_at            timestamptz,
  -- The order it paid and its user.
  trade_no              text UNIQUE REFERENCES orders (trade_no),
  user_id               text,
  created_at            timestamptz NOT NULL DEFAULT now(),
  updated_at            timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX google_purchases_user_product ON google_purchases (user_id, product_id)
  WHERE user_id IS NOT NULL;

-- Google refunds and revokes a purchase not acknowledged (or consumed) within three days. Each
-- credited purchase gets a row here in the transaction that credits it; a worker (shared by
-- FOR UPDATE SKIP LOCKED) acknowledges it, retrying with backoff, and stamps done_at.
CREATE TABLE google_acknowledgements (
  purchase_token    text PRIMARY KEY REFERENCES google_purchases (purchase_token),
  action            text NOT NULL CHECK (action IN ('acknowledge', 'consume', 'acknowledge_subscription')),
  package_name      text NOT NULL,
  google_product_id text NOT NULL,
  -- The three days count from the purchase.
  purchase_time     timestamptz NOT NULL,
  attempts          integer NOT NULL DEFAULT 0,
  next_attempt_at   timestamptz NOT NULL DEFAULT now(),
  last_error        text,
  done_at           timestamptz,
  created_at        timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX google_acknowledgements_due ON google_acknowledgements (next_attempt_at)
  WHERE done_at IS NULL;
