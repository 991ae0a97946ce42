"""Issue 3: the catalog apps read, and the admin API that edits it (auth, create/replace/patch/
archive/delete, If-Match, price history, validation), including two instances on one database."""

from __future__ import annotations

import time
import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests

from support import error_fields, problem, wait_until

P = "com.example.tests.catalog."


@pytest.fixture(scope="module")
def sk(module_storekeeper, fresh_db):
    # Many refused tokens in a row below: the per-address failure limit (429) is not under test.
    return module_storekeeper(fresh_db, ADMIN_AUTH_FAILURE_LIMIT=1000000)


@pytest.fixture(scope="module")
def api(sk):
    return sk.client


def public_ids(api):
    r = api.get("/v1/products")
    assert r.status_code == 200
    return [p["product_id"] for p in r.json()["products"]]


def admin_product(api, product_id):
    r = api.get(f"/admin/v1/products/{product_id}", admin=True)
    assert r.status_code == 200, r.text
    return r


# ---------------------------------------------------------------------------------------------
# Catalog for apps


def test_products_are_listed_by_sort_order_then_product_id_with_their_fields(api):
    api.put_product(P + "list.c", sort_order=20, price="3.00")
    api.put_product(P + "list.a", sort_order=20, price="1.00")
    api.put_product(P + "list.b", sort_order=10, price="2.00", title="Bee", description="the b product")
    api.put_product(P + "list.z", sort_order=-5, type="non_consumable", price="0.99")
    r = api.get("/v1/products")
    assert r.status_code == 200
    assert r.headers["Content-Type"].startswith("application/json")
    products = [p for p in r.json()["products"] if p["product_id"].startswith(P + "list.")]
    assert [p["product_id"] for p in products] == [P + "list.z", P + "list.b", P + "list.a", P + "list.c"]
    b = products[1]
    expected = {
        "product_id": P + "list.b", "type": "consumable", "title": "Bee", "description": "the b product",
        "price": "2.00", "currency": "USD", "sort_order": 10, "grants": {"balance": {"gold": 100}},
    }
    assert {k: b.get(k) for k in expected} == expected
    assert b["price"] == "2.00" and isinstance(b["price"], str)
    assert b["sort_order"] == 10 and b["title"] == "Bee" and b["currency"] == "USD"
    assert "content" not in b, "content is delivered after purchase, not listed"

    one = api.get(f"/v1/products/{P}list.b")
    assert one.status_code == 200
    assert one.json()["product_id"] == P + "list.b"
    problem(api.get(f"/v1/products/{P}list.nope"), 404, "product_not_found")


def test_catalog_has_a_strong_etag_and_answers_304_to_if_none_match(api):
    api.put_product(P + "etag.one")
    r = api.get("/v1/products")
    etag = r.headers.get("ETag")
    assert etag and etag.startswith('"') and not etag.startswith("W/"), etag
    assert r.headers.get("Cache-Control") == "no-cache"

    again = api.get("/v1/products", headers={"If-None-Match": etag})
    assert again.status_code == 304
    assert again.content == b""
    assert again.headers.get("ETag") == etag

    assert api.get("/v1/products", headers={"If-None-Match": '"something-else"'}).status_code == 200

    api.request("PATCH", f"/admin/v1/products/{P}etag.one", admin=True, json={"price": "7.00"})
    changed = api.get("/v1/products", headers={"If-None-Match": etag})
    assert changed.status_code == 200
    assert changed.headers["ETag"] != etag

    single = api.get(f"/v1/products/{P}etag.one")
    assert single.headers.get("ETag")
    assert api.get(f"/v1/products/{P}etag.one",
                   headers={"If-None-Match": single.headers["ETag"]}).status_code == 304


# ---------------------------------------------------------------------------------------------
# Admin authentication


ADMIN_CALLS = [
    ("GET", "/admin/v1/products", None),
    ("GET", f"/admin/v1/products/{P}auth.secret", None),
    ("PUT", f"/admin/v1/products/{P}auth.secret", {"type": "consumable", "title": "x", "price": "1.00",
                                                  "currency": "USD", "grants": {"balance": {"gold": 1}}}),
    ("PATCH", f"/admin/v1/products/{P}auth.secret", {"price": "9.00"}),
    ("DELETE", f"/admin/v1/products/{P}auth.secret", None),
    ("GET", f"/admin/v1/products/{P}auth.secret/price-history", None),
    ("GET", "/admin/v1/orders", None),
    ("GET", "/admin/v1/notifications", None),
    ("GET", "/admin/v1/consumption-requests", None),
]


