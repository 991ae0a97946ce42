-- Charts (issue 28, docs/CHARTS.md) read the stores' transactions through these views, so a
-- second store joins them with one more branch of chart_transactions and every chart gains it.

-- The subscription a Google Play purchase belongs to, as charts and exports name it: the
-- subscription of the purchase it replaced (an upgrade, downgrade or re-signup names that one,
-- linkedPurchaseToken; google_purchases.original_transaction_id, set when Storekeeper knew it),
-- else its own first order id, or, when Google named none, the token's digest (the token is a
-- credential and never leaves). Apple keeps one original_transaction_id across the same changes.
CREATE OR REPLACE FUNCTION storekeeper_google_subscription(p_order_id text, p_token text,
                                                           p_original text)
RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT coalesce(p_original, CASE WHEN p_order_id = p_token THEN 'token:' || left(md5(p_token), 16)
                                   ELSE p_order_id END)
$$;

-- Every store's transactions in one shape. Money is what the store signed as paid (its price
-- and currency, both or neither), never the catalog's. A revocation of a transaction the
-- customer upgraded from is the upgrade, not a refund. A free trial is an introductory offer
-- with discount FREE_TRIAL (or, in payloads older than offerDiscountType, an introductory offer
-- priced 0). `billed_period` is how long the subscription transaction's price paid for. A
-- Family Sharing copy (a family member's transaction of someone else's purchase) is left out.
--
-- Google Play: one row per order Google charged (google_orders): a one-time product's order, a
-- subscription's first order and each renewal's, all of one subscription (the purchase token)
-- under its first order id, or under the subscription it continues when it replaced a purchase
-- (storekeeper_google_subscription). Its price is what the Orders API said the buyer paid
-- (`total`), or, until it answers, the plan's recurring price subscriptionsv2 named; a one-time product is
-- unpriced until then. Each order bills the period it paid for (see billed_period). Google
-- reports no storefront in Apple's spelling (country 'unknown') and no trial Storekeeper reads.
-- The latest order of a purchase another replaced (upgrade, downgrade) is upgraded, and its
-- revocation is the replacement, not a refund; any other order voided or revoked is refunded. The purchase token never leaves: Google's order ids name the transactions.
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
       -- Introductory only: Apple signs FREE_TRIAL for free promotional, offer-code and
       -- win-back periods too (offerType 2-4), which continue a paid subscription.
       coalesce(t.offer_type = 1 AND (t.offer_discount_type = 'FREE_TRIAL'
                                      OR t.price_milliunits = 0), false) AS is_trial,
       coalesce((t.type = 'Auto-Renewable Subscription' OR p.type = 'auto_renewable')
                AND t.expires_date IS NOT NULL, false) AS is_subscription,
       t.trade_no,
       -- The expiry first recorded, not one a renewal-date extension moved (free time).
       coalesce(t.billed_expires_date, t.expires_date) - t.purchase_date AS billed_period,
       -- The row's key in its store's own table, which exports page on (Exporter); never
       -- shown (a Google order id falls back to the purchase token).
       t.transaction_id AS export_key,
       -- Apple's prorated refunds (Migrations/0128, 0146): the price times the cumulative share
       -- Apple refunded, exactly (milliunits times thousandths of a percent), at the latest
       -- one's instant. A later full refund refunds the rest (price - partly_refunded) at its
       -- own, as the ledger takes the rest then, so a period's refunds never move. A free
       -- purchase refunds nothing.
       CASE WHEN t.refunded_milliunits > 0 AND t.price_milliunits > 0
            THEN t.price_milliunits::numeric * t.refunded_milliunits * 0.00000001 END
         AS partly_refunded,
       CASE WHEN t.refunded_milliunits > 0 AND t.price_milliunits > 0
            -- Recorded by an instance of the release before 0146 during the upgrade: undated.
            THEN coalesce(t.prorated_refunded_at, t.purchase_date) END AS partly_refunded_at
