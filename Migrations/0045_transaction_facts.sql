-- Charts (issue 28) count money as the store reported what the user paid, not as the catalog
-- priced it: the signed transaction's price (milliunits of its currency), its storefront
-- (country), its offer (a free trial is an introductory offer with discount FREE_TRIAL) and
-- whether the customer upgraded from it. Receipts do not carry these: their rows stay NULL and
-- charts count them as unpriced.
ALTER TABLE apple_transactions
  ADD COLUMN price_milliunits bigint CHECK (price_milliunits >= 0),
  ADD COLUMN currency text CHECK (currency ~ '^[A-Z0-9]{3}$'),
  ADD COLUMN storefront text CHECK (storefront ~ '^[A-Z0-9]{3}$'),
  ADD COLUMN offer_type integer,
  ADD COLUMN offer_discount_type text,
  ADD COLUMN is_upgraded boolean NOT NULL DEFAULT false;

-- Charts read transactions by when they were bought and when they were refunded; exports page
-- through them by purchase.
CREATE INDEX apple_transactions_purchase_date ON apple_transactions (purchase_date, transaction_id);
CREATE INDEX apple_transactions_revocation_date ON apple_transactions (revocation_date)
  WHERE revocation_date IS NOT NULL;
