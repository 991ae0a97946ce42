"""The console's storefront prices, offerings, placements and experiments pages (issue 27) in
the real browser (chromium through selenium, as test_console.py), against a real Storekeeper,
the fake App Store and PostgreSQL; each flow saves screenshots."""

from __future__ import annotations

import json

import pytest
import requests
from selenium.webdriver.common.keys import Keys

from support import ADMIN_NAME, buy, mint, unique, wait_until
from test_console import DESKTOP, PHONE, Console, artifacts, browser, tokens  # noqa: F401 (fixtures)

P = "com.example.tests.console-offerings."


@pytest.fixture(scope="module")
def stack(module_launcher, tokens):  # noqa: F811
    return module_launcher.stack(ADMIN_TOKENS=f"{ADMIN_NAME}:{tokens['write']},viewer:{tokens['read']}:read")


@pytest.fixture
def console(browser, stack, artifacts) -> Console:  # noqa: F811
    return Console(browser, stack.sk.url, artifacts)


def test_storefront_prices_are_set_shown_and_removed(console, stack, tokens):
    pid = P + "gems"
    stack.api.put_product(pid, price="4.99")
    console.sign_in(tokens["write"])
    console.go(f"#/catalog/{pid}", "#storefront-form")
    console.fill("Storefront (DEU or DE)", "de")
    console.fill("Storefront price", "5.5")
    console.fill("Storefront currency", "eur")
    console.click("Set price")
    console.wait_text("#storefront-prices", "DEU")
    assert "5.50" in console.text("#storefront-prices") and "EUR" in console.text("#storefront-prices")
    served = requests.get(stack.sk.url + f"/v1/products/{pid}?storefront=DEU", timeout=10).json()
    assert (served["price"], served["currency"]) == ("5.50", "EUR")

    # A price the currency cannot have is refused beside its field.
    console.fill("Storefront (DEU or DE)", "JP")
    console.fill("Storefront price", "1.5")
    console.fill("Storefront currency", "JPY")
    console.click("Set price")
    console.wait_text("#storefront-form .field-error", "JPY allows 0 fraction digits")
    console.wait_text("#price-history", "DEU")
    console.scroll_to("#storefronts-title")
    console.screenshot("storefront-prices")

    console.press('button[aria-label="Remove the DEU price"]')
    console.wait_text("#storefront-status", "default applies there")
    assert "removed" in console.text("#price-history")
    served = requests.get(stack.sk.url + f"/v1/products/{pid}?storefront=DEU", timeout=10).json()
    assert served["price"] == "4.99"


PRODUCTS = 'Products, in order (JSON: each a product id or {"product_id", "badge"})'


def test_offerings_and_placement_rules_are_edited_with_field_errors(console, stack, tokens):
    a, b = P + "a", P + "b"
    stack.api.put_product(a)
    stack.api.put_product(b)
    console.sign_in(tokens["write"])
    console.go("#/offerings", "#offering-form")
    console.fill("Offering id", "summer")
    console.fill("Offering title", "Summer sale")
    console.fill("Offering badge", "hot")
    console.fill(PRODUCTS, f'[{{"product_id": "{b}", "badge": "best value"}}, "{a}"]')
    console.fill("Metadata (JSON)", '{"theme": "sun"}')
    console.click("Save offering")
    console.wait_text("#offerings", "summer")
    assert "best value" in console.text("#offerings")

    console.fill("Placement id", "shop")
    console.fill("Serves offering", "summer")
    console.fill("Targeting rules (JSON, first match wins)",
                 '[{"offering_id": "summer", "when": {"app_version": {"from": "2.x"}}}]')
    console.click("Save placement")
    console.wait_text("#placement-form .field-error", "rules[0].when.app_version.from")
    console.screenshot("placement-rule-refused")

    console.fill("Targeting rules (JSON, first match wins)",
                 '[{"offering_id": "default", "when": {"storefronts": ["FR"]}}]')
    console.click("Save placement")
    console.wait_text("#placements", "shop")
    assert "FRA" in console.text("#placements")
    console.screenshot("offerings")
    body = requests.get(stack.sk.url + "/v1/offerings/shop", timeout=10).json()
    assert body["offering_id"] == "summer" and [p["product_id"] for p in body["products"]] == [b, a]
    assert requests.get(stack.sk.url + "/v1/offerings/shop?storefront=FRA", timeout=10).json()["offering_id"] == "default"

    # Naming the saved placement loads it: changing its offering keeps its rules.
    console.by_label("Placement id").send_keys("shop", Keys.TAB)
    console.wait_text("#placement-form-status", "exists")
    assert "FRA" in console.by_label("Targeting rules (JSON, first match wins)").get_attribute("value")
    console.fill("Serves offering", "default")
    console.click("Save placement")
    # The first save's "Placement shop saved" is still on the page: wait for the stored change.
    wait_until(lambda: stack.api.get("/admin/v1/placements/shop", admin=True).json()["offering_id"] == "default",
               20, "the placement was not saved")
    console.wait_text("#offerings-status", "Placement shop saved")
    stored = stack.api.get("/admin/v1/placements/shop", admin=True).json()
    assert (stored["offering_id"], stored["rules"]) == (
        "default", [{"offering_id": "default", "when": {"storefronts": ["FRA"]}}])
    # A form loaded before someone else's change (an experiment's conclusion) does not undo it.
    console.by_label("Placement id").send_keys("shop", Keys.TAB)
    console.wait_text("#placement-form-status", "exists")
    changed = stack.api.request("PUT", "/admin/v1/placements/shop", admin=True, json={"offering_id": "summer"})
    assert changed.status_code == 200, changed.text
    console.click("Save placement")
    console.wait_text("#placement-form-status", "changed since it was read")
    assert stack.api.get("/admin/v1/placements/shop", admin=True).json()["offering_id"] == "summer"
    console.by_label("Offering id").send_keys("summer", Keys.TAB)
    console.wait_text("#offering-form-status", "exists")
    assert json.loads(console.by_label(PRODUCTS).get_attribute("value")) == [
        {"product_id": b, "badge": "best value"}, a]

    console.viewport(PHONE)
    console.go("#/offerings", "#placements")
    assert console.page_fits()
    console.screenshot("offerings-phone")
    console.viewport(DESKTOP)


