-- A second notification-history reader for the sandbox (row 2; row 1 is production): Apple
-- sends a sandbox notification once, with no retries, and keeps it only in the sandbox host's
-- history, so with sandbox purchases accepted a refund sent while Storekeeper was down was lost
-- for good (NotificationRecovery).
SET LOCAL lock_timeout = '5s';
ALTER TABLE notification_recovery DROP CONSTRAINT notification_recovery_id_check;
ALTER TABLE notification_recovery ADD CONSTRAINT notification_recovery_id_check CHECK (id IN (1, 2));
INSERT INTO notification_recovery (id) VALUES (2);
