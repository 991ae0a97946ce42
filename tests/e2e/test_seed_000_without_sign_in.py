"""Seed 000's app has no sign-in: it posts `receipt=…&id=…` with no Authorization. Under the
default APP_AUTH=jwt that was 401, so the only way to serve it was APP_AUTH=none, which lets
anyone act for any user. RECEIPTS_WITHOUT_SIGN_IN=true lets exactly that post through as an
anonymous caller: a userless App Store post (which credits nobody, and whose proof Apple
judges); anything that names or reads a user still needs a token, and a bad token is still 401."""

from __future__ import annotations

import subprocess
import xml.etree.ElementTree as ET

import pytest

from support import free_port, unique, user_headers

PREFIX = "com.beispielfirma.appname."
DOWNLOAD = PREFIX + "1042"
COINS = PREFIX + "coins100"
CONTENT = {"xml": '<product nid="1042"><title>Level pack</title></product>'}
FORM = {"Content-Type": "application/x-www-form-urlencoded"}


@pytest.fixture(scope="module")
def stack(module_launcher):
    # The default jwt stack (conftest), plus the setting.
    return module_launcher.stack(RECEIPTS_WITHOUT_SIGN_IN="true", XML_PRODUCT_ID_PREFIX=PREFIX)


@pytest.fixture(scope="module", autouse=True)
def catalog(api):
    api.put_product(DOWNLOAD, type="non_consumable", price="0.99", grants={}, content=CONTENT)
    api.put_product(COINS, price="1.99", grants={"balance": {"coins": 100}}, content={"coins": 100})


def seed_post(api, path, fields, headers=None):
    """Seed 000's post: a form, not percent-encoded, and no credentials unless `headers` has some."""
    body = "&".join(f"{k}={v}" for k, v in fields).encode()
    return api.post(path, data=body, headers={**FORM, **(headers or {})}, auth=False)


def test_the_seed_000_post_without_a_token_gets_its_content_and_nothing_else_opens(api, fake_appstore, stack):
    bought = fake_appstore.purchase(DOWNLOAD, "non_consumable", receipt_style="transaction")
    fields = [("receipt", bought["receipt"].replace("+", " ")), ("id", DOWNLOAD)]
    r = seed_post(api, "/v1/receipts.xml", fields)
    assert r.status_code == 200, r.text
    # Limited like other unauthenticated traffic: the client address's bucket answers.
    assert "RateLimit-Limit" in r.headers
    root = ET.fromstring(r.content)
    [delivery] = root.findall("delivery")
    assert delivery.get("nid") == "1042"
    assert delivery.find("content/field[@name='xml']").text == CONTENT["xml"]
    as_json = seed_post(api, "/v1/receipts", fields)
    assert as_json.status_code == 200, as_json.text
    [d] = as_json.json()["delivery"]
    assert d["content"] == CONTENT and as_json.json().get("entitlements") is None

    # A credential, even a bad one, is checked: never downgraded to anonymous.
    for bad in ("Bearer not-a-token", "Basic Zm9vOmJhcg==", "Bearer "):
        r = seed_post(api, "/v1/receipts.xml", fields, {"Authorization": bad})
        assert r.status_code == 401, (bad, r.status_code, r.text)

    # Naming a user (to credit or read them) needs that user's token, as before.
    coins = fake_appstore.purchase(COINS, "consumable", receipt_style="transaction")
    victim = unique("victim")
    for path in ("/v1/receipts", "/v1/receipts.xml"):
        r = seed_post(api, path, [("receipt", coins["receipt"]), ("id", COINS), ("user_id", victim)])
        assert r.status_code == 401 and r.json()["code"] == "unauthorized", r.text
        r = api.post(path, json={"receipt": coins["receipt"], "user_id": victim}, auth=False)
        assert r.status_code == 401, r.text
    # A Google restore is always someone's.
    r = api.post("/v1/receipts", json={"store": "google_play", "product_id": COINS, "purchase_token": "t" * 40},
                 auth=False)
    assert r.status_code == 401, r.text
    assert api.balance(victim, "coins") == 0
    assert int(stack.db.scalar(f"SELECT count(*) FROM trade_reports WHERE user_id = '{victim}'")) == 0

    # Every other route still needs a token.
    grant = api.post(f"/v1/users/{victim}/balances/coins/grant", auth=False,
                     headers={"Idempotency-Key": unique("k")}, json={"amount": 1000000, "reason": "free"})
    assert grant.status_code == 401, grant.text
    for method, path, body in (("POST", "/v1/orders", {"user_id": victim, "product_id": COINS}),
                               ("POST", "/v1/trade-reports", {"trade_no": "x", "trade_status": "TRADE_CLOSED"}),
                               ("GET", f"/v1/users/{victim}/entitlements", None)):
        r = api.request(method, path, json=body, auth=False)
        assert r.status_code == 401, (path, r.status_code, r.text)
    assert api.balance(victim, "coins") == 0

    # The same post signed in still credits its user.
    owner = unique("owner")
    r = api.post("/v1/receipts", data=f"receipt={coins['receipt']}&id={COINS}".encode(),
                 headers={**FORM, **user_headers(owner)}, auth=False)
    assert r.status_code == 200, r.text
    assert api.balance(owner, "coins") == 100