@pytest.mark.parametrize("authorization", [
    None, "Bearer wrong-token-0123456789abcdef", "Basic b3BzOnBhc3N3b3Jk", "Bearer", "Bearer ",
    "bearer", "Token {token}", "Bearer {token}x", "Bearer  {token}", "{token}",
])
def test_admin_without_the_right_token_is_401_and_leaks_nothing(api, sk, authorization):
    api.put_product(P + "auth.secret", title="Top Secret Title", price="4.56")
    for method, path, body in ADMIN_CALLS:
        headers = {}
        if authorization is not None:
            headers["Authorization"] = authorization.replace("{token}", sk.admin_token)
        r = requests.request(method, sk.url + path, json=body, headers=headers, timeout=10)
        problem(r, 401, "unauthorized")
        assert "auth.secret" not in r.text and "Top Secret" not in r.text and "4.56" not in r.text
    # Nothing changed through the refused writes.
    product = admin_product(api, P + "auth.secret").json()
    assert product["price"] == "4.56" and product["active"] is True


def test_admin_with_the_right_token_works(api):
    r = api.get("/admin/v1/products", admin=True)
    assert r.status_code == 200
    assert isinstance(r.json()["products"], list)
    assert r.headers.get("ETag")


# ---------------------------------------------------------------------------------------------
# Create, replace, patch, archive, delete


def test_put_creates_201_then_replaces_200(api):
    body = {"type": "consumable", "title": "Gold 10", "description": "d", "price": "1.00", "currency": "USD",
            "sort_order": 3, "grants": {"balance": {"gold": 10}}, "content": {"k": "v"}}
    r = api.request("PUT", f"/admin/v1/products/{P}put.gold", admin=True, json=body)
    assert r.status_code == 201, r.text
    created = r.json()
    assert created["product_id"] == P + "put.gold" and created["active"] is True
    assert r.headers.get("ETag")

    body2 = dict(body, title="Gold 10 (new)", grants={"balance": {"gold": 12}}, content={"k": "w"})
    r = api.request("PUT", f"/admin/v1/products/{P}put.gold", admin=True, json=body2)
    assert r.status_code == 200, r.text
    replaced = r.json()
    assert replaced["title"] == "Gold 10 (new)"
    assert replaced["grants"] == {"balance": {"gold": 12}}
    assert replaced["content"] == {"k": "w"}
    listed = [p for p in api.get("/v1/products").json()["products"] if p["product_id"] == P + "put.gold"]
    assert listed and listed[0]["title"] == "Gold 10 (new)"


def test_content_keeps_the_digits_an_admin_wrote_and_a_number_out_of_range_is_refused(api):
    # Content is the app's to read: a 23-digit id or a decimal comes back as written (not as
    # the nearest double). Delivery writes it with the same digits (`JSONNumberTests`).
    product_id = f"{P}content.digits"
    raw = ('{"type": "consumable", "title": "Digits", "price": "1.00", "currency": "USD", '
           '"grants": {"balance": {"gold": 1}}, "content": {"id": 12345678901234567890123, "ratio": 0.1}}')
    r = api.request("PUT", f"/admin/v1/products/{product_id}", admin=True, data=raw,
                    headers={"Content-Type": "application/json"})
    assert r.status_code == 201, r.text
    assert '"id":12345678901234567890123' in r.text and '"ratio":0.1' in r.text
    got = api.get(f"/admin/v1/products/{product_id}", admin=True)
    assert got.json()["content"] == {"id": 12345678901234567890123, "ratio": 0.1}
    # A number no JSON writer here can carry again is refused with its field, not stored
    # (it answered 500 before).
    raw = raw.replace("0.1}", "1e400}")
    r = api.request("PUT", f"/admin/v1/products/{P}content.huge", admin=True, data=raw,
                    headers={"Content-Type": "application/json"})
    assert error_fields(problem(r, 422, "validation_failed")) == {"content"}
    assert api.get(f"/admin/v1/products/{P}content.huge", admin=True).status_code == 404


