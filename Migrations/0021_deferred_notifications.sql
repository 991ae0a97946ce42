-- Deferred notifications are looked at again on every notification pass (a settlement's own
-- wake can miss one deferred at the same moment); this index keeps that a look at the few
-- that wait instead of a scan of every notification ever received.
CREATE INDEX apple_notifications_deferred ON apple_notifications (seq) WHERE state = 'deferred';
