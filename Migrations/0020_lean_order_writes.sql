-- Creating an order is the busiest write, and every constraint and index on its rows is paid
-- for by every order. A profile of order creation under load put these three at about a sixth
-- of PostgreSQL's time per order, for no guarantee the rest of the schema does not give:

-- A regular expression run on every new row. Trade numbers are made by the server
-- (TradeNumber.make) and every one read from a client is checked before any query
-- (TradeNumber.isWellFormed); the length is still bounded here.
ALTER TABLE orders DROP CONSTRAINT orders_trade_no_check;
ALTER TABLE orders ADD CONSTRAINT orders_trade_no_length CHECK (octet_length(trade_no) BETWEEN 1 AND 64);

-- orders_open_slot (user_id, open_slot_key) already leads with user_id: lookups by user use it.
DROP INDEX orders_user;

-- Events are written only in the statement that writes or changes their order (from its
-- RETURNING rows), and orders are never deleted: the check, a lookup of the order on every
-- event, could not fail.
ALTER TABLE order_events DROP CONSTRAINT order_events_trade_no_fkey;
