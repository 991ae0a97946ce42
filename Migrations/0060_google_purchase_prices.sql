-- Charts (issue 28) count Google Play purchases too. A subscription's answer from Google
-- (subscriptionsv2) names the plan's recurring price; one-time products' (purchases.products)
-- name none, so their price stays NULL. Both or neither, as for Apple's transactions.
-- Unchecked beyond that: a purchase Google verified is recorded whatever it spells.
ALTER TABLE google_purchases ADD COLUMN price_micros bigint;
ALTER TABLE google_purchases ADD COLUMN currency text;
ALTER TABLE google_purchases ADD CONSTRAINT google_purchases_price_and_currency
  CHECK ((price_micros IS NULL) = (currency IS NULL));

-- A subscription's token lives across its renewals (expiry_time moves on), so the length of the
-- period it was first bought for, which MRR divides its price by, is kept from the first answer.
ALTER TABLE google_purchases ADD COLUMN first_expiry_time timestamptz;
UPDATE google_purchases SET first_expiry_time = expiry_time WHERE kind = 'subscription';
