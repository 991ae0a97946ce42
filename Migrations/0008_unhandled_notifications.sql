-- A notification of a type Storekeeper does not know is kept as 'unhandled': counted and listed
-- for admins, never applied nor marked processed.
ALTER TABLE apple_notifications DROP CONSTRAINT apple_notifications_state_check;
ALTER TABLE apple_notifications ADD CONSTRAINT apple_notifications_state_check
  CHECK (state IN ('pending', 'deferred', 'processed', 'failed', 'unhandled'));
