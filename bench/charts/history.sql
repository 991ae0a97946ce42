-- bench/charts: a synthetic two-year history of a large app, loaded with SQL alone (seeded, so
-- every run charts the same rows): :purchases consumable purchases (default 1,000,000) by
-- 200,000 players in three storefronts, 3% refunded and 5% in the sandbox, and :subscribers
-- subscribers (default 100,000), 40% starting with a week's free trial and renewing monthly for
-- up to two years; 1% of them upgrade to a yearly plan, 2% have a refunded renewal.
SELECT setseed(0.28);
INSERT INTO products (product_id, type, title, price, currency) VALUES
  ('coins', 'consumable', 'Coins', 0.99, 'USD'),
  ('gems', 'consumable', 'Gems', 4.99, 'USD'),
  ('pro_monthly', 'auto_renewable', 'Pro', 9.99, 'USD'),
  ('pro_yearly', 'auto_renewable', 'Pro yearly', 59.99, 'USD')
ON CONFLICT DO NOTHING;

CREATE TEMP TABLE sf (i int, storefront text, currency text, coin bigint, monthly bigint, yearly bigint);
INSERT INTO sf VALUES (0, 'USA', 'USD', 990, 9990, 59990), (1, 'DEU', 'EUR', 1090, 10990, 64990),
                      (2, 'JPN', 'JPY', 160000, 1500000, 9000000);

INSERT INTO apple_transactions (transaction_id, original_transaction_id, product_id, bundle_id,
  environment, quantity, type, purchase_date, revocation_date, revocation_reason, user_id, source,
  price_milliunits, currency, storefront)
SELECT 'c' || n, 'c' || n, CASE WHEN r1 < 0.7 THEN 'coins' ELSE 'gems' END, 'com.example.bench',
       CASE WHEN r2 < 0.05 THEN 'Sandbox' ELSE 'Production' END, 1, 'Consumable', t,
       CASE WHEN r2 > 0.97 THEN t + interval '3 days' END, CASE WHEN r2 > 0.97 THEN 1 END,
       'player-' || (n % 200000), 'signed_transaction',
       sf.coin * CASE WHEN r1 < 0.7 THEN 1 ELSE 5 END, sf.currency, sf.storefront
FROM (SELECT n, random() AS r1, random() AS r2,
             timestamptz '2024-12-01' + random() * interval '730 days' AS t
      FROM generate_series(1, :purchases) n) x
JOIN sf ON sf.i = x.n % 3;

CREATE TEMP TABLE subs AS
SELECT s, sf.storefront, sf.currency, sf.monthly, sf.yearly,
       timestamptz '2024-12-01' + random() * interval '700 days' AS start,
       random() < 0.4 AS trial, (random() * 24)::int AS renewals, random() AS fate
FROM generate_series(1, :subscribers) s JOIN sf ON sf.i = s % 3;

-- The trials.
INSERT INTO apple_transactions (transaction_id, original_transaction_id, product_id, bundle_id,
  environment, quantity, type, purchase_date, expires_date, user_id, source, price_milliunits,
  currency, storefront, offer_type, offer_discount_type)
SELECT 's' || s || '-t', 's' || s || '-t', 'pro_monthly', 'com.example.bench', 'Production', 1,
       'Auto-Renewable Subscription', start, start + interval '7 days', 'subscriber-' || s,
       'signed_transaction', 0, currency, storefront, 1, 'FREE_TRIAL'
FROM subs WHERE trial;

-- The paid months, until now.
INSERT INTO apple_transactions (transaction_id, original_transaction_id, product_id, bundle_id,
  environment, quantity, type, purchase_date, expires_date, revocation_date, revocation_reason,
  is_upgraded, user_id, source, price_milliunits, currency, storefront)
SELECT 's' || s || '-' || k, CASE WHEN trial THEN 's' || s || '-t' ELSE 's' || s || '-0' END,
       'pro_monthly', 'com.example.bench', 'Production', 1, 'Auto-Renewable Subscription',
       p, p + interval '1 month',
       CASE WHEN (fate < 0.02 AND k = renewals) OR (fate > 0.99 AND k = renewals)
            THEN p + interval '10 days' END,
       CASE WHEN fate < 0.02 AND k = renewals THEN 1 END,
       fate > 0.99 AND k = renewals, 'subscriber-' || s, 'signed_transaction', monthly, currency,
       storefront
FROM (SELECT subs.*, k, start + CASE WHEN trial THEN interval '7 days' ELSE interval '0' END
                         + k * interval '1 month' AS p
      FROM subs, generate_series(0, renewals) k) x
WHERE p < now();

-- The upgrades to yearly.
INSERT INTO apple_transactions (transaction_id, original_transaction_id, product_id, bundle_id,
  environment, quantity, type, purchase_date, expires_date, user_id, source, price_milliunits,
  currency, storefront)
SELECT 's' || s || '-y', original_transaction_id, 'pro_yearly', 'com.example.bench', 'Production',
       1, 'Auto-Renewable Subscription', revocation_date, revocation_date + interval '1 year',
       user_id, 'signed_transaction', yearly, subs.currency, subs.storefront
FROM apple_transactions t JOIN subs ON t.transaction_id = 's' || s || '-' || renewals
WHERE t.is_upgraded;
ANALYZE apple_transactions;
