"""The admin console (/admin/) in a real browser: Debian's chromium, driven headless through
chromium-driver by selenium, against a real Storekeeper, the fake App Store and PostgreSQL.

Each flow saves a screenshot into STOREKEEPER_TEST_ARTIFACTS (scripts/test makes a directory
it keeps and prints it), else into the test's temporary directory.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
from pathlib import Path
from urllib.parse import quote

import pytest
import requests
from selenium import webdriver
from selenium.common.exceptions import StaleElementReferenceException, TimeoutException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import Select, WebDriverWait

from google_support import FakeGooglePlay
from support import ADMIN_NAME, BUNDLE_ID, buy, unique, wait_until
from test_webhooks import Receiver

DESKTOP = (1280, 800)
PHONE = (390, 844)
WAIT = 15


# ---------------------------------------------------------------------------------------------
# Fixtures


@pytest.fixture(scope="module")
def tokens() -> dict[str, str]:
    return {"write": secrets.token_hex(16), "read": secrets.token_hex(16)}


@pytest.fixture(scope="module")
def google(tmp_path_factory):
    fake = FakeGooglePlay(tmp_path_factory.mktemp("console-google")).start()
    yield fake
    fake.terminate(15)
    fake.forget()


@pytest.fixture(scope="module")
def console_stack(module_launcher, tokens, google):
    """A Storekeeper wired to the fake App Store and the fake Google Play, with a write token
    and a read-only one; a webhook retry comes after a second, so a delivery's failed attempt
    and its retry fit a flow (the base environment has ALLOW_INSECURE_URLS=1: the test
    receivers are plain http)."""
    return module_launcher.stack(
        ADMIN_TOKENS=f"{ADMIN_NAME}:{tokens['write']},viewer:{tokens['read']}:read",
        WEBHOOK_RETRY_BASE="1s", WEBHOOK_POLL_INTERVAL="200ms", **google.env_for_storekeeper())


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory) -> Path:
    base = os.environ.get("STOREKEEPER_TEST_ARTIFACTS")
    directory = Path(base) / "console" if base else tmp_path_factory.mktemp("console-screenshots")
    directory.mkdir(parents=True, exist_ok=True)
    return directory


@pytest.fixture(scope="module")
def browser():
    chromium = shutil.which("chromium")
    driver_path = shutil.which("chromedriver")
    if not chromium or not driver_path:
        pytest.fail("chromium and chromedriver are needed (scripts/test installs chromium and chromium-driver)",
                    pytrace=False)
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--no-first-run", "--disable-extensions", "--disable-background-networking",
                     f"--window-size={DESKTOP[0]},{DESKTOP[1]}"):
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service(driver_path), options=options)
    driver.set_page_load_timeout(30)
    yield driver
    driver.quit()


class Console:
    """The console as a person uses it: by labels, buttons and what the page shows."""

    def __init__(self, driver, base: str, artifacts: Path):
        self.driver = driver
        self.base = base
        self.artifacts = artifacts
        self.width = DESKTOP[0]

    def viewport(self, size: tuple[int, int]) -> None:
        # The inner size is what a page lays out in: set it exactly (headless has no chrome).
        self.width = size[0]
        self.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
            "width": size[0], "height": size[1], "deviceScaleFactor": 1, "mobile": size[0] < 600})

    def open(self, fragment: str = "") -> None:
        self.driver.get(f"{self.base}/admin/{fragment}")

    def wait(self, condition, timeout: float = WAIT):
        # Sections re-render after each answer: an element found a moment ago may be replaced.
        return WebDriverWait(self.driver, timeout, ignored_exceptions=[StaleElementReferenceException]).until(condition)

    def find(self, css: str):
        return self.wait(EC.visibility_of_element_located((By.CSS_SELECTOR, css)))

    def all(self, css: str):
        return self.driver.find_elements(By.CSS_SELECTOR, css)

    def by_label(self, text: str, within: str = "main"):
        """The control a <label> names (exact text), inside `within`."""
        label = self.wait(lambda d: next((l for l in d.find_elements(By.CSS_SELECTOR, f"{within} label")
                                          if l.text.strip() == text and l.is_displayed()), None))
        return self.driver.find_element(By.ID, label.get_attribute("for"))

    def fill(self, label: str, value: str, within: str = "main") -> None:
        control = self.by_label(label, within)
        control.clear()
        control.send_keys(value)

    def click(self, text: str, within: str = "main") -> None:
        button = self.wait(lambda d: next((b for b in d.find_elements(By.CSS_SELECTOR, f"{within} button")
                                           if b.text.strip() == text and b.is_displayed()), None))
        button.click()

    def press(self, css: str) -> None:
        """Clicks the first visible match, again if a re-render replaced it meanwhile."""
        def attempt(driver):
            try:
                shown = [e for e in driver.find_elements(By.CSS_SELECTOR, css) if e.is_displayed()]
                if shown:
                    shown[0].click()
                return bool(shown)
            except StaleElementReferenceException:
                return False
        self.wait(attempt)

    def text(self, css: str = "main") -> str:
        return self.wait(lambda d: [e.text for e in d.find_elements(By.CSS_SELECTOR, css) if e.is_displayed()][:1] or None)[0]

    def wait_text(self, css: str, expected: str, timeout: float = WAIT) -> str:
        try:
            self.wait(lambda d: any(expected in e.text for e in d.find_elements(By.CSS_SELECTOR, css)), timeout)
        except TimeoutException:
            texts = [e.text for e in self.driver.find_elements(By.CSS_SELECTOR, css)]
            pytest.fail(f"{expected!r} never appeared in {css}; it shows {texts!r}", pytrace=False)
        return self.text(css)

    def storage(self) -> dict:
        return self.driver.execute_script(
            "const o = {}; for (let i = 0; i < sessionStorage.length; i++) { const k = sessionStorage.key(i);"
            " o[k] = sessionStorage.getItem(k); } return o;")

    def sign_in(self, token: str, size: tuple[int, int] = DESKTOP) -> None:
        self.viewport(size)
        self.open()
        self.driver.execute_script("sessionStorage.clear()")
        self.open()
        self.fill("Admin token", token)
        self.click("Sign in")
        self.find("#nav")

    def go(self, fragment: str, ready_css: str) -> None:
        self.driver.execute_script("location.hash = arguments[0]", fragment)
        self.find(ready_css)

    def scroll_to(self, css: str) -> None:
        """Brings an element to the top of the viewport, for a screenshot of it."""
        self.driver.execute_script("document.querySelector(arguments[0]).scrollIntoView({block: 'start'})", css)

    def screenshot(self, name: str) -> Path:
        path = self.artifacts / f"{name}.png"
        assert self.driver.save_screenshot(str(path)), f"screenshot {path} not saved"
        return path

    def page_fits(self) -> bool:
        """Nothing wider than the viewport (wide tables scroll inside their own box). Compared with
        the width set, not innerWidth: an emulated phone widens its layout viewport to fit what
        overflows, as a phone zooms out, so innerWidth grows with the overflow it should reveal."""
        return self.driver.execute_script(
            "return document.documentElement.scrollWidth <= arguments[0]", self.width)


@pytest.fixture
def console(browser, console_stack, artifacts) -> Console:
    return Console(browser, console_stack.sk.url, artifacts)


def admin_api(stack, token: str):
    session = requests.Session()
    session.headers["Authorization"] = f"Bearer {token}"
    return lambda method, path, **kw: session.request(method, stack.sk.url + path, timeout=30, **kw)


@pytest.fixture
def receiver(console_stack, tokens):
    """A webhook receiver on loopback; every endpoint a test registers is removed afterwards, so
    the module's later events are not queued to a receiver that is gone."""
    api = admin_api(console_stack, tokens["write"])
    before = {e["id"] for e in api("GET", "/admin/v1/webhook-endpoints").json()["endpoints"]}
    receiver = Receiver()
    yield receiver
    for endpoint in api("GET", "/admin/v1/webhook-endpoints").json()["endpoints"]:
        if endpoint["id"] not in before:
            assert api("DELETE", f"/admin/v1/webhook-endpoints/{endpoint['id']}").status_code == 204
    receiver.close()


