-- Abuse limits (issue 10): each distinct proof is stored once, keyed by its SHA-256, instead of
-- once per report (a client repeating a 1 MB receipt stored it again each time), and proofs are
-- purged PROOF_RETENTION after the last report that carried them is settled or refused.
-- trade_reports keeps proof_hash (no foreign key: after the purge, the hash alone still lets a
-- repeat of a settled report be recognised without Apple) and proof_kind.
CREATE TABLE proofs (
  hash         text PRIMARY KEY,
  kind         text NOT NULL CHECK (kind IN ('receipt', 'signed_transaction')),
  body         text NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  -- Bumped by every report that brings the proof again (the upsert also locks the row, so a
  -- purge running at that moment cannot delete it from under the new report).
  last_used_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX proofs_last_used ON proofs (last_used_at);

UPDATE trade_reports SET proof_hash = encode(sha256(convert_to(proof, 'UTF8')), 'hex')
WHERE proof IS NOT NULL AND proof_hash IS NULL;

INSERT INTO proofs (hash, kind, body, created_at, last_used_at)
SELECT DISTINCT ON (proof_hash) proof_hash, proof_kind, proof, created_at, updated_at
FROM trade_reports
WHERE proof IS NOT NULL AND proof_kind IS NOT NULL
ORDER BY proof_hash, updated_at DESC;

ALTER TABLE trade_reports DROP COLUMN proof;
CREATE INDEX trade_reports_proof ON trade_reports (proof_hash) WHERE proof_hash IS NOT NULL;
