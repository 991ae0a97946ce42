-- Abuse limits (issue 10): a user may hold at most MAX_OPEN_ORDERS_PER_USER unpaid orders.
-- Each order created through the API takes a numbered slot (1..max); open_slot_key is that
-- slot while the order is WAIT_BUYER_PAY and NULL otherwise, so the unique index below lets
-- two concurrent creations never take the same slot, and an order that is paid, closed or
-- expires frees its slot with no statement of its own. Orders opened for a purchase that came
-- without one (receipts, renewals) are settled at once and take no slot.
ALTER TABLE orders ADD COLUMN open_slot smallint;
ALTER TABLE orders ADD COLUMN open_slot_key smallint GENERATED ALWAYS AS (
  CASE WHEN trade_status = 'WAIT_BUYER_PAY' THEN open_slot END) STORED;

-- Orders already open keep counting: number them per user.
UPDATE orders o SET open_slot = n.slot
FROM (
  SELECT trade_no, row_number() OVER (PARTITION BY user_id ORDER BY trade_no) AS slot
  FROM orders WHERE trade_status = 'WAIT_BUYER_PAY' AND origin = 'order'
) n
WHERE o.trade_no = n.trade_no AND n.slot <= 32767;

CREATE UNIQUE INDEX orders_open_slot ON orders (user_id, open_slot_key);
