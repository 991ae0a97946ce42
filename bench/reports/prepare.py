#!/usr/bin/env python3
"""Makes the reports bench/reports/run sends: for each, an order created through Storekeeper's
API and a purchase of it made by the fake App Store, which signs the transaction with the
order's app_account_token. Writes one POST /v1/trade-reports body (TRADE_SUCCESS with the
signed transaction) per line to each output file, COUNT lines per file.

Usage: prepare.py STOREKEEPER_URL FAKE_URL PRODUCT_ID BUNDLE_ID COUNT OUT_FILE..."""

from __future__ import annotations

import json
import sys
import threading
import uuid
from concurrent.futures import ThreadPoolExecutor

import requests

storekeeper, fake, product, bundle, count = sys.argv[1:6]
outputs = sys.argv[6:]
count = int(count)
prefix = uuid.uuid4().hex[:8]
local = threading.local()


def session() -> requests.Session:
    s = getattr(local, "session", None)
    if s is None:
        s = local.session = requests.Session()
    return s


def one(i: int) -> str:
    s = session()
    r = s.post(f"{storekeeper}/v1/orders", timeout=60,
               json={"user_id": f"report:{prefix}-{i}", "product_id": product})
    r.raise_for_status()
    order = r.json()
    r = s.post(f"{fake}/fake/v1/purchases", timeout=60, json={
        "bundle_id": bundle, "product_id": product, "type": "Consumable",
        "environment": "Production", "app_account_token": order["app_account_token"]})
    r.raise_for_status()
    return json.dumps({"trade_no": order["trade_no"], "trade_status": "TRADE_SUCCESS",
                       "signed_transaction": r.json()["signed_transaction"]}, separators=(",", ":"))


with ThreadPoolExecutor(max_workers=16) as pool:
    for index, path in enumerate(outputs):
        lines = list(pool.map(one, range(index * count, (index + 1) * count)))
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")
