#!/usr/bin/env python3
"""Makes the Google Play reports bench/reports/google sends: for each, a google_play order
created through Storekeeper's API and a purchase of it made by the fake Google Play, carrying
the order's obfuscated account id. Writes one POST /v1/trade-reports body (TRADE_SUCCESS with
the purchase token) per line to each output file, COUNT lines per file.

Usage: prepare_google.py STOREKEEPER_URL FAKE_URL PRODUCT_ID COUNT OUT_FILE..."""

from __future__ import annotations

import json
import sys
import threading
import uuid
from concurrent.futures import ThreadPoolExecutor

import requests

storekeeper, fake, product, count = sys.argv[1:5]
outputs = sys.argv[5:]
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
               json={"user_id": f"greport:{prefix}-{i}", "product_id": product, "store": "google_play"})
    r.raise_for_status()
    order = r.json()
    r = s.post(f"{fake}/fake/v1/products", timeout=60,
               json={"product_id": product, "obfuscated_account_id": order["obfuscated_account_id"]})
    r.raise_for_status()
    return json.dumps({"trade_no": order["trade_no"], "trade_status": "TRADE_SUCCESS",
                       "purchase_token": r.json()["purchase_token"]}, separators=(",", ":"))


with ThreadPoolExecutor(max_workers=16) as pool:
    for index, path in enumerate(outputs):
        lines = list(pool.map(one, range(index * count, (index + 1) * count)))
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")
