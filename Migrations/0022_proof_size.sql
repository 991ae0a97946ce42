-- A refused proof leaves its hash and its size, not its bytes (issue 22): the size is kept on
-- the report itself, so what a flood of junk would have cost can still be seen.
ALTER TABLE trade_reports ADD COLUMN proof_size integer CHECK (proof_size >= 0);
