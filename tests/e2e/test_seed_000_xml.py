"""Seed 000 (German tutorial) reads its shop from the server as XML: for each
`<product nid="…">` it asks StoreKit for `com.beispielfirma.appname.<nid>`, and after a purchase
or a restore it posts `receipt=…&id=…` and stores the XML content the server answers. Here the
catalog and the receipts answers are read as that client would, with Python's xml.etree: by
`Accept: application/xml` or the `.xml` form of the path, with XML_PRODUCT_ID_PREFIX as the
fixed prefix. Titles and contents an editor wrote are hostile on purpose; JSON stays the default
and stays byte for byte what it was."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from support import error_fields, form_post, problem, unique, wait_until

PREFIX = "com.beispielfirma.appname."
DOWNLOAD = PREFIX + "1042"
COINS = PREFIX + "coins100"
OUTSIDE = "com.example.other.sword"
HOSTILE_TITLE = "Gold <b>&amp;</b> \"quoted\" 'single' ]]> <!-- x --> <![CDATA[y]]> \u0001bell\r\nnext\ttab 🪙"
# XML 1.0 cannot carry U+0001 at all, not even as a reference: it arrives as U+FFFD.
HOSTILE_TITLE_READ = HOSTILE_TITLE.replace("\u0001", "\ufffd")
HOSTILE_DESCRIPTION = "</description><product nid=\"evil\"/><description>"
CONTENT_XML = '<product nid="1042"><title>Level &amp; pack</title><file>levels-1042.zip</file></product>]]>'
# A product's content is a JSON object; seed 000's app stores XML, kept as a string member.
CONTENT = {"xml": CONTENT_XML, "version": 3, "files": ["levels-1042.zip"]}
XML = {"Accept": "application/xml"}


@pytest.fixture(scope="module")
def stack(module_launcher):
    # Seed 000's app has no sign-in (see test_seed_000_legacy_form_receipt.py).
    return module_launcher.stack(APP_AUTH="none", APP_JWT_SECRET=None, XML_PRODUCT_ID_PREFIX=PREFIX)


@pytest.fixture(scope="module", autouse=True)
def catalog(api):
    api.put_product(DOWNLOAD, type="non_consumable", price="0.99", currency="EUR", title=HOSTILE_TITLE,
                    description=HOSTILE_DESCRIPTION, grants={}, content=CONTENT, sort_order=1)
    api.put_product(COINS, price="1.99", grants={"balance": {"coins": 100}}, content={"coins": 100},
                    sort_order=2)
    api.put_product(OUTSIDE, price="2.99", sort_order=3)
    wait_until(lambda: len(api.get("/v1/products").json()["products"]) == 3, 10, "the catalog served")


def shop(response) -> ET.Element:
    assert response.status_code == 200, response.text
    assert response.headers["Content-Type"] == "application/xml; charset=utf-8"
    return ET.fromstring(response.content)


def test_the_shop_reads_as_xml_with_nids_that_make_the_app_store_ids(api):
    as_json = api.get("/v1/products")
    assert as_json.headers["Content-Type"] == "application/json"
    json_ids = [p["product_id"] for p in as_json.json()["products"]]
    assert json_ids == [DOWNLOAD, COINS, OUTSIDE]
    by_accept = api.get("/v1/products", headers=XML)
    by_path = api.get("/v1/products.xml")
    assert by_accept.content == by_path.content
    assert by_accept.headers["ETag"] == by_path.headers["ETag"] != as_json.headers["ETag"]
    root = shop(by_path)
    assert root.tag == "products" and root.get("id_prefix") == PREFIX
    products = root.findall("product")
    # What seed 000's parser does: the prefix plus each nid, in the catalog's order. A
    # product outside the prefix could not be named that way and is left out.
    assert [PREFIX + p.get("nid") for p in products] == [DOWNLOAD, COINS]
    download, coins = products
    assert download.get("product_id") == DOWNLOAD and download.get("type") == "non_consumable"
    assert (download.get("price"), download.get("currency")) == ("0.99", "EUR")
    assert download.find("title").text == HOSTILE_TITLE_READ
    assert download.find("description").text == HOSTILE_DESCRIPTION
    assert [p.get("nid") for p in root.iter("product")] == ["1042", "coins100"], "markup leaked from a field"
    assert [(b.get("asset"), b.get("amount")) for b in coins.find("grants")] == [("coins", "100")]
    json_coins = as_json.json()["products"][1]
    assert coins.find("title").text == json_coins["title"]


def test_json_stays_the_default_and_a_tie_or_an_unknown_type_is_json(api):
    plain = api.get("/v1/products")
    # XML must be named: a wildcard that would also take it (text/*) still gets JSON.
    for accept in ("*/*", "application/json", "application/json, application/xml",
                   "application/xml;q=0.5, application/json", "image/png", "application/xml;q=0",
                   "application/json;q=0.4, text/*;q=0.5"):
        r = api.get("/v1/products", headers={"Accept": accept})
        # No 406 anywhere in this server: what it cannot produce is answered in JSON.
        assert r.status_code == 200 and r.headers["Content-Type"] == "application/json", accept
        assert r.content == plain.content and r.headers["ETag"] == plain.headers["ETag"], accept
    for accept in ("text/xml", "text/html;q=0.9, application/xml", "application/json;q=0.4, text/xml;q=0.5",
                   "*/*;q=0.1, application/xml"):
        r = api.get("/v1/products", headers={"Accept": accept})
        assert r.headers["Content-Type"].startswith("application/xml"), accept
    # Caches must keep the two apart, and each representation revalidates with its own tag.
    assert plain.headers["Vary"] == "Accept, Storekeeper-Storefront"
    xml = api.get("/v1/products", headers=XML)
    assert xml.headers["Vary"] == "Accept, Storekeeper-Storefront"
    again = api.get("/v1/products", headers={**XML, "If-None-Match": xml.headers["ETag"]})
    assert again.status_code == 304 and again.headers["ETag"] == xml.headers["ETag"]
    stale = api.get("/v1/products", headers={"If-None-Match": xml.headers["ETag"]})
    assert stale.status_code == 200 and stale.content == plain.content


def test_a_catalog_change_reaches_the_xml_too(api):
    extra = PREFIX + unique("pack").replace("-", "_")
    before = api.get("/v1/products.xml").headers["ETag"]
    api.put_product(extra, type="non_consumable", price="4.99", grants={}, sort_order=9)
    wait_until(lambda: any(PREFIX + p.get("nid") == extra
                           for p in shop(api.get("/v1/products.xml")).findall("product")), 10, "the new product")
    assert api.get("/v1/products.xml").headers["ETag"] != before
    r = api.request("DELETE", f"/admin/v1/products/{extra}", admin=True)
    assert r.status_code in (200, 204), r.text


def purchase(fake, product_id, type):
    return fake.purchase(product_id, type, receipt_style="transaction")


def test_the_xml_shop_is_in_the_storefront_asked_and_an_unknown_one_is_refused(api):
    r = api.request("PUT", f"/admin/v1/products/{COINS}/prices/DEU", admin=True,
                    json={"price": "2.49", "currency": "EUR"})
    assert r.status_code == 201, r.text
    try:
        wait_until(lambda: '"2.49"' in api.get("/v1/products?storefront=DEU").text, 10, "the price served")
        json_deu = api.get("/v1/products?storefront=DEU")
        for path, headers in (("/v1/products", XML), ("/v1/products.xml", {})):
            plain = api.get(path, headers=headers)
            deu = api.get(path, headers=headers, params={"storefront": "DEU"})
            prices = {p.get("product_id"): (p.get("price"), p.get("currency")) for p in shop(deu)}
            # The storefront's own price where it has one, the default elsewhere: as the JSON.
            assert prices[COINS] == ("2.49", "EUR") and prices[DOWNLOAD] == ("0.99", "EUR"), (path, prices)
            by_header = api.get(path, headers={**headers, "Storekeeper-Storefront": "DE"})
            assert by_header.content == deu.content and by_header.headers["ETag"] == deu.headers["ETag"]
            # A storefront without prices of its own shares the default representation.
            fra = api.get(path, headers=headers, params={"storefront": "FRA"})
            assert fra.content == plain.content and fra.headers["ETag"] == plain.headers["ETag"]
            # Each representation has its own validator.
            assert len({plain.headers["ETag"], deu.headers["ETag"], json_deu.headers["ETag"]}) == 3
            assert "Storekeeper-Storefront" in deu.headers["Vary"]
            tag = {"If-None-Match": deu.headers["ETag"]}
            assert api.get(path, headers={**headers, **tag}, params={"storefront": "DEU"}).status_code == 304
            assert api.get(path, headers={**headers, **tag}).status_code == 200
            # The storefront is checked before the format: a typo is no default price list.
            body = problem(api.get(path, headers=headers, params={"storefront": "zz"}), 400, "invalid_storefront")
            assert error_fields(body) == {"storefront"}
            body = problem(api.get(path, headers={**headers, "Storekeeper-Storefront": "DEUX"}), 400,
                           "invalid_storefront")
            assert error_fields(body) == {"Storekeeper-Storefront"}
    finally:
        assert api.request("DELETE", f"/admin/v1/products/{COINS}/prices/DEU", admin=True).status_code in (200, 204)


def test_a_purchase_posted_to_the_xml_path_gets_its_content_back_as_xml(api, fake_appstore):
    bought = purchase(fake_appstore, DOWNLOAD, "non_consumable")
    tx = bought["transaction_id"]
    # Seed 000's own post: not percent-encoded, so '+' arrives as a space.
    fields = [("receipt", bought["receipt"].replace("+", " ")), ("id", DOWNLOAD)]
    r = form_post(api, "/v1/receipts.xml", fields)
    assert "RateLimit-Limit" in r.headers, "the .xml path must be limited like /v1/receipts"
    root = shop(r)
    assert root.tag == "receipt"
    [transaction] = root.findall("transaction")
    assert transaction.get("transaction_id") == tx and transaction.get("status") == "recorded"
    assert transaction.get("product_id") == DOWNLOAD and transaction.get("nid") == "1042"
    [delivery] = root.findall("delivery")
    assert delivery.get("nid") == "1042" and delivery.get("quantity") == "1"
    fields_read = {f.get("name"): (f.get("format"), f.text) for f in delivery.find("content")}
    assert fields_read == {"xml": (None, CONTENT_XML), "version": ("json", "3"),
                           "files": ("json", '["levels-1042.zip"]')}
    # The app stores that content and reads it as its own XML.
    stored = delivery.find("content/field[@name='xml']").text
    assert ET.fromstring(stored.removesuffix("]]>")).find("title").text == "Level & pack"

    # Restored on the device: the same post with Accept, same content; JSON tells the same.
    restored = shop(api.post("/v1/receipts", data="&".join(f"{k}={v}" for k, v in fields).encode(),
                             headers={**XML, "Content-Type": "application/x-www-form-urlencoded"}))
    assert restored.find("delivery/content/field[@name='xml']").text == CONTENT_XML
    as_json = form_post(api, "/v1/receipts", fields)
    assert as_json.headers["Content-Type"] == "application/json"
    [d] = as_json.json()["delivery"]
    assert (d["product_id"], d["content"], str(d["newly_granted"]).lower()) == (
        DOWNLOAD, CONTENT, restored.find("delivery").get("newly_granted"))


def test_a_content_member_that_is_not_a_string_and_the_grants_come_back_marked(api, fake_appstore):
    bought = purchase(fake_appstore, COINS, "consumable")
    root = shop(form_post(api, "/v1/receipts.xml", [("receipt", bought["receipt"]), ("id", COINS)]))
    [delivery] = root.findall("delivery")
    [field] = delivery.find("content")
    assert (field.get("name"), field.get("format"), json.loads(field.text)) == ("coins", "json", 100)
    assert [(b.get("asset"), b.get("amount")) for b in delivery.find("granted")] == [("coins", "100")]


def test_refusals_stay_problem_json_on_the_xml_path(api):
    r = form_post(api, "/v1/receipts.xml", [("receipt", "this is not base64 !!!"), ("id", DOWNLOAD)])
    assert r.status_code == 422 and r.headers["Content-Type"] == "application/problem+json", r.text
    assert r.json()["code"] == "invalid_proof"
    r = api.get("/v1/receipts.xml")
    assert r.status_code == 405 and r.headers["Allow"].startswith("POST")
