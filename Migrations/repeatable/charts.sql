-- Charts (issue 28, docs/CHARTS.md) read the stores' transactions through these views, so a
-- second store joins them with one more branch of chart_transactions and every chart gains it.

-- Every store's transactions in one shape. Money is what the store signed as paid (its price
-- and currency, both or neither), never the catalog's. A revocation of a transaction the
-- customer upgraded from is the upgrade, not a refund. A free trial is an introductory offer
-- with discount FREE_TRIAL (or, in payloads older than offerDiscountType, an introductory offer
-- priced 0).
CREATE OR REPLACE VIEW chart_transactions AS
SELECT 'app_store'::text AS store,
       t.transaction_id,
       t.original_transaction_id,
       t.user_id,
       t.product_id,
       t.environment,
       coalesce(t.storefront, 'unknown') AS country,
       CASE WHEN t.price_milliunits IS NOT NULL THEN t.currency END AS currency,
       round(t.price_milliunits::numeric / 1000, 3) AS price,
       t.purchase_date,
       t.expires_date,
       CASE WHEN NOT t.is_upgraded THEN t.revocation_date END AS refunded_at,
       t.is_upgraded,
       coalesce(t.offer_discount_type = 'FREE_TRIAL'
                OR (t.offer_type = 1 AND t.price_milliunits = 0), false) AS is_trial,
       coalesce((t.type = 'Auto-Renewable Subscription' OR p.type = 'auto_renewable')
                AND t.expires_date IS NOT NULL, false) AS is_subscription,
       t.trade_no
FROM apple_transactions t
LEFT JOIN products p ON p.product_id = t.product_id;

-- Each subscription transaction as the span of time it kept the subscription active:
-- from its purchase until the first of its expiry, the next transaction of the same
-- subscription (a renewal or an upgrade takes over), or its refund. The latest transaction's
-- expiry is extended by a billing grace period Apple reported, as Apple keeps access during
-- one. `monthly_price` normalises the period's price to a month (MRR), from the length of the
-- period the transaction paid for: n months (rounded, 30.436875 days each) divide the price
-- by n; shorter periods are weeks, multiplied by 52/12 per week. Trials have none.
CREATE OR REPLACE VIEW chart_subscription_periods AS
SELECT x.store, x.transaction_id, x.original_transaction_id, x.user_id, x.product_id,
       x.environment, x.country, x.currency, x.price, x.is_trial,
       x.purchase_date AS starts_at,
       least(CASE WHEN x.next_start IS NULL AND s.grace_expires_at > x.expires_date
                  THEN s.grace_expires_at ELSE x.expires_date END,
             coalesce(x.next_start, 'infinity'),
             coalesce(x.refunded_at, 'infinity')) AS ends_at,
       CASE WHEN x.is_trial OR x.price IS NULL THEN NULL
            WHEN x.expires_date - x.purchase_date >= interval '27 days'
              THEN x.price / greatest(1, round(extract(epoch FROM x.expires_date - x.purchase_date) / 2629746))
            ELSE x.price * 52 / 12 / greatest(1, round(extract(epoch FROM x.expires_date - x.purchase_date) / 604800))
       END AS monthly_price
FROM (SELECT c.*,
             lead(c.purchase_date) OVER (PARTITION BY c.store, c.original_transaction_id
                                         ORDER BY c.purchase_date, c.transaction_id) AS next_start
      FROM chart_transactions c
      WHERE c.is_subscription) x
LEFT JOIN subscription_states s
  ON x.store = 'app_store' AND s.original_transaction_id = x.original_transaction_id;