@pytest.mark.parametrize("field,value,expected", [
    ("price", "7.50", "7.50"),
    ("price", "8", "8.00"),
    ("currency", "EUR", "EUR"),
    ("sort_order", 42, 42),
    ("title", "Renamed", "Renamed"),
    ("description", "Now with more gold", "Now with more gold"),
    ("active", False, False),
    ("grants", {"balance": {"gold": 250, "gems": 5}}, {"balance": {"gold": 250, "gems": 5}}),
    ("content", {"download": "https://example.com/x.zip"}, {"download": "https://example.com/x.zip"}),
])
def test_patch_changes_exactly_one_field(api, field, value, expected):
    product_id = f"{P}patch.{field}.{uuid.uuid4().hex[:6]}"
    before = api.put_product(product_id, price="6.00", title="Before", description="desc", sort_order=1,
                             content={"a": 1})
    r = api.request("PATCH", f"/admin/v1/products/{product_id}", admin=True, json={field: value})
    assert r.status_code == 200, r.text
    after = r.json()
    assert after[field] == expected
    for other in ("price", "currency", "sort_order", "title", "description", "active", "grants", "content", "type"):
        if other != field and not (field == "currency" and other == "price"):
            assert after[other] == before[other], f"PATCH {field} changed {other}"
    public = api.get(f"/v1/products/{product_id}")
    if field == "active":
        assert public.status_code == 404
    else:
        assert public.status_code == 200
        if field in public.json():
            assert public.json()[field] == expected


def test_patch_of_an_unknown_product_is_404(api):
    problem(api.request("PATCH", f"/admin/v1/products/{P}never.made", admin=True, json={"price": "1.00"}),
            404, "product_not_found")


def test_delete_removes_a_product_no_order_refers_to(api):
    api.put_product(P + "delete.me")
    api.request("PATCH", f"/admin/v1/products/{P}delete.me", admin=True, json={"price": "7.00"})
    assert P + "delete.me" in public_ids(api)
    r = api.request("DELETE", f"/admin/v1/products/{P}delete.me", admin=True)
    assert r.status_code == 204, r.text
    assert r.content == b""
    problem(api.get(f"/admin/v1/products/{P}delete.me", admin=True), 404, "product_not_found")
    problem(api.get(f"/admin/v1/products/{P}delete.me/price-history", admin=True), 404, "product_not_found")
    problem(api.get(f"/v1/products/{P}delete.me"), 404, "product_not_found")
    assert P + "delete.me" not in public_ids(api)
    assert P + "delete.me" not in [p["product_id"] for p in api.get("/admin/v1/products", admin=True).json()["products"]]
    problem(api.request("DELETE", f"/admin/v1/products/{P}delete.me", admin=True), 404, "product_not_found")
    problem(api.request("DELETE", f"/admin/v1/products/{P}never.made", admin=True), 404, "product_not_found")
    # The id is free again; its revisions go on from the deleted product's (2), so an ETag
    # held from before the delete never matches the new one.
    assert api.put_product(P + "delete.me")["revision"] == 3


def test_delete_of_a_product_with_orders_is_409_and_archiving_is_patch(api):
    api.put_product(P + "delete.ordered")
    order = api.create_order("catalog-user", P + "delete.ordered")
    body = problem(api.request("DELETE", f"/admin/v1/products/{P}delete.ordered", admin=True),
                   409, "product_has_orders")
    assert "active" in body["detail"]
    assert admin_product(api, P + "delete.ordered").json()["active"] is True
    assert P + "delete.ordered" in public_ids(api)

    r = api.request("PATCH", f"/admin/v1/products/{P}delete.ordered", admin=True, json={"active": False})
    assert r.status_code == 200, r.text
    assert admin_product(api, P + "delete.ordered").json()["active"] is False
    assert P + "delete.ordered" not in public_ids(api)
    assert api.order(order["trade_no"])["product_id"] == P + "delete.ordered"
    problem(api.post_order("catalog-user", P + "delete.ordered"), 422, "product_inactive")
    problem(api.request("DELETE", f"/admin/v1/products/{P}delete.ordered", admin=True), 409, "product_has_orders")