# ---------------------------------------------------------------------------------------------
# Flows


def test_a_wrong_token_is_refused_and_a_right_one_signs_in_until_signing_out(console, tokens):
    console.viewport(DESKTOP)
    console.open()
    console.driver.execute_script("sessionStorage.clear()")
    console.open()
    console.fill("Admin token", "not-the-token-0123456789")
    console.click("Sign in")
    assert "not valid" in console.wait_text("#sign-in-status", "not valid")
    assert console.storage() == {}
    console.screenshot("sign-in-refused")

    console.fill("Admin token", tokens["write"])
    console.click("Sign in")
    assert "ops (can edit)" in console.wait_text("#who", "ops")
    assert console.storage()["storekeeper.admin.token"] == tokens["write"]
    assert tokens["write"] not in console.driver.current_url
    console.screenshot("signed-in-overview")

    console.driver.find_element(By.ID, "sign-out").click()
    console.find("#sign-in")
    assert console.storage() == {}
    console.open("#/catalog")
    console.find("#sign-in")


def test_creating_a_product_shows_the_servers_field_errors_then_creates_it(console, console_stack, tokens):
    api = admin_api(console_stack, tokens["write"])
    console.sign_in(tokens["write"])
    product = unique("console_new").replace("-", "_")
    # A hostile title: the console must show it as text, never as markup.
    title = '<img src=x id=xss onerror="document.title=\'owned\'">Gold & more'
    console.go("#/catalog", "#products")
    console.find("#new-product").click()
    console.find("#product-form")
    console.fill("Product id", product)
    console.fill("Title", title)
    console.fill("Price", "6.001")
    console.fill("Currency", "USD")
    console.click("Create product")
    price_error = console.wait_text("[data-error-for=price]", "price")
    assert "USD" in price_error or "digits" in price_error or "price" in price_error
    assert console.by_label("Price").get_attribute("aria-invalid") == "true"
    console.screenshot("create-product-field-error")

    console.fill("Price", "6.00")
    console.click("Create product")
    console.wait_text("main h1", "Gold & more")
    assert console.find("main h1").text == title
    assert console.all("#xss") == [] and console.driver.title != "owned"
    stored = api("GET", f"/admin/v1/products/{product}").json()
    assert stored["title"] == title and stored["price"] == "6.00"
    console.screenshot("create-product-created")


