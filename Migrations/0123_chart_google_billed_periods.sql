-- chart_transactions now bills each Google order the period it paid for, not the token's first
-- period (a free trial made every renewal's MRR 4.3 times its price). The rollups kept under the
-- old definition are rebuilt by the next pass.
UPDATE chart_rollup_state SET horizon = NULL;
