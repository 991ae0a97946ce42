"""openapi.yaml and the server agree where a pattern states a rule the server enforces: what the
pattern admits, the server accepts, and what it refuses, the server refuses with 422 (issue 23:
schemathesis at full strength found webhook URLs with ports over 65535 valid by the spec and
refused by the server). Also: the patterns of what the server writes admit its largest values
(an order's amount, a day's revenue), and every operation that answers 401 declares the
credentials it takes."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from support import buy, unique

SPEC = Path(__file__).resolve().parents[2] / "openapi.yaml"

WEBHOOK_URLS = [
    "https://example.com/hooks", "https://example.com", "https://a.b-c.example:8443/x/y?z=1&w=2",
    "https://192.0.2.1/h", "https://example.com:1/h", "https://example.com:9999/h",
    "https://example.com:10000/h", "https://example.com:59999/h", "https://example.com:64999/h",
    "https://example.com:65499/h", "https://example.com:65529/h", "https://example.com:65535/h",
    "https://example.com:0/h", "https://example.com:00/h", "https://example.com:0443/h",
    "https://example.com:65536/h", "https://example.com:65540/h", "https://example.com:65600/h",
    "https://example.com:66000/h", "https://example.com:70000/h", "https://example.com:99999/h",
    "https://example.com:123456/h", "https://example.com:/h", "https://user:pw@example.com/h",
    "https://example.com/h#x", "https://example.com/%41", "https://-bad.example/", "ftp://example.com",
]


def schema(name: str) -> dict:
    return yaml.safe_load(SPEC.read_text())["components"]["schemas"][name]


def test_a_webhook_url_is_accepted_exactly_when_the_contracts_pattern_admits_it(api):
    pattern = re.compile(schema("WebhookURL")["pattern"])
    created = []
    try:
        for url in WEBHOOK_URLS:
            r = api.post("/admin/v1/webhook-endpoints", admin=True, json={"url": url})
            admitted = pattern.search(url) is not None
            assert r.status_code == (201 if admitted else 422), (url, admitted, r.text)
            if r.status_code == 201:
                created.append(r.json()["id"])
    finally:
        for endpoint in created:
            api.request("DELETE", f"/admin/v1/webhook-endpoints/{endpoint}", admin=True)


def operations(spec: dict):
    for path, item in spec["paths"].items():
        for method, operation in item.items():
            if method in ("get", "put", "post", "patch", "delete"):
                yield f"{method.upper()} {path}", operation


def test_every_operation_that_can_answer_401_declares_the_credentials_it_takes():
    # Generated clients and schemathesis send a credential only where `security` names one: an
    # operation that answers 401 without declaring what it takes could never be called as
    # documented (getOffering and googleNotification once). And one that requires a credential
    # says what it answers without it.
    spec = yaml.safe_load(SPEC.read_text())
    schemes = set(spec["components"]["securitySchemes"])
    undeclared, unanswered = [], []
    for name, operation in operations(spec):
        security = operation.get("security", spec.get("security", []))
        named = {scheme for requirement in security for scheme in requirement}
        assert named <= schemes, (name, named - schemes)
        if "401" in operation["responses"] and not named:
            undeclared.append(name)
        if named and {} not in security and "401" not in operation["responses"]:
            unanswered.append(name)
    assert undeclared == [], "answers 401 but declares no credentials"
    assert unanswered == [], "requires credentials but documents no 401"


def test_the_largest_order_and_a_day_of_them_fit_the_contracts_money_patterns(api, fake_appstore):
    # A price may have 12 integer digits and an order a quantity of 10, so an order's amount
    # has up to 13, past the Money pattern a price follows; a day's revenue sums such amounts
    # without bound. The contract gives each the pattern of what the server writes.
    spec = yaml.safe_load(SPEC.read_text())["components"]["schemas"]

    def pattern_of(ref: dict) -> re.Pattern:
        return re.compile(spec[ref["$ref"].rsplit("/", 1)[1]]["pattern"])

    product = "com.example.tests.contract.largest"
    api.put_product(product, price="999999999999.99", currency="USD", grants={"balance": {"gold": 1}})
    amounts = []
    for _ in range(2):
        # Apple signs what the ten cost: the overview counts that, as the charts do.
        order, _, r = buy(api, fake_appstore, unique("whale"), product, quantity=10,
                          price=9_999_999_999_999_900, currency="USD")
        assert order["amount"] == "9999999999999.90", order
        amounts.append(order["amount"])
        assert r.json()["order"]["amount"] == order["amount"], r.text
    amount = pattern_of(spec["Order"]["properties"]["amount"])
    assert all(amount.search(a) for a in amounts), (amount.pattern, amounts)
    assert not re.search(spec["Money"]["pattern"], amounts[0]), "the price's pattern now admits it"

    overview = api.get("/admin/v1/overview", admin=True, params={"days": 1})
    assert overview.status_code == 200, overview.text
    revenue = pattern_of(spec["Overview"]["properties"]["daily"]["items"]["properties"]["revenue"])
    days = overview.json()["daily"]
    assert "19999999999999.80" in [d["revenue"] for d in days if d["currency"] == "USD"], days
    assert all(revenue.search(d["revenue"]) for d in days), (revenue.pattern, days)
