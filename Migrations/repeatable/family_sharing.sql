-- Whether an order was paid by a Family Sharing copy (a family member's transaction of someone
-- else's purchase, apple_transactions.family_shared): such an order grants access but is no
-- money, so the overview, experiments' results and the has_paid targeting fact leave it out. An
-- order an admin transferred away no longer holds its transaction (the transfer's order does);
-- the events of its payment still name it.
CREATE OR REPLACE FUNCTION storekeeper_paid_by_family_copy(p_trade_no text, p_close_reason text)
RETURNS boolean
LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT EXISTS (SELECT 1 FROM apple_transactions t
                 WHERE t.trade_no = p_trade_no AND t.family_shared)
      OR (p_close_reason = 'transferred'
          AND EXISTS (SELECT 1 FROM order_events v
                      JOIN apple_transactions t ON t.transaction_id = v.detail ->> 'transaction_id'
                      WHERE v.trade_no = p_trade_no AND t.family_shared))
$$;
