"""Inputs that PostgreSQL itself would refuse (NUL in text or jsonb) and path values no record can
have: each is a clear 4xx naming the field, never a 500. Found by fuzzing the OpenAPI contract."""

from __future__ import annotations

import http.client

import pytest

from support import error_fields, problem

P = "com.example.tests.hostile."


@pytest.fixture(scope="module")
def api(module_storekeeper, fresh_db):
    return module_storekeeper(fresh_db).client


def test_nul_in_a_text_field_is_a_field_error(api):
    api.put_product(P + "gold")
    r = api.request("PATCH", f"/admin/v1/products/{P}gold", admin=True, json={"title": "Gold\u0000"})
    assert error_fields(problem(r, 422, "validation_failed")) == {"title"}
    r = api.post("/v1/orders", json={"user_id": "u\u0000", "product_id": P + "gold"})
    assert error_fields(problem(r, 422, "validation_failed")) == {"user_id"}


def test_nul_anywhere_in_json_content_is_a_field_error(api):
    api.put_product(P + "pack")
    for content in ({"note": "a\u0000b"}, {"a\u0000": 1}, {"deep": [{"x": ["\u0000"]}]}):
        r = api.request("PATCH", f"/admin/v1/products/{P}pack", admin=True, json={"content": content})
        assert error_fields(problem(r, 422, "validation_failed")) == {"content"}
    assert api.get(f"/admin/v1/products/{P}pack", admin=True).status_code == 200


def test_product_ids_no_product_can_have_are_not_found(api):
    for path in ("/admin/v1/products/a%00b", "/admin/v1/products/%C2%84", "/admin/v1/products/a%00b/price-history"):
        problem(api.get(path, admin=True), 404, "product_not_found")
    problem(api.request("DELETE", "/admin/v1/products/a%00b", admin=True), 404, "product_not_found")
    r = api.request("PATCH", "/admin/v1/products/a%00b", admin=True, json={"title": "x"})
    problem(r, 404, "product_not_found")
    r = api.request("PUT", "/admin/v1/products/a%00b", admin=True,
                    json={"type": "consumable", "title": "x", "price": "1.00", "currency": "USD"})
    assert "product_id" in error_fields(problem(r, 422, "validation_failed"))


def test_nul_in_admin_filters_is_a_bad_query(api):
    r = api.get("/admin/v1/notifications", admin=True, params={"notification_type": "REFUND\u0000"})
    assert error_fields(problem(r, 400, "invalid_query")) == {"notification_type"}
    r = api.get("/admin/v1/notifications", admin=True, params={"transaction_id": "1\u0000"})
    assert error_fields(problem(r, 400, "invalid_query")) == {"transaction_id"}


@pytest.mark.parametrize("bound", ["0001-01-02T00:00:00.31-00:29", "0000-01-01T00:00:00Z",
                                   "9999-12-31T23:59:59+14:00"])
def test_date_filters_at_the_ends_of_rfc3339_are_answered_not_500(api, bound):
    # Found by schemathesis: year 1 became year 0 in Foundation's Julian calendar, which
    # PostgreSQL refuses; a bound outside 1970-9999 means the same as the range's end.
    for name in ("created_from", "created_to"):
        r = api.get("/admin/v1/orders", admin=True, params={name: bound})
        assert r.status_code == 200, r.text


def test_an_encoded_slash_reaches_no_fixed_route(api):
    # A proxy that keeps /admin/ off the public side lets these through: the server must not
    # read %2F as a slash either (it stays inside its segment, as in a path parameter).
    for path in ("/admin%2Fv1%2Fwhoami", "/admin/v1%2fwhoami", "/v1%2Fproducts"):
        problem(api.get(path, admin=True), 404, "not_found")
    # Nor an encoded letter as a letter of a route's words (/%61dmin/ is /admin/ decoded).
    # Sent as written: requests would decode unreserved escapes before sending.
    host, port = api.base.removeprefix("http://").split(":")
    for path in ("/%61dmin/v1/whoami", "/%6detrics", "/admin/v1/%75sers/u1"):
        connection = http.client.HTTPConnection(host, int(port), timeout=10)
        connection.request("GET", path, headers={"Authorization": f"Bearer {api.admin_token}"})
        answer = connection.getresponse()
        assert answer.status == 404, (path, answer.status, answer.read())
        connection.close()
    assert api.get("/admin/v1/whoami", admin=True).status_code == 200


def test_an_order_body_larger_than_any_order_is_413_before_it_is_parsed(api):
    # The route runs on an event loop: a megabyte of unknown keys parsed there held the loop.
    api.put_product(P + "small")
    keys = ",".join(f'"k{i:07d}":0' for i in range(80_000))
    body = '{"user_id":"u","product_id":"' + P + 'small",' + keys + "}"
    r = api.post("/v1/orders", data=body, headers={"Content-Type": "application/json"})
    problem(r, 413, "content_too_large")
    r = api.post("/v1/orders", json={"user_id": "u", "product_id": P + "small"})
    assert r.status_code == 201, r.text
