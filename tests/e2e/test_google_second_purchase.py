"""A second Google purchase made with the obfuscated account id of an order another purchase
already paid (the app's answer was lost and it ran the billing flow again with the same order,
or reused the order's id): Google charged for both and refunds within three days what is not
acknowledged or consumed, so the second is credited on an order of its own and consumed, on the
report path and on the restore path, as on the App Store. The same purchase told again is a
replay; a renewal of the subscription that paid the order is no second purchase."""

from __future__ import annotations

import pytest

from google_support import FakeGooglePlay
from support import unique
from test_google_purchases import google_order, report


@pytest.fixture(scope="module")
def google(tmp_path_factory):
    fake = FakeGooglePlay(tmp_path_factory.mktemp("google-second")).start()
    yield fake
    fake.terminate(15)
    fake.forget()


@pytest.fixture(scope="module")
def api(module_storekeeper, google):
    client = module_storekeeper(**google.env_for_storekeeper()).client
    client.put_product("gs.gold", "consumable", grants={"balance": {"gold": 100}})
    client.put_product("gs.vip", "auto_renewable", grants={"entitlement": "vip"})
    return client


def restore(api, user: str, token: str):
    return api.post("/v1/receipts", json={"store": "google_play", "user_id": user,
                                          "purchase_token": token, "product_id": "gs.gold"})


def paid_orders(api, user: str) -> list[dict]:
    return [o for o in api.admin_orders(user_id=user) if o["trade_status"] == "TRADE_SUCCESS"]


def test_a_second_purchase_reported_with_a_paid_order_is_credited_on_an_order_of_its_own(api, google):
    user = unique("gs-report")
    order = google_order(api, user, "gs.gold")
    first = google.buy("gs.gold", obfuscated_account_id=order["obfuscated_account_id"])
    second = google.buy("gs.gold", obfuscated_account_id=order["obfuscated_account_id"])
    assert report(api, order["trade_no"], first["purchase_token"]).status_code == 200
    r = report(api, order["trade_no"], second["purchase_token"])
    assert r.status_code == 200, r.text
    own = r.json()["order"]["trade_no"]
    assert own != order["trade_no"] and r.json()["delivery"]["newly_granted"] is True
    orders = {o["trade_no"]: o for o in paid_orders(api, user)}
    assert set(orders) == {order["trade_no"], own}
    assert (orders[own]["origin"], orders[own]["transaction_id"]) == ("receipt", second["order_id"])
    assert api.balance(user) == 200
    for bought in (first, second):
        google.wait_acknowledged("gs.gold", bought["purchase_token"], consumed=True)
    # Each told again is a replay of its own answer.
    for bought, trade_no in ((first, order["trade_no"]), (second, own)):
        again = report(api, order["trade_no"], bought["purchase_token"])
        assert again.status_code == 200, again.text
        assert (again.json()["order"]["trade_no"], again.json()["delivery"]["newly_granted"]) == (trade_no, False)
    assert api.balance(user) == 200 and len(paid_orders(api, user)) == 2


def test_a_second_purchase_restored_with_a_paid_order_is_credited_on_an_order_of_its_own(api, google):
    user = unique("gs-restore")
    order = google_order(api, user, "gs.gold")
    first = google.buy("gs.gold", obfuscated_account_id=order["obfuscated_account_id"])
    second = google.buy("gs.gold", obfuscated_account_id=order["obfuscated_account_id"])
    assert report(api, order["trade_no"], first["purchase_token"]).status_code == 200
    r = restore(api, user, second["purchase_token"])
    assert r.status_code == 200, r.text
    item = r.json()["transactions"][0]
    assert item["status"] == "settled" and item["trade_no"] != order["trade_no"], item
    assert api.balance(user) == 200 and len(paid_orders(api, user)) == 2
    google.wait_acknowledged("gs.gold", second["purchase_token"], consumed=True)
    again = restore(api, user, second["purchase_token"]).json()["transactions"][0]
    assert (again["status"], again["trade_no"]) == ("restored", item["trade_no"])
    assert api.balance(user) == 200


def test_a_renewal_of_the_subscription_that_paid_the_order_is_no_second_purchase(api, google):
    user = unique("gs-renewal")
    order = google_order(api, user, "gs.vip")
    bought = google.subscribe("gs.vip", obfuscated_account_id=order["obfuscated_account_id"],
                              period_seconds=3600)
    assert report(api, order["trade_no"], bought["purchase_token"]).status_code == 200
    google.control(f"subscriptions/{bought['purchase_token']}/events", {"event": "renew"})
    report(api, order["trade_no"], bought["purchase_token"])
    assert [o["origin"] for o in api.admin_orders(user_id=user)] == ["order"]
