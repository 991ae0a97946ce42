-- The expiry a transaction was first recorded with: what its price paid for. A renewal-date
-- extension (RENEWAL_EXTENDED) moves expires_date later for access, and charts.sql read the
-- billed period from it, so a monthly plan extended 16 days or more counted as two months
-- and its MRR halved, past days included. Rows recorded before this keep NULL (the charts then
-- read expires_date, as before).
SET LOCAL lock_timeout = '5s';
ALTER TABLE apple_transactions ADD COLUMN billed_expires_date timestamptz;
