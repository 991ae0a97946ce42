-- A family member's copy of a purchase (Apple's inAppOwnershipType FAMILY_SHARED) grants what
-- the purchase grants, but nobody paid for it: charts, exports, the overview, experiments'
-- results and the "has paid" targeting fact leave it out. Rows recorded before this migration
-- did not keep it and count as purchased; an app receipt read locally does not say either.
ALTER TABLE apple_transactions ADD COLUMN family_shared boolean NOT NULL DEFAULT false;
