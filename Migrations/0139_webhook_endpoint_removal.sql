-- Deleting a webhook endpoint marks it (deleted_at) instead of removing the row in the admin's
-- transaction. The row's cascade walked every delivery kept for WEBHOOK_RETENTION and all their
-- attempts while it held the endpoint, and every event written meanwhile fans out to it: the
-- deliveries' foreign key check waited for the whole delete, then failed (23503) once it
-- committed, failing payments, spends and refunds. Marking is a non-key update, which the
-- check's key-share lock passes; the fan-out and the senders skip a marked endpoint, and the
-- webhook loop deletes its deliveries in batches and then the row (WebhookQueue+Removal).
-- Adding a nullable column without a default only changes the catalogue: the lock is brief,
-- but it queues behind any long reader of webhook_endpoints, hence the timeout. The fan-out
-- that reads it is in repeatable/webhook_fan_out.sql.
SET LOCAL lock_timeout = '5s';
ALTER TABLE webhook_endpoints ADD COLUMN deleted_at timestamptz;
