"""Issue 3: orders before the purchase — creation, snapshots, validation, reads, the admin list
with keyset pages, order detail, and Idempotency-Key including a 100-request race."""

from __future__ import annotations

import re
import threading
import uuid
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta

import pytest
import requests

from support import error_fields, problem, unique, user_headers

P = "com.example.tests.orders."
GOLD = P + "gold"
JPY = P + "gold.jpy"
DIME = P + "dime"
SWORD = P + "sword"
VIP = P + "vip.month"
GONE = P + "retired"


@pytest.fixture(scope="module")
def sk(module_storekeeper, fresh_db):
    return module_storekeeper(fresh_db)


@pytest.fixture(scope="module")
def api(sk):
    api = sk.client
    api.put_product(GOLD, price="6.00", currency="USD")
    api.put_product(JPY, price="600", currency="JPY")
    api.put_product(DIME, price="0.10", currency="USD")
    api.put_product(SWORD, type="non_consumable", price="2.99")
    api.put_product(VIP, type="non_renewing", price="30.00", currency="CNY")
    api.put_product(GONE)
    assert api.request("PATCH", f"/admin/v1/products/{GONE}", admin=True, json={"active": False}).status_code == 200
    return api


def parse_time(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def test_an_order_is_created_with_a_trade_number_token_and_price_snapshot(api):
    user = unique("buyer")
    r = api.post_order(user, GOLD)
    assert r.status_code == 201, r.text
    order = r.json()
    assert re.fullmatch(r"[A-Za-z0-9_]{1,64}", order["trade_no"]), order["trade_no"]
    token = uuid.UUID(order["app_account_token"])
    assert token.version == 4 and str(token) == order["app_account_token"].lower()
    assert order["user_id"] == user and order["product_id"] == GOLD
    assert order["price"] == "6.00" and order["currency"] == "USD"
    assert order["quantity"] == 1 and order["amount"] == "6.00"
    assert order["trade_status"] == "WAIT_BUYER_PAY"
    created, expires = parse_time(order["created_at"]), parse_time(order["expires_at"])
    assert abs((expires - created) - timedelta(hours=24)) < timedelta(seconds=5), (created, expires)

    fetched = api.order(order["trade_no"])
    assert fetched == order


def test_trade_numbers_are_unique_and_sortable_by_creation(api):
    user = unique("many")
    numbers = [api.create_order(user, GOLD)["trade_no"] for _ in range(20)]
    assert len(set(numbers)) == 20
    assert numbers == sorted(numbers), "trade numbers must sort by creation time"
    tokens = {api.order(n)["app_account_token"] for n in numbers[:5]}
    assert len(tokens) == 5


@pytest.mark.parametrize("product,quantity,amount", [
    (GOLD, 3, "18.00"), (DIME, 3, "0.30"), (DIME, 10, "1.00"), (JPY, 7, "4200"), (GOLD, 10, "60.00"),
])
def test_amount_is_price_times_quantity_exactly(api, product, quantity, amount):
    order = api.create_order(unique("qty"), product, quantity=quantity)
    assert order["quantity"] == quantity
    assert order["amount"] == amount


def test_unknown_product_is_404(api):
    problem(api.post_order(unique("u"), P + "no.such.thing"), 404, "product_not_found")


@pytest.mark.parametrize("product_id", ["", "a b", "gold/100", "x" * 101, "gold\u00e9"])
def test_a_malformed_product_id_is_the_requests_fault(api, product_id):
    # openapi.yaml's pattern: a 422 naming the field, not a 404 (which a key would keep a day).
    body = problem(api.post_order(unique("u"), product_id), 422, "validation_failed")
    assert error_fields(body) == {"product_id"}, body


def test_inactive_product_is_422(api):
    problem(api.post_order(unique("u"), GONE), 422, "product_inactive")


def test_quantity_written_as_an_integral_number_is_an_integer(api):
    # JSON Schema counts 4.0 and 4e0 as the integer 4.
    for written in (b"4.0", b"4e0", b"40e-1"):
        body = b'{"user_id": "integral", "product_id": "%s", "quantity": %s}' % (GOLD.encode(), written)
        r = api.request("POST", "/v1/orders", data=body, headers={"Content-Type": "application/json"})
        assert r.status_code == 201, r.text
        assert r.json()["quantity"] == 4 and r.json()["amount"] == "24.00"
    # null is not an integer either (no request field is nullable).
    r = api.request("POST", "/v1/orders", json={"user_id": "integral", "product_id": GOLD, "quantity": None})
    assert "quantity" in error_fields(problem(r, 422, "validation_failed"))


@pytest.mark.parametrize("quantity", [0, 11, -1, "two", "2", 1.5, 4.5, 10.000001])
def test_quantity_out_of_range_is_422(api, quantity):
    body = problem(api.post_order(unique("u"), GOLD, quantity=quantity), 422)
    assert "quantity" in error_fields(body)


@pytest.mark.parametrize("product", [SWORD, VIP])
def test_quantity_above_one_on_a_non_consumable_is_422(api, product):
    problem(api.post_order(unique("u"), product, quantity=2), 422, "quantity_not_allowed")
    assert api.create_order(unique("u"), product, quantity=1)["quantity"] == 1


@pytest.mark.parametrize("user_id", ["", "x" * 129, "bad\u0001user", "tab\tuser", "nl\nuser", "del\u007f", 42, None])
def test_bad_user_ids_are_422(api, user_id):
    body = problem(api.post("/v1/orders", json={"user_id": user_id, "product_id": GOLD}), 422, "validation_failed")
    assert "user_id" in error_fields(body)


@pytest.mark.parametrize("user_id", ["x" * 128, "用户-42", "a b c", "guest:" + str(uuid.uuid4())])
def test_printable_user_ids_up_to_128_characters_work(api, user_id):
    order = api.create_order(user_id, GOLD)
    assert order["user_id"] == user_id


def test_a_guest_can_buy_without_an_account(api):
    guest = f"guest:{uuid.uuid4()}"
    order = api.create_order(guest, GOLD)
    assert order["user_id"] == guest
    assert [o["trade_no"] for o in api.admin_orders(user_id=guest)] == [order["trade_no"]]


def test_unknown_fields_and_bad_bodies_are_refused(api):
    body = problem(api.post("/v1/orders", json={"user_id": "u", "product_id": GOLD, "price": "0.01"}), 422)
    assert "price" in error_fields(body)
    problem(api.post("/v1/orders", data=b"{", headers={"Content-Type": "application/json"}), 400, "malformed_json")
    problem(api.post("/v1/orders", data=b"user_id=u", headers={"Content-Type": "text/plain"}), 415)
    problem(api.post("/v1/orders", json=["not", "an", "object"]), 400, "malformed_json")


def test_a_later_price_change_does_not_alter_an_existing_order(api):
    product = P + "repriced"
    api.put_product(product, price="6.00")
    order = api.create_order(unique("reprice"), product, quantity=2)
    r = api.request("PATCH", f"/admin/v1/products/{product}", admin=True, json={"price": "9.00", "currency": "EUR"})
    assert r.status_code == 200
    again = api.order(order["trade_no"])
    assert (again["price"], again["currency"], again["amount"]) == ("6.00", "USD", "12.00")
    newer = api.create_order(unique("reprice"), product, quantity=2)
    assert (newer["price"], newer["currency"], newer["amount"]) == ("9.00", "EUR", "18.00")


def test_unknown_and_malformed_trade_numbers_are_404(api):
    problem(api.get("/v1/orders/20990101000000000NoSuchOrder00000"), 404, "order_not_found")
    problem(api.get("/v1/orders/not-a-trade-no!"), 404, "order_not_found")


# ---------------------------------------------------------------------------------------------
# Admin list and detail


def test_admin_list_filters_and_pages_newest_first(api):
    user = unique("pager")
    created = [api.create_order(user, GOLD if i % 2 == 0 else JPY)["trade_no"] for i in range(7)]
    other_user = unique("pager-other")
    api.create_order(other_user, GOLD)

    seen: list[str] = []
    cursor = None
    pages = 0
    while True:
        params = {"user_id": user, "limit": 3}
        if cursor:
            params["cursor"] = cursor
        r = api.get("/admin/v1/orders", admin=True, params=params)
        assert r.status_code == 200, r.text
        page = r.json()
        pages += 1
        assert len(page["orders"]) <= 3
        seen += [o["trade_no"] for o in page["orders"]]
        assert all(o["user_id"] == user for o in page["orders"])
        cursor = page.get("next_cursor")
        if not cursor:
            break
        assert pages < 10, "pagination does not end"
    assert pages == 3
    assert sorted(seen) == sorted(created) and len(seen) == len(set(seen)), "every order exactly once"
    assert seen == list(reversed(created)), "newest first"

    jpy = api.admin_orders(user_id=user, product_id=JPY)
    assert sorted(o["trade_no"] for o in jpy) == sorted(created[1::2])
    waiting = api.admin_orders(user_id=user, trade_status="WAIT_BUYER_PAY")
    assert len(waiting) == 7
    assert api.admin_orders(user_id=user, trade_status="TRADE_SUCCESS") == []

    future = (datetime.utcnow() + timedelta(days=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert api.admin_orders(user_id=user, created_from=future) == []
    assert len(api.admin_orders(user_id=user, created_to=future)) == 7


def test_admin_cursor_is_the_last_trade_number_and_any_trade_number_is_a_place_to_start(api):
    user = unique("cursor")
    newest_first = sorted((api.create_order(user, GOLD)["trade_no"] for _ in range(3)), reverse=True)
    first = api.get("/admin/v1/orders", admin=True, params={"user_id": user, "limit": 2}).json()
    assert first["next_cursor"] == first["orders"][-1]["trade_no"] == newest_first[1]
    rest = api.get("/admin/v1/orders", admin=True, params={"user_id": user, "cursor": first["next_cursor"]})
    assert [o["trade_no"] for o in rest.json()["orders"]] == [newest_first[2]]
    # A cursor of the documented shape that this server never gave out is still a position.
    for cursor, expected in (("0", []), ("zzzz", newest_first)):
        r = api.get("/admin/v1/orders", admin=True, params={"user_id": user, "cursor": cursor})
        assert r.status_code == 200, r.text
        assert [o["trade_no"] for o in r.json()["orders"]] == expected


@pytest.mark.parametrize("query,field", [
    ({"trade_status": "PAID"}, "trade_status"),
    ({"limit": "0"}, "limit"),
    ({"limit": "201"}, "limit"),
    ({"cursor": "!!!"}, "cursor"),
    ({"cursor": "x" * 65}, "cursor"),
    ({"created_from": "yesterday"}, "created_from"),
    ({"colour": "blue"}, "colour"),
])
def test_admin_list_refuses_bad_filters(api, query, field):
    body = problem(api.get("/admin/v1/orders", admin=True, params=query), 400, "invalid_query")
    assert field in error_fields(body)


def test_admin_order_detail_has_the_order_and_its_history(api):
    order = api.create_order(unique("detail"), GOLD)
    detail = api.admin_order(order["trade_no"])
    assert detail["order"] == order
    history = detail["history"]
    assert len(history) == 1
    assert history[0]["to_status"] == "WAIT_BUYER_PAY"
    assert history[0].get("from_status") is None
    assert history[0]["reason"] == "created"
    for key in ("reports", "transactions", "notifications"):
        assert detail[key] == []
    problem(api.get("/admin/v1/orders/20990101000000000NoSuchOrder00000", admin=True), 404, "order_not_found")


def test_trade_closed_report_cancels_a_waiting_order_with_history(api):
    order = api.create_order(unique("cancel"), GOLD)
    r = api.report(order["trade_no"], trade_status="TRADE_CLOSED", reason="cancelled")
    assert r.status_code == 200, r.text
    assert r.json()["order"]["trade_status"] == "TRADE_CLOSED"
    closed = api.order(order["trade_no"])
    assert closed["trade_status"] == "TRADE_CLOSED" and closed["close_reason"] == "cancelled"
    history = api.admin_order(order["trade_no"])["history"]
    assert [(h.get("from_status"), h["to_status"], h["reason"]) for h in history] == [
        (None, "WAIT_BUYER_PAY", "created"), ("WAIT_BUYER_PAY", "TRADE_CLOSED", "cancelled")]
    # Again: nothing changes.
    assert api.report(order["trade_no"], trade_status="TRADE_CLOSED", reason="failed").status_code == 200
    assert api.order(order["trade_no"])["close_reason"] == "cancelled"
    problem(api.report(order["trade_no"], trade_status="TRADE_CLOSED", reason="bored"), 422, "validation_failed")


# ---------------------------------------------------------------------------------------------
# Idempotency-Key


def test_same_key_and_body_replays_the_first_response(api):
    user, key = unique("idem"), str(uuid.uuid4())
    first = api.post_order(user, GOLD, quantity=2, key=key)
    assert first.status_code == 201
    assert first.headers.get("Idempotent-Replayed") in (None, "false")
    second = api.post_order(user, GOLD, quantity=2, key=key)
    assert second.status_code == first.status_code
    assert second.headers.get("Idempotent-Replayed") == "true"
    assert second.json() == first.json()
    assert len(api.admin_orders(user_id=user)) == 1


def test_same_key_with_another_body_is_422(api):
    user, key = unique("idem"), str(uuid.uuid4())
    assert api.post_order(user, GOLD, key=key).status_code == 201
    problem(api.post_order(user, GOLD, quantity=3, key=key), 422, "idempotency_key_reused")
    problem(api.post_order(user, JPY, key=key), 422, "idempotency_key_reused")
    assert len(api.admin_orders(user_id=user)) == 1


def test_keys_are_scoped_per_user(api):
    key = str(uuid.uuid4())
    a, b = unique("idem-a"), unique("idem-b")
    first = api.post_order(a, GOLD, key=key).json()
    second = api.post_order(b, GOLD, key=key)
    assert second.status_code == 201
    assert second.json()["trade_no"] != first["trade_no"]


def test_a_definite_error_is_replayed_too(api):
    user, key = unique("idem"), str(uuid.uuid4())
    first = api.post_order(user, P + "no.such", key=key)
    problem(first, 404, "product_not_found")
    again = api.post_order(user, P + "no.such", key=key)
    problem(again, 404, "product_not_found")
    # The replay is the first answer, naming the request that made it.
    assert again.json()["request_id"] == first.headers["X-Request-Id"] != ""


def test_a_bad_key_is_400(api):
    problem(api.post_order(unique("idem"), GOLD, key="x" * 300), 400, "invalid_idempotency_key")


def test_100_concurrent_identical_requests_make_exactly_one_order(sk, api):
    user, key = unique("race"), str(uuid.uuid4())
    body = {"user_id": user, "product_id": GOLD, "quantity": 1}
    barrier = threading.Barrier(100)

    def fire(_):
        s = requests.Session()
        barrier.wait(timeout=30)
        r = s.post(sk.url + "/v1/orders", json=body, headers={"Idempotency-Key": key, **user_headers(user)}, timeout=60)
        return r.status_code, r.json(), r.headers.get("Idempotent-Replayed")

    with ThreadPoolExecutor(max_workers=100) as pool:
        answers = list(pool.map(fire, range(100)))

    orders = api.admin_orders(user_id=user)
    assert len(orders) == 1, f"{len(orders)} orders for one Idempotency-Key"
    trade_no = orders[0]["trade_no"]
    statuses: dict[int, int] = {}
    for status, body_, replayed in answers:
        statuses[status] = statuses.get(status, 0) + 1
        if status in (200, 201):
            assert body_["trade_no"] == trade_no
        else:
            assert status == 409 and body_["code"] == "idempotency_key_in_flight", (status, body_)
    assert statuses.get(201, 0) + statuses.get(200, 0) >= 1, statuses
    # Afterwards the key replays the order.
    after = api.post_order(user, GOLD, quantity=1, key=key)
    assert after.json()["trade_no"] == trade_no
