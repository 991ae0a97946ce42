"""Seed 000 (German tutorial): after a purchase or a restore the app form-posts
`receipt=<base64>&id=<product id>` — the iOS 6-style `transaction.transactionReceipt` — not percent-encoded, so `+` arrives as a space — with no
user and no order. The server verifies, records, and answers with the product's content; a
restore gets the content again without crediting; a later post naming a user credits once."""

from __future__ import annotations

import threading
import xml.etree.ElementTree as ET
from concurrent.futures import ThreadPoolExecutor

import pytest

from support import form_post, unique

DOWNLOAD = "com.example.appname.1042"
COINS = "com.example.appname.coins100"
CONTENT = {"xml": '<product nid="1042"><title>Level pack</title><file>levels-1042.zip</file></product>'}


@pytest.fixture(scope="module")
def stack(module_launcher):
    """Seed 000's app has no sign-in: its posts name no user, which only a trusted caller may
    do. It runs on a trusted network (APP_AUTH=none); a later post naming a user is that."""
    return module_launcher.stack(APP_AUTH="none", APP_JWT_SECRET=None)


@pytest.fixture(scope="module", autouse=True)
def catalog(api):
    api.put_product(DOWNLOAD, type="non_consumable", price="0.99", grants={}, content=CONTENT)
    api.put_product(COINS, price="1.99", grants={"balance": {"coins": 100}}, content={"coins": 100})


def purchase_with_plus(fake, product_id, type, required=False):
    """A purchase whose base64 receipt holds a '+' if the fake makes one, so the naive form post
    garbles it the way seed 000's client does."""
    purchase = None
    for _ in range(40):
        purchase = fake.purchase(product_id, type, receipt_style="transaction")
        if "+" in purchase["receipt"]:
            return purchase
    if required:
        pytest.fail("the fake App Store never produced a receipt containing '+' (its receipts are base64 of "
                    "'FAKE-TX-RECEIPT:<id>' and a binary tail), so the '+'-became-space repair cannot be shown end to end",
                    pytrace=False)
    return purchase


def legacy_post(api, purchase, product_id, user_id=None, spaces=True, path="/v1/receipts"):
    receipt = purchase["receipt"].replace("+", " ") if spaces else purchase["receipt"]
    fields = [("receipt", receipt), ("id", product_id)]
    if user_id:
        fields.append(("user_id", user_id))
    return form_post(api, path, fields)


def newly_granted(response) -> list[bool]:
    """`newly_granted` of each delivery, from the JSON or the XML answer."""
    assert response.status_code == 200, response.text
    if response.headers["Content-Type"].startswith("application/xml"):
        return [d.get("newly_granted") == "true" for d in ET.fromstring(response.content).findall("delivery")]
    return [d["newly_granted"] for d in response.json()["delivery"]]


def count(db, sql):
    return int(db.scalar(sql))


def test_a_download_is_delivered_restored_and_later_owned_by_a_user(api, fake_appstore, stack):
    purchase = purchase_with_plus(fake_appstore, DOWNLOAD, "non_consumable")
    tx = purchase["transaction_id"]

    first = legacy_post(api, purchase, DOWNLOAD)
    assert first.status_code == 200, first.text
    body = first.json()
    assert [d["content"] for d in body["delivery"]] == [CONTENT]
    assert body["delivery"][0]["product_id"] == DOWNLOAD
    assert [(t["transaction_id"], t["status"]) for t in body["transactions"]] == [(tx, "recorded")]
    assert body.get("entitlements") is None
    assert count(stack.db, f"SELECT count(*) FROM apple_transactions WHERE transaction_id = '{tx}' "
                          "AND user_id IS NULL AND trade_no IS NULL") == 1

    # Restored on the device: the same post again (this time with the '+' sent raw).
    restore = legacy_post(api, purchase, DOWNLOAD, spaces=False)
    assert restore.status_code == 200, restore.text
    assert [d["content"] for d in restore.json()["delivery"]] == [CONTENT]
    assert count(stack.db, f"SELECT count(*) FROM apple_transactions WHERE transaction_id = '{tx}'") == 1
    assert count(stack.db, "SELECT count(*) FROM orders WHERE product_id = '%s'" % DOWNLOAD) == 0
    # Sold without an order, it is still sold: it cannot be removed (nor its type changed),
    # or this purchase's restores and transfer would find no product.
    removal = api.request("DELETE", f"/admin/v1/products/{DOWNLOAD}", admin=True)
    assert removal.status_code == 409 and removal.json()["code"] == "product_has_orders", removal.text

    # A post that names a user later cannot take it: a receipt is bearer data, and whoever
    # holds a copy could name themselves. Only an admin transfer gives it an owner.
    user = unique("seed000")
    claimed = legacy_post(api, purchase, DOWNLOAD, user_id=user)
    assert claimed.status_code == 409, claimed.text
    assert claimed.json()["code"] == "purchase_not_yours"
    assert api.admin_orders(user_id=user) == []

    moved = transfer(api, tx, user)
    assert moved["order"]["user_id"] == user and moved["order"]["origin"] == "transfer"
    owned = legacy_post(api, purchase, DOWNLOAD, user_id=user)
    assert owned.status_code == 200, owned.text
    assert [(t["transaction_id"], t["status"]) for t in owned.json()["transactions"]] == [(tx, "restored")]
    assert owned.json()["entitlements"]["non_consumables"] == [DOWNLOAD]
    assert [d["content"] for d in owned.json()["delivery"]] == [CONTENT]
    assert [d["newly_granted"] for d in owned.json()["delivery"]] == [False]
    orders = api.admin_orders(user_id=user)
    assert len(orders) == 1 and orders[0]["trade_status"] == "TRADE_SUCCESS"


