-- The time each user's last state was computed for (storekeeper_append_events): an append
-- whose clock reading is earlier (taken before it waited for the user's lock, or on an instance
-- whose clock is behind) computes the state for this time instead, so it cannot grant again an
-- entitlement the previous append found expired. NULL until the user's next append by this
-- release; an instance of the previous release leaves it as it was, which only lets its own
-- appends keep their clock, as before. Adding a column without a default rewrites nothing.
-- This release also defines storekeeper_storefront_price (repeatable/storefront_price.sql),
-- which its orders call: an instance of the previous release never does.
SET LOCAL lock_timeout = '5s';

ALTER TABLE user_event_sequences ADD COLUMN last_state_at timestamptz;
