-- When a notification was last deferred. A pass re-checks only the notifications deferred in
-- the last minutes (one deferred while the settlement that records its transaction was still
-- uncommitted: DeferredNotifications.wakeReady) and every deferred one once an hour, instead of
-- probing every deferred notification on every pass: those grow with purchases never reported
-- here. The index is small (deferred rows only); on a large table build it first by hand with
-- CREATE INDEX CONCURRENTLY (docs/DEPLOYMENT.md).
SET LOCAL lock_timeout = '5s';
ALTER TABLE apple_notifications ADD COLUMN deferred_at timestamptz;
CREATE INDEX IF NOT EXISTS apple_notifications_deferred_at ON apple_notifications (deferred_at)
  WHERE state = 'deferred';