def test_creating_a_product_under_a_taken_id_says_so_and_overwrites_nothing(console, console_stack, tokens):
    api = admin_api(console_stack, tokens["write"])
    product = unique("console_taken").replace("-", "_")
    assert api("PUT", f"/admin/v1/products/{product}", json={
        "type": "consumable", "title": "Kept", "price": "1.00", "currency": "USD",
        "grants": {"balance": {"gold": 1}}}).status_code == 201
    console.sign_in(tokens["write"])
    console.go("#/catalog", "#products")
    console.find("#new-product").click()
    console.find("#product-form")
    console.fill("Product id", product)
    console.fill("Title", "Overwritten")
    console.fill("Price", "2.00")
    console.fill("Currency", "USD")
    console.click("Create product")
    assert "taken" in console.wait_text("[data-error-for=product_id]", "taken")
    stored = api("GET", f"/admin/v1/products/{product}").json()
    assert stored["title"] == "Kept" and stored["revision"] == 1


def test_a_product_whose_id_is_new_opens_as_itself(console, console_stack, tokens):
    """The new-product form has a route no product id can take."""
    console_stack.api.put_product("new", title="The product called new", sort_order=100000)
    console.sign_in(tokens["write"])
    console.go("#/catalog/new", "main h1")
    console.wait_text("main h1", "The product called new")
    assert console.all("#product-form button[type=submit]")[0].text == "Save changes"
    console.go("#/catalog", "#products")
    console.find('#products a[href="#/catalog/new"]').click()
    console.wait_text("main h1", "The product called new")
    console.go("#/catalog", "#products")
    console.find("#new-product").click()
    console.wait_text("main h1", "New product")


def test_a_price_edit_is_saved_and_the_history_chart_draws_one_point_per_change(console, console_stack, tokens):
    api = admin_api(console_stack, tokens["write"])
    product = unique("console_price").replace("-", "_")
    console_stack.api.put_product(product, price="1.00")
    console.sign_in(tokens["write"])
    for price in ("2.50", "3.75"):
        console.go(f"#/catalog/{product}", "#product-form")
        console.fill("Price", price)
        console.click("Save changes")
        console.wait_text("#form-status", "Saved")
        console.wait_text("#price-history", price)
    history = api("GET", f"/admin/v1/products/{product}/price-history").json()["history"]
    assert [h["new_price"] for h in history][-2:] == ["2.50", "3.75"]
    points = console.all("#price-chart circle.point")
    rows = console.all("#price-history tbody tr")
    assert len(points) == len(history) == len(rows), (len(points), len(history), len(rows))
    # Each point says which change it is.
    titles = [p.find_element(By.TAG_NAME, "title").get_attribute("textContent") for p in points]
    assert "3.75 USD" in titles[-1]
    # The chart is below the edit form: bring it into view, so the screenshot shows it.
    console.scroll_to("#price-chart")
    console.screenshot("price-history-chart")


def test_the_product_view_shows_and_edits_its_google_play_id(console, console_stack, tokens):
    api = admin_api(console_stack, tokens["write"])
    product = unique("console_google").replace("-", "_")
    console_stack.api.put_product(product, price="1.00")
    console.sign_in(tokens["write"])
    console.go(f"#/catalog/{product}", "#product-form")
    # By default it goes by its App Store id on Google Play.
    facts = console.wait_text("dl.facts", "Google Play id")
    assert facts.count(product) >= 2, facts  # its own id, and the same on Google Play
    console.fill("Google Play product id", "gold_pack_android")
    console.click("Save changes")
    console.wait_text("#form-status", "Saved")
    console.wait_text("dl.facts", "gold_pack_android")
    assert api("GET", f"/admin/v1/products/{product}").json()["google_product_id"] == "gold_pack_android"
    # Saving something else leaves it as it is.
    console.fill("Price", "2.00")
    console.click("Save changes")
    console.wait_text("#form-status", "Saved")
    stored = api("GET", f"/admin/v1/products/{product}").json()
    assert stored["google_product_id"] == "gold_pack_android" and stored["price"] == "2.00"
    console.screenshot("product-google-id")


def test_a_concurrent_edit_from_the_api_shows_the_conflict_and_can_be_applied_on_top(console, console_stack, tokens):
    api = admin_api(console_stack, tokens["write"])
    product = unique("console_race").replace("-", "_")
    console_stack.api.put_product(product, price="4.00", title="Before")
    console.sign_in(tokens["write"])
    console.go(f"#/catalog/{product}", "#product-form")
    # Another admin saves first.
    other = api("PATCH", f"/admin/v1/products/{product}", json={"title": "Renamed elsewhere"})
    assert other.status_code == 200, other.text

    console.fill("Price", "5.00")
    console.click("Save changes")
    conflict = console.wait_text("#conflict", "Another admin changed this product first")
    assert "Renamed elsewhere" in conflict and "Before" in conflict and "5.00" in conflict
    assert api("GET", f"/admin/v1/products/{product}").json()["price"] == "4.00"
    console.screenshot("price-conflict")

    console.click("Apply my edit on top")
    console.wait_text("#form-status", "Saved")
    stored = api("GET", f"/admin/v1/products/{product}").json()
    assert stored["price"] == "5.00" and stored["title"] == "Renamed elsewhere"


