"""Seed 003 (Turkish tutorial): a table of products showing "title price TL". The server gives
each product its title, its exact price and its currency, in a stable order an admin controls."""

from __future__ import annotations

import pytest

P = "com.example.tests.seed003."


@pytest.fixture(scope="module")
def sk(module_storekeeper, fresh_db):
    return module_storekeeper(fresh_db)


@pytest.fixture(scope="module")
def api(sk):
    api = sk.client
    api.put_product(P + "altin100", title="100 Altın", price="29.99", currency="TRY", sort_order=2)
    api.put_product(P + "reklamsiz", type="non_consumable", title="Reklamsız sürüm", price="49.99",
                    currency="TRY", sort_order=1, grants={})
    api.put_product(P + "altin500", title="500 Altın", price="119.00", currency="TRY", sort_order=2)
    api.put_product(P + "jeton", title="コイン 120", price="120", currency="JPY", sort_order=3)
    return api


def rows(api):
    products = api.get("/v1/products").json()["products"]
    return [(p["title"], p["price"], p["currency"]) for p in products if p["product_id"].startswith(P)]


def test_titles_prices_and_currency_are_listed_in_order(api):
    assert rows(api) == [
        ("Reklamsız sürüm", "49.99", "TRY"),
        ("100 Altın", "29.99", "TRY"),
        ("500 Altın", "119.00", "TRY"),
        ("コイン 120", "120", "JPY"),
    ]
    lines = [f"{title} {price} {'TL' if currency == 'TRY' else currency}" for title, price, currency in rows(api)]
    assert lines[0] == "Reklamsız sürüm 49.99 TL"


def test_the_order_is_stable_and_follows_admin_changes(api):
    first = api.get("/v1/products")
    assert all(api.get("/v1/products").content == first.content for _ in range(5))
    r = api.request("PATCH", f"/admin/v1/products/{P}jeton", admin=True, json={"sort_order": 0, "price": "150"})
    assert r.status_code == 200
    assert rows(api)[0] == ("コイン 120", "150", "JPY")
    r = api.request("PATCH", f"/admin/v1/products/{P}jeton", admin=True, json={"title": "コイン 150"})
    assert rows(api)[0] == ("コイン 150", "150", "JPY")