def test_a_product_badge_with_a_comma_survives_saving_the_offering(console, stack, tokens):
    a, b = P + "comma.a", P + "comma.b"
    stack.api.put_product(a)
    stack.api.put_product(b)
    badge = "Best value, 20% off = \"more\""
    created = stack.api.request("PUT", "/admin/v1/offerings/console-comma", admin=True,
                                json={"title": "Promo", "products": [{"product_id": a, "badge": badge}, b]})
    assert created.status_code in (200, 201), created.text
    console.sign_in(tokens["write"])
    console.go("#/offerings", "#offering-form")
    console.by_label("Offering id").send_keys("console-comma", Keys.TAB)
    console.wait_text("#offering-form-status", "exists")
    console.fill("Offering title", "Promo, renamed")
    console.click("Save offering")
    console.wait_text("#offerings-status", "Offering console-comma saved")
    stored = stack.api.get("/admin/v1/offerings/console-comma", admin=True).json()
    assert stored["title"] == "Promo, renamed"
    assert [(p["product_id"], p.get("badge") or "") for p in stored["products"]] == [(a, badge), (b, "")]


def test_an_experiment_is_started_followed_and_concluded(console, stack, tokens):
    api = stack.api
    for name in ("x", "y"):
        api.put_product(P + name, price="2.00")
        api.request("PUT", f"/admin/v1/offerings/console-{name}", admin=True, json={"products": [P + name]})
    api.request("PUT", "/admin/v1/placements/console-wall", admin=True, json={"offering_id": "console-x"})
    console.sign_in(tokens["write"])
    console.go("#/experiments", "#experiment-form")
    console.fill("Experiment id", "console-test")
    console.fill("Placement", "console-wall")
    console.fill("Variants (offering:weight, comma-separated, 2 to 4)", "console-x:1, console-y:1")
    console.fill("Attribution window (hours)", "24")
    console.click("Start experiment")
    console.find("#variant-results")

    users = [unique("shopper") for _ in range(8)]
    served = {}
    for user in users:
        r = requests.get(stack.sk.url + "/v1/offerings/console-wall", timeout=10,
                         headers={"Authorization": f"Bearer {mint(user)}"})
        assert r.status_code == 200
        served[user] = r.json()["offering_id"]
        if user in users[:3]:
            buy(api, stack.fake, user, P + r.json()["offering_id"].split("-")[1])
    wait_until(lambda: sum(v["exposed"] for v in api.get("/admin/v1/experiments/console-test/results",
                                                           admin=True).json()["variants"]) == 8,
               10, "exposures not written")
    console.go("#/experiments/console-test", "#variant-results")
    console.driver.refresh()
    console.find("#variant-results")
    text = console.text("#variant-results")
    assert "USD" in text and "%" in text
    console.screenshot("experiment-results")

    # An order naming what it was shown: its page says so, with the variant it counts for.
    named = api.post("/v1/orders", json={"user_id": users[3], "product_id": P + served[users[3]].split("-")[1],
                                         "placement": "console-wall", "offering": served[users[3]]})
    assert named.status_code == 201, named.text
    order = named.json()
    assert order["experiment"] == "console-test"
    console.go(f"#/orders/{order['trade_no']}", "#timeline")
    facts = dict(console.driver.execute_script(
        "return [...document.querySelectorAll('main dl.facts dt')]"
        ".map((dt) => [dt.textContent, dt.nextElementSibling.textContent])"))
    assert {k: facts.get(k) for k in ("Placement", "Offering", "Experiment", "Variant")} == {
        "Placement": "console-wall", "Offering": served[users[3]], "Experiment": "console-test",
        "Variant": order["variant"]}, facts
    assert console.all('main dl.facts a[href="#/experiments/console-test"]')
    console.screenshot("order-offering")
    console.go("#/experiments/console-test", "#variant-results")

    console.click("Pause")
    console.wait_text("#experiment-status", "paused")
    console.click("Conclude")
    console.wait_text("#experiment-status", "concluded")
    assert api.get("/admin/v1/placements/console-wall", admin=True).json()["offering_id"] == "console-x"
    console.screenshot("experiment-concluded")


def test_a_read_only_token_sees_but_cannot_edit(console, stack, tokens):
    console.sign_in(tokens["read"])
    console.go("#/offerings", "#placements")
    assert not console.all("#offering-form") and not console.all("#placement-form")
    console.go("#/experiments", "#experiments")
    assert not console.all("#experiment-form")
