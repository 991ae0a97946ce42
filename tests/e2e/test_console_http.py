"""The admin console over plain HTTP: every file it serves carries the security headers and
its content type, is revalidated by ETag, and is served on the admin listener when there is
one. Also the admin endpoints the console added: manual adjustments (validation, scope,
idempotency, audit, ledger) and the overview."""

from __future__ import annotations

import re
import secrets
from decimal import Decimal
from pathlib import Path

import pytest
import requests

from support import ADMIN_NAME, REPO, Client, buy, error_fields, free_port, problem, unique, wait_until

CONSOLE = REPO / "Console"
TYPES = {".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8",
         ".css": "text/css; charset=utf-8", ".svg": "image/svg+xml"}
CSP_DIRECTIVES = {
    "default-src": "'self'", "script-src": "'self'", "style-src": "'self'", "img-src": "'self' data:",
    "frame-ancestors": "'none'", "base-uri": "'none'", "form-action": "'self'", "object-src": "'none'",
}


def console_paths() -> list[tuple[str, Path]]:
    files = sorted(p for p in CONSOLE.iterdir() if p.suffix in TYPES)
    assert any(p.name == "index.html" for p in files)
    return [("/admin/" if p.name == "index.html" else f"/admin/{p.name}", p) for p in files]


def assert_security_headers(r: requests.Response) -> None:
    policy = dict(d.strip().split(" ", 1) for d in r.headers["Content-Security-Policy"].split(";"))
    for name, value in CSP_DIRECTIVES.items():
        assert policy.get(name) == value, (name, policy)
    assert "unsafe-inline" not in r.headers["Content-Security-Policy"]
    assert r.headers["X-Content-Type-Options"] == "nosniff"
    assert r.headers["Referrer-Policy"] == "no-referrer"
    assert r.headers["X-Frame-Options"] == "DENY"
    assert r.headers["Cache-Control"] == "no-cache"


@pytest.fixture(scope="module")
def sk(module_storekeeper):
    return module_storekeeper()


def test_every_console_file_has_its_type_the_security_headers_and_an_etag(sk):
    for path, file in console_paths():
        r = requests.get(sk.url + path, timeout=10)
        assert r.status_code == 200, path
        assert r.content == file.read_bytes(), path
        assert r.headers["Content-Type"] == TYPES[file.suffix], path
        assert_security_headers(r)
        etag = r.headers["ETag"]
        again = requests.get(sk.url + path, headers={"If-None-Match": etag}, timeout=10)
        assert again.status_code == 304 and again.content == b"", path
        assert_security_headers(again)
        assert requests.head(sk.url + path, timeout=10).status_code == 200


def test_admin_without_a_slash_redirects_and_unknown_files_are_not_served(sk):
    r = requests.get(sk.url + "/admin", allow_redirects=False, timeout=10)
    assert r.status_code == 308 and r.headers["Location"] == "/admin/"
    assert r.reason == "Permanent Redirect"
    assert_security_headers(r)
    # (requests would resolve a literal "/admin/../" itself; the encoded dots reach the server.)
    for path in ("/admin/missing.js", "/admin/%2e%2e/openapi.yaml", "/admin/%2e%2e/Package.swift",
                 "/admin/index.html", "/admin/app.js/"):
        assert requests.get(sk.url + path, timeout=10).status_code == 404, path
    assert requests.post(sk.url + "/admin/", timeout=10).status_code == 405


def test_the_console_has_no_inline_code_and_never_writes_html_from_strings():
    index = (CONSOLE / "index.html").read_text()
    assert not re.search(r"<script(?![^>]*\bsrc=)", index), "inline <script> in index.html"
    assert "<style" not in index and " style=" not in index and re.search(r"\son[a-z]+=", index) is None
    for script in CONSOLE.glob("*.js"):
        text = script.read_text()
        for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function"):
            assert sink not in text, f"{script.name} uses {sink}"
        assert "localStorage" not in text, f"{script.name}: the token belongs in sessionStorage only"
        # The SVG namespace is a name, not a place the page loads from.
        assert not re.search(r"https?://(?!www\.w3\.org/2000/svg')", text), f"{script.name} refers to another origin"


def test_with_an_admin_listener_the_console_is_served_there_only(storekeeper):
    admin_port = free_port()
    sk = storekeeper(ADMIN_PORT=admin_port)
    r = requests.get(f"http://127.0.0.1:{admin_port}/admin/", timeout=10)
    assert r.status_code == 200 and "Storekeeper admin" in r.text
    assert_security_headers(r)
    assert requests.get(sk.url + "/admin/", timeout=10).status_code == 404
    assert requests.get(sk.url + "/admin/app.js", timeout=10).status_code == 404


def test_without_its_directory_storekeeper_starts_and_serves_no_console(storekeeper, tmp_path):
    sk = storekeeper(CONSOLE_DIR=str(tmp_path / "absent"))
    assert requests.get(sk.url + "/admin/", timeout=10).status_code == 404
    assert sk.client.get("/admin/v1/whoami", admin=True).json() == {"name": ADMIN_NAME, "scope": "write"}