FROM apple_transactions t
LEFT JOIN products p ON p.product_id = t.product_id
-- A family member's copy of a purchase is no one's payment (the purchase itself is counted).
WHERE NOT t.family_shared
UNION ALL
SELECT 'google_play'::text,
       g.transaction_id,
       g.original_transaction_id,
       g.user_id,
       g.product_id,
       g.environment,
       'unknown',
       g.currency,
       round(g.price_micros::numeric / 1000000, 6),
       g.purchased_at,
       g.expires_date,
       -- Only a void or a revocation refunds a Google order: a replacement (upgrade,
       -- downgrade) never does, as Apple's revokes the transaction it replaces.
       g.refunded_at,
       g.replaced_by IS NOT NULL AND g.latest,
       false,
       g.expires_date IS NOT NULL,
       g.trade_no,
       -- The period this order paid for (charged at, to the expiry it paid up to when first
       -- seen): a trial's first order, or a token first seen late, must not set every other
       -- order's. Not known (a renewal whose push was lost): until the next order of the token
       -- began, if that is a day or more (a lost renewal's placeholder time is a millisecond
       -- before the next until the Orders API dates it); else the token's first period.
       CASE WHEN g.order_expiry > g.purchased_at THEN g.order_expiry - g.purchased_at
            WHEN g.next_start >= g.purchased_at + interval '1 day' THEN g.next_start - g.purchased_at
            ELSE coalesce(g.first_expiry_time, g.token_expiry) - g.purchase_time END,
       g.order_id,
       -- Google's quantity-based partial refunds are not charted yet (docs/CHARTS.md).
       NULL::numeric,
       NULL::timestamptz