def test_moving_a_product_up_writes_the_sort_order(console, console_stack, tokens):
    api = admin_api(console_stack, tokens["write"])
    # Sort orders below every other product of the module, so these three lead the list.
    base = unique("console_order").replace("-", "_")
    ids = [f"{base}_{c}" for c in "abc"]
    for i, product in enumerate(ids):
        console_stack.api.put_product(product, sort_order=-1000 + i)
    console.sign_in(tokens["write"])
    console.go("#/catalog", "#products")
    console.find(f'button[aria-label="Move {ids[2]} up"]').click()
    console.wait_text("#catalog-status", f"Moved {ids[2]} up")

    listed = [p["product_id"] for p in api("GET", "/admin/v1/products").json()["products"]]
    assert [p for p in listed if p.startswith(base)] == [ids[0], ids[2], ids[1]]
    shown = [row.find_element(By.CSS_SELECTOR, "td:nth-child(2)").text for row in console.all("#products tbody tr")]
    assert [p for p in shown if p.startswith(base)] == [ids[0], ids[2], ids[1]]
    # The button keeps the keyboard focus where the person left it.
    assert console.driver.switch_to.active_element.get_attribute("aria-label") == f"Move {ids[2]} up"
    console.screenshot("catalog-reordered")

    console.find(f'button[aria-label="Deactivate {ids[1]}"]').click()
    console.wait_text("#catalog-status", f"{ids[1]} is deactivated")
    assert api("GET", f"/admin/v1/products/{ids[1]}").json()["active"] is False


def test_a_move_after_a_concurrent_edit_changes_nothing_rather_than_half_the_order(console, console_stack, tokens):
    """A reorder is all or nothing: apps never see a catalog half renumbered."""
    api = admin_api(console_stack, tokens["write"])
    base = unique("console_atomic").replace("-", "_")
    ids = [f"{base}_{c}" for c in "abcd"]
    for i, product in enumerate(ids):
        console_stack.api.put_product(product, sort_order=-2000 + i)
    console.sign_in(tokens["write"])
    console.go("#/catalog", "#products")
    # Another admin renames the third product meanwhile: a harmless edit that moves its revision.
    assert api("PATCH", f"/admin/v1/products/{ids[2]}", json={"title": "Renamed"}).status_code == 200
    console.find(f'button[aria-label="Move {ids[3]} up"]').click()
    status = console.wait_text("#catalog-status", "Another admin changed the catalog meanwhile")
    public = [p["product_id"] for p in api("GET", "/v1/products").json()["products"]]
    assert public[:4] == ids, public
    assert "nothing was moved" in status

    # The reloaded list moves as asked.
    console.find(f'button[aria-label="Move {ids[3]} up"]').click()
    console.wait_text("#catalog-status", f"Moved {ids[3]} up")
    public = [p["product_id"] for p in api("GET", "/v1/products").json()["products"]]
    assert public[:4] == [ids[0], ids[1], ids[3], ids[2]], public


def test_an_order_is_found_by_trade_number_and_shows_its_timeline(console, console_stack, tokens):
    product = unique("console_gold").replace("-", "_")
    console_stack.api.put_product(product, grants={"balance": {"gold": 100}})
    user = unique("console-buyer")
    order, purchase, _ = buy(console_stack.api, console_stack.fake, user, product)
    detail = console_stack.api.admin_order(order["trade_no"])

    console.sign_in(tokens["write"])
    console.go("#/orders", "#order-search")
    console.fill("Trade number", order["trade_no"])
    console.click("Search")
    console.wait_text("main h1", order["trade_no"])
    timeline = console.all("#timeline li")
    assert len(timeline) == len(detail["history"]) >= 2
    assert "TRADE_SUCCESS" in console.text("#timeline")
    assert purchase["transaction_id"] in console.text("#transactions")
    assert "settled" in console.text("#reports")
    console.screenshot("order-timeline")

    console.go("#/orders", "#order-search")
    console.fill("Trade number", "NO_SUCH_ORDER_123")
    console.click("Search")
    console.wait_text("[data-error-for=trade_no]", "no order")

    console.fill("Trade number", "")
    console.fill("User id", user)
    Select(console.by_label("Status")).select_by_value("TRADE_SUCCESS")
    console.click("Search")
    console.wait_text("#orders", order["trade_no"])
    assert len(console.all("#orders tbody tr")) == 1


def test_granting_an_adjustment_changes_the_balance_and_is_audited(console, console_stack, tokens):
    api = admin_api(console_stack, tokens["write"])
    product = unique("console_coins").replace("-", "_")
    console_stack.api.put_product(product, grants={"balance": {"gold": 100}})
    user = unique("console-support")
    buy(console_stack.api, console_stack.fake, user, product)
    assert console_stack.api.balance(user) == 100

    console.sign_in(tokens["write"])
    console.go("#/users", "#user-lookup")
    console.fill("User id", user)
    console.click("Look up")
    console.wait_text("#balances", "100")

    # The reason is required, in the page and by the server.
    console.fill("Amount", "25")
    console.click("Apply adjustment")
    console.wait_text("[data-error-for=reason]", "reason")
    assert console_stack.api.balance(user) == 100

    console.fill("Reason (required)", "Paid but got nothing (ticket 4711)")
    console.click("Apply adjustment")
    console.wait_text("#adjustment-status", "the balance is now 125")
    assert console.find('.balance[data-asset="gold"]').text == "125"
    assert console_stack.api.balance(user) == 125
    assert "ticket 4711" in console.text("#adjustments")
    assert "adjustment" in console.text("#ledger")
    console.screenshot("user-adjusted")

    Select(console.by_label("Direction")).select_by_value("revoke")
    console.fill("Amount", "5")
    console.fill("Reason (required)", "Granted 5 too many")
    console.click("Apply adjustment")
    console.wait_text("#adjustment-status", "the balance is now 120")
    assert console_stack.api.balance(user) == 120

    audit = api("GET", "/admin/v1/audit", params={"action": "ledger_adjusted", "target_id": user}).json()
    assert [e["after"]["amount"] for e in audit["entries"]] == [-5, 25]
    assert all(e["admin"] == ADMIN_NAME for e in audit["entries"])


