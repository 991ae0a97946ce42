"""Purchases whose app report never comes (the app killed after the billing flow, offline for
good): Google's push, read back, names the order through `obfuscatedExternalAccountId`, and the
push settles that order as the report would, acknowledgement included, so Google does not refund
it after three days. The report that comes late after all is answered as a replay, credited
once. A push naming no order of this server's still waits for the report. An upgrade whose
report is lost keeps the subscriber's access: the new purchase pays its order (or, naming none,
is credited to the owner of the purchase it replaces)."""

from __future__ import annotations

import pytest

from google_support import push_env, start_pushing_fake
from support import unique, wait_until
from test_google_unseen_voids import order_for, report


@pytest.fixture(scope="module")
def google(tmp_path_factory):
    fake = start_pushing_fake(tmp_path_factory.mktemp("google-unreported"))
    yield fake
    fake.terminate(15)
    fake.forget()


@pytest.fixture(scope="module")
def sk(module_launcher, module_storekeeper, google):
    db = module_launcher.database()
    sk = module_storekeeper(db, port=google.storekeeper_port, **push_env(google))
    sk.client.put_product("gu.gold", "consumable", grants={"balance": {"gold": 100}})
    sk.client.put_product("gu.vip", "auto_renewable", grants={"entitlement": "vip"})
    sk.client.put_product("gu.pro", "auto_renewable", grants={"entitlement": "pro"})
    sk.db = db
    return sk


def notification(sk, token: str) -> str | None:
    return sk.db.scalar("SELECT string_agg(state || ' ' || result, ',') FROM google_notifications "
                        f"WHERE purchase_token = '{token}'")


def paid(sk, trade_no: str) -> bool:
    return sk.client.order(trade_no)["trade_status"] == "TRADE_SUCCESS"


def entitlements(sk, user: str) -> set[str]:
    return {e["entitlement"] for e in sk.client.entitlements(user)["entitlements"]}


def test_a_consumable_whose_report_never_comes_is_credited_and_consumed_by_its_push(sk, google):
    user = unique("gu-gold")
    order = order_for(sk, user, "gu.gold")
    bought = google.buy("gu.gold", obfuscated_account_id=order["obfuscated_account_id"])
    wait_until(lambda: paid(sk, order["trade_no"]), 30, "the order paid by the push")
    assert sk.client.order(order["trade_no"])["transaction_id"] == bought["order_id"]
    assert sk.client.balance(user) == 100
    google.wait_acknowledged("gu.gold", bought["purchase_token"], consumed=True)
    assert notification(sk, bought["purchase_token"]) == "processed settled_named_order"
    # The app's report, late: the same delivery, no second credit.
    late = report(sk, order, bought["purchase_token"])
    assert late.status_code == 200, late.text
    assert late.json()["order"]["trade_no"] == order["trade_no"]
    assert late.json()["delivery"]["newly_granted"] is False
    assert sk.client.balance(user) == 100


def test_a_subscription_whose_report_never_comes_is_granted_and_acknowledged(sk, google):
    user = unique("gu-vip")
    order = order_for(sk, user, "gu.vip")
    bought = google.subscribe("gu.vip", obfuscated_account_id=order["obfuscated_account_id"])
    wait_until(lambda: paid(sk, order["trade_no"]), 30, "the order paid by the push")
    assert entitlements(sk, user) == {"vip"}
    wait_until(lambda: google.subscription(bought["purchase_token"])["acknowledgementState"]
               == "ACKNOWLEDGEMENT_STATE_ACKNOWLEDGED", 20, "acknowledged")
    late = report(sk, order, bought["purchase_token"])
    assert late.status_code == 200, late.text
    assert late.json()["delivery"]["newly_granted"] is False
    assert len(sk.client.admin_orders(user_id=user)) == 1


def test_a_push_naming_no_order_still_waits_for_the_report(sk, google):
    user = unique("gu-none")
    bought = google.buy("gu.gold")
    wait_until(lambda: notification(sk, bought["purchase_token"]), 30, "the push applied")
    assert notification(sk, bought["purchase_token"]) == "ignored unknown_token"
    assert sk.client.admin_orders(user_id=user) == []
    order = order_for(sk, user, "gu.gold")
    assert report(sk, order, bought["purchase_token"]).status_code == 200
    assert sk.client.balance(user) == 100


def test_an_unreported_upgrade_keeps_the_subscribers_access(sk, google):
    user = unique("gu-upgrade")
    first = order_for(sk, user, "gu.vip")
    old = google.subscribe("gu.vip", obfuscated_account_id=first["obfuscated_account_id"])
    wait_until(lambda: paid(sk, first["trade_no"]), 30, "the first purchase paid")
    order = order_for(sk, user, "gu.pro")
    new = google.subscribe("gu.pro", obfuscated_account_id=order["obfuscated_account_id"],
                           linked_purchase_token=old["purchase_token"])
    wait_until(lambda: paid(sk, order["trade_no"]), 30, "the upgrade paid by its push")
    assert entitlements(sk, user) == {"pro"}
    wait_until(lambda: google.subscription(new["purchase_token"])["acknowledgementState"]
               == "ACKNOWLEDGEMENT_STATE_ACKNOWLEDGED", 20, "acknowledged")
    # Google's pushes about the replaced purchase change nothing of that.
    wait_until(lambda: notification(sk, old["purchase_token"]) and "pending" not in notification(
        sk, old["purchase_token"]), 30, "the old purchase's pushes applied")
    assert entitlements(sk, user) == {"pro"}


def test_an_unreported_upgrade_naming_no_order_goes_to_the_replaced_purchases_owner(sk, google):
    user = unique("gu-linked")
    first = order_for(sk, user, "gu.vip")
    old = google.subscribe("gu.vip", obfuscated_account_id=first["obfuscated_account_id"])
    wait_until(lambda: paid(sk, first["trade_no"]), 30, "the first purchase paid")
    new = google.subscribe("gu.pro", linked_purchase_token=old["purchase_token"])
    wait_until(lambda: entitlements(sk, user) == {"pro"}, 30, "the upgrade credited to the subscriber")
    renewal = [o for o in sk.client.admin_orders(user_id=user) if o["product_id"] == "gu.pro"]
    assert [(o["origin"], o["trade_status"], o["transaction_id"]) for o in renewal] == [
        ("renewal", "TRADE_SUCCESS", new["order_id"])], renewal
    assert notification(sk, new["purchase_token"]) == "processed settled_for_replaced_owner"
    wait_until(lambda: google.subscription(new["purchase_token"])["acknowledgementState"]
               == "ACKNOWLEDGEMENT_STATE_ACKNOWLEDGED", 20, "acknowledged")