def test_the_type_of_a_product_with_orders_cannot_change(api):
    # Its type says what its orders granted and what a refund takes back: a non-consumable
    # turned consumable would take it from everyone who bought it.
    api.put_product(P + "type.ordered", type="non_consumable")
    api.create_order("catalog-user", P + "type.ordered")
    before = admin_product(api, P + "type.ordered").json()
    body = problem(put(api, P + "type.ordered", type="consumable"), 409, "product_type_locked")
    assert "non_consumable" in body["detail"]
    assert admin_product(api, P + "type.ordered").json() == before
    # Anything else may still change, and a product nobody ordered may change its type.
    assert api.put_product(P + "type.ordered", type="non_consumable", title="Renamed")["title"] == "Renamed"
    api.put_product(P + "type.unordered", type="non_consumable")
    assert api.put_product(P + "type.unordered", type="consumable")["type"] == "consumable"


def test_sort_order_written_as_an_integral_number_is_an_integer(api):
    api.put_product(P + "patch.integral")
    r = api.request("PATCH", f"/admin/v1/products/{P}patch.integral", admin=True, json={"sort_order": 7.0})
    assert r.status_code == 200, r.text
    assert r.json()["sort_order"] == 7


def test_grant_amounts_and_durations_written_as_integral_numbers_are_integers(api):
    gold = put(api, P + "grants.integral", grants={"balance": {"gold": 100.0}})
    assert gold.status_code in (200, 201), gold.text
    assert gold.json()["grants"] == {"balance": {"gold": 100}}
    vip = put(api, P + "grants.integral.vip", type="non_renewing",
              grants={"entitlement": "vip", "duration_days": 3e1})
    assert vip.status_code in (200, 201), vip.text
    assert vip.json()["grants"] == {"entitlement": "vip", "duration_days": 30}


def test_an_empty_patch_is_refused(api):
    api.put_product(P + "patch.empty")
    revision = admin_product(api, P + "patch.empty").json()["revision"]
    body = problem(api.request("PATCH", f"/admin/v1/products/{P}patch.empty", admin=True, json={}),
                   422, "validation_failed")
    assert error_fields(body) == {"body"}
    assert admin_product(api, P + "patch.empty").json()["revision"] == revision


def test_an_invalid_patch_is_422_whatever_if_match_says(api):
    api.put_product(P + "patch.badbody")
    r = api.request("PATCH", f"/admin/v1/products/{P}patch.badbody", admin=True, json={"grants": None},
                    headers={"If-Match": '"stale"'})
    problem(r, 422, "validation_failed")


def test_if_match_stale_is_412_and_current_is_200(api):
    api.put_product(P + "ifmatch")
    etag = admin_product(api, P + "ifmatch").headers["ETag"]
    r = api.request("PATCH", f"/admin/v1/products/{P}ifmatch", admin=True, json={"price": "2.00"},
                    headers={"If-Match": etag})
    assert r.status_code == 200, r.text
    new_etag = r.headers["ETag"]
    assert new_etag != etag

    stale = api.request("PATCH", f"/admin/v1/products/{P}ifmatch", admin=True, json={"price": "3.00"},
                        headers={"If-Match": etag})
    problem(stale, 412, "precondition_failed")
    assert admin_product(api, P + "ifmatch").json()["price"] == "2.00"

    put_stale = api.request("PUT", f"/admin/v1/products/{P}ifmatch", admin=True, headers={"If-Match": etag},
                            json={"type": "consumable", "title": "t", "price": "4.00", "currency": "USD",
                                  "grants": {"balance": {"gold": 1}}})
    problem(put_stale, 412, "precondition_failed")
    problem(api.request("DELETE", f"/admin/v1/products/{P}ifmatch", admin=True, headers={"If-Match": etag}),
            412, "precondition_failed")
    assert api.request("DELETE", f"/admin/v1/products/{P}ifmatch", admin=True,
                       headers={"If-Match": new_etag}).status_code == 204


def test_an_etag_from_before_a_delete_never_matches_the_product_created_again(api):
    """A product deleted and created again under its id continues its revisions, so an admin
    still holding the old product's ETag is told it changed instead of overwriting the new one."""
    api.put_product(P + "reborn", price="1.00")
    held = admin_product(api, P + "reborn").headers["ETag"]
    assert api.request("DELETE", f"/admin/v1/products/{P}reborn", admin=True,
                       headers={"If-Match": held}).status_code == 204
    recreated = api.put_product(P + "reborn", price="5.00")
    assert recreated["revision"] == 2, recreated
    for _ in range(3):
        api.request("PATCH", f"/admin/v1/products/{P}reborn", admin=True, json={"title": "edited"})
    assert admin_product(api, P + "reborn").headers["ETag"] != held
    problem(api.request("PATCH", f"/admin/v1/products/{P}reborn", admin=True, json={"price": "0.99"},
                        headers={"If-Match": held}), 412, "precondition_failed")
    problem(api.request("DELETE", f"/admin/v1/products/{P}reborn", admin=True, headers={"If-Match": held}),
            412, "precondition_failed")
    assert admin_product(api, P + "reborn").json()["price"] == "5.00"


