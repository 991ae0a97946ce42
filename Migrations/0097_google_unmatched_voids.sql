-- Voided purchases Google listed for a purchase token Storekeeper had not credited (issue 25):
-- bought but never reported, or reported to another deployment. Nothing is taken back for them,
-- but each is kept once (the sweep's windows overlap, and instances share it), so it is logged
-- once and /metrics counts it (`storekeeper_google_unmatched_voids_total`). If the token is
-- credited later (a report after the refund), the next sweep applies the void then, since
-- Google's list may no longer reach back that far; `matched_at` says when.
CREATE TABLE google_unmatched_voids (
  order_id          text NOT NULL,
  voided_time_ms    bigint NOT NULL,
  purchase_token    text NOT NULL,
  voided_reason     integer,
  voided_quantity   integer,
  first_seen_at     timestamptz NOT NULL DEFAULT now(),
  matched_at        timestamptz,
  PRIMARY KEY (order_id, voided_time_ms)
);

CREATE INDEX google_unmatched_voids_open ON google_unmatched_voids (purchase_token)
  WHERE matched_at IS NULL;
