-- The last revision of each deleted product: a product created again under the same id
-- continues from it instead of starting over at 1, so its admin ETag ("p<revision>") never
-- repeats one an admin may still hold from before the delete, and a stale If-Match stays
-- stale (CatalogRepository.write and remove).
SET LOCAL lock_timeout = '5s';
CREATE TABLE product_tombstones (
  product_id text PRIMARY KEY,
  revision   bigint NOT NULL
);
