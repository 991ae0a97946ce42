-- Whether the purchase that paid an order was taken back (refunded, revoked). An order an admin
-- transferred away no longer holds its transaction: the order holding it now (found by its
-- transaction id, which the events of the transferred order's payment name) is the one a
-- later refund closes, so the refund is read there. Experiments' results count a conversion's
-- refund with it.
CREATE OR REPLACE FUNCTION storekeeper_order_refunded(p_trade_no text, p_close_reason text)
RETURNS boolean
LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT p_close_reason IN ('refunded', 'revoked')
      OR (p_close_reason = 'transferred'
          AND EXISTS (SELECT 1 FROM orders h
                      WHERE h.transaction_id = (SELECT v.detail ->> 'transaction_id'
                                                FROM order_events v
                                                WHERE v.trade_no = p_trade_no
                                                  AND v.detail ? 'transaction_id'
                                                ORDER BY v.id DESC LIMIT 1)
                        AND h.close_reason IN ('refunded', 'revoked')))
$$;
