"""Creates COUNT orders on Storekeeper and a purchase of each on the fake App Store, and writes
`trade_no<TAB>signed_transaction` lines to OUT: the reports bench/scale/run posts."""
import json
import os
import sys
import threading
import urllib.request

storekeeper, fake, product, count, out = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
lines: list[str] = []
lock = threading.Lock()


def post(url: str, body: dict) -> dict:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as answer:
        return json.load(answer)


def work(start: int, step: int) -> None:
    for i in range(start, count, step):
        order = post(storekeeper + "/v1/orders", {"user_id": f"report:{os.path.basename(out)}:{i}", "product_id": product})
        purchase = post(fake + "/fake/v1/purchases", {
            "bundle_id": "com.example.bench", "product_id": product, "type": "Consumable",
            "environment": "Production", "app_account_token": order["app_account_token"]})
        with lock:
            lines.append(f"{order['trade_no']}\t{purchase['signed_transaction']}")


threads = [threading.Thread(target=work, args=(t, 4)) for t in range(4)]
for t in threads:
    t.start()
for t in threads:
    t.join()
with open(out, "w") as f:
    f.write("\n".join(lines) + "\n")
