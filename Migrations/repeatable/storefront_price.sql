-- A product's price in a storefront, as committed when it is called: VOLATILE, so in READ
-- COMMITTED its query takes a snapshot of its own instead of the calling statement's. An order's
-- statement locks the product first (FOR KEY SHARE, which waits for an admin changing it) and
-- then calls this: a storefront price that admin set or removed while the order waited is the
-- one it reads. A join to product_prices in the statement itself read the price as it stood
-- before the wait (PostgreSQL re-reads only the rows it locked), and an outer-joined row that
-- may be missing cannot be locked. No row: the storefront has no price of its own (STRICT: nor
-- does a NULL storefront).
--
-- PL/pgSQL, whose plan is kept for the session: a SQL function's body is planned again in every
-- statement that calls it, which cost an order batch about twice what this does. ROWS 1, what
-- the primary key allows: planned as the default 1000 rows, the batch's generic plan looked
-- dearer than a custom one, and PostgreSQL planned the statement afresh on every execution.
CREATE OR REPLACE FUNCTION storekeeper_storefront_price(p_product_id text, p_storefront text)
RETURNS TABLE (price numeric, currency char(3))
LANGUAGE plpgsql VOLATILE STRICT ROWS 1 AS $$
BEGIN
  RETURN QUERY
    SELECT pp.price, pp.currency FROM product_prices pp
    WHERE pp.product_id = p_product_id AND pp.storefront = p_storefront;
END
$$;
