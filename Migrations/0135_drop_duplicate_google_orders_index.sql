-- 0133 built google_orders_purchased_at on (purchased_at, order_id): the same definition as
-- 0120's google_orders_purchased, which already serves the exports' Google pages (and the
-- charts' reads by purchase time). Every write to google_orders kept both up to date for
-- nothing. Dropping one is a catalogue change: the lock is brief, but it queues behind any
-- long reader of google_orders, hence the timeout.
SET LOCAL lock_timeout = '5s';
DROP INDEX IF EXISTS google_orders_purchased_at;