def test_a_user_id_with_white_space_is_looked_up_searched_and_adjusted_as_typed(console, console_stack, tokens):
    """User ids are compared byte for byte: "carol " is not "carol". The console used to trim
    what support typed, and showed (and adjusted) the other user."""
    product = unique("console_ws").replace("-", "_")
    console_stack.api.put_product(product, grants={"balance": {"gold": 100}})
    plain = unique("console-ws")
    spaced = plain + " "
    buy(console_stack.api, console_stack.fake, plain, product)
    spaced_order, _, _ = buy(console_stack.api, console_stack.fake, spaced, product)
    buy(console_stack.api, console_stack.fake, spaced, product)
    assert (console_stack.api.balance(plain), console_stack.api.balance(spaced)) == (100, 200)

    console.sign_in(tokens["write"])
    console.go("#/users", "#user-lookup")
    console.fill("User id", spaced)
    console.click("Look up")
    console.wait_text("#balances", "200")
    assert "white space" in console.text("main")
    console.fill("Amount", "7")
    console.fill("Reason (required)", "goodwill for the spaced id")
    console.click("Apply adjustment")
    console.wait_text("#adjustment-status", "the balance is now 207")
    assert (console_stack.api.balance(plain), console_stack.api.balance(spaced)) == (100, 207)

    console.go("#/orders", "#order-search")
    console.fill("Trade number", "")
    console.fill("User id", spaced)
    console.click("Search")
    console.wait_text("#orders", spaced_order["trade_no"])
    assert len(console.all("#orders tbody tr")) == 2


def test_the_user_view_shows_the_store_of_each_order(console, console_stack, tokens, google):
    api = console_stack.api
    product = unique("console_stores").replace("-", "_")
    api.put_product(product, grants={"balance": {"gold": 10}})
    user = unique("console-stores")
    apple_order, _, _ = buy(api, console_stack.fake, user, product)
    r = api.post("/v1/orders", json={"user_id": user, "product_id": product, "store": "google_play"})
    assert r.status_code == 201, r.text
    google_order = r.json()
    bought = google.buy(product, obfuscated_account_id=google_order["obfuscated_account_id"])
    r = api.post("/v1/trade-reports", json={"trade_no": google_order["trade_no"], "trade_status": "TRADE_SUCCESS",
                                            "purchase_token": bought["purchase_token"]})
    assert r.status_code == 200, r.text
    assert api.balance(user) == 20

    console.sign_in(tokens["read"])
    console.go(f"#/users/{quote(user)}", "#user-orders")
    rows = {}
    for row in console.all("#user-orders tbody tr"):
        cells = [c.text for c in row.find_elements(By.TAG_NAME, "td")]
        rows[cells[0]] = cells
    assert set(rows) == {apple_order["trade_no"], google_order["trade_no"]}
    assert rows[apple_order["trade_no"]][2] == "App Store"
    assert rows[google_order["trade_no"]][2] == "Google Play"
    # Each row also names the store's own transaction: Apple's id, Google's order id.
    assert rows[google_order["trade_no"]][6] == bought["order_id"]
    assert rows[apple_order["trade_no"]][6] == api.order(apple_order["trade_no"])["transaction_id"]
    assert [s.get_attribute("data-store") for s in console.all("#user-orders .store")].count("google_play") == 1
    console.screenshot("user-orders-by-store")
    # A trade number opens its order, whose page names the same store.
    console.press(f'#user-orders a[href="#/orders/{google_order["trade_no"]}"]')
    console.wait_text("main h1", f'Order {google_order["trade_no"]}')
    assert "Google Play" in console.text("main")


def test_a_link_with_a_malformed_escape_still_opens_its_section(console, tokens):
    # decodeURIComponent throws on "%E0": the route died before rendering, leaving the
    # section shown before (or a blank page on a fresh load).
    console.sign_in(tokens["write"])
    console.go("#/orders/%E0", "main h1")
    console.wait_text("main h1", "Order not found")
    assert "%E0" in console.text("main")


def test_the_user_page_shows_what_a_refund_left_owing_and_a_family_sharing_copy(console, console_stack, tokens):
    """Support answering "why can I not spend?" sees the debt a refund of spent gold left, and
    which of the user's Apple transactions a family member shared with them."""
    api, fake = console_stack.api, console_stack.fake
    gold = unique("console_debt").replace("-", "_")
    api.put_product(gold, grants={"balance": {"gold": 100}})
    perk = unique("console_family").replace("-", "_")
    api.put_product(perk, type="non_consumable", grants={"entitlement": "family_perk"})
    user = unique("console-debtor")
    _, purchase, _ = buy(api, fake, user, gold)
    r = api.post(f"/v1/users/{user}/balances/gold/spend", json={"amount": 70, "reason": "sword"},
                 headers={"Idempotency-Key": secrets.token_hex(8)})
    assert r.status_code == 201, r.text
    note = fake.refund(purchase["transaction_id"])
    assert note["delivered_status"] == 200, note
    wait_until(lambda: api.get(f"/v1/users/{user}/ledger").json()["debts"] == {"gold": 70}, 15,
               "the refund's debt was not recorded")
    shared = fake.call("/fake/v1/purchases", {
        "bundle_id": BUNDLE_ID, "product_id": perk, "type": "Non-Consumable", "environment": "Production",
        "in_app_ownership_type": "FAMILY_SHARED"})
    assert api.receipts(user_id=user, signed_transaction=shared["signed_transaction"]).status_code == 200

    console.sign_in(tokens["read"])
    console.go(f"#/users/{quote(user)}", "#balances")
    assert console.find('.balance[data-asset="gold"]').text == "0"
    assert console.find('.debt[data-asset="gold"]').text == "70"
    rows = {}
    for row in console.all("#user-transactions tbody tr"):
        cells = [c.text for c in row.find_elements(By.TAG_NAME, "td")]
        rows[cells[0]] = cells
    assert rows[shared["transaction_id"]][-1] == "shared with this user"
    assert rows[purchase["transaction_id"]][-1] == ""
    console.screenshot("user-debt-and-family-sharing")


