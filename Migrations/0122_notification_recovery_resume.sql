-- A pass that reaches its page limit keeps Apple's pagination token and the range it was
-- reading, and the next pass goes on from there: before, the range was read from its start
-- again, so more than a pass's pages of undelivered notifications were never all read and
-- checked_until never moved.
ALTER TABLE notification_recovery
  ADD COLUMN resume_token text,
  ADD COLUMN resume_from  timestamptz,
  ADD COLUMN resume_to    timestamptz;
