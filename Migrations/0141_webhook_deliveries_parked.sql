SET LOCAL lock_timeout = '5s';
-- A delivery behind an earlier pending one of its user and endpoint is parked
-- (next_attempt_at = 'infinity') until that one is finished, so a claim no longer walks every
-- delivery waiting behind a head that keeps failing (up to WEBHOOK_RETRY_WINDOW): 144,000 of
-- them made each claim take 4 s. WebhookQueue parks and promotes; this parks the backlog that
-- is already there, which claims would otherwise park a batch a pass.
UPDATE webhook_deliveries d SET next_attempt_at = 'infinity'
WHERE d.state = 'pending' AND d.next_attempt_at <= now()
  AND EXISTS (
    SELECT 1 FROM webhook_deliveries p
    WHERE p.endpoint_id = d.endpoint_id AND p.user_id = d.user_id AND p.state = 'pending'
      AND (p.sequence, p.id) < (d.sequence, d.id));
-- The claim's other rule (nothing of the user's in flight or between attempts) looks only at
-- deliveries tried before: a handful per user, where webhook_deliveries_user holds the whole
-- backlog. IF NOT EXISTS: on a large deployment, build it by hand first with CREATE INDEX
-- CONCURRENTLY (docs/DEPLOYMENT.md).
CREATE INDEX IF NOT EXISTS webhook_deliveries_tried ON webhook_deliveries (endpoint_id, user_id)
  WHERE state = 'pending' AND attempts > 0;
