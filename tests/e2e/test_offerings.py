"""Issue 27: prices per storefront, offerings and placements, targeting rules. Real processes on a
real PostgreSQL; users are signed in with tokens PyJWT makes (support.mint)."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from support import BUNDLE_ID, buy, error_fields, mint, problem, unique, wait_until

P = "com.example.tests.offerings."


@pytest.fixture(scope="module")
def sk(stack):
    return stack.sk


@pytest.fixture(scope="module")
def db(stack):
    return stack.db


def signed_in(user: str) -> dict:
    return {"Authorization": f"Bearer {mint(user)}"}


def by_id(body: dict) -> dict:
    return {p["product_id"]: p for p in body["products"]}


def set_price(api, product_id: str, storefront: str, price: str, currency: str):
    return api.request("PUT", f"/admin/v1/products/{product_id}/prices/{storefront}", admin=True,
                       json={"price": price, "currency": currency})


# ---------------------------------------------------------------------------------------------
# Prices per storefront


def test_a_storefront_price_is_served_for_that_storefront_and_the_default_elsewhere(api):
    gems, coins = P + "sf.gems", P + "sf.coins"
    api.put_product(gems, price="4.99", currency="USD")
    api.put_product(coins, price="1.99", currency="USD")
    r = set_price(api, gems, "DEU", "5.49", "EUR")
    assert r.status_code == 201, r.text
    assert r.json() == {**r.json(), "storefront": "DEU", "price": "5.49", "currency": "EUR"}
    # Google Play's alpha-2 region names the same storefront; the price is normalised.
    r = set_price(api, gems, "JP", "800", "JPY")
    assert r.status_code == 201 and r.json()["storefront"] == "JPN", r.text
    assert set_price(api, gems, "DE", "5.5", "EUR").json()["price"] == "5.50"

    plain = api.get("/v1/products")
    deu = api.get("/v1/products?storefront=DEU")
    header = api.get("/v1/products", headers={"Storekeeper-Storefront": "DE"})
    fra = api.get("/v1/products?storefront=FRA")
    assert by_id(plain.json())[gems]["price"] == "4.99" and by_id(plain.json())[gems]["currency"] == "USD"
    assert (by_id(deu.json())[gems]["price"], by_id(deu.json())[gems]["currency"]) == ("5.50", "EUR")
    assert by_id(deu.json())[coins]["price"] == "1.99", "a product without a DEU price keeps its default"
    assert header.content == deu.content and header.headers["ETag"] == deu.headers["ETag"]
    assert fra.content == plain.content and fra.headers["ETag"] == plain.headers["ETag"]
    assert deu.headers["ETag"] != plain.headers["ETag"]
    assert "Storekeeper-Storefront" in plain.headers.get("Vary", "")
    # The query parameter wins over the header.
    assert api.get("/v1/products?storefront=JPN", headers={"Storekeeper-Storefront": "DEU"}).json() \
        == api.get("/v1/products?storefront=JPN").json()
    one = api.get(f"/v1/products/{gems}?storefront=JPN").json()
    assert (one["price"], one["currency"]) == ("800", "JPY")
    assert api.get(f"/v1/products/{gems}", headers={"If-None-Match": deu.headers["ETag"]}).status_code == 200
    again = api.get("/v1/products?storefront=DEU", headers={"If-None-Match": deu.headers["ETag"]})
    assert again.status_code == 304


def test_an_order_is_priced_for_the_storefront_the_app_is_in(api):
    # What the catalog showed the app in Germany is what its order records (and its events,
    # webhooks and exports after it), not the default price.
    pid = P + "sf.ordered"
    api.put_product(pid, price="4.99", currency="USD")
    assert set_price(api, pid, "DEU", "5.49", "EUR").status_code == 201
    shown = api.get(f"/v1/products/{pid}", headers={"Storekeeper-Storefront": "DEU"}).json()
    user = unique("sf-order")
    for kw in ({"headers": {"Storekeeper-Storefront": "DEU"}}, {"params": {"storefront": "DE"}},
               {"headers": {"Storekeeper-Storefront": "DEU", "Idempotency-Key": unique("k")}}):
        r = api.post("/v1/orders", json={"user_id": user, "product_id": pid, "quantity": 2}, **kw)
        assert r.status_code == 201, r.text
        order = r.json()
        assert (order["price"], order["currency"], order["amount"]) == (shown["price"], "EUR", "10.98"), order
        assert api.order(order["trade_no"])["currency"] == "EUR"
    # Elsewhere, or without a storefront, the default.
    for kw in ({}, {"headers": {"Storekeeper-Storefront": "FRA"}}):
        order = api.post("/v1/orders", json={"user_id": user, "product_id": pid}, **kw).json()
        assert (order["price"], order["currency"]) == ("4.99", "USD"), order
    # A key replays its first answer only for the same storefront.
    key = unique("k")
    first = api.post("/v1/orders", json={"user_id": user, "product_id": pid},
                     headers={"Storekeeper-Storefront": "DEU", "Idempotency-Key": key})
    assert first.status_code == 201, first.text
    problem(api.post("/v1/orders", json={"user_id": user, "product_id": pid},
                     headers={"Storekeeper-Storefront": "FRA", "Idempotency-Key": key}), 422, "idempotency_key_reused")
    body = problem(api.post("/v1/orders", json={"user_id": user, "product_id": pid},
                            headers={"Storekeeper-Storefront": "XX"}), 400, "invalid_storefront")
    assert error_fields(body) == {"Storekeeper-Storefront"}


def test_a_transfers_order_keeps_the_price_the_purchase_was_made_at(api, stack):
    # The transfer's order is the same purchase: bought in Germany at the German price, it was
    # recorded at the default price and currency, so one purchase read 10.99 EUR on one order and
    # 9.99 USD on the other in order views, exports and the transfer's events.
    pid = P + "sf.transferred"
    api.put_product(pid, type="non_consumable", price="9.99", currency="USD", grants={})
    assert set_price(api, pid, "DEU", "10.99", "EUR").status_code == 201
    alice, bob = unique("sf-from"), unique("sf-to")
    r = api.post("/v1/orders", json={"user_id": alice, "product_id": pid},
                 headers={"Storekeeper-Storefront": "DEU"})
    assert r.status_code == 201, r.text
    order = r.json()
    bought = stack.fake.purchase(pid, "non_consumable", app_account_token=order["app_account_token"],
                                 storefront="DEU", price=10990, currency="EUR")
    assert api.report(order["trade_no"], signed_transaction=bought["signed_transaction"]).status_code == 200
    # The catalog's German price changes after the purchase: the transfer keeps what was paid.
    assert set_price(api, pid, "DEU", "12.99", "EUR").status_code == 200
    r = api.request("POST", f"/admin/v1/transactions/{bought['transaction_id']}/transfer", admin=True,
                    json={"to_user_id": bob, "reason": "changed accounts"})
    assert r.status_code == 200, r.text
    moved = api.order(r.json()["order"]["trade_no"])
    assert (moved["price"], moved["currency"], moved["amount"]) == ("10.99", "EUR", "10.99"), moved


@pytest.mark.parametrize("batch_max", ["64", "1"], ids=["group_commit", "one_by_one"])
def test_an_order_made_while_an_admin_changes_a_storefront_price_is_priced_as_the_change_left_it(
        stack, api, db, module_launcher, batch_max):
    # The order waited for the admin's change (the product's row lock) and then priced itself
    # with the storefront price read before the wait: the old one, the default where one had
    # just been set, or one just removed. The product is held so that the change and then the
    # order queue behind it.
    pid = P + f"sf.racing.{batch_max}"
    api.put_product(pid, price="1.00", currency="USD")
    assert set_price(api, pid, "DEU", "2.00", "EUR").status_code == 201
    orders = module_launcher.storekeeper(db, share_admin_with=stack.sk, ORDER_BATCH_MAX=batch_max).client

    def waiting() -> int:
        return int(db.scalar("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                             "AND datname = current_database()"))

    def ordered_during(change, storefront: str) -> tuple[str, str]:
        with ThreadPoolExecutor(max_workers=2) as pool:
            with db.holding(f"SELECT 1 FROM products WHERE product_id = '{pid}' FOR UPDATE"):
                changed = pool.submit(change)
                wait_until(lambda: waiting() == 1, 30, "the admin's change never waited")
                made = pool.submit(orders.post, "/v1/orders", json={"user_id": unique("sf-racing"), "product_id": pid},
                                   headers={"Storekeeper-Storefront": storefront})
                wait_until(lambda: waiting() == 2, 30, "the order never waited")
            assert changed.result(timeout=30).status_code in (200, 201, 204)
            r = made.result(timeout=30)
        assert r.status_code == 201, r.text
        return r.json()["price"], r.json()["currency"]

    assert ordered_during(lambda: set_price(api, pid, "DEU", "5.00", "EUR"), "DEU") == ("5.00", "EUR")
    assert ordered_during(lambda: set_price(api, pid, "FRA", "7.00", "EUR"), "FRA") == ("7.00", "EUR")
    assert ordered_during(lambda: api.request("DELETE", f"/admin/v1/products/{pid}/prices/DEU", admin=True),
                          "DEU") == ("1.00", "USD")


def test_an_order_storekeeper_opens_for_a_renewal_is_priced_in_the_purchases_storefront(stack, api):
    # A German subscriber's renewal, which no app ordered: its order is priced as an order
    # the app made in Germany would be, not at the default price.
    pid = P + "sf.renewing"
    api.put_product(pid, type="auto_renewable", price="4.99", currency="USD", grants={"entitlement": "sf_club"})
    assert set_price(api, pid, "DEU", "5.49", "EUR").status_code == 201
    user = unique("sf-renewal")
    order = api.post("/v1/orders", json={"user_id": user, "product_id": pid},
                     headers={"Storekeeper-Storefront": "DEU"}).json()
    purchase = stack.fake.purchase(pid, "auto_renewable", app_account_token=order["app_account_token"],
                                   storefront="DEU", price=5490, currency="EUR")
    assert api.report(order["trade_no"], signed_transaction=purchase["signed_transaction"]).status_code == 200
    stack.fake.renewal(purchase["transaction_id"])
    renewals = wait_until(lambda: [o for o in api.admin_orders(user_id=user) if o["origin"] == "renewal"], 15,
                          "the renewal's order")
    assert [(o["price"], o["currency"]) for o in renewals] == [("5.49", "EUR")], renewals
    # Bought elsewhere (the fake signs USA by default): the default price.
    other = unique("sf-renewal-usa")
    bought = buy(api, stack.fake, other, pid, type="auto_renewable")[1]
    stack.fake.renewal(bought["transaction_id"])
    renewals = wait_until(lambda: [o for o in api.admin_orders(user_id=other) if o["origin"] == "renewal"], 15,
                          "the renewal's order")
    assert [(o["price"], o["currency"]) for o in renewals] == [("4.99", "USD")], renewals


@pytest.mark.parametrize("value", ["DEUX", "XX", "ZZZ", "1", "", "D", "deu", "de"])
def test_an_unknown_storefront_is_refused_not_served_default_prices(api, value):
    body = problem(api.get("/v1/products", params={"storefront": value}), 400, "invalid_storefront")
    assert error_fields(body) == {"storefront"}
    body = problem(api.get("/v1/products", headers={"Storekeeper-Storefront": value or "?"}), 400,
                   "invalid_storefront")
    assert error_fields(body) == {"Storekeeper-Storefront"}
    # A good parameter does not hide a malformed header.
    body = problem(api.get("/v1/products?storefront=DEU", headers={"Storekeeper-Storefront": value or "?"}),
                   400, "invalid_storefront")
    assert error_fields(body) == {"Storekeeper-Storefront"}
    # Offerings answer a wrong storefront the same way, before any other parameter.
    body = problem(api.get("/v1/offerings/default", params={"storefront": value}), 400, "invalid_storefront")
    assert error_fields(body) == {"storefront"}
    body = problem(api.get("/v1/offerings/default", headers={"Storekeeper-Storefront": value or "?"}), 400,
                   "invalid_storefront")
    assert error_fields(body) == {"Storekeeper-Storefront"}


def test_storefront_prices_are_validated_with_their_fields(api):
    pid = P + "sf.validate"
    api.put_product(pid)
    cases = [
        ({"price": "1.999", "currency": "EUR"}, {"price"}),
        ({"price": "1.5", "currency": "JPY"}, {"price"}),
        ({"price": "-1", "currency": "EUR"}, {"price"}),
        ({"price": "1.00", "currency": "EURO"}, {"currency"}),
        ({"price": "1.00", "currency": "XYZ"}, {"currency"}),
        ({"price": "1.00"}, {"currency"}),
        ({"price": 1, "currency": "EUR"}, {"price"}),
        ({"price": "1.00", "currency": "EUR", "extra": 1}, {"extra"}),
    ]
    for body, fields in cases:
        r = api.request("PUT", f"/admin/v1/products/{pid}/prices/DEU", admin=True, json=body)
        assert error_fields(problem(r, 422, "validation_failed")) == fields, (body, r.text)
    r = api.request("PUT", f"/admin/v1/products/{pid}/prices/QQQ", admin=True,
                    json={"price": "1.00", "currency": "EUR"})
    assert error_fields(problem(r, 422, "validation_failed")) == {"storefront"}
    problem(set_price(api, P + "sf.nope", "DEU", "1.00", "EUR"), 404, "product_not_found")
    problem(api.request("DELETE", f"/admin/v1/products/{pid}/prices/FRA", admin=True), 404, "price_not_found")
    problem(api.request("DELETE", f"/admin/v1/products/{pid}/prices/QQQ", admin=True), 404, "price_not_found")
    for method in ("PUT", "DELETE", "GET"):
        path = f"/admin/v1/products/{pid}/prices" + ("" if method == "GET" else "/DEU")
        problem(api.request(method, path, json={"price": "1.00", "currency": "EUR"}), 401)


def test_price_history_covers_every_storefront_and_removal_returns_the_default(api):
    pid = P + "sf.history"
    api.put_product(pid, price="2.00")
    rev = api.get(f"/admin/v1/products/{pid}", admin=True).json()["revision"]
    set_price(api, pid, "GBR", "1.79", "GBP")
    set_price(api, pid, "GBR", "1.89", "GBP")
    set_price(api, pid, "GBR", "1.89", "GBP")  # unchanged: no history row
    assert api.request("DELETE", f"/admin/v1/products/{pid}/prices/GB", admin=True).status_code == 204
    api.request("PATCH", f"/admin/v1/products/{pid}", admin=True, json={"price": "2.50"})
    history = api.get(f"/admin/v1/products/{pid}/price-history", admin=True).json()["history"]
    seen = [(h.get("storefront"), h.get("old_price"), h.get("new_price"), h.get("new_currency")) for h in history]
    assert seen == [
        (None, None, "2.00", "USD"),
        ("GBR", None, "1.79", "GBP"),
        ("GBR", "1.79", "1.89", "GBP"),
        ("GBR", "1.89", None, None),
        (None, "2.00", "2.50", "USD"),
    ], seen
    assert api.get(f"/admin/v1/products/{pid}", admin=True).json()["revision"] == rev + 4
    listing = api.get(f"/admin/v1/products/{pid}/prices", admin=True).json()
    assert listing["prices"] == [] and listing["price"] == "2.50"
    assert by_id(api.get("/v1/products?storefront=GBR").json())[pid]["price"] == "2.50"
    audit = api.get(f"/admin/v1/audit?target_id={pid}", admin=True)
    assert audit.status_code == 200
    assert len([e for e in audit.json()["entries"] if e["action"] == "product_updated"]) >= 3


# ---------------------------------------------------------------------------------------------
# Offerings and placements


def test_the_default_placement_serves_the_whole_catalog_unchanged(api):
    api.put_product(P + "default.a", sort_order=1)
    body = api.get("/v1/offerings/default")
    assert body.status_code == 200, body.text
    offering = body.json()
    assert offering["offering_id"] == "default"
    catalog = api.get("/v1/products").json()["products"]
    assert [{k: v for k, v in p.items() if k != "badge"} for p in offering["products"]] == catalog
    assert all(p["badge"] == "" for p in offering["products"])
    problem(api.get("/v1/offerings/nowhere"), 404, "placement_not_found")
    problem(api.get("/v1/offerings/NOT-VALID"), 404, "placement_not_found")
    problem(api.get("/v1/offerings/default?colour=red"), 400, "invalid_query")


def test_metadata_keeps_the_digits_an_admin_wrote_and_a_number_out_of_range_is_refused(api):
    pid = P + "meta.digits"
    api.put_product(pid)
    raw = '{"products": ["%s"], "metadata": {"id": 12345678901234567890123, "scale": 1.25}}' % pid
    r = api.request("PUT", "/admin/v1/offerings/meta-digits", admin=True, data=raw,
                    headers={"Content-Type": "application/json"})
    assert r.status_code == 201, r.text
    assert r.json()["metadata"] == {"id": 12345678901234567890123, "scale": 1.25}
    r = api.request("PUT", "/admin/v1/placements/meta_digits", admin=True, json={"offering_id": "meta-digits"})
    assert r.status_code == 201, r.text
    served = api.get("/v1/offerings/meta_digits")
    assert served.json()["metadata"] == {"id": 12345678901234567890123, "scale": 1.25}, served.text
    r = api.request("PUT", "/admin/v1/offerings/meta-huge", admin=True,
                    data=raw.replace("1.25", "-1e400"), headers={"Content-Type": "application/json"})
    assert error_fields(problem(r, 422, "validation_failed")) == {"metadata"}
    assert api.get("/admin/v1/offerings/meta-huge", admin=True).status_code == 404


def test_an_offering_lists_its_active_products_in_order_with_display_metadata(api):
    a, b, c = P + "shop.a", P + "shop.b", P + "shop.c"
    for pid in (a, b, c):
        api.put_product(pid, price="3.00")
    set_price(api, b, "DEU", "2.99", "EUR")
    r = api.request("PUT", "/admin/v1/offerings/main-shop", admin=True, json={
        "title": "Treasure", "badge": "new", "metadata": {"theme": "gold", "columns": 2},
        "products": [c, {"product_id": a, "badge": "best value"}, b]})
    assert r.status_code == 201, r.text
    assert r.json()["products"] == [{"product_id": c, "badge": ""}, {"product_id": a, "badge": "best value"},
                                    {"product_id": b, "badge": ""}]
    r = api.request("PUT", "/admin/v1/placements/main_shop", admin=True, json={"offering_id": "main-shop"})
    assert r.status_code == 201, r.text

    served = api.get("/v1/offerings/main_shop").json()
    assert (served["offering_id"], served["title"], served["badge"]) == ("main-shop", "Treasure", "new")
    assert served["metadata"] == {"theme": "gold", "columns": 2}
    assert [p["product_id"] for p in served["products"]] == [c, a, b]
    assert served["products"][1]["badge"] == "best value"
    deu = api.get("/v1/offerings/main_shop", headers={"Storekeeper-Storefront": "DEU"})
    assert by_id(deu.json())[b]["price"] == "2.99" and by_id(deu.json())[a]["price"] == "3.00"
    assert api.get("/v1/offerings/main_shop?storefront=DEU",
                   headers={"If-None-Match": deu.headers["ETag"]}).status_code == 304

    # Archived products are not offered; active again, they are.
    api.request("PATCH", f"/admin/v1/products/{a}", admin=True, json={"active": False})
    assert [p["product_id"] for p in api.get("/v1/offerings/main_shop").json()["products"]] == [c, b]
    api.request("PATCH", f"/admin/v1/products/{a}", admin=True, json={"active": True})
    assert [p["product_id"] for p in api.get("/v1/offerings/main_shop").json()["products"]] == [c, a, b]

    # An offering in use cannot go; a placement naming an unknown offering is refused.
    problem(api.request("DELETE", "/admin/v1/offerings/main-shop", admin=True), 409, "offering_in_use")
    refused = problem(api.request("PUT", "/admin/v1/placements/x", admin=True, json={"offering_id": "ghost"}), 422,
                      "unknown_offerings")
    assert error_fields(refused) == {"offering_id"}
    refused = problem(api.request("PUT", "/admin/v1/placements/x", admin=True, json={
        "offering_id": "main-shop", "rules": [{"offering_id": "main-shop", "when": {"stores": ["app_store"]}},
                                              {"offering_id": "ghost", "when": {"stores": ["google_play"]}}]}),
        422, "unknown_offerings")
    assert error_fields(refused) == {"rules[1].offering_id"}
    listed = api.get("/admin/v1/offerings", admin=True).json()["offerings"]
    assert "main-shop" in [o["offering_id"] for o in listed]


def test_offering_bodies_are_validated_with_their_fields(api):
    pid = P + "validate.a"
    api.put_product(pid)
    cases = [
        ({}, {"products"}),
        ({"products": "x"}, {"products"}),
        ({"products": [pid, pid]}, {"products[1]"}),
        ({"products": [{"product_id": pid, "badge": 3}]}, {"products[0].badge"}),
        ({"products": [{"badge": "x"}]}, {"products[0].product_id"}),
        ({"products": [{"product_id": pid, "colour": "red"}]}, {"products[0].colour"}),
        ({"products": [7]}, {"products[0]"}),
        ({"products": ["bad id!"]}, {"products[0]"}),
        ({"products": [pid], "metadata": {"x": "y" * 20000}}, {"metadata"}),
        ({"products": [pid], "metadata": []}, {"metadata"}),
        ({"products": [pid], "title": "t" * 201}, {"title"}),
        ({"products": [pid], "surprise": 1}, {"surprise"}),
        ({"products": [f"p{i}" for i in range(51)]}, {"products"}),
    ]
    for body, fields in cases:
        r = api.request("PUT", "/admin/v1/offerings/validating", admin=True, json=body)
        assert error_fields(problem(r, 422, "validation_failed")) == fields, (body, r.text)
    r = api.request("PUT", "/admin/v1/offerings/Bad_Id", admin=True, json={"products": [pid]})
    assert error_fields(problem(r, 422, "validation_failed")) == {"offering_id"}
    r = api.request("PUT", "/admin/v1/offerings/validating", admin=True, json={"products": [pid, P + "ghost"]})
    problem(r, 422, "unknown_products")
    problem(api.request("GET", "/admin/v1/offerings/validating", admin=True), 404, "offering_not_found")
    problem(api.request("PUT", "/admin/v1/offerings/validating", json={"products": [pid]}), 401)


# ---------------------------------------------------------------------------------------------
# Targeting rules


@pytest.fixture(scope="module")
def targeted(api):
    """A placement whose rules choose between five one-product offerings."""
    names = ["fallback", "german", "android", "old-app", "vip", "rich", "newcomer", "payer", "french"]
    for name in names:
        pid = P + "t." + name
        api.put_product(pid, type="consumable", grants={"balance": {"gold": 10}})
        r = api.request("PUT", f"/admin/v1/offerings/t-{name}", admin=True, json={"products": [pid]})
        assert r.status_code in (200, 201), r.text
    api.put_product(P + "t.vip-pass", type="non_consumable", grants={"entitlement": "vip"})
    rules = [
        {"offering_id": "t-german", "when": {"storefronts": ["DEU", "AT"], "app_version": {"from": "2.0"}}},
        {"offering_id": "t-android", "when": {"stores": ["google_play"]}},
        {"offering_id": "t-old-app", "when": {"app_version": {"before": "2.0"}}},
        {"offering_id": "t-vip", "when": {"holds_entitlement": "vip"}},
        {"offering_id": "t-rich", "when": {"balance": {"asset": "gold", "at_least": 100}}},
        {"offering_id": "t-newcomer", "when": {"user": "new"}},
        {"offering_id": "t-payer", "when": {"has_paid": True, "lacks_entitlement": "vip"}},
        {"offering_id": "t-french", "when": {"locales": ["fr"]}},
    ]
    r = api.request("PUT", "/admin/v1/placements/targeted", admin=True,
                    json={"offering_id": "t-fallback", "rules": rules})
    assert r.status_code in (200, 201), r.text
    assert r.json()["rules"][0]["when"]["storefronts"] == ["DEU", "AUT"], "alpha-2 is stored as alpha-3"
    return rules


def served(api, headers=None, **params) -> str:
    r = api.get("/v1/offerings/targeted", headers=headers or {}, params=params)
    assert r.status_code == 200, r.text
    return r.json()["offering_id"]


def pay(stack, user: str, product_id: str, type: str = "consumable") -> None:
    buy(stack.api, stack.fake, user, product_id, type=type)


def test_rules_on_the_request_apply_in_order(api, targeted):
    v2 = {"Storekeeper-App-Version": "2.3.1"}
    assert served(api, v2) == "t-fallback"
    assert served(api, {**v2, "Storekeeper-Storefront": "DEU"}) == "t-german"
    assert served(api, v2, storefront="AUT") == "t-german"
    # Earlier rules win: a German Android app still gets the German offering.
    assert served(api, {**v2, "Storekeeper-Store": "google_play"}, storefront="DEU") == "t-german"
    assert served(api, {**v2, "Storekeeper-Store": "google_play"}) == "t-android"
    assert served(api, {"Storekeeper-Store": "app_store"}, app_version="1.9.9") == "t-old-app"
    assert served(api, {"Storekeeper-Storefront": "DEU"}, app_version="1.2") == "t-old-app"
    # No version sent: neither version rule can hold.
    assert served(api, {"Storekeeper-Storefront": "DEU"}) == "t-fallback"
    assert served(api, v2, locale="fr-CA") == "t-french"
    assert served(api, {**v2, "Accept-Language": "fr;q=0.9, en"}) == "t-french"
    assert served(api, {**v2, "Accept-Language": "*"}) == "t-fallback"
    assert served(api, {**v2, "Accept-Language": "fry"}) == "t-fallback", "fr matches fr and fr-*, not fry"
    for params, field in [({"store": "steam"}, "store"), ({"app_version": "2.x"}, "app_version"),
                          ({"locale": "??"}, "locale"), ({"user_id": ""}, "user_id")]:
        body = problem(api.get("/v1/offerings/targeted", params=params), 400, "invalid_query")
        assert error_fields(body) == {field}


def test_rules_on_the_user_read_what_storekeeper_knows(stack, api, targeted):
    v2 = {"Storekeeper-App-Version": "2.0"}
    newcomer = unique("new")
    assert served(api, {**v2, **signed_in(newcomer)}) == "t-newcomer"
    # Anonymous: no user condition holds.
    assert served(api, v2) == "t-fallback"

    payer = unique("payer")
    pay(stack, payer, P + "t.fallback")
    assert served(api, {**v2, **signed_in(payer)}) == "t-payer"

    rich = unique("rich")
    for _ in range(10):
        pay(stack, rich, P + "t.fallback")
    assert api.balance(rich) == 100
    assert served(api, {**v2, **signed_in(rich)}) == "t-rich", "100 gold is at_least 100"

    vip = unique("vip")
    pay(stack, vip, P + "t.vip-pass", type="non_consumable")
    assert served(api, {**v2, **signed_in(vip)}) == "t-vip"
    # A signed-in user may not ask for someone else; a token that does not verify is 401.
    problem(api.get(f"/v1/offerings/targeted?user_id={vip}", headers=signed_in(payer)), 403, "user_mismatch")
    problem(api.get("/v1/offerings/targeted", headers={"Authorization": "Bearer nope"}), 401, "invalid_token")
    # Naming a user without proving it is 401 under APP_AUTH=jwt.
    problem(api.get(f"/v1/offerings/targeted?user_id={vip}"), 401, "unauthorized")
    assert served(api, {**v2, **signed_in(vip)}, user_id=vip) == "t-vip"


def test_a_family_sharing_copy_is_no_payment_of_the_member(stack, api, targeted):
    """A family member restoring a purchase shared with them (FAMILY_SHARED) holds what it
    grants but has paid nothing: `has_paid` holds only once they buy something themselves."""
    r = api.request("PUT", "/admin/v1/placements/payers-only", admin=True, json={
        "offering_id": "t-fallback", "rules": [{"offering_id": "t-payer", "when": {"has_paid": True}}]})
    assert r.status_code in (200, 201), r.text
    shared_product = P + "t.family-perk"
    api.put_product(shared_product, type="non_consumable", grants={"entitlement": "family_perk"})
    member = unique("family-member")
    shared = stack.fake.call("/fake/v1/purchases", {
        "bundle_id": BUNDLE_ID, "product_id": shared_product, "type": "Non-Consumable",
        "environment": "Production", "in_app_ownership_type": "FAMILY_SHARED"})
    r = api.receipts(user_id=member, signed_transaction=shared["signed_transaction"])
    assert r.status_code == 200, r.text
    assert "family_perk" in {e["entitlement"] for e in api.entitlements(member)["entitlements"]}

    def served_here() -> str:
        r = api.get("/v1/offerings/payers-only", headers=signed_in(member))
        assert r.status_code == 200, r.text
        return r.json()["offering_id"]

    assert served_here() == "t-fallback"
    pay(stack, member, P + "t.fallback")
    assert served_here() == "t-payer"


def test_a_user_with_only_an_unpaid_order_is_returning_not_new(api, targeted):
    """`user: "returning"` holds once Storekeeper has any order of the user, paid or not, and
    never for a caller it cannot name; `targeted`'s own `new` rule comes first, so a placement of
    its own checks the condition alone."""
    r = api.request("PUT", "/admin/v1/placements/returning-only", admin=True, json={
        "offering_id": "t-fallback", "rules": [{"offering_id": "t-payer", "when": {"user": "returning"}}]})
    assert r.status_code in (200, 201), r.text

    def served_here(headers=None) -> str:
        r = api.get("/v1/offerings/returning-only", headers=headers or {})
        assert r.status_code == 200, r.text
        return r.json()["offering_id"]

    user = unique("back")
    assert served_here(signed_in(user)) == "t-fallback", "unknown to Storekeeper: new"
    api.create_order(user, P + "t.fallback")
    assert served_here(signed_in(user)) == "t-payer", "an unpaid order makes the user returning"
    assert served_here() == "t-fallback", "anonymous: no user condition holds"
    # The same user under the placement whose `new` rule precedes: no longer new.
    assert served(api, {"Storekeeper-App-Version": "2.0", **signed_in(user)}) == "t-fallback"


def test_a_backend_with_an_api_key_names_the_user(module_storekeeper, db, sk):
    keyed = module_storekeeper(db, share_admin_with=sk, APP_AUTH="api_key",
                               APP_API_KEYS="backend:k-0123456789abcdef0123456789abcdef0123")
    user = unique("keyed")
    r = keyed.client.get(f"/v1/offerings/targeted?user_id={user}&app_version=3",
                         headers={"Authorization": "Bearer k-0123456789abcdef0123456789abcdef0123"})
    assert r.status_code == 200 and r.json()["offering_id"] == "t-newcomer", r.text
    problem(keyed.client.get(f"/v1/offerings/targeted?user_id={user}"), 401, "unauthorized")
    assert keyed.client.get("/v1/offerings/targeted?app_version=3").json()["offering_id"] == "t-fallback"


RULE_ERRORS = [
    ("x", "rules"),
    ([1], "rules[0]"),
    ([{"when": {}}], "rules[0].offering_id"),
    ([{"offering_id": "Bad!"}], "rules[0].offering_id"),
    ([{"offering_id": "t-vip", "colour": 1}], "rules[0].colour"),
    ([{"offering_id": "t-vip", "when": []}], "rules[0].when"),
    ([{"offering_id": "t-vip", "when": {"weather": "sunny"}}], "rules[0].when.weather"),
    ([{"offering_id": "t-vip", "when": {"storefronts": []}}], "rules[0].when.storefronts"),
    ([{"offering_id": "t-vip", "when": {"storefronts": ["DEU", "QQ"]}}], "rules[0].when.storefronts[1]"),
    ([{"offering_id": "t-vip", "when": {"stores": ["steam"]}}], "rules[0].when.stores[0]"),
    ([{"offering_id": "t-vip", "when": {"app_version": {"from": "2.a"}}}], "rules[0].when.app_version.from"),
    ([{"offering_id": "t-vip", "when": {"app_version": {"from": "3", "before": "2"}}}],
     "rules[0].when.app_version.before"),
    ([{"offering_id": "t-vip", "when": {"app_version": {}}}], "rules[0].when.app_version"),
    ([{"offering_id": "t-vip", "when": {"app_version": {"since": "1"}}}], "rules[0].when.app_version.since"),
    ([{"offering_id": "t-vip", "when": {"locales": ["english!"]}}], "rules[0].when.locales[0]"),
    ([{"offering_id": "t-vip", "when": {"user": "old"}}], "rules[0].when.user"),
    ([{"offering_id": "t-vip", "when": {"has_paid": "yes"}}], "rules[0].when.has_paid"),
    ([{"offering_id": "t-vip", "when": {"holds_entitlement": "VIP!"}}], "rules[0].when.holds_entitlement"),
    ([{"offering_id": "t-vip", "when": {"balance": {"asset": "gold"}}}], "rules[0].when.balance"),
    ([{"offering_id": "t-vip", "when": {"balance": {"at_least": 1}}}], "rules[0].when.balance.asset"),
    ([{"offering_id": "t-vip", "when": {"balance": {"asset": "gold", "at_least": -1}}}],
     "rules[0].when.balance.at_least"),
    ([{"offering_id": "t-vip", "when": {"balance": {"asset": "gold", "at_least": 5, "below": 5}}}],
     "rules[0].when.balance.below"),
    ([{"offering_id": "t-vip"}, {"offering_id": "t-vip", "when": {"user": 1}}], "rules[1].when.user"),
    ([{"offering_id": "t-vip"}] * 51, "rules"),
]


@pytest.mark.parametrize("rules,field", RULE_ERRORS)
def test_a_rule_that_cannot_be_parsed_is_refused_with_its_field(api, targeted, rules, field):
    before = api.get("/admin/v1/placements/targeted", admin=True).json()
    r = api.request("PUT", "/admin/v1/placements/targeted", admin=True,
                    json={"offering_id": "t-fallback", "rules": rules})
    body = problem(r, 422, "validation_failed")
    assert error_fields(body) == {field}, body
    assert api.get("/admin/v1/placements/targeted", admin=True).json() == before


# ---------------------------------------------------------------------------------------------
# Two instances: NOTIFY keeps each current


def test_offering_and_rule_changes_through_one_instance_are_served_by_another(sk, api, module_storekeeper,
                                                                           db, targeted):
    other = module_storekeeper(db, share_admin_with=sk)
    pid = P + "two.a"
    api.put_product(pid, price="1.00")
    api.request("PUT", "/admin/v1/offerings/two", admin=True, json={"products": [pid]})
    api.request("PUT", "/admin/v1/placements/two", admin=True, json={"offering_id": "two"})
    wait_until(lambda: other.client.get("/v1/offerings/two").status_code == 200, 15, "B never saw placement two")

    set_price(api, pid, "FRA", "0.99", "EUR")
    wait_until(lambda: by_id(other.client.get("/v1/offerings/two?storefront=FR").json())[pid]["price"] == "0.99",
               15, "B never served the FRA price")
    api.request("PUT", "/admin/v1/placements/two", admin=True,
                json={"offering_id": "two", "rules": [{"offering_id": "t-french", "when": {"locales": ["fr"]}}]})
    wait_until(lambda: other.client.get("/v1/offerings/two?locale=fr").json()["offering_id"] == "t-french", 15,
               "B never applied the new rule")
    for path in ("/v1/offerings/two?storefront=FRA", "/v1/offerings/two?locale=fr", "/v1/products?storefront=FRA"):
        wait_until(lambda: api.get(path).headers["ETag"] == other.client.get(path).headers["ETag"], 15,
                   f"the instances disagree on {path}")
    assert api.request("DELETE", "/admin/v1/placements/two", admin=True).status_code == 204
    wait_until(lambda: other.client.get("/v1/offerings/two").status_code == 404, 15, "B still serves placement two")
