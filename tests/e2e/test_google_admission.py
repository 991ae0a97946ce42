"""Limits audit 4, finding 1: Google Play's calls have an admission lane of their own
(GOOGLE_PLAY_CONCURRENCY). While Google is slow, reports and restores past that cap are stored
and answered 202 at once (the retry worker settles them, once each) instead of waiting without
bound for Apple's lane, so an App Store customer's receipt is still settled at once; and a
Google request whose client left leaves nothing for the retry worker to ask Google about."""

from __future__ import annotations

import threading
import time

import pytest
import requests

from google_support import FakeGooglePlay
from support import unique, user_headers, wait_until

GOLD = "com.example.tests.glane.gold"
# Google's calls take this long: far longer than a 202 needs.
GOOGLE_DELAY_MS = 3000


@pytest.fixture
def google(tmp_path):
    fake = FakeGooglePlay(tmp_path).start()
    yield fake
    fake.terminate(15)
    fake.forget()


def post(url: str, path: str, user: str, body: dict, answers: list, i: int, barrier: threading.Barrier) -> None:
    session = requests.Session()
    barrier.wait(timeout=60)
    start = time.monotonic()
    try:
        r = session.post(url + path, json=body, headers=user_headers(user), timeout=60)
        answers[i] = (r.status_code, r.json(), time.monotonic() - start)
    except requests.RequestException as e:
        answers[i] = ("cut", repr(e), time.monotonic() - start)


def google_calls(google: FakeGooglePlay) -> int:
    """Purchase reads the fake has answered (its log names the route, not the token)."""
    return sum('"path":"/androidpublisher/v3/applications/{packageName}/purchases/products/' in line
               for line in google.log().splitlines())


def test_google_calls_past_their_own_cap_are_answered_202_and_leave_apples_lane_free(launcher, google):
    # Apple's lane holds 4 calls and Google's 2: six slow Google requests would take all of
    # Apple's slots if they shared them.
    stack = launcher.stack(VERIFY_CONCURRENCY=None, VERIFY_RECEIPT_CONCURRENCY="4", GOOGLE_PLAY_CONCURRENCY="2",
                           **google.env_for_storekeeper())
    api, fake, db = stack.api, stack.fake, stack.db
    api.put_product(GOLD, grants={"balance": {"gold": 10}})
    work = []
    for i in range(6):
        user = unique(f"glane{i}")
        if i % 2:
            r = api.post("/v1/orders", json={"user_id": user, "product_id": GOLD, "store": "google_play"})
            assert r.status_code == 201, r.text
            order = r.json()
            bought = google.buy(GOLD, obfuscated_account_id=order["obfuscated_account_id"])
            work.append(("/v1/trade-reports", user, {"trade_no": order["trade_no"], "trade_status": "TRADE_SUCCESS",
                                                     "purchase_token": bought["purchase_token"]}))
        else:
            bought = google.buy(GOLD)
            work.append(("/v1/receipts", user, {"store": "google_play", "user_id": user, "product_id": GOLD,
                                                "purchase_token": bought["purchase_token"]}))
    honest = unique("apple-customer")
    receipt = fake.purchase(GOLD, "consumable")["receipt"]

    google.fault(0, delay_ms=GOOGLE_DELAY_MS)
    answers: list = [None] * len(work)
    barrier = threading.Barrier(len(work))
    threads = [threading.Thread(target=post, args=(stack.sk.url, path, user, body, answers, i, barrier))
               for i, (path, user, body) in enumerate(work)]
    for t in threads:
        t.start()
    # The App Store customer posts while the first Google calls are still out: once the rest
    # are answered, or after 2 s (they take 3 s).
    deadline = time.monotonic() + 2
    while time.monotonic() < deadline and sum(a is not None for a in answers) < 4:
        time.sleep(0.05)
    started = time.monotonic()
    apple = api.receipts(receipt=receipt, user_id=honest)
    apple_took = time.monotonic() - started
    for t in threads:
        t.join(60)
    google.clear_faults()

    assert apple.status_code == 200, apple.text
    assert apple_took < 2.5, f"the App Store receipt took {apple_took:.1f} s"
    statuses = sorted(a[0] for a in answers)
    assert statuses == [200, 200, 202, 202, 202, 202], answers
    for status, body, took in answers:
        if status == 202:
            # Past Google's cap: stored and answered at once, not after waiting for a slot.
            assert took < GOOGLE_DELAY_MS / 1000 - 1, f"a 202 took {took:.1f} s: {body}"
            assert body["verification"] == "pending", body
    assert int(db.scalar("SELECT count(*) FROM trade_reports WHERE last_error = 'google_busy'")) == 4

    # The retry worker settles each pending one, once, with nobody asking again.
    wait_until(lambda: all(api.balance(user) == 10 for _, user, _ in work), 60,
               "not every report or restore past Google's cap was settled by the retry worker")
    for _, user, _ in work:
        assert int(db.scalar(f"SELECT count(*) FROM ledger WHERE user_id = '{user}'")) == 1
    assert db.scalar("SELECT count(*) FROM trade_reports WHERE outcome = 'pending'") == "0"
    assert api.balance(honest) == 10


def test_a_google_request_whose_client_left_leaves_nothing_for_the_retry_worker(launcher, google):
    stack = launcher.stack(GOOGLE_PLAY_CONCURRENCY="8", **google.env_for_storekeeper())
    api, db = stack.api, stack.db
    api.put_product(GOLD, grants={"balance": {"gold": 10}})
    work = []
    for i in range(4):
        user = unique(f"gone{i}")
        token = f"made-up-{unique('token')}"
        if i % 2:
            r = api.post("/v1/orders", json={"user_id": user, "product_id": GOLD, "store": "google_play"})
            assert r.status_code == 201, r.text
            work.append((token, "/v1/trade-reports", user, {"trade_no": r.json()["trade_no"],
                                                            "trade_status": "TRADE_SUCCESS", "purchase_token": token}))
        else:
            work.append((token, "/v1/receipts", user, {"store": "google_play", "user_id": user, "product_id": GOLD,
                                                       "purchase_token": token}))

    google.fault(0, delay_ms=GOOGLE_DELAY_MS)
    for _, path, user, body in work:
        # The client gives up long before Google answers, and closes its connection.
        with pytest.raises(requests.exceptions.ReadTimeout):
            requests.post(stack.sk.url + path, json=body, headers=user_headers(user), timeout=0.5)
    # Each request's call was cut short when its client left; Google is quick again now, and
    # the retry worker would have asked it again by the end of the sleep.
    wait_until(lambda: google_calls(google) >= len(work), 10, "a request never asked Google")
    google.clear_faults()
    time.sleep(GOOGLE_DELAY_MS / 1000 + 3)

    assert db.scalar("SELECT count(*) FROM trade_reports WHERE outcome = 'pending'") == "0"
    restores = db.rows("SELECT outcome, outcome_code FROM trade_reports WHERE trade_no IS NULL")
    assert [tuple(row) for row in restores] == [("gave_up", "client_gone")] * 2, restores
    # A report stored nothing; nobody asked Google about any of them again.
    assert db.scalar("SELECT count(*) FROM trade_reports WHERE trade_no IS NOT NULL") == "0"
    assert google_calls(google) == len(work)
    assert "CancellationError" not in stack.sk.log()
