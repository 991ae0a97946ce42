"""Issue 5: Storekeeper killed with SIGKILL in the middle of a burst of reports, then restarted
on the same database: every report that got a 200 is settled, nothing is settled twice, and
the reports that were cut off settle when the client sends them again."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import requests

from support import unique, user_headers, wait_until

GOLD = "com.example.tests.sigkill.gold"
ORDERS = 60
KILL_AFTER = 12


def test_sigkill_during_a_burst_of_reports_loses_nothing_and_credits_nothing_twice(launcher):
    stack = launcher.stack()
    sk, api, fake, db = stack.sk, stack.api, stack.fake, stack.db
    api.put_product(GOLD, grants={"balance": {"gold": 10}})
    user = unique("sigkill")
    account = unique("apple")
    work = []
    for i in range(ORDERS):
        order = api.create_order(user, GOLD)
        purchase = fake.purchase(GOLD, "consumable", app_account_token=order["app_account_token"],
                                 apple_account=account)
        # Half the reports carry a receipt (verified through the fake), half a signed transaction.
        proof = {"receipt": purchase["receipt"]} if i % 2 else {"signed_transaction": purchase["signed_transaction"]}
        work.append((order, purchase, proof))

    results: dict[str, object] = {}
    done = threading.Event()
    lock = threading.Lock()

    def report(item):
        order, _, proof = item
        try:
            r = requests.post(sk.url + "/v1/trade-reports", timeout=30, headers=user_headers(order["user_id"]),
                              json={"trade_no": order["trade_no"], "trade_status": "TRADE_SUCCESS", **proof})
            outcome = (r.status_code, r.json() if r.status_code in (200, 202) else r.text)
        except requests.RequestException as e:
            outcome = ("cut", repr(e))
        with lock:
            results[order["trade_no"]] = outcome
            if sum(1 for v in results.values() if v[0] == 200) >= KILL_AFTER:
                done.set()

    with ThreadPoolExecutor(max_workers=6) as pool:
        futures = [pool.submit(report, item) for item in work]
        assert done.wait(60), f"fewer than {KILL_AFTER} reports answered: {list(results.values())[:5]}"
        sk.kill()
        for f in futures:
            f.result(timeout=60)

    ok = {t for t, v in results.items() if v[0] == 200}
    cut = {t for t, v in results.items() if v[0] != 200}
    assert len(ok) >= KILL_AFTER
    assert cut, "the kill came after the burst: nothing was cut off (make the burst longer)"

    sk.restart()
    for trade_no in ok:
        order = api.order(trade_no)
        assert order["trade_status"] == "TRADE_SUCCESS", f"{trade_no} got a 200 but is {order}"
        assert results[trade_no][1]["order"]["transaction_id"] == order["transaction_id"]

    def ledger_rows():
        return db.rows(f"SELECT trade_no, count(*), sum(amount) FROM ledger WHERE user_id = '{user}' GROUP BY trade_no")

    def check_exactly_once():
        rows = ledger_rows()
        assert all(int(count) == 1 and int(total) == 10 for _, count, total in rows), rows
        paid = api.admin_orders(user_id=user, trade_status="TRADE_SUCCESS")
        assert {r[0] for r in rows} == {o["trade_no"] for o in paid}
        assert api.balance(user) == 10 * len(paid)
        assert int(db.scalar(f"SELECT count(DISTINCT transaction_id) FROM ledger WHERE user_id = '{user}'")) == len(paid)
        return paid

    check_exactly_once()

    # The client re-sends every report that did not get its 200.
    for order, purchase, proof in work:
        if order["trade_no"] in cut:
            r = api.report(order["trade_no"], **proof)
            assert r.status_code in (200, 202), r.text
    wait_until(lambda: len(api.admin_orders(user_id=user, trade_status="TRADE_SUCCESS")) == ORDERS, 30,
               "not every re-sent report settled")
    paid = check_exactly_once()
    assert len(paid) == ORDERS
    assert api.balance(user) == 10 * ORDERS
