-- Voided purchases Google listed for a purchase token Storekeeper never credited (issue 25):
-- bought but never reported, or reported to another deployment. Nothing is taken back for them,
-- but each is kept once (the sweep's windows overlap, and instances share it), so it is logged
-- once and /metrics counts it (`storekeeper_google_unmatched_voids_total`).
CREATE TABLE google_unmatched_voids (
  order_id          text NOT NULL,
  voided_time_ms    bigint NOT NULL,
  purchase_token    text NOT NULL,
  voided_reason     integer,
  first_seen_at     timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (order_id, voided_time_ms)
);
