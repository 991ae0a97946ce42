-- Charts of billing trouble and consumption requests (issue 28, docs/CHARTS.md), over the facts
-- the stores pushed: they are kept apart from charts.sql so that each view says what it reads.

-- A subscription's billing state as the stores' notifications moved it, one row per spell in
-- billing retry (renewal failed, the store still retrying, no access) or in a billing grace
-- period (renewal failed, retrying, access kept), from the notification that began the spell
-- until the next one that changed the state (infinity while none has).
--
-- App Store, from the notifications that move Storekeeper's subscription state
-- (NotificationEffects.subscriptionStateTypes, and an upgrade): DID_FAIL_TO_RENEW with subtype
-- GRACE_PERIOD begins a grace period, without a subtype billing retry; GRACE_PERIOD_EXPIRED
-- turns a grace period into billing retry; DID_RENEW (BILLING_RECOVERY), OFFER_REDEEMED and
-- DID_CHANGE_RENEWAL_PREF with subtype UPGRADE (the subscriber paid again), EXPIRED
-- (BILLING_RETRY) and SUBSCRIBED end it. So do a REFUND or REVOKE of the period the trouble
-- followed (the subscription's latest transaction bought before it was signed): of an earlier
-- period it ends nothing, as Apple goes on retrying the payment.
-- Google Play: IN_GRACE_PERIOD (6) begins a grace period, ON_HOLD (5) account hold, which is
-- billing retry; RECOVERED (1), RENEWED (2), PURCHASED (4), RESTARTED (7), REVOKED (12) and
-- EXPIRED (13) end it. `recovered`: the spell ended with a renewal (the payment went through).
-- A spell is charted with the subscription's latest transaction bought before it began (its
-- product, storefront, environment, user); one of a subscription Storekeeper never saw bought
-- is left out, as nothing could segment or filter it.
CREATE OR REPLACE VIEW chart_billing_spells AS
WITH ev AS (
  SELECT 'app_store'::text AS store, n.original_transaction_id AS subscription,
         coalesce(n.signed_date, n.received_at) AS at, n.notification_uuid AS id,
         CASE WHEN n.notification_type = 'DID_FAIL_TO_RENEW' AND n.subtype = 'GRACE_PERIOD'
                THEN 'grace_period'
              WHEN n.notification_type IN ('DID_FAIL_TO_RENEW', 'GRACE_PERIOD_EXPIRED')
                THEN 'billing_retry'
              ELSE 'ok' END AS billing_state,
         n.notification_type IN ('DID_RENEW', 'OFFER_REDEEMED', 'DID_CHANGE_RENEWAL_PREF') AS renews
  FROM apple_notifications n
  WHERE n.original_transaction_id IS NOT NULL
    AND (n.notification_type IN ('DID_FAIL_TO_RENEW', 'GRACE_PERIOD_EXPIRED', 'DID_RENEW',
                                 'OFFER_REDEEMED', 'EXPIRED', 'SUBSCRIBED')
         OR (n.notification_type = 'DID_CHANGE_RENEWAL_PREF' AND n.subtype = 'UPGRADE')
         OR (n.notification_type IN ('REFUND', 'REVOKE')
             AND n.transaction_id = (
               SELECT t.transaction_id FROM chart_transactions t
               WHERE t.store = 'app_store' AND t.original_transaction_id = n.original_transaction_id
                 AND t.purchase_date <= coalesce(n.signed_date, n.received_at)
               ORDER BY t.purchase_date DESC, t.transaction_id DESC LIMIT 1)))
  UNION ALL
  SELECT 'google_play',
         storekeeper_google_subscription(gp.order_id, gp.purchase_token, gp.original_transaction_id),
         coalesce(gn.event_time, gn.received_at), gn.message_id,
         CASE gn.notification_type WHEN 6 THEN 'grace_period' WHEN 5 THEN 'billing_retry'
                                   ELSE 'ok' END,
         gn.notification_type IN (1, 2, 7)
  FROM google_notifications gn
  JOIN google_purchases gp ON gp.purchase_token = gn.purchase_token
  WHERE gn.kind = 'subscription' AND gn.notification_type IN (1, 2, 4, 5, 6, 7, 12, 13)),
seq AS (
  SELECT ev.*,
         lag(ev.billing_state) OVER s AS prev_state,
         lead(ev.billing_state) OVER s AS next_state,
         lead(ev.renews) OVER s AS next_renews,
         lead(ev.at) OVER s AS next_at
  FROM ev
  WINDOW s AS (PARTITION BY ev.store, ev.subscription ORDER BY ev.at, ev.id))
SELECT seq.store, seq.subscription AS original_transaction_id, c.transaction_id, c.user_id,
       c.product_id, c.environment, c.country, seq.billing_state, seq.at AS starts_at,
       coalesce(seq.next_at, 'infinity') AS ends_at,
       coalesce(seq.prev_state, 'ok') AS prev_state, coalesce(seq.next_state, 'ok') AS next_state,
       coalesce(seq.next_renews, false) AS recovered
