-- Issue 23: less work per settlement. events_user_feed (user_id, xid, position) was made for
-- a user's feed read in the whole feed's order (0019); that feed now reads in sequence order
-- from events_user_id_sequence_key, and the cursor it starts from is found through
-- events_feed (xid, position). Nothing reads the index any more, and every event paid for an
-- entry in it: two per settled report.
DROP INDEX IF EXISTS events_user_feed;
