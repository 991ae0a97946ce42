-- Each pause of an experiment (0136), as its status moves: from running to paused opens one,
-- leaving paused (a resume, a conclusion) ends it. On the row's own update, whichever
-- release's instance makes it, so the results' window (ExperimentRepository) sees every pause.
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
