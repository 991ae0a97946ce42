SET LOCAL lock_timeout = '5s';
-- Whether a user ever paid (offering targeting's `has_paid`, UserFactsReader) read every order
-- of theirs: `orders_user_paid` holds only orders still paid, and a refunded one counts too. A
-- user who made and closed 50,000 orders cost each of their offering reads 20-70 ms of a
-- pooled connection. IF NOT EXISTS: on a large deployment, build it by hand first with CREATE
-- INDEX CONCURRENTLY (docs/DEPLOYMENT.md).
CREATE INDEX IF NOT EXISTS orders_user_ever_paid ON orders (user_id) WHERE paid_at IS NOT NULL;