FROM (SELECT o.order_id, o.purchased_at, o.price_micros, o.currency, o.refunded_at, o.trade_no,
             o.expiry_time AS order_expiry,
             coalesce(ord.user_id, gp.user_id) AS user_id, gp.product_id, gp.environment,
             gp.replaced_by, gp.first_expiry_time, gp.expiry_time AS token_expiry,
             gp.purchase_time,
             -- A Google order id falls back to the token when Google named none: never shown.
             CASE WHEN o.order_id = gp.purchase_token THEN 'token:' || left(md5(gp.purchase_token), 16)
                  ELSE o.order_id END AS transaction_id,
             storekeeper_google_subscription(gp.order_id, gp.purchase_token,
                                             gp.original_transaction_id) AS original_transaction_id,
             -- The latest order ends where the token's access ends; an earlier one where it
             -- paid up to (the next order takes over from its start anyway).
             CASE WHEN gp.kind <> 'subscription' THEN NULL
                  WHEN n.next_start IS NULL THEN gp.expiry_time
                  ELSE coalesce(o.expiry_time, gp.expiry_time) END AS expires_date,
             n.next_start IS NULL AS latest, n.next_start
      FROM google_orders o
      JOIN google_purchases gp ON gp.purchase_token = o.purchase_token
      LEFT JOIN orders ord ON ord.trade_no = o.trade_no
      -- The purchase's latest order: the one a replacement (upgrade, downgrade) takes over
      -- from (its earlier orders' refunds stay refunds), and the one whose access ends with the
      -- token's. An index probe per order (0120), not a window over every order of the table:
      -- a window kept a range's filter out of the scan, so each page of an export read them all.
      CROSS JOIN LATERAL (
        SELECT min(later.purchased_at) AS next_start FROM google_orders later
        WHERE later.purchase_token = o.purchase_token
          AND (later.purchased_at, later.order_id) > (o.purchased_at, o.order_id)) n) g;

-- The end of the billing grace period Apple began for an App Store subscription (DID_FAIL_TO_RENEW
-- with subtype GRACE_PERIOD) while `p_from` to `p_until` was its latest period: Apple's
-- gracePeriodExpiresDate, or sooner the next notification that took the subscription out of
-- grace without a payment (GRACE_PERIOD_EXPIRED, EXPIRED, billing retry), by Apple's signing,
-- as chart_billing_spells orders them. NULL when no grace period began then. Read for a period
-- a later one followed: subscription_states keeps only the subscription's current grace, and a
-- renewal clears it, but a grace that ended in a recovery was days of access all the same.
CREATE OR REPLACE FUNCTION chart_apple_grace_end(p_original text, p_from timestamptz,
                                                 p_until timestamptz)
RETURNS timestamptz LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT max(least(coalesce(to_timestamp((g.payload->'renewal_info'->>'gracePeriodExpiresDate')::numeric
                                         / 1000), 'infinity'),
                   (SELECT coalesce(min(coalesce(e.signed_date, e.received_at)), 'infinity')
                    FROM apple_notifications e
                    WHERE e.original_transaction_id = g.original_transaction_id
                      AND (e.notification_type IN ('GRACE_PERIOD_EXPIRED', 'EXPIRED')
                           OR (e.notification_type = 'DID_FAIL_TO_RENEW'
                               AND e.subtype IS DISTINCT FROM 'GRACE_PERIOD'))
                      AND (coalesce(e.signed_date, e.received_at), e.notification_uuid)
                          > (coalesce(g.signed_date, g.received_at), g.notification_uuid))))
  FROM apple_notifications g
  WHERE g.original_transaction_id = p_original
    AND g.notification_type = 'DID_FAIL_TO_RENEW' AND g.subtype = 'GRACE_PERIOD'
    AND coalesce(g.signed_date, g.received_at) >= p_from
    AND coalesce(g.signed_date, g.received_at) < p_until
$$;

-- Each subscription transaction as the span of time it kept the subscription active:
-- from its purchase until the first of its expiry, the next transaction of the same
-- subscription (a renewal or an upgrade takes over), or its refund. An expiry is extended by a
-- billing grace period Apple reported, as Apple keeps access during one: the latest
-- transaction's by the subscription's state, an earlier App Store one's, when its successor
-- began after its expiry (a recovery, a resubscription), by the grace period Apple began
-- before that successor (chart_apple_grace_end), so that a grace recovered keeps its days
-- active rather than turn into churn and a reactivation. `monthly_price` normalises the period's price to a month (MRR), from the length of the
-- period the transaction paid for (`billed_period`): n months (rounded, 30.436875 days each) divide the price
-- by n; shorter periods are weeks, multiplied by 52/12 per week. Trials have none.
CREATE OR REPLACE VIEW chart_subscription_periods AS
SELECT x.store, x.transaction_id, x.original_transaction_id, x.user_id, x.product_id,
       x.environment, x.country, x.currency, x.price, x.is_trial,
       x.purchase_date AS starts_at,
       least(CASE WHEN x.next_start IS NULL AND s.grace_expires_at > x.expires_date
                  THEN s.grace_expires_at
                  -- Only where a gap is left to cover: one probe per lapse, not per period.
                  WHEN x.next_start > x.expires_date AND x.store = 'app_store'
                  THEN greatest(x.expires_date,
                                chart_apple_grace_end(x.original_transaction_id, x.purchase_date,
                                                      x.next_start))
                  ELSE x.expires_date END,
             coalesce(x.next_start, 'infinity'),
             coalesce(x.refunded_at, 'infinity')) AS ends_at,
       CASE WHEN x.is_trial OR x.price IS NULL THEN NULL
            WHEN x.billed_period >= interval '27 days'
              THEN x.price / greatest(1, round(extract(epoch FROM x.billed_period) / 2629746))
            ELSE x.price * 52 / 12 / greatest(1, round(extract(epoch FROM x.billed_period) / 604800))
       END AS monthly_price
FROM (SELECT c.*,
             lead(c.purchase_date) OVER (PARTITION BY c.store, c.original_transaction_id
                                         ORDER BY c.purchase_date, c.transaction_id) AS next_start
      FROM chart_transactions c
      WHERE c.is_subscription) x
LEFT JOIN subscription_states s
  ON x.store = 'app_store' AND s.original_transaction_id = x.original_transaction_id;
