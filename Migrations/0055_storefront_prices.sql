-- Prices per storefront (issue 27). A product's own price and currency stay its default; a row
-- here overrides both for one storefront. Storefronts are ISO 3166-1 alpha-3 codes, as the App
-- Store's Storefront.countryCode spells them; Google Play's alpha-2 region codes are mapped to
-- alpha-3 by the application before they get here, so one product has one row per country
-- whichever store asks. Prices are normalised to the currency's exponent like products.price.
CREATE TABLE product_prices (
  product_id  text NOT NULL REFERENCES products (product_id) ON DELETE CASCADE,
  storefront  char(3) NOT NULL CHECK (storefront ~ '^[A-Z]{3}$'),
  price       numeric NOT NULL CHECK (price >= 0),
  currency    char(3) NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
  updated_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (product_id, storefront)
);

-- Price history covers every storefront: NULL is the product's default price, as before.
-- A storefront price removed is recorded with new_price and new_currency NULL.
ALTER TABLE product_price_history ADD COLUMN storefront char(3)
  CHECK (storefront ~ '^[A-Z]{3}$');
ALTER TABLE product_price_history ALTER COLUMN new_price DROP NOT NULL;
ALTER TABLE product_price_history ALTER COLUMN new_currency DROP NOT NULL;
ALTER TABLE product_price_history ADD CONSTRAINT product_price_history_new_price_check
  CHECK (storefront IS NOT NULL OR (new_price IS NOT NULL AND new_currency IS NOT NULL));
