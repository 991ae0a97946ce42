-- Transactions that write no events but may run long (a chart rollup pass, minutes at a large
-- store) name themselves here, from another session, so the unfiltered event feed does not
-- wait for them: its horizon is the oldest running transaction not listed (EventFeed.swift).
-- A row outlives its transaction only when the pass failed or its process died, harmless then (an
-- ended transaction is in no snapshot): the next registration removes it.
CREATE TABLE feed_exempt_transactions (
  xid           xid8 PRIMARY KEY,
  reason        text NOT NULL,
  registered_at timestamptz NOT NULL DEFAULT now()
);