def test_if_none_match_star_creates_a_product_only_when_its_id_is_free(api):
    body = {"type": "consumable", "title": "first", "price": "1.00", "currency": "USD",
            "grants": {"balance": {"gold": 1}}}
    r = api.request("PUT", f"/admin/v1/products/{P}create.only", admin=True, json=body,
                    headers={"If-None-Match": "*"})
    assert r.status_code == 201, r.text
    taken = api.request("PUT", f"/admin/v1/products/{P}create.only", admin=True,
                        json={**body, "title": "second"}, headers={"If-None-Match": "*"})
    assert "create" in problem(taken, 412, "precondition_failed")["detail"]
    assert admin_product(api, P + "create.only").json()["title"] == "first"
    # Without the header a PUT still replaces.
    assert api.request("PUT", f"/admin/v1/products/{P}create.only", admin=True,
                       json={**body, "title": "second"}).status_code == 200
    # Admins creating one id at the same moment: one creates it, the others are told it exists.
    raced = P + "create.raced"
    with ThreadPoolExecutor(8) as pool:
        statuses = list(pool.map(lambda i: api.request(
            "PUT", f"/admin/v1/products/{raced}", admin=True, json={**body, "title": f"admin {i}"},
            headers={"If-None-Match": "*"}).status_code, range(8)))
    assert sorted(statuses) == [201] + [412] * 7, statuses
    assert admin_product(api, raced).json()["revision"] == 1


def test_price_history_records_old_new_currency_and_token_name(api):
    api.put_product(P + "history", price="6.00", currency="USD")
    api.request("PATCH", f"/admin/v1/products/{P}history", admin=True, json={"title": "no price change"})
    api.request("PATCH", f"/admin/v1/products/{P}history", admin=True, json={"price": "7.00"})
    api.request("PATCH", f"/admin/v1/products/{P}history", admin=True, json={"price": "700", "currency": "JPY"})
    r = api.get(f"/admin/v1/products/{P}history/price-history", admin=True)
    assert r.status_code == 200, r.text
    history = r.json()["history"]
    assert [(h.get("old_price"), h.get("old_currency"), h["new_price"], h["new_currency"]) for h in history] == [
        (None, None, "6.00", "USD"),
        ("6.00", "USD", "7.00", "USD"),
        ("7.00", "USD", "700", "JPY"),
    ]
    assert all(h["changed_by"] == "ops" for h in history)
    assert all(h["changed_at"] for h in history)
    problem(api.get(f"/admin/v1/products/{P}nope/price-history", admin=True), 404, "product_not_found")


# ---------------------------------------------------------------------------------------------
# Validation


def put(api, product_id, **overrides):
    body = {"type": "consumable", "title": "T", "price": "6.00", "currency": "USD", "sort_order": 0,
            "grants": {"balance": {"gold": 100}}}
    body.update(overrides)
    body = {k: v for k, v in body.items() if v is not ...}
    return api.request("PUT", f"/admin/v1/products/{product_id}", admin=True, json=body)