FROM seq
JOIN LATERAL (
  SELECT t.* FROM chart_transactions t
  WHERE t.store = seq.store AND t.original_transaction_id = seq.subscription
    AND t.purchase_date <= seq.at
  ORDER BY t.purchase_date DESC, t.transaction_id DESC LIMIT 1) c ON true
WHERE seq.billing_state <> 'ok';

-- Apple's CONSUMPTION_REQUEST notifications and how Storekeeper answered each (the jobs of
-- Migrations/0036), at the instant Apple signed the request, with the transaction it asked
-- about when Storekeeper knows it (product and storefront 'unknown' otherwise).
CREATE OR REPLACE VIEW chart_consumption_requests AS
SELECT 'app_store'::text AS store, answer.notification_uuid, answer.transaction_id,
       coalesce(t.original_transaction_id, answer.transaction_id) AS original_transaction_id,
       coalesce(t.user_id, answer.user_id) AS user_id, coalesce(t.product_id, 'unknown') AS product_id,
       answer.environment, coalesce(t.country, 'unknown') AS country, t.currency, t.price,
       coalesce(t.is_trial, false) AS is_trial, t.trade_no, t.purchase_date, t.expires_date,
       t.refunded_at, coalesce(n.signed_date, n.received_at) AS requested_at,
       CASE WHEN answer.state = 'sent' THEN 'answered'
            WHEN answer.state = 'skipped' AND answer.outcome = 'no_consent' THEN 'skipped_without_consent'
            WHEN answer.state = 'skipped' THEN 'skipped'
            WHEN answer.state = 'failed' AND answer.outcome = 'window_passed' THEN 'expired'
            WHEN answer.state = 'failed' THEN 'failed'
            ELSE 'pending' END AS answer
FROM consumption_answers answer
JOIN apple_notifications n ON n.notification_uuid = answer.notification_uuid
LEFT JOIN chart_transactions t ON t.store = 'app_store' AND t.transaction_id = answer.transaction_id;

-- Currency conversion (`?currency=` on the money charts): the rate in force on `day` (a UTC
-- day) for `cur` into `reporting`, 1 for the reporting currency itself, NULL when no rate is
-- in force (or no currency: an unpriced transaction stays unpriced).
CREATE OR REPLACE FUNCTION chart_rate(cur text, reporting text, day date) RETURNS numeric
LANGUAGE sql STABLE AS $$
  SELECT CASE WHEN cur = reporting THEN 1::numeric
              ELSE (SELECT r.rate FROM currency_rates r
                    WHERE r.reporting_currency = reporting AND r.currency = cur
                      AND r.valid_from <= day
                    ORDER BY r.valid_from DESC LIMIT 1) END
$$;

-- chart_transactions with every price converted at the rate of its purchase's UTC day; one
-- without a rate keeps its own currency and price, so a chart reports it rather than drop it.
CREATE OR REPLACE FUNCTION chart_transactions_in(reporting text) RETURNS SETOF chart_transactions
LANGUAGE sql STABLE AS $$
  SELECT c.store, c.transaction_id, c.original_transaction_id, c.user_id, c.product_id,
         c.environment, c.country, CASE WHEN k.rate IS NULL THEN c.currency ELSE reporting END,
         c.price * coalesce(k.rate, 1), c.purchase_date, c.expires_date, c.refunded_at,
         c.is_upgraded, c.is_trial, c.is_subscription, c.trade_no, c.billed_period, c.export_key,
         c.partly_refunded * coalesce(k.rate, 1), c.partly_refunded_at
  FROM chart_transactions c
  CROSS JOIN LATERAL (SELECT chart_rate(c.currency, reporting,
                                        (c.purchase_date AT TIME ZONE 'UTC')::date) AS rate) k
$$;

-- chart_subscription_periods likewise, each period's price and MRR at its start's UTC day.
CREATE OR REPLACE FUNCTION chart_subscription_periods_in(reporting text)
  RETURNS SETOF chart_subscription_periods
LANGUAGE sql STABLE AS $$
  SELECT p.store, p.transaction_id, p.original_transaction_id, p.user_id, p.product_id,
         p.environment, p.country, CASE WHEN k.rate IS NULL THEN p.currency ELSE reporting END,
         p.price * coalesce(k.rate, 1), p.is_trial, p.starts_at, p.ends_at,
         p.monthly_price * coalesce(k.rate, 1)
  FROM chart_subscription_periods p
  CROSS JOIN LATERAL (SELECT chart_rate(p.currency, reporting,
                                        (p.starts_at AT TIME ZONE 'UTC')::date) AS rate) k
$$;
