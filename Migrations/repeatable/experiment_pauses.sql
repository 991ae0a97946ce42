-- Each pause of an experiment (0136), as its status moves: from running to paused opens one,
-- leaving paused (a resume, a conclusion) ends it. On the row's own update, whichever
-- release's instance makes it, so the results' window (ExperimentRepository) sees every pause.
SET LOCAL lock_timeout = '5s';

CREATE OR REPLACE FUNCTION storekeeper_experiment_pauses() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF OLD.status = 'running' AND NEW.status = 'paused' THEN
    INSERT INTO experiment_pauses (experiment_id, paused_at)
    VALUES (NEW.experiment_id, now()) ON CONFLICT DO NOTHING;
  ELSIF OLD.status = 'paused' AND NEW.status <> 'paused' THEN
    UPDATE experiment_pauses SET resumed_at = now()
    WHERE experiment_id = NEW.experiment_id AND resumed_at IS NULL;
  END IF;
  RETURN NULL;
END
$$;

CREATE OR REPLACE TRIGGER experiments_pauses AFTER UPDATE OF status ON experiments
  FOR EACH ROW EXECUTE FUNCTION storekeeper_experiment_pauses();

-- What was written without the trigger, repaired in the transaction that creates it (its lock
-- keeps every status change out until this commits, so nothing falls between the two). Every
-- versioned migration runs before any definition: an instance of the previous release that
-- resumed or concluded an experiment after 0136's snapshot and before this file left its pause
-- open, and every later order naming no offering out of its results; one that paused it opened
-- none. So an experiment not paused has no open pause, and a paused one has one; applied again,
-- this changes nothing.
--
-- The times, as well as the data allows: every release writes the admin log's row of a status
-- change (experiment_updated, experiment_concluded) in the change's own transaction, so its
-- created_at is the now() the trigger would have used: exact. Without one (a change made by
-- hand), the experiment's row: a conclusion's concluded_at, else updated_at, its last change, at
-- or after the status change. A pause so ended late leaves a few more orders out of the
-- results; one so opened late counts a few for their variant, as 0136's snapshot did.
UPDATE experiment_pauses p
SET resumed_at = greatest(p.paused_at, coalesce(
      (SELECT min(a.created_at) FROM admin_audit a
       WHERE a.target_id = e.experiment_id AND a.target_type = 'experiment'
         AND a.action IN ('experiment_updated', 'experiment_concluded')
         AND a.before ->> 'status' = 'paused' AND a.after ->> 'status' <> 'paused'
         AND a.created_at >= p.paused_at),
      e.concluded_at, e.updated_at))
FROM experiments e
WHERE e.experiment_id = p.experiment_id AND p.resumed_at IS NULL AND e.status <> 'paused';

INSERT INTO experiment_pauses (experiment_id, paused_at)
SELECT e.experiment_id,
       coalesce(
         (SELECT max(a.created_at) FROM admin_audit a
          WHERE a.target_id = e.experiment_id AND a.target_type = 'experiment'
            AND a.action = 'experiment_updated'
            AND a.before ->> 'status' = 'running' AND a.after ->> 'status' = 'paused'
            -- After every pause already ended: the one it is in now.
            AND a.created_at >= ALL (SELECT q.resumed_at FROM experiment_pauses q
                                     WHERE q.experiment_id = e.experiment_id)),
         e.updated_at)
FROM experiments e
WHERE e.status = 'paused'
  AND NOT EXISTS (SELECT 1 FROM experiment_pauses p
                  WHERE p.experiment_id = e.experiment_id AND p.resumed_at IS NULL)
ON CONFLICT DO NOTHING;
