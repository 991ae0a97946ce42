"""Seed 000's post names no user, and its client finishes the StoreKit transaction whatever the
answer: a `202 pending` with no content loses a consumable for good, as no later call can
fetch it. So with Apple's calls at their cap (VERIFY_RECEIPT_CONCURRENCY) a userless post waits
for a slot, within VERIFY_QUEUE_TIMEOUT, and is answered with its content. A post with a user
is still answered 202 at once: the retry worker credits that user later."""

from __future__ import annotations

import threading
import xml.etree.ElementTree as ET

import pytest
import requests

from support import unique, user_headers, wait_until

PREFIX = "com.beispielfirma.appname."
COINS = PREFIX + "coins100"
FORM = {"Content-Type": "application/x-www-form-urlencoded"}


@pytest.fixture(scope="module")
def stack(module_launcher):
    # Two calls to Apple at a time; Apple answers each after about a second, well within
    # APPLE_TIMEOUT.
    return module_launcher.stack(RECEIPTS_WITHOUT_SIGN_IN="true", XML_PRODUCT_ID_PREFIX=PREFIX,
                                 VERIFY_RECEIPT_CONCURRENCY="2", APPLE_TIMEOUT="5s")


@pytest.fixture(scope="module", autouse=True)
def catalog(api):
    api.put_product(COINS, price="1.99", grants={"balance": {"coins": 100}}, content={"coins": 100})


def post_together(url: str, posts: list[tuple[bytes, dict]]) -> list[tuple[int, bytes]]:
    """Each (body, headers) form-posted to `url` from its own thread, all released at once."""
    answers: list = [None] * len(posts)
    barrier = threading.Barrier(len(posts))

    def post(i: int) -> None:
        body, headers = posts[i]
        session = requests.Session()
        barrier.wait(timeout=30)
        r = session.post(url, data=body, headers={**FORM, **headers}, timeout=60)
        answers[i] = (r.status_code, r.content)

    threads = [threading.Thread(target=post, args=(i,)) for i in range(len(posts))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(90)
    return answers


def test_userless_posts_past_apples_cap_wait_for_a_slot_and_carry_their_content(stack):
    api, fake = stack.api, stack.fake
    receipts = [fake.purchase(COINS, "consumable", receipt_style="transaction")["receipt"] for _ in range(6)]
    fake.fault("timeout", delay_ms=1000)
    try:
        answers = post_together(stack.sk.url + "/v1/receipts.xml",
                                [(f"receipt={r}&id={COINS}".encode(), {}) for r in receipts])
    finally:
        fake.clear_faults()
    assert [status for status, _ in answers] == [200] * 6, answers
    for _, body in answers:
        [delivery] = ET.fromstring(body).findall("delivery")
        assert delivery.find("content/field[@name='coins']").text == "100", body
    # Each was asked of Apple once, by its own post: none was left to the retry worker.
    assert stack.db.scalar("SELECT count(*) FROM trade_reports WHERE outcome = 'pending'") == "0"


def test_a_post_with_a_user_past_the_cap_is_still_answered_pending_and_credited_later(stack):
    api, fake = stack.api, stack.fake
    user = unique("capped")
    holders = [fake.purchase(COINS, "consumable", receipt_style="transaction")["receipt"] for _ in range(2)]
    mine = fake.purchase(COINS, "consumable", receipt_style="transaction")["receipt"]
    before = sum(fake.calls().values())
    fake.fault("timeout", delay_ms=3000)
    try:
        # Two userless posts hold both of Apple's slots for three seconds.
        held = [threading.Thread(target=requests.post, args=(stack.sk.url + "/v1/receipts",),
                                 kwargs={"data": f"receipt={r}&id={COINS}".encode(), "headers": FORM,
                                         "timeout": 60})
                for r in holders]
        for t in held:
            t.start()
        wait_until(lambda: sum(fake.calls().values()) >= before + 2, 10, "the holders never reached the fake")
        r = requests.post(stack.sk.url + "/v1/receipts", data=f"receipt={mine}&id={COINS}".encode(),
                          headers={**FORM, **user_headers(user)}, timeout=60)
        for t in held:
            t.join(60)
    finally:
        fake.clear_faults()
    assert r.status_code == 202 and r.json()["verification"] == "pending", r.text
    wait_until(lambda: api.balance(user, "coins") == 100, 30, "the retry worker never credited the capped post")
