-- Currency-rate changes in the audit trail (issue 28): a rate written or removed is kept in
-- `admin_audit` with the rate before and after, as every other admin change is. The two
-- CHECK constraints are rewritten as 0056 last wrote them, with the new values added.
ALTER TABLE admin_audit DROP CONSTRAINT admin_audit_action_check;
ALTER TABLE admin_audit ADD CONSTRAINT admin_audit_action_check
  CHECK (action IN ('product_created', 'product_updated', 'product_deleted',
                    'purchase_transferred', 'webhook_endpoint_created',
                    'webhook_endpoint_updated', 'webhook_endpoint_deleted',
                    'webhook_secret_rotated', 'webhook_events_replayed', 'webhook_test_sent',
                    'ledger_adjusted', 'offering_written', 'offering_deleted',
                    'placement_written', 'placement_deleted', 'experiment_created',
                    'experiment_updated', 'experiment_concluded', 'currency_rate_written',
                    'currency_rate_deleted'));
ALTER TABLE admin_audit DROP CONSTRAINT admin_audit_target_type_check;
ALTER TABLE admin_audit ADD CONSTRAINT admin_audit_target_type_check
  CHECK (target_type IN ('product', 'transaction', 'webhook_endpoint', 'user', 'offering',
                         'placement', 'experiment', 'currency_rate'));
