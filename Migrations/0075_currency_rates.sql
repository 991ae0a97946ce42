-- Charts (issue 28) convert money into one reporting currency at rates an admin maintains:
-- a rate says how much of `reporting_currency` one unit of `currency` is worth from
-- `valid_from` (a UTC day) until the next rate of the pair. Nothing converts without a rate.
CREATE TABLE currency_rates (
  reporting_currency text NOT NULL CHECK (reporting_currency ~ '^[A-Z]{3}$'),
  currency           text NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
  valid_from         date NOT NULL,
  rate               numeric NOT NULL CHECK (rate > 0),
  updated_by         text NOT NULL,
  updated_at         timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (reporting_currency, currency, valid_from),
  CHECK (currency <> reporting_currency)
);