@pytest.mark.parametrize("overrides,field", [
    ({"type": "subscription"}, "type"),
    ({"type": ...}, "type"),
    ({"price": "6.001"}, "price"),
    ({"price": "600.5", "currency": "JPY"}, "price"),
    ({"price": "-1"}, "price"),
    ({"price": "1e3"}, "price"),
    ({"price": 6.0}, "price"),
    ({"price": ""}, "price"),
    ({"price": "6."}, "price"),
    ({"currency": "usd"}, "currency"),
    ({"currency": "XXX"}, "currency"),
    ({"currency": "DOLLARS"}, "currency"),
    ({"sort_order": 2 ** 31}, "sort_order"),
    ({"sort_order": -(2 ** 31) - 1}, "sort_order"),
    ({"sort_order": "first"}, "sort_order"),
    ({"title": ""}, "title"),
    ({"title": "x" * 201}, "title"),
    ({"unknown_field": 1}, "unknown_field"),
    ({"grants": {"entitlement": "vip"}}, "grants"),
    ({"grants": {"balance": {"gold": -5}}}, "grants.balance.gold"),
    ({"grants": {"balance": {"Gold!": 5}}}, "grants.balance.Gold!"),
    ({"type": "non_consumable", "grants": {"balance": {"gold": 5}}}, "grants.balance"),
    ({"type": "auto_renewable", "grants": {}}, "grants.entitlement"),
    ({"type": "auto_renewable", "grants": {"entitlement": "vip", "duration_days": 30}}, "grants.duration_days"),
    ({"type": "non_renewing", "grants": {"entitlement": "vip"}}, "grants.duration_days"),
    ({"type": "non_renewing", "grants": {"entitlement": "vip", "duration_days": 0}}, "grants.duration_days"),
    ({"grants": {"balance": {"gold": 5}, "bonus": 1}}, "grants.bonus"),
    ({"content": "not an object"}, "content"),
    ({"title": " \t\n\u3000"}, "title"),
    ({"title": None}, "title"),
    ({"grants": None}, "grants"),
    ({"active": None}, "active"),
    ({"sort_order": 4.5}, "sort_order"),
    ({"grants": {"balance": None}}, "grants.balance"),
    ({"grants": {"balance": {"gold": None}}}, "grants.balance.gold"),
    ({"grants": {"balance": {"gold": 1.5}}}, "grants.balance.gold"),
    ({"type": "non_renewing", "grants": {"entitlement": None, "duration_days": 30}}, "grants.entitlement"),
    ({"type": "non_renewing", "grants": {"entitlement": "vip", "duration_days": 30.5}}, "grants.duration_days"),
])
def test_invalid_products_are_refused_with_field_errors(api, overrides, field):
    product_id = P + "invalid"
    r = put(api, product_id, **overrides)
    body = problem(r, 422, "validation_failed")
    assert field in error_fields(body), body
    assert api.get(f"/admin/v1/products/{product_id}", admin=True).status_code == 404


def test_the_url_names_the_product_so_a_body_product_id_is_refused(api):
    for body_id in (P + "named.in.body", P + "other"):
        r = api.request("PUT", f"/admin/v1/products/{P}named.in.body", admin=True,
                        json={"product_id": body_id, "type": "consumable", "title": "t", "price": "1.00",
                              "currency": "USD"})
        assert error_fields(problem(r, 422, "validation_failed")) == {"product_id"}


@pytest.mark.parametrize("product_id", ["bad!id", "a" * 101, "with%20space", "caf%C3%A9"])
def test_invalid_product_ids_are_refused(api, product_id):
    r = put(api, product_id)
    body = problem(r, 422, "validation_failed")
    assert "product_id" in error_fields(body)


@pytest.mark.parametrize("price,currency,stored", [
    ("6", "USD", "6.00"), ("6.5", "USD", "6.50"), ("0", "USD", "0.00"), ("600", "JPY", "600"),
    ("1.234", "KWD", "1.234"), ("0006.10", "CNY", "6.10"), ("999999999999.99", "USD", "999999999999.99"),
])
def test_valid_prices_are_normalised_to_the_currency(api, price, currency, stored):
    r = put(api, P + "price.ok", price=price, currency=currency)
    assert r.status_code in (200, 201), r.text
    assert r.json()["price"] == stored
    assert api.get(f"/v1/products/{P}price.ok").json()["price"] == stored


def test_patch_validates_price_against_a_new_currency(api):
    api.put_product(P + "currency.switch", price="6.50", currency="USD")
    body = problem(api.request("PATCH", f"/admin/v1/products/{P}currency.switch", admin=True,
                               json={"currency": "JPY"}), 422, "validation_failed")
    assert "price" in error_fields(body)
    body = problem(api.request("PATCH", f"/admin/v1/products/{P}currency.switch", admin=True,
                               json={"type": "non_consumable"}), 422, "validation_failed")
    assert "type" in error_fields(body)


def test_malformed_json_is_a_400_problem(api):
    r = api.request("PUT", f"/admin/v1/products/{P}json", admin=True, data=b"{not json",
                    headers={"Content-Type": "application/json"})
    problem(r, 400, "malformed_json")


