-- Offerings (issue 27): which placement and offering an order was made from, as the app says
-- when it creates the order, and the experiment variant the server assigned the user when that
-- offering was the variant's. Experiment results attribute a tagged order to its own variant;
-- untagged orders keep the rule of a window after the user's first exposure.
CREATE TABLE order_offerings (
  trade_no      text PRIMARY KEY REFERENCES orders (trade_no),
  placement_id  text NOT NULL,
  offering_id   text NOT NULL,
  experiment_id text,
  variant       text,
  CHECK ((experiment_id IS NULL) = (variant IS NULL))
);
CREATE INDEX order_offerings_experiment ON order_offerings (experiment_id, variant)
  WHERE experiment_id IS NOT NULL;