# ---------------------------------------------------------------------------------------------
# The admin endpoints behind the console


@pytest.fixture(scope="module")
def read_token() -> str:
    return secrets.token_hex(16)


@pytest.fixture(scope="module")
def stack2(module_launcher, read_token):
    write = secrets.token_hex(16)
    return module_launcher.stack(ADMIN_TOKENS=f"{ADMIN_NAME}:{write},viewer:{read_token}:read")


def adjust(api: Client, user: str, body: dict, key: str | None = None, token: str | None = None):
    headers = {"Idempotency-Key": key} if key else {}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    return api.request("POST", f"/admin/v1/users/{user}/adjustments", admin=token is None, json=body,
                       headers=headers)


def test_an_adjustment_moves_the_balance_through_the_ledger_once_per_key_and_is_audited(stack2):
    api = stack2.api
    user = unique("adjusted")
    r = adjust(api, user, {"asset": "gold", "amount": 40, "reason": "paid, got nothing"}, key="k-1")
    assert r.status_code == 201, r.text
    body = r.json()
    assert body["balance"] == 40 and body["adjustment"]["admin"] == ADMIN_NAME
    # The same request again (a retry after a lost answer) changes nothing.
    again = adjust(api, user, {"asset": "gold", "amount": 40, "reason": "paid, got nothing"}, key="k-1")
    assert again.status_code == 200 and again.json() == body
    problem(adjust(api, user, {"asset": "gold", "amount": 41, "reason": "paid, got nothing"}, key="k-1"),
            422, "idempotency_key_reused")
    # Compared byte for byte, as the wallet's replays are: a reason spelled with a decomposed é
    # is another request, not a retry of the precomposed one.
    cafe = unique("adjusted-cafe")
    assert adjust(api, cafe, {"asset": "gold", "amount": 1, "reason": "caf\u00e9"}, key="k-cafe").status_code == 201
    problem(adjust(api, cafe, {"asset": "gold", "amount": 1, "reason": "cafe\u0301"}, key="k-cafe"),
            422, "idempotency_key_reused")
    taken = adjust(api, user, {"asset": "gold", "amount": -15, "reason": "granted too much",
                               "environment": "Sandbox"})
    assert taken.status_code == 201 and taken.json()["balance"] == 25

    assert api.entitlements(user)["balances"] == {"gold": 25}
    # A sandbox debit of production money takes from the production lot: no sandbox money
    # is held, and none is shown (it read -15, the rows' sum, before sandbox_balances was
    # what the sandbox's lots hold).
    assert api.entitlements(user)["sandbox_balances"] == {}
    ledger = api.get(f"/admin/v1/users/{user}/ledger", admin=True).json()["entries"]
    assert [(e["kind"], e["amount"]) for e in ledger] == [("adjustment", -15), ("adjustment", 40)]
    listed = api.get(f"/admin/v1/users/{user}/adjustments", admin=True, params={"limit": 1}).json()
    assert [a["amount"] for a in listed["adjustments"]] == [-15] and listed["next_cursor"]
    audit = api.get("/admin/v1/audit", admin=True, params={"target_id": user}).json()["entries"]
    assert [(e["action"], e["target_type"], e["after"]["amount"]) for e in audit] == [
        ("ledger_adjusted", "user", -15), ("ledger_adjusted", "user", 40)]
    assert audit[1]["after"]["reason"] == "paid, got nothing"
    # Each adjustment is an event too (the retry wrote none), with the balance it left.
    events = wait_until(lambda: (lambda e: e if len(e) >= 4 else None)(
        api.get("/admin/v1/events", admin=True, params={"user_id": user}).json()["events"]), 15, "events")
    assert [e["type"] for e in events] == ["admin.adjustment", "balance.changed"] * 2
    assert [e["sequence"] for e in events] == [1, 2, 3, 4]
    assert events[0]["data"]["reason"] == "paid, got nothing" and events[0]["data"]["amount"] == 40
    assert events[0]["data"]["admin"] == ADMIN_NAME
    assert events[1]["user_state"]["balances"] == {"gold": 40}
    assert events[3]["user_state"] == api.entitlements(user)