def test_without_the_setting_the_post_stays_401_and_a_wrong_value_stops_start_up(launcher, binary, new_db):
    off = launcher.stack()
    bought = off.fake.purchase(DOWNLOAD, "non_consumable", receipt_style="transaction")
    r = seed_post(off.api, "/v1/receipts.xml", [("receipt", bought["receipt"]), ("id", DOWNLOAD)])
    assert r.status_code == 401 and r.json()["code"] == "unauthorized", r.text

    env = launcher.env(new_db(), free_port(), RECEIPTS_WITHOUT_SIGN_IN="yes")
    result = subprocess.run([binary, "serve"], env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode != 0, result.stdout
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "RECEIPTS_WITHOUT_SIGN_IN" in lines[0], result.stderr


def test_under_api_key_the_keyless_post_is_anonymous_and_the_backends_key_still_names_users(module_launcher):
    key = "s" * 40
    keyed = module_launcher.stack(APP_AUTH="api_key", APP_API_KEYS=f"shop:{key}", APP_JWT_SECRET=None,
                                  RECEIPTS_WITHOUT_SIGN_IN="true", XML_PRODUCT_ID_PREFIX=PREFIX)
    keyed.api.put_product(DOWNLOAD, type="non_consumable", price="0.99", grants={}, content=CONTENT)
    keyed.api.put_product(COINS, price="1.99", grants={"balance": {"coins": 100}}, content={"coins": 100})

    bought = keyed.fake.purchase(DOWNLOAD, "non_consumable", receipt_style="transaction")
    r = seed_post(keyed.api, "/v1/receipts.xml", [("receipt", bought["receipt"]), ("id", DOWNLOAD)])
    assert r.status_code == 200, r.text
    [delivery] = ET.fromstring(r.content).findall("delivery")
    assert delivery.get("nid") == "1042"

    coins = keyed.fake.purchase(COINS, "consumable", receipt_style="transaction")
    user = unique("player")
    fields = [("receipt", coins["receipt"]), ("id", COINS), ("user_id", user)]
    # Without the key, naming a user is refused; a wrong key is never downgraded to anonymous.
    assert seed_post(keyed.api, "/v1/receipts", fields).status_code == 401
    for bad in ("Bearer " + "t" * 40, "Bearer "):
        r = seed_post(keyed.api, "/v1/receipts", fields, {"Authorization": bad})
        assert r.status_code == 401, (bad, r.status_code, r.text)
    assert keyed.api.balance(user, "coins") == 0
    # The backend's key still acts for any user it names.
    r = seed_post(keyed.api, "/v1/receipts", fields, {"Authorization": f"Bearer {key}"})
    assert r.status_code == 200, r.text
    assert keyed.api.balance(user, "coins") == 100
    # Every other route still needs the key.
    r = keyed.api.get(f"/v1/users/{user}/entitlements", auth=False)
    assert r.status_code == 401, r.text
