-- A signed transaction's JOSE header (alg and the x5c chain, 2.8 KB of a 3.6 KB transaction) is
-- the same for every transaction Apple signs with one certificate, and stored whole it sent each
-- proof to TOAST: two chunks and an index entry, a third of a settlement's WAL (issue 23). The
-- header is kept once here, by its SHA-256, and a proof row with header_hash holds only the rest
-- (payload.signature); its text is the header, a dot, then body. Headers are never purged: one
-- per signing certificate. No foreign key: a check per proof for a row that is never deleted.
-- Proofs stored before keep their whole text (header_hash NULL). Only signed transactions of
-- reports with a final outcome are split (ReportStore.storeProof); a pending report's proof,
-- the only kind the retry worker reads back, is kept whole, so an instance of the previous
-- release reads every proof it needs as before.
CREATE TABLE proof_headers (
  hash       text PRIMARY KEY,
  header     text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
ALTER TABLE proofs ADD COLUMN header_hash text;
