-- A non-renewing pass is consumed on Google Play, so that it can be bought again
-- (GoogleAcknowledgementAction.needed); passes credited before were only acknowledged, and
-- Google refuses their holders a second purchase (ITEM_ALREADY_OWNED) for good. Their jobs
-- become consume jobs, due now; the acknowledger consumes each (Google consumes an
-- acknowledged purchase) and reads it back. Purchases taken back since (revoked, refunded) are
-- left as they are. A pass an instance of the previous release credits during the roll is
-- acknowledged only: this statement, run again by hand, converts it too.
SET LOCAL lock_timeout = '5s';
UPDATE google_acknowledgements a
SET action = 'consume', done_at = NULL, next_attempt_at = now(), attempts = 0, last_error = NULL
FROM google_purchases gp JOIN products p ON p.product_id = gp.product_id
WHERE gp.purchase_token = a.purchase_token AND a.action = 'acknowledge'
  AND gp.kind = 'product' AND p.type = 'non_renewing'
  AND gp.revoked_at IS NULL AND gp.refunded_quantity < gp.quantity;