# ---------------------------------------------------------------------------------------------
# Two instances on one database


def test_a_price_change_through_one_instance_is_served_by_another(sk, api, module_storekeeper, fresh_db):
    # Instance B follows A's changes by NOTIFY, at once; how fast is the benchmarks' business,
    # so the waits here are generous for a loaded machine (the test fails only if B never does).
    other = module_storekeeper(fresh_db, share_admin_with=sk)
    product_id = P + "two.instances"
    api.put_product(product_id, price="6.00")
    wait_until(lambda: other.client.get(f"/v1/products/{product_id}").status_code == 200, 15,
               "instance B never saw the new product")

    for price in ("7.00", "8.25", "9.99"):
        r = api.request("PATCH", f"/admin/v1/products/{product_id}", admin=True, json={"price": price})
        assert r.status_code == 200
        wait_until(lambda: other.client.get(f"/v1/products/{product_id}").json()["price"] == price, 15,
                   f"instance B still served the old price after the change to {price}")
        # Both instances serve identical bytes, so their ETags agree.
        wait_until(lambda: api.get("/v1/products").headers["ETag"] == other.client.get("/v1/products").headers["ETag"],
                   15, "the two instances serve different catalogs")

    # An admin write through B is served by A too.
    r = other.client.request("PATCH", f"/admin/v1/products/{product_id}", admin=True, json={"title": "via B"})
    assert r.status_code == 200
    wait_until(lambda: api.get(f"/v1/products/{product_id}").json()["title"] == "via B", 15,
               "instance A did not follow a change made through B")


def test_a_delete_through_one_instance_is_followed_by_another(sk, api, module_storekeeper, fresh_db):
    other = module_storekeeper(fresh_db, share_admin_with=sk)
    product_id = P + "two.instances.delete"
    api.put_product(product_id)
    wait_until(lambda: other.client.get(f"/v1/products/{product_id}").status_code == 200, 15,
               "instance B never saw the new product")
    assert api.request("DELETE", f"/admin/v1/products/{product_id}", admin=True).status_code == 204
    wait_until(lambda: other.client.get(f"/v1/products/{product_id}").status_code == 404, 15,
               "instance B still serves a removed product")
    assert product_id not in public_ids(other.client)


# ---------------------------------------------------------------------------------------------
# Reordering the whole catalog at once


def catalog_positions(api):
    r = api.get("/admin/v1/products", admin=True)
    assert r.status_code == 200
    return [{"product_id": p["product_id"], "revision": p["revision"]} for p in r.json()["products"]]


def reorder(api, positions, client=None):
    return (client or api).request("PUT", "/admin/v1/product-order", admin=True, json={"products": positions})


def test_a_reorder_renumbers_the_whole_catalog_in_one_write_with_audit_rows(api):
    ids = [P + f"order.{c}" for c in "abc"]
    for i, product_id in enumerate(ids):
        api.put_product(product_id, sort_order=-3000 + i)
    positions = catalog_positions(api)
    # c before a, b: c moves to the top.
    mine = [p for p in positions if p["product_id"] in ids]
    others = [p for p in positions if p["product_id"] not in ids]
    wanted = [mine[2], mine[0], mine[1]] + others
    r = reorder(api, wanted)
    assert r.status_code == 200, r.text
    answered = r.json()["products"]
    assert [p["product_id"] for p in answered] == [p["product_id"] for p in wanted]
    assert [p["sort_order"] for p in answered] == [10 * (i + 1) for i in range(len(wanted))]
    # Only a product whose sort_order changed has a new revision, and an audit row for it.
    before = {p["product_id"]: p["revision"] for p in positions}
    for product in answered:
        assert product["revision"] in (before[product["product_id"]], before[product["product_id"]] + 1)
    assert all(p["revision"] == before[p["product_id"]] + 1 for p in answered if p["product_id"] in ids)
    entry = api.admin_pages("/admin/v1/audit", "entries", target_id=ids[2])[0]
    assert entry["action"] == "product_updated"
    # Apps are served the new order at once.
    assert [p for p in public_ids(api) if p in ids] == [ids[2], ids[0], ids[1]]

    # The same order again changes nothing: no revision moves.
    again = reorder(api, catalog_positions(api))
    assert again.status_code == 200
    assert again.json()["products"] == answered