def test_a_read_only_token_sees_no_editing_controls(console, console_stack, tokens):
    product = unique("console_ro").replace("-", "_")
    console_stack.api.put_product(product)
    user = unique("console-ro-user")
    console.sign_in(tokens["read"])
    assert "read-only" in console.text("#who")

    console.go("#/catalog", "#products")
    assert console.all("#new-product") == []
    assert console.all("#products button") == []
    console.screenshot("read-only-catalog")

    console.go(f"#/catalog/{product}", "#price-history")
    assert console.all("#product-form") == [] and console.all("main form") == []

    console.go(f"#/users/{quote(user)}", "#balances")
    assert console.all("#adjustment-form") == []
    # The API says the same: the token may not write.
    refused = admin_api(console_stack, tokens["read"])(
        "POST", f"/admin/v1/users/{user}/adjustments", json={"asset": "gold", "amount": 1, "reason": "x"})
    assert refused.status_code == 403


def test_a_test_event_sent_from_the_console_is_delivered_and_shows_every_attempt_then_is_replayed(
        console, console_stack, tokens, receiver):
    api = admin_api(console_stack, tokens["write"])
    # The receiver refuses the first request (a 500 with a body), then takes everything.
    answers = iter([500])
    receiver.answer = lambda event: next(answers, 200)
    created = api("POST", "/admin/v1/webhook-endpoints", json={"url": receiver.url, "event_types": ["order.paid"]})
    assert created.status_code == 201, created.text
    endpoint = created.json()

    console.sign_in(tokens["write"])
    console.go("#/webhooks", "#deliveries")
    row = console.wait_text("#webhook-endpoints", receiver.url)
    assert "order.paid" in row
    console.press(f'button.send-test[data-endpoint="{endpoint["id"]}"]')
    console.wait_text("#webhook-status", "Test event")
    # The console follows the pending delivery until it settles: a 500, then a retry that lands.
    console.wait_text("#delivery-state", "delivered", timeout=30)
    attempts = console.all("#delivery-attempts tbody tr")
    assert len(attempts) == 2, [a.text for a in attempts]
    cells = lambda row: [c.text for c in row.find_elements(By.TAG_NAME, "td")]
    first, second = cells(attempts[0]), cells(attempts[1])
    assert first[3:5] == ["http_error", "500"] and first[5].startswith("receiver says no"), first
    assert second[3:5] == ["delivered", "200"] and '"ok": true' in second[5], second
    detail = console.text("#delivery-detail")
    assert "webhook.test" in detail and f"webhook-test:{endpoint['id']}" in detail
    event_id = console.driver.find_element(By.ID, "delivery-detail").find_element(
        By.XPATH, ".//dt[.='Event id']/following-sibling::dd[1]").text
    assert [e["id"] for e in receiver.events()] == [event_id, event_id]
    # The list is filtered to that event there, and agrees with the API.
    assert console.by_label("Event id", "#delivery-filters").get_attribute("value") == event_id
    listed = api("GET", "/admin/v1/webhook-deliveries", params={"event_id": event_id}).json()["deliveries"]
    assert [(d["state"], len(d["attempts"])) for d in listed] == [("delivered", 2)]
    assert "delivered" in console.text("#deliveries")
    console.scroll_to("#delivery-detail")
    console.screenshot("webhook-test-delivered")

    # Replay the same event to the endpoint: a second delivery, of kind replay, lands too.
    console.click("Replay this event to this endpoint")
    console.wait_text("#webhook-status", "Queued 1 delivery")
    console.wait_text("#delivery-detail", "replay")
    console.wait_text("#delivery-state", "delivered", timeout=30)
    wait_until(lambda: len(console.all("#deliveries tbody tr")) == 2, 15, "the replay is not listed")
    assert [e["id"] for e in receiver.events()] == [event_id] * 3
    kinds = sorted(d["kind"] for d in api("GET", "/admin/v1/webhook-deliveries",
                                          params={"event_id": event_id}).json()["deliveries"])
    assert kinds == ["replay", "test"]
    console.scroll_to("#delivery-detail")
    console.screenshot("webhook-replayed")

    # The filters: failed deliveries of this endpoint are none; an event id that is no UUID is refused beside its field.
    Select(console.by_label("State", "#delivery-filters")).select_by_value("failed")
    console.click("Filter")
    console.wait_text("#deliveries", "Nothing to show")
    Select(console.by_label("State", "#delivery-filters")).select_by_value("")
    console.fill("Event id", "not-a-uuid", "#delivery-filters")
    console.click("Filter")
    console.wait_text("#delivery-filters [data-error-for=event_id]", "UUID")


