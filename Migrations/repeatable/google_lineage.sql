-- A Google Play purchase that replaces another (an upgrade, downgrade or re-signup names it,
-- linkedPurchaseToken) continues that one's subscription: it keeps the replaced purchase's
-- subscription key (google_purchases.original_transaction_id, 0134; charts.sql,
-- storekeeper_google_subscription), when Storekeeper knows the replaced purchase. On every
-- insert, whichever path or release writes it.
CREATE OR REPLACE FUNCTION storekeeper_google_lineage() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.original_transaction_id IS NULL AND NEW.linked_purchase_token IS NOT NULL
     AND NEW.linked_purchase_token <> NEW.purchase_token THEN
    SELECT storekeeper_google_subscription(l.order_id, l.purchase_token, l.original_transaction_id)
    INTO NEW.original_transaction_id
    FROM google_purchases l WHERE l.purchase_token = NEW.linked_purchase_token;
  END IF;
  RETURN NEW;
END
$$;

CREATE OR REPLACE TRIGGER google_purchases_lineage BEFORE INSERT ON google_purchases
  FOR EACH ROW EXECUTE FUNCTION storekeeper_google_lineage();
