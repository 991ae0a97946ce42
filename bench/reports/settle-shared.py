#!/usr/bin/env python3
"""Writes a pgbench script that runs settle.sql's statements for K reports in one transaction.

Issue 23, decision 0007: what sharing a transaction gives without making the statements
set-based (settle-batch.sql). Each report's context is read first, as the server reads it
before its transaction; then one BEGIN, each report's lock and transition statement exactly as
settle.sql has them, one COMMIT. Reports are taken as settle-batch.sql takes them.
Usage: settle-shared.py K > script.sql
"""

import re
import sys
from pathlib import Path

k = int(sys.argv[1])
text = "\n".join(
    line
    for line in (Path(__file__).parent / "settle.sql").read_text().splitlines()
    if not line.startswith("--") and not line.startswith("\\set")
)
context = text[text.index("SELECT b.trade_no") : text.index("\\gset") + len("\\gset")]
settling = text[text.index("BEGIN;") + len("BEGIN;") : text.index("COMMIT;")]
out = ["\\set k :k + 1"]
for i in range(k):
    out.append(f"\\set n :base + (:client_id + :clients * :k) * :batch + {i}")
    out.append(context.replace("\\gset", f"\\gset r{i}_"))
out.append("BEGIN;")
for i in range(k):
    out.append(re.sub(r":b_", f":r{i}_b_", settling))
out.append("COMMIT;")
print("\n".join(out))