def test_an_endpoint_registered_in_the_console_shows_its_secret_once_and_can_be_disabled(
        console, console_stack, tokens, receiver):
    api = admin_api(console_stack, tokens["write"])
    console.sign_in(tokens["write"])
    console.go("#/webhooks", "#endpoint-form")
    console.fill("Endpoint URL", "ftp://example.com/hook")
    console.click("Register endpoint")
    console.wait_text("#endpoint-form [data-error-for=url]", "url")
    url = receiver.url + "/" + unique("console")
    console.fill("Endpoint URL", url)
    console.fill("Event types (comma-separated; empty for all)", "order.paid, balance.changed")
    console.click("Register endpoint")
    card = console.wait_text("#new-secret", "only time")
    secret = console.by_label("Signing secret", "#new-secret").get_attribute("value")
    assert re.fullmatch(r"whsec_[0-9a-f]{64}", secret), secret
    assert url in card
    endpoint = next(e for e in api("GET", "/admin/v1/webhook-endpoints").json()["endpoints"] if e["url"] == url)
    assert endpoint["event_types"] == ["order.paid", "balance.changed"] and "secret" not in endpoint
    assert secret not in str(console.storage()) and secret not in console.driver.current_url
    console.screenshot("webhook-secret-shown-once")
    console.click("I have stored it")
    assert console.all("#new-secret") == []
    assert console.driver.switch_to.active_element.text == "Webhooks"
    # Coming back, the secret is nowhere on the page.
    console.go("#/overview", "#reports-waiting")
    console.go("#/webhooks", "#webhook-endpoints")
    console.wait_text("#webhook-endpoints", url)
    assert secret not in console.driver.page_source

    console.press(f'button.disable[data-endpoint="{endpoint["id"]}"]')
    console.wait_text("#webhook-status", "is disabled")
    assert api("GET", f"/admin/v1/webhook-endpoints/{endpoint['id']}").json()["enabled"] is False
    assert console.find(f'button.send-test[data-endpoint="{endpoint["id"]}"]').get_attribute("disabled") is not None
    assert console.driver.switch_to.active_element.get_attribute("data-endpoint") == endpoint["id"]
    console.screenshot("webhook-endpoint-disabled")


def test_a_read_only_token_sees_webhooks_but_no_send_or_replay_buttons(console, console_stack, tokens, receiver):
    write = admin_api(console_stack, tokens["write"])
    endpoint = write("POST", "/admin/v1/webhook-endpoints", json={"url": receiver.url}).json()
    sent = write("POST", f"/admin/v1/webhook-endpoints/{endpoint['id']}/test", json={})
    assert sent.status_code == 202, sent.text
    wait_until(lambda: len(receiver.events()) == 1, 15, "the test event never arrived")

    console.sign_in(tokens["read"])
    console.go("#/webhooks", "#deliveries")
    console.wait_text("#webhook-endpoints", receiver.url)
    assert console.all("button.send-test") == [] and console.all("button.disable") == []
    assert console.all("#endpoint-form") == [] and console.all("#replay-form") == []
    console.press(f'button.show-deliveries[data-endpoint="{endpoint["id"]}"]')
    console.wait_text("#deliveries", "webhook.test")
    console.press("#deliveries button.show-delivery")
    console.wait_text("#delivery-state", "delivered")
    assert console.all("#replay-delivery") == []
    assert len(console.all("#delivery-attempts tbody tr")) == 1
    console.scroll_to("#delivery-detail")
    console.screenshot("webhook-read-only")
    # The API says the same: the token may not send.
    refused = admin_api(console_stack, tokens["read"])(
        "POST", f"/admin/v1/webhook-endpoints/{endpoint['id']}/test", json={})
    assert refused.status_code == 403