def transfer(api, transaction_id, user):
    r = api.request("POST", f"/admin/v1/transactions/{transaction_id}/transfer", admin=True,
                    json={"to_user_id": user, "reason": "support ticket"})
    assert r.status_code == 200, r.text
    return r.json()


def test_a_consumable_is_not_credited_without_a_user_and_credited_once_with_one(api, fake_appstore, stack):
    purchase = purchase_with_plus(fake_appstore, COINS, "consumable")
    tx = purchase["transaction_id"]
    for spaces in (True, False, True):
        r = legacy_post(api, purchase, COINS, spaces=spaces)
        assert r.status_code == 200, r.text
        assert [d["content"] for d in r.json()["delivery"]] == [{"coins": 100}]
    assert count(stack.db, f"SELECT count(*) FROM ledger WHERE transaction_id = '{tx}'") == 0

    user = unique("seed000")
    r = legacy_post(api, purchase, COINS, user_id=user)
    assert r.status_code == 409 and r.json()["code"] == "purchase_not_yours", r.text
    assert api.balance(user, "coins") == 0

    transfer(api, tx, user)
    for _ in range(2):
        r = legacy_post(api, purchase, COINS, user_id=user)
        assert r.status_code == 200, r.text
        assert [t["status"] for t in r.json()["transactions"]] == ["restored"]
        assert [d["newly_granted"] for d in r.json()["delivery"]] == [False]
        assert r.json()["entitlements"]["balances"] == {"coins": 100}
    assert api.balance(user, "coins") == 100

    thief = unique("seed000-other")
    r = legacy_post(api, purchase, COINS, user_id=thief)
    assert r.status_code == 409, r.text
    assert r.json()["code"] == "purchase_not_yours" and user not in r.text
    assert api.balance(thief, "coins") == 0
    assert api.balance(user, "coins") == 100


def test_plus_signs_that_arrived_as_spaces_are_repaired(api, fake_appstore):
    purchase = purchase_with_plus(fake_appstore, DOWNLOAD, "non_consumable", required=True)
    garbled = purchase["receipt"].replace("+", " ")
    assert garbled != purchase["receipt"]
    r = form_post(api, "/v1/receipts", [("receipt", garbled), ("id", DOWNLOAD)])
    assert r.status_code == 200, r.text
    assert [d["content"] for d in r.json()["delivery"]] == [CONTENT]


def test_json_posts_work_like_the_form(api, fake_appstore):
    purchase = fake_appstore.purchase(DOWNLOAD, "non_consumable", receipt_style="transaction")
    r = api.receipts(receipt=purchase["receipt"], product_id=DOWNLOAD)
    assert r.status_code == 200, r.text
    assert [d["content"] for d in r.json()["delivery"]] == [CONTENT]


def test_a_receipt_that_is_not_base64_is_refused_without_asking_apple(api):
    r = form_post(api, "/v1/receipts", [("receipt", "this is not base64 !!!"), ("id", DOWNLOAD)])
    assert r.status_code == 422, r.text
    assert r.json()["code"] == "invalid_proof"


def test_a_new_download_is_delivered_beside_one_someone_owns_in_the_same_receipt(api, fake_appstore, stack):
    # The Apple account's receipt lists an earlier purchase someone owns (a signed-in restore
    # once): the new one it holds is still recorded and delivered, the owned one named
    # `not_yours`; 409 is only for a proof that is all someone else's.
    account = unique("seed000-account")
    owned = fake_appstore.purchase(COINS, "consumable", apple_account=account)
    assert api.receipts(user_id=unique("seed000-owner"), receipt=owned["receipt"]).status_code == 200
    new = fake_appstore.purchase(DOWNLOAD, "non_consumable", apple_account=account)
    r = legacy_post(api, new, DOWNLOAD, spaces=False)
    assert r.status_code == 200, r.text
    statuses = {t["transaction_id"]: t["status"] for t in r.json()["transactions"]}
    assert statuses == {owned["transaction_id"]: "not_yours", new["transaction_id"]: "recorded"}, statuses
    assert [d["content"] for d in r.json()["delivery"]] == [CONTENT]


@pytest.mark.parametrize("path", ["/v1/receipts", "/v1/receipts.xml"])
def test_a_userless_post_says_newly_granted_the_first_time_only(api, fake_appstore, stack, path):
    """The app grants from the content it is sent, and a retry or StoreKit's re-delivery of an
    unfinished transaction posts the same receipt again: only the post that first records the
    transaction says `newly_granted`, in JSON and XML alike."""
    purchase = fake_appstore.purchase(COINS, "consumable", receipt_style="transaction")
    answers = [legacy_post(api, purchase, COINS, spaces=False, path=path) for _ in range(3)]
    assert [newly_granted(r) for r in answers] == [[True], [False], [False]]
    assert len({r.content for r in answers}) == 2
    assert count(stack.db, f"SELECT count(*) FROM ledger WHERE transaction_id = '{purchase['transaction_id']}'") == 0


def test_of_simultaneous_first_posts_only_one_says_newly_granted(api, fake_appstore):
    """Posts racing with one new transaction: the database's insert decides which came first."""
    purchase = fake_appstore.purchase(COINS, "consumable", receipt_style="transaction")
    barrier = threading.Barrier(6)

    def post(_):
        barrier.wait(timeout=30)
        return legacy_post(api, purchase, COINS, spaces=False)

    with ThreadPoolExecutor(6) as pool:
        answers = list(pool.map(post, range(6)))
    flags = [flag for r in answers for flag in newly_granted(r)]
    assert sorted(flags) == [False] * 5 + [True], [r.text for r in answers]