def test_a_reorder_from_a_stale_list_is_412_and_writes_nothing(api):
    ids = [P + f"stale.order.{c}" for c in "abcd"]
    for i, product_id in enumerate(ids):
        api.put_product(product_id, sort_order=-4000 + i)
    positions = catalog_positions(api)
    before = api.get("/admin/v1/products", admin=True).json()["products"]
    # Another admin renames the third product meanwhile: only its revision moves.
    assert api.request("PATCH", f"/admin/v1/products/{ids[2]}", admin=True, json={"title": "x"}).status_code == 200
    mine = [p for p in positions if p["product_id"] in ids]
    wanted = [mine[0], mine[1], mine[3], mine[2]] + [p for p in positions if p["product_id"] not in ids]
    problem(reorder(api, wanted), 412, "precondition_failed")
    after = api.get("/admin/v1/products", admin=True).json()["products"]
    assert [(p["product_id"], p["sort_order"]) for p in after] == [(p["product_id"], p["sort_order"]) for p in before]
    assert [p for p in public_ids(api) if p in ids] == ids

    # A list that leaves a product out, or names one that does not exist, is stale too.
    current = catalog_positions(api)
    problem(reorder(api, current[:-1]), 412, "precondition_failed")
    problem(reorder(api, current + [{"product_id": P + "order.ghost", "revision": 1}]), 412,
            "precondition_failed")
    assert reorder(api, current).status_code == 200


@pytest.mark.parametrize("body,field", [
    ({}, "products"),
    ({"products": []}, "products"),
    ({"products": "a"}, "products"),
    ({"products": [{"product_id": "a", "revision": 1}] * 2}, "products[1].product_id"),
    ({"products": ["a"]}, "products[0]"),
    ({"products": [{"product_id": "a"}]}, "products[0].revision"),
    ({"products": [{"product_id": "a", "revision": 0}]}, "products[0].revision"),
    ({"products": [{"product_id": "bad!id", "revision": 1}]}, "products[0].product_id"),
    ({"products": [{"product_id": "a", "revision": 1, "sort_order": 5}]}, "products[0].sort_order"),
    ({"products": [{"product_id": f"p{i}", "revision": 1} for i in range(10_001)]}, "products"),
    ({"products": [], "other": 1}, "other"),
])
def test_an_invalid_reorder_is_422_with_the_field(api, body, field):
    r = api.request("PUT", "/admin/v1/product-order", admin=True, json=body)
    assert field in error_fields(problem(r, 422, "validation_failed"))


def test_a_catalog_of_more_than_a_thousand_products_is_reordered(storekeeper, launcher):
    # The first cap, 1,000, refused the whole list of a larger catalog (and its first 1,000 as
    # stale), so the console could move nothing in it.
    db = launcher.database()
    big = storekeeper(db).client
    # Written in one statement (a thousand PUTs would take minutes on a loaded machine); the
    # reorder reads the table, and its NOTIFY has the catalog served reload.
    db.rows("INSERT INTO products (product_id, type, title, price, currency, sort_order) "
            f"SELECT '{P}many.' || lpad(i::text, 4, '0'), 'consumable', 'Many', 1, 'USD', i "
            "FROM generate_series(0, 1004) i")
    positions = catalog_positions(big)
    assert len(positions) == 1_005
    r = reorder(big, positions[::-1])
    assert r.status_code == 200, r.text[:300]
    assert public_ids(big)[:2] == [P + "many.1004", P + "many.1003"]


def test_a_reorder_through_one_instance_is_served_by_another(sk, api, module_storekeeper, fresh_db):
    other = module_storekeeper(fresh_db, share_admin_with=sk)
    ids = [P + f"order.notify.{c}" for c in "ab"]
    for i, product_id in enumerate(ids):
        api.put_product(product_id, sort_order=-5000 + i)
    wait_until(lambda: [p for p in public_ids(other.client) if p in ids] == ids, 15,
               "instance B never saw the products")
    positions = catalog_positions(api)
    mine = [p for p in positions if p["product_id"] in ids]
    assert reorder(api, mine[::-1] + [p for p in positions if p["product_id"] not in ids]).status_code == 200
    wait_until(lambda: [p for p in public_ids(other.client) if p in ids] == ids[::-1], 15,
               "instance B still serves the old order")