def test_an_adjustment_is_refused_without_a_reason_out_of_bounds_or_for_a_read_token(stack2, read_token):
    api = stack2.api
    user = unique("refused")
    body = problem(adjust(api, user, {"asset": "gold coins", "amount": 0, "reason": " \u3000"}), 422)
    assert error_fields(body) == {"asset", "amount", "reason"}
    body = problem(adjust(api, user, {"asset": "gold", "amount": 1_000_000_001}), 422)
    assert error_fields(body) == {"amount", "reason"}
    body = problem(adjust(api, user, {"asset": "gold", "amount": 1, "reason": "x", "user_id": "other"}), 422)
    assert error_fields(body) == {"user_id"}
    problem(adjust(api, user, {"asset": "gold", "amount": 1, "reason": "x"}, key="has space"), 400,
            "invalid_idempotency_key")
    problem(adjust(api, user, {"asset": "gold", "amount": 1, "reason": "x"}, token=read_token), 403,
            "insufficient_scope")
    problem(api.request("POST", f"/admin/v1/users/{user}/adjustments", json={"asset": "gold", "amount": 1,
                                                                          "reason": "x"}), 401)
    problem(api.get("/admin/v1/users/%01bad", admin=True), 400, "invalid_user_id")
    assert api.entitlements(user)["balances"] == {}
    assert api.get(f"/admin/v1/users/{user}/ledger", admin=True).json()["entries"] == []


def test_user_listings_page_and_validate_their_cursors(stack2):
    api = stack2.api
    product = unique("adm_user").replace("-", "_")
    api.put_product(product)
    user = unique("pager")
    purchases = [buy(api, stack2.fake, user, product)[1] for _ in range(3)]
    pages = api.admin_pages(f"/admin/v1/users/{user}/transactions", "transactions", limit=2)
    assert sorted(t["transaction_id"] for t in pages) == sorted(p["transaction_id"] for p in purchases)
    ledger = api.admin_pages(f"/admin/v1/users/{user}/ledger", "entries", limit=2)
    assert [e["kind"] for e in ledger] == ["grant"] * 3
    for path in ("ledger", "transactions", "adjustments"):
        body = problem(api.get(f"/admin/v1/users/{user}/{path}", admin=True,
                               params={"limit": 0, "cursor": "x y", "colour": "red"}), 400, "invalid_query")
        assert error_fields(body) == {"limit", "cursor", "colour"}


def test_the_overview_counts_paid_production_orders_per_day_and_currency(stack2, read_token):
    api = stack2.api
    before = api.get("/admin/v1/overview", admin=True).json()
    product = unique("overview").replace("-", "_")
    api.put_product(product, price="2.50", currency="EUR")
    buy(api, stack2.fake, unique("ov"), product, price=2500, currency="EUR")
    buy(api, stack2.fake, unique("ov"), product, environment="Sandbox", price=2500, currency="EUR")
    r = api.get("/admin/v1/overview", headers={"Authorization": f"Bearer {read_token}"}, params={"days": 1})
    assert r.status_code == 200
    after = r.json()
    eur = [d for d in after["daily"] if d["currency"] == "EUR"]
    old = [d for d in before["daily"] if d["currency"] == "EUR" and d["day"] == eur[0]["day"]]
    assert eur[0]["paid_orders"] == (old[0]["paid_orders"] if old else 0) + 1
    assert after["days"] == 1 and after["reports_waiting"] >= 0
    body = problem(api.get("/admin/v1/overview", admin=True, params={"days": 0, "x": "1"}), 400, "invalid_query")
    assert error_fields(body) == {"days", "x"}


def test_the_overview_counts_the_price_the_store_charged_not_the_catalogs(stack2):
    """A free trial Apple signed at 0 is a paid order and no revenue; a purchase at a price
    other than the catalog's counts at what Apple signed, as the revenue chart does."""
    api, fake = stack2.api, stack2.fake
    product = unique("overview-signed").replace("-", "_")
    api.put_product(product, type="auto_renewable", price="40.00", currency="NOK",
                    grants={"entitlement": "overview_signed"})

    def nok() -> tuple[int, str]:
        r = api.get("/admin/v1/overview", admin=True, params={"days": 1})
        assert r.status_code == 200, r.text
        rows = [d for d in r.json()["daily"] if d["currency"] == "NOK"]
        return (rows[-1]["paid_orders"], rows[-1]["revenue"]) if rows else (0, "0.00")

    paid, revenue = nok()
    trial, _, _ = buy(api, fake, unique("ov-trial"), product, type="auto_renewable", price=0, currency="NOK")
    assert trial["amount"] == "40.00", trial
    assert nok() == (paid + 1, revenue)
    buy(api, fake, unique("ov-paid"), product, type="auto_renewable", price=37500, currency="NOK")
    assert nok() == (paid + 2, f"{Decimal(revenue) + Decimal('37.50'):.2f}")


def test_concurrent_retries_of_one_adjustment_apply_it_once(stack2):
    from concurrent.futures import ThreadPoolExecutor
    api = stack2.api
    user = unique("raced")
    body = {"asset": "gold", "amount": 7, "reason": "double click"}
    with ThreadPoolExecutor(max_workers=8) as pool:
        answers = list(pool.map(lambda _: adjust(api, user, body, key="same-key"), range(8)))
    assert sorted(r.status_code for r in answers) == [200] * 7 + [201], [r.text for r in answers]
    assert len({r.json()["adjustment"]["id"] for r in answers}) == 1
    assert api.entitlements(user)["balances"] == {"gold": 7}
