"""Issue 28, the console's analytics section in a real browser (chromium through selenium, as
test_console.py drives it): a chart per segment drawn as SVG from GET /admin/v1/charts, the
range and segment pickers, the table view, the CSV download, a click on a point listing the
transactions behind it, and the server's field errors beside the pickers. Screenshots go where
test_console.py puts its own."""

from __future__ import annotations

import csv
import io
import subprocess
import time
from datetime import UTC, datetime, timedelta
from urllib.parse import unquote

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select

from chart_history import History
from test_console import DESKTOP, PHONE, Console, artifacts, browser, tokens  # noqa: F401 (fixtures)
from support import ADMIN_NAME


@pytest.fixture(scope="module")
def analytics_stack(module_launcher, tokens):  # noqa: F811
    stack = module_launcher.stack(ADMIN_TOKENS=f"{ADMIN_NAME}:{tokens['write']},viewer:{tokens['read']}:read")
    stack.db.server.psql(History.generate().sql(), database=stack.db.name)
    # The rollup the instance built at start predates this history.
    done = subprocess.run([stack.sk.argv[0], "charts-backfill"], env=stack.sk.env, capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return stack


@pytest.fixture
def console(browser, analytics_stack, artifacts) -> Console:  # noqa: F811
    return Console(browser, analytics_stack.sk.url, artifacts)


def show(console: Console, **choices: str) -> None:
    for label, value in choices.items():
        control = console.by_label(label)
        if control.tag_name == "select":
            Select(control).select_by_value(value)
        else:
            console.driver.execute_script("arguments[0].value = arguments[1]", control, value)
    console.click("Show")


def test_a_chart_by_segment_its_table_its_csv_and_the_transactions_behind_a_point(console, tokens):  # noqa: F811
    console.sign_in(tokens["read"])
    console.go("#/analytics", "#analytics-form")
    show(console, Chart="revenue", From="2026-03-01", To="2026-03-31", Resolution="week", Segment="country",
         **{"Time zone": "America/New_York"})
    console.wait_text("#analytics-result", "revenue — net — USA · USD")
    charts = console.all("#analytics-result svg.chart")
    captions = [c.text for c in console.all("#analytics-result figcaption")]
    assert len(charts) == len(captions) >= 3 and "revenue — net — DEU · EUR" in captions
    assert "From the hourly rollup, exact up to" in console.text("#analytics-source")
    # The table carries every row the API answered.
    api = console.driver.execute_async_script(
        "const done = arguments[0]; fetch('/admin/v1/charts/revenue?from=2026-03-01&to=2026-03-31&resolution=week"
        "&tz=America/New_York&segment=country&environment=Production', {headers: {Authorization: 'Bearer ' + "
        "sessionStorage.getItem('storekeeper.admin.token')}}).then(r => r.json()).then(done)")
    rows = console.all("#analytics-table tbody tr")
    assert len(rows) == len(api["rows"]) > 0
    # The CSV is the same rows.
    href = console.find("#analytics-csv").get_attribute("href")
    assert href.startswith("data:text/csv")
    parsed = list(csv.DictReader(io.StringIO(unquote(href.split(",", 1)[1]))))
    assert [(r["period"], r["segment"], r["net"]) for r in parsed] == [
        (r["period"], r["segment"], r["net"] or "") for r in api["rows"]]
    console.screenshot("analytics-revenue-by-country")

    # A point: the transactions behind it, in its segment and currency, add up to it.
    first = next(i for i, r in enumerate(api["rows"]) if r["segment"] == "USA" and r["transactions"] > 0)
    row = api["rows"][first]
    figure = next(f for f in console.all("#analytics-result figure") if f.text.endswith("USA · USD"))
    points = figure.find_elements(By.CSS_SELECTOR, "circle.point.active")
    index = [r for r in api["rows"] if r["segment"] == "USA"].index(row)
    points[index].click()
    console.wait_text("#point-transactions", f"Transactions behind {row['period']} · USA · USD")
    listed = console.all("#point-transactions-table tbody tr")
    # One row a transaction: a purchase refunded in the same period is one row for both.
    assert row["transactions"] <= len(listed) <= row["transactions"] + row["refunds"]
    console.screenshot("analytics-point-transactions")

    # The keyboard reaches a point too.
    points = figure.find_elements(By.CSS_SELECTOR, "circle.point.active")
    points[0].send_keys(Keys.ENTER)
    console.wait_text("#point-transactions", f"Transactions behind {api['rows'][0]['period']}")


def test_a_busy_days_points_list_their_own_currency_page_by_page(console, analytics_stack, tokens):  # noqa: F811
    # 205 purchases in USD and 3 in EUR on one day: the EUR point lists its 3 (one page of 200
    # of the whole day, filtered in the browser, showed none), the USD point pages to all 205.
    day = datetime(2026, 9, 15, 12, tzinfo=UTC)
    busy = History(counter=800_000)
    for i in range(205):
        busy.add(user_id=f"busy-{i}", product_id="coins", purchase=day + timedelta(seconds=i),
                 storefront="USA", currency="USD", price_milli=990)
    for i in range(3):
        busy.add(user_id=f"busy-eur-{i}", product_id="coins", purchase=day + timedelta(hours=1, seconds=i),
                 storefront="DEU", currency="EUR", price_milli=1090)
    analytics_stack.db.server.psql(busy.sql(), database=analytics_stack.db.name)
    done = subprocess.run([analytics_stack.sk.argv[0], "charts-backfill"], env=analytics_stack.sk.env,
                          capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr
    console.sign_in(tokens["read"])
    console.go("#/analytics", "#analytics-form")
    show(console, Chart="revenue", From="2026-09-15", To="2026-09-15", Resolution="day", Segment="none")
    console.wait_text("#analytics-result", "revenue — net — EUR")

    def open_point(currency: str) -> None:
        figure = next(f for f in console.all("#analytics-result figure") if f.text.endswith(currency))
        figure.find_elements(By.CSS_SELECTOR, "circle.point.active")[0].click()
        console.wait_text("#point-transactions", f"Transactions behind 2026-09-15 · {currency}")

    open_point("EUR")
    assert len(console.all("#point-transactions-table tbody tr")) == 3
    assert console.all("#point-transactions-next") == []
    open_point("USD")
    assert len(console.all("#point-transactions-table tbody tr")) == 200
    console.find("#point-transactions-next").click()
    console.wait_text("#point-transactions", "(page 2)")
    assert len(console.all("#point-transactions-table tbody tr")) == 5
    assert console.all("#point-transactions-next") == []


def test_a_ratio_with_nothing_to_count_is_a_gap_not_a_zero(console, tokens):  # noqa: F811
    # churn_rate is null for a day that began with no active subscription: the table shows
    # nothing, and the chart leaves the day out instead of drawing 0%.
    console.sign_in(tokens["read"])
    console.go("#/analytics", "#analytics-form")
    show(console, Chart="churn", From="2026-01-01", To="2026-02-28", Resolution="day", Segment="none")
    console.wait_text("#analytics-result", "churn — ")
    measure = Select(console.by_label("Measure")).first_selected_option.get_attribute("value")
    api = fetch_chart(console, "/admin/v1/charts/churn?from=2026-01-01&to=2026-02-28&resolution=day"
                               "&tz=UTC&segment=none&environment=Production")
    values = [r[measure] for r in api["rows"]]
    assert None in values and any(v is not None for v in values), values
    drawn = console.all("#analytics-result svg.chart circle.point")
    assert len(drawn) == sum(v is not None for v in values)
    titles = [c.find_element(By.TAG_NAME, "title").get_attribute("textContent") for c in drawn]
    assert not any(t.endswith("—") for t in titles), titles


def test_the_servers_field_error_is_shown_beside_its_picker(console, tokens):  # noqa: F811
    console.sign_in(tokens["read"])
    console.go("#/analytics", "#analytics-form")
    show(console, From="2026-03-31", To="2026-03-01")
    console.wait_text("#analytics-form", "must not be after to")
    slot = console.by_label("From").get_attribute("aria-describedby")
    assert "must not be after to" in console.driver.find_element(By.ID, slot).text
    console.screenshot("analytics-field-errors")


def test_an_answer_to_a_superseded_request_is_not_drawn_over_the_newer_one(console, tokens):  # noqa: F811
    console.sign_in(tokens["read"])
    console.go("#/analytics", "#analytics-form")
    console.wait_text("#analytics-table caption", "revenue")
    # Churn answers late (as a chart read from the transactions does on a large database)...
    console.driver.execute_script(
        "const f = window.fetch; window.fetch = async (u, i) => { const r = await f(u, i);"
        " if (String(u).includes('/charts/churn')) await new Promise((ok) => setTimeout(ok, 1500));"
        " return r; };")
    show(console, Chart="churn", From="2026-01-01", To="2026-03-31")
    # ... and the admin asks for MRR before it does.
    show(console, Chart="mrr", From="2026-03-01", To="2026-03-31")
    console.wait_text("#analytics-table caption", "mrr")
    time.sleep(2.5)
    assert console.text("#analytics-table caption").startswith("mrr"), console.text("#analytics-table caption")


@pytest.mark.parametrize("size", [DESKTOP, PHONE], ids=["1280x800", "390x844"])
def test_cohorts_and_mrr_render_and_fit_the_viewport(console, tokens, size):  # noqa: F811
    console.sign_in(tokens["read"], size)
    console.go("#/analytics", "#analytics-form")
    for chart in ("cohorts", "mrr"):
        show(console, Chart=chart, From="2026-01-01", To="2026-06-30", Resolution="month")
        console.wait_text("#analytics-result", f"{chart} — ")
        assert console.page_fits(), f"{chart} is wider than {size}"
        console.screenshot(f"analytics-{chart}-{size[0]}x{size[1]}")


def fetch_chart(console: Console, query: str) -> dict:
    return console.driver.execute_async_script(
        "const done = arguments[1]; fetch(arguments[0], {headers: {Authorization: 'Bearer ' + "
        "sessionStorage.getItem('storekeeper.admin.token')}}).then(r => r.json()).then(done)", query)


def test_a_cohorts_point_lists_that_months_payments_and_any_measure_can_be_drawn(console, tokens):  # noqa: F811
    console.sign_in(tokens["read"])
    console.go("#/analytics", "#analytics-form")
    show(console, Chart="cohorts", From="2026-01-01", To="2026-06-30", Resolution="month")
    console.wait_text("#analytics-result", "cohorts — retention — cohort 2026-01-01")
    # The measure picker redraws the same rows with another of their numbers.
    Select(console.by_label("Measure")).select_by_value("paying")
    console.wait_text("#analytics-result figcaption", "cohorts — paying — cohort 2026-01-01")
    assert not any("retention" in c.text for c in console.all("#analytics-result figcaption"))
    api = fetch_chart(console, "/admin/v1/charts/cohorts?from=2026-01-01&to=2026-06-30&resolution=month"
                               "&tz=UTC&segment=none&environment=Production")
    first = [r for r in api["rows"] if r["period"] == "2026-01-01"]
    index = next(i for i, r in enumerate(first) if r["month"] >= 1 and r["paying"] > 0)
    row = first[index]
    figure = next(f for f in console.all("#analytics-result figure") if f.text.endswith("cohort 2026-01-01"))
    figure.find_elements(By.CSS_SELECTOR, "circle.point")[index].click()
    console.wait_text("#point-transactions", f"Transactions behind 2026-01-01 · month {row['month']}")
    paid = fetch_chart(console, "/admin/v1/charts/cohorts/transactions?from=2026-01-01&to=2026-06-30"
                                f"&resolution=month&tz=UTC&period=2026-01-01&month={row['month']}&limit=200")
    listed = console.all("#point-transactions-table tbody tr")
    assert len(listed) == len(paid["transactions"]) >= row["paying"]
    assert len({t["user_id"] for t in paid["transactions"]}) == row["paying"]
    assert {t["event"] for t in paid["transactions"]} <= {"payment", "refunded_payment"}
    console.screenshot("analytics-cohort-month-payments")


def test_the_store_product_and_country_pickers_filter_the_chart(console, tokens):  # noqa: F811
    console.sign_in(tokens["read"])
    console.go("#/analytics", "#analytics-form")
    show(console, Chart="revenue", From="2026-03-01", To="2026-03-31", Resolution="week", Segment="product",
         Store="app_store", Product="coins", Country="USA")
    console.wait_text("#analytics-result", "revenue — net — coins")
    captions = [c.text for c in console.all("#analytics-result figcaption")]
    assert captions and all(c.startswith("revenue — net — coins") for c in captions), captions
    api = fetch_chart(console, "/admin/v1/charts/revenue?from=2026-03-01&to=2026-03-31&resolution=week&tz=UTC"
                               "&segment=product&environment=Production&store=app_store&product=coins&country=USA")
    everything = fetch_chart(console, "/admin/v1/charts/revenue?from=2026-03-01&to=2026-03-31&resolution=week"
                                      "&tz=UTC&segment=product&environment=Production")
    assert len(console.all("#analytics-table tbody tr")) == len(api["rows"]) < len(everything["rows"])
    # Google Play sold nothing in this history: no coins there.
    show(console, Store="google_play")
    console.wait(lambda d: not any("coins" in c.text for c in console.all("#analytics-result figcaption")))
    play = fetch_chart(console, "/admin/v1/charts/revenue?from=2026-03-01&to=2026-03-31&resolution=week&tz=UTC"
                                "&segment=product&environment=Production&store=google_play&product=coins&country=USA")
    assert all(r["transactions"] == 0 for r in play["rows"])


def test_the_page_opens_in_the_zone_the_server_counts_in(launcher, browser, artifacts, tokens):  # noqa: F811
    zoned = launcher.stack(CHARTS_TIME_ZONE="Europe/Berlin",
                           ADMIN_TOKENS=f"{ADMIN_NAME}:{tokens['write']},viewer:{tokens['read']}:read")
    console = Console(browser, zoned.sk.url, artifacts)
    console.sign_in(tokens["read"])
    console.go("#/analytics", "#analytics-form")
    console.wait_text("#analytics-table", "(Europe/Berlin)")
    assert console.by_label("Time zone").get_attribute("value") == "Europe/Berlin"
    # Payers asked in another zone say they are counted when asked.
    show(console, Chart="payers", **{"Time zone": "Asia/Tokyo"})
    console.wait_text("#analytics-table", "(Asia/Tokyo)")
    assert "Counted ahead in Europe/Berlin only" in console.text("#analytics-source")
    console.screenshot("analytics-in-the-counted-zone")
