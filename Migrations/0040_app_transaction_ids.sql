-- Apple's appTransactionId: one per Apple Account's download of the app, the same in every
-- purchase that account makes and kept across re-installs and devices. NULL where Apple did not
-- say (receipts, transactions signed before Apple added it). Indexed so the purchases, and so
-- the user, of one app download are found at once: a customer who re-installs, a consent
-- Apple says was withdrawn.
ALTER TABLE apple_transactions ADD COLUMN app_transaction_id text;

CREATE INDEX apple_transactions_app_transaction
  ON apple_transactions (app_transaction_id) WHERE app_transaction_id IS NOT NULL;