@pytest.mark.parametrize("size", [DESKTOP, PHONE], ids=["1280x800", "390x844"])
def test_every_section_renders_and_fits_the_viewport(console, console_stack, tokens, size, receiver):
    write = admin_api(console_stack, tokens["write"])
    hook = write("POST", "/admin/v1/webhook-endpoints", json={"url": receiver.url, "event_types": ["order.paid"]}).json()
    assert write("POST", f"/admin/v1/webhook-endpoints/{hook['id']}/test", json={}).status_code == 202
    # Realistic lengths: a reverse-DNS App Store id, an endpoint URL with a path.
    product = "com.examplecompany.myapplication.subscription." + unique("fit").replace("-", "_")
    console_stack.api.put_product(product, price="2.00")
    long_url = receiver.url.rstrip("/") + "/hooks/storekeeper/production/subscriptions-and-orders"
    assert write("POST", "/admin/v1/webhook-endpoints",
                 json={"url": long_url, "event_types": ["order.paid"]}).status_code == 201
    order, _, _ = buy(console_stack.api, console_stack.fake, unique("console-fit"), product)
    console_stack.fake.notification("CONSUMPTION_REQUEST", transaction_id=order.get("transaction_id")
                                    or console_stack.api.admin_order(order["trade_no"])["order"]["transaction_id"])
    console.sign_in(tokens["write"], size)
    name = f"{size[0]}x{size[1]}"
    for number, (fragment, ready) in enumerate([("#/overview", "#reports-waiting"), ("#/catalog", "#products"),
                            (f"#/catalog/{product}", "#price-chart"), ("#/orders", "#orders"),
                            (f"#/orders/{order['trade_no']}", "#timeline"),
                            (f"#/users/{order['user_id']}", "#balances"),
                            ("#/notifications", "#notifications"), ("#/consumption", "#notifications"),
                            ("#/webhooks", "#deliveries")]):
        console.go(fragment, ready)
        assert console.page_fits(), f"{fragment} is wider than {name}"
        if size == PHONE:
            # On a phone the tables stack: nothing should need sideways scrolling at all.
            wide = console.driver.execute_script(
                "return [...document.querySelectorAll('.table-wrap')].filter(w => w.scrollWidth > w.clientWidth + 1)"
                ".map(w => w.querySelector('table').id)")
            assert wide == [], f"{fragment}: tables wider than the phone: {wide}"
        unlabelled = console.driver.execute_script(
            "return [...document.querySelectorAll('input, select, textarea')]"
            ".filter(c => c.labels.length === 0 && !c.getAttribute('aria-label')).map(c => c.name || c.id)")
        assert unlabelled == [], f"{fragment}: controls without a label: {unlabelled}"
        nameless = console.driver.execute_script(
            "return [...document.querySelectorAll('button, a')].filter(b => !b.textContent.trim()"
            " && !b.getAttribute('aria-label')).length")
        assert nameless == 0, f"{fragment}: buttons or links without a name"
        console.screenshot(f"{name}-{number}-{fragment.strip('#/').split('/')[0]}")
    # A delivery's detail with its attempts fits too.
    console.go("#/webhooks", "#deliveries")
    console.press(f'button.show-deliveries[data-endpoint="{hook["id"]}"]')
    console.wait_text("#deliveries", "order.paid")
    console.press("#deliveries button.show-delivery")
    console.wait_text("#delivery-state", "delivered")
    assert console.page_fits(), f"a delivery's detail is wider than {name}"
    console.scroll_to("#delivery-detail")
    console.screenshot(f"{name}-webhook-delivery")
    # The overview charts this module's paid orders.
    console.go("#/overview", "#reports-waiting")
    assert console.all("#revenue-USD circle.point")
    # One point per day of the window on both charts; today's counts this test's order.
    assert len(console.all("#paid-orders circle.point")) == len(console.all("#revenue-USD circle.point")) == 30
    today = console.all("#paid-orders circle.point")[-1].find_element(By.TAG_NAME, "title")
    assert int(today.get_attribute("textContent").split(": ")[1].split()[0]) >= 1
    console.wait_text("#last-notification", "since the last")
    # Consumption requests: the detail shows the payload as text.
    console.go("#/consumption", "#notifications")
    wait_until(lambda: console.all("#notifications button.show-detail") or console.driver.refresh() or None,
               20, "the consumption request never appeared")
    console.go("#/consumption", "#notifications")
    console.all("#notifications button.show-detail")[0].click()
    assert "CONSUMPTION_REQUEST" in console.wait_text("#notification-detail", "Payload")
    console.screenshot(f"{name}-consumption-detail")


def test_the_keyboard_alone_signs_in_and_moves_between_sections(console, tokens):
    from selenium.webdriver.common.keys import Keys
    console.viewport(DESKTOP)
    console.open()
    console.driver.execute_script("sessionStorage.clear()")
    console.open()
    # The token field has the focus on arrival; Enter submits.
    console.driver.switch_to.active_element.send_keys(tokens["read"], Keys.ENTER)
    console.find("#nav")
    link = console.driver.find_element(By.CSS_SELECTOR, '#nav a[href="#/orders"]')
    link.send_keys(Keys.ENTER)
    console.find("#order-search")
    # The new section's heading takes the focus, so a screen reader announces it.
    assert console.driver.switch_to.active_element.text == "Orders"


def test_a_consumption_request_shows_the_answer_sent_to_apple(browser, module_launcher, tokens, artifacts):
    """With the App Store Server API key, each consumption request is answered, and the list
    says what was sent: the delivery, the share consumed, the refund preference."""
    stack = module_launcher.stack(api_key=True, CONSUMPTION_RETRY_BASE="1s",
                                  CONSUMPTION_REFUND_PREFERENCE="by_consumption",
                                  ADMIN_TOKENS=f"{ADMIN_NAME}:{tokens['write']}")
    api, fake = stack.api, stack.fake
    product = "com.example.tests.console.consumption.gold"
    api.put_product(product, grants={"balance": {"gold": 100}})
    user = unique("console-consumer")
    _, purchase, _ = buy(api, fake, user, product)
    r = api.post(f"/v1/users/{user}/balances/gold/spend", json={"amount": 25, "reason": "potion"},
                 headers={"Idempotency-Key": "console-1"})
    assert r.status_code == 201, r.text
    assert api.request("PUT", f"/v1/users/{user}/consumption-consent", json={"consented": True}).status_code == 200
    fake.notification("CONSUMPTION_REQUEST", transaction_id=purchase["transaction_id"])
    wait_until(lambda: [c for c in fake.consumption_calls(purchase["transaction_id"]) if c["status"] == 202],
               20, "the answer never reached the fake App Store")
    console = Console(browser, stack.sk.url, artifacts)
    console.sign_in(tokens["write"])
    console.go("#/consumption", "#notifications")
    assert "sent: DELIVERED 25% consumed, GRANT_PRORATED" in console.wait_text("#notifications", "sent:")
    console.screenshot("consumption-answer")
