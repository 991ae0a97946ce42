"""The fake Google Play (`storekeeper-fake-googleplay`) against libraries that are not ours:
google-auth takes the key file it writes and gets an access token from its token endpoint,
its answers are checked field by field against Google's Discovery document
(androidpublisher.v3.json, shipped in google-api-python-client), and its RTDN pushes carry
OIDC tokens PyJWT verifies against the JWKS it serves.

scripts/test installs google-auth and google-api-python-client into a throwaway virtualenv and
names it in STOREKEEPER_GOOGLE_VENV. Like every e2e test, it fails rather than skips without
them (tests/e2e/README).
"""

from __future__ import annotations

import base64
import glob
import json
import os
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import requests

PACKAGE = "com.example.storekeeper"
SCOPE = "https://www.googleapis.com/auth/androidpublisher"
AUDIENCE = "https://storekeeper.test/v1/google/notifications"
PUSH_EMAIL = "pubsub-push@fake-project.iam.gserviceaccount.com"


def _google_libraries():
    venv = os.environ.get("STOREKEEPER_GOOGLE_VENV", "")
    for site in glob.glob(os.path.join(venv, "lib", "python3*", "site-packages")) if venv else []:
        if site not in sys.path:
            sys.path.append(site)
    try:
        import googleapiclient  # noqa: F401
        from google.oauth2 import service_account  # noqa: F401
    except ImportError as error:
        reason = (f"google-auth / google-api-python-client not importable ({error}); run "
                  "scripts/test, or set STOREKEEPER_GOOGLE_VENV to a virtualenv holding them")
        pytest.fail(reason, pytrace=False)


_google_libraries()

import googleapiclient  # noqa: E402
import jwt  # noqa: E402
from google.auth.transport.requests import Request  # noqa: E402
from google.oauth2 import service_account  # noqa: E402


@pytest.fixture(scope="module")
def fake_googleplay_binary() -> str:
    path = os.environ.get("STOREKEEPER_FAKE_GOOGLEPLAY_BIN")
    if not path and os.environ.get("STOREKEEPER_BIN"):
        path = str(Path(os.environ["STOREKEEPER_BIN"]).parent / "storekeeper-fake-googleplay")
    if not path or not os.access(path, os.X_OK):
        pytest.fail(f"no fake Google Play binary ({path!r}): set STOREKEEPER_FAKE_GOOGLEPLAY_BIN "
                    "or STOREKEEPER_BIN", pytrace=False)
    return path


class Receiver:
    """A tiny push endpoint: answers 503 to the first `refuse` pushes (so the fake must retry),
    then 204, keeping every request."""

    def __init__(self, refuse: int = 0):
        self.pushes: list[tuple[str | None, dict]] = []
        self.refuse = refuse
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                outer.pushes.append((self.headers.get("Authorization"), json.loads(body)))
                status = 503 if len(outer.pushes) <= outer.refuse else 204
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/push"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()


@pytest.fixture(scope="module")
def receiver():
    receiver = Receiver(refuse=1)
    yield receiver
    receiver.close()


@pytest.fixture(scope="module")
def fake(fake_googleplay_binary, receiver, tmp_path_factory):
    key_file = tmp_path_factory.mktemp("gplay") / "service-account.json"
    process = subprocess.Popen(
        [fake_googleplay_binary, "--port", "0", "--key-out", str(key_file), "--push-url",
         receiver.url, "--push-audience", AUDIENCE, "--push-email", PUSH_EMAIL,
         "--push-min-backoff", "0.2", "--voided-page-size", "2", "--log-level", "error"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = process.stdout.readline().strip()
    assert line.startswith("fake-googleplay listening on 127.0.0.1:"), (line, process.stderr.read())
    base = "http://" + line.rsplit(" ", 1)[1]
    yield base, key_file
    process.terminate()
    assert process.wait(timeout=10) == 0


@pytest.fixture(scope="module")
def credentials(fake):
    _, key_file = fake
    credentials = service_account.Credentials.from_service_account_file(str(key_file), scopes=[SCOPE])
    credentials.refresh(Request())
    return credentials


@pytest.fixture(scope="module")
def discovery() -> dict:
    path = Path(googleapiclient.__file__).parent / "discovery_cache" / "documents" / "androidpublisher.v3.json"
    return json.loads(path.read_text())


def api(fake, credentials, method: str, path: str, **kwargs) -> requests.Response:
    base, _ = fake
    return requests.request(method, f"{base}/androidpublisher/v3/applications/{PACKAGE}/purchases/{path}",
                            headers={"Authorization": f"Bearer {credentials.token}"}, timeout=10, **kwargs)


def control(fake, path: str, body: dict | None = None) -> dict:
    base, _ = fake
    answer = requests.post(f"{base}/fake/v1/{path}", json=body or {}, timeout=10)
    assert answer.status_code in (200, 201), answer.text
    return answer.json()


JSON_TYPES = {"string": str, "boolean": bool, "object": dict, "array": list}


def check_schema(discovery: dict, value, schema: dict, where: str) -> None:
    """Every field the fake returned exists in the schema with the JSON type it declares
    (int64 as strings, as the Discovery document's `format` says), recursively."""
    if "$ref" in schema:
        schema = discovery["schemas"][schema["$ref"]]
    kind = schema.get("type", "object")
    if kind == "integer":
        assert isinstance(value, int) and not isinstance(value, bool), f"{where}: {value!r} is no integer"
        return
    if kind == "number":
        assert isinstance(value, (int, float)) and not isinstance(value, bool), where
        return
    assert isinstance(value, JSON_TYPES[kind]), f"{where}: {value!r} is not {kind}"
    if kind == "string":
        if schema.get("format") == "int64":
            int(value)
        if "enum" in schema:
            assert value in schema["enum"], f"{where}: {value!r} not in {schema['enum']}"
    elif kind == "array":
        for i, item in enumerate(value):
            check_schema(discovery, item, schema["items"], f"{where}[{i}]")
    elif kind == "object":
        properties = schema.get("properties", {})
        for name, item in value.items():
            assert name in properties, f"{where}.{name} is not in the Discovery document"
            check_schema(discovery, item, properties[name], f"{where}.{name}")


def response_schema(discovery: dict, resource: str, method: str) -> dict:
    return discovery["resources"]["purchases"]["resources"][resource]["methods"][method]["response"]


def voided_purchases(fake, credentials, discovery) -> list[dict]:
    """Every page of purchases.voidedpurchases.list (subscriptions included), each checked
    against the Discovery document."""
    voided, page_token = [], None
    while True:
        params = {"type": 1, **({"token": page_token} if page_token else {})}
        answer = api(fake, credentials, "GET", "voidedpurchases", params=params)
        assert answer.status_code == 200
        check_schema(discovery, answer.json(), response_schema(discovery, "voidedpurchases", "list"),
                     "VoidedPurchasesListResponse")
        voided += answer.json().get("voidedPurchases", [])
        page_token = answer.json().get("tokenPagination", {}).get("nextPageToken")
        if not page_token:
            return voided


def test_google_auth_gets_an_access_token_with_the_fakes_key_file(fake, credentials):
    assert credentials.token.startswith("ya29.")
    assert credentials.valid
    base, key_file = fake
    assert json.loads(key_file.read_text())["token_uri"] == base + "/token"


def test_the_token_endpoint_refuses_an_assertion_signed_by_another_key(fake):
    from cryptography.hazmat.primitives.asymmetric import rsa

    base, key_file = fake
    account = json.loads(key_file.read_text())
    now = int(time.time())
    claims = {"iss": account["client_email"], "scope": SCOPE, "aud": account["token_uri"],
              "iat": now, "exp": now + 3600}
    good = jwt.encode(claims, account["private_key"], algorithm="RS256",
                      headers={"kid": account["private_key_id"]})
    forged = jwt.encode(claims, rsa.generate_private_key(public_exponent=65537, key_size=2048),
                        algorithm="RS256", headers={"kid": account["private_key_id"]})
    grant = "urn:ietf:params:oauth:grant-type:jwt-bearer"
    assert requests.post(account["token_uri"], data={"grant_type": grant, "assertion": good}).status_code == 200
    refused = requests.post(account["token_uri"], data={"grant_type": grant, "assertion": forged})
    assert refused.status_code == 400 and refused.json()["error"] == "invalid_grant"
    wrong_scope = jwt.encode({**claims, "scope": "https://www.googleapis.com/auth/cloud-platform"},
                             account["private_key"], algorithm="RS256")
    assert requests.post(account["token_uri"], data={"grant_type": grant, "assertion": wrong_scope}).status_code == 400


def test_answers_match_the_discovery_document(fake, credentials, discovery):
    product = control(fake, "products", {"product_id": "gold_100", "quantity": 2, "test": True,
                                          "obfuscated_account_id": "order-1"})["purchase_token"]
    answer = api(fake, credentials, "GET", f"products/gold_100/tokens/{product}")
    assert answer.status_code == 200
    check_schema(discovery, answer.json(), response_schema(discovery, "products", "get"), "ProductPurchase")
    assert answer.json()["purchaseType"] == 0 and answer.json()["quantity"] == 2
    assert api(fake, credentials, "POST", f"products/gold_100/tokens/{product}:acknowledge", json={}).ok
    assert api(fake, credentials, "GET", f"products/gold_100/tokens/{product}").json()["acknowledgementState"] == 1

    old = control(fake, "subscriptions", {"product_id": "vip", "obfuscated_account_id": "order-2"})["purchase_token"]
    control(fake, f"subscriptions/{old}/events", {"event": "cancel"})
    new = control(fake, "subscriptions", {"product_id": "vip_plus", "linked_purchase_token": old,
                                           "test": True})["purchase_token"]
    schema = response_schema(discovery, "subscriptionsv2", "get")
    for token in (old, new):
        answer = api(fake, credentials, "GET", f"subscriptionsv2/tokens/{token}")
        assert answer.status_code == 200
        check_schema(discovery, answer.json(), schema, "SubscriptionPurchaseV2")
    assert api(fake, credentials, "GET", f"subscriptionsv2/tokens/{new}").json()["linkedPurchaseToken"] == old
    control(fake, f"subscriptions/{new}/events", {"event": "pause", "seconds": 600})
    paused = api(fake, credentials, "GET", f"subscriptionsv2/tokens/{new}").json()
    check_schema(discovery, paused, schema, "SubscriptionPurchaseV2")
    assert paused["subscriptionState"] == "SUBSCRIPTION_STATE_PAUSED"

    for token in (product, new, control(fake, "products", {"product_id": "coins"})["purchase_token"]):
        control(fake, "voids", {"purchase_token": token, "reason": 7})
    voided = voided_purchases(fake, credentials, discovery)
    assert [v["purchaseToken"] for v in voided][:2] == [product, new]

    missing = api(fake, credentials, "GET", "products/gold_100/tokens/fake.nothing")
    assert missing.status_code == 404
    assert set(missing.json()["error"]) >= {"code", "message", "status"}
    # A token Google knows, asked for under another product: 400, with its own reason.
    elsewhere = api(fake, credentials, "GET", f"products/another_product/tokens/{product}")
    assert elsewhere.status_code == 400
    assert elsewhere.json()["error"]["errors"][0]["reason"] == "purchaseTokenDoesNotMatchProductId"


def test_pushes_carry_an_oidc_token_pyjwt_verifies_and_are_retried(fake, receiver):
    base, _ = fake
    control(fake, "notifications/test")
    deadline = time.time() + 20
    pushes: list[dict] = []
    while time.time() < deadline:
        pushes = requests.get(base + "/fake/v1/pushes", timeout=10).json()["pushes"]
        if pushes and all(p["delivered"] for p in pushes):
            break
        time.sleep(0.1)
    assert pushes and all(p["delivered"] for p in pushes), pushes
    keys = jwt.PyJWKClient(base + "/oauth2/v3/certs")
    for authorization, body in receiver.pushes:
        assert authorization.startswith("Bearer ")
        token = authorization.removeprefix("Bearer ")
        claims = jwt.decode(token, keys.get_signing_key_from_jwt(token).key, algorithms=["RS256"],
                            audience=AUDIENCE, issuer="https://accounts.google.com")
        assert claims["email"] == PUSH_EMAIL and claims["email_verified"] is True
        with pytest.raises(jwt.InvalidAudienceError):
            jwt.decode(token, keys.get_signing_key_from_jwt(token).key, algorithms=["RS256"],
                       audience="https://someone-else.example.com")
        message = body["message"]
        assert body["subscription"].startswith("projects/")
        assert message["messageId"]
        notification = json.loads(base64.b64decode(message["data"]))
        assert notification["packageName"] == PACKAGE and notification["version"] == "1.0"
    # The receiver refused the first push it got: that message came again.
    ids = [body["message"]["messageId"] for _, body in receiver.pushes]
    assert any(ids.count(i) >= 2 for i in ids)
    kinds = {next(k for k in json.loads(base64.b64decode(body["message"]["data"])) if k.endswith("Notification"))
             for _, body in receiver.pushes}
    assert {"testNotification", "oneTimeProductNotification", "voidedPurchaseNotification",
            "subscriptionNotification"} <= kinds
    assert any(p["attempts"][:2] == [503, 204] for p in pushes)


def test_orders_get_answers_each_order_as_the_discovery_document_shapes_it(fake, credentials, discovery):
    base, _ = fake
    schema = discovery["resources"]["orders"]["methods"]["get"]["response"]

    def order(order_id: str) -> requests.Response:
        return requests.get(f"{base}/androidpublisher/v3/applications/{PACKAGE}/orders/{order_id}",
                            headers={"Authorization": f"Bearer {credentials.token}"}, timeout=10)

    bought = control(fake, "products", {"product_id": "gold_100", "quantity": 3, "price_micros": 1_250_000,
                                         "currency": "EUR"})
    answer = order(bought["order_id"])
    assert answer.status_code == 200, answer.text
    check_schema(discovery, answer.json(), schema, "Order")
    assert answer.json()["total"] == {"currencyCode": "EUR", "units": "3", "nanos": 750_000_000}
    assert answer.json()["purchaseToken"] == bought["purchase_token"]
    assert answer.json()["lineItems"][0]["oneTimePurchaseDetails"] == {"quantity": 3}
    control(fake, "voids", {"purchase_token": bought["purchase_token"], "quantity": 1})
    assert order(bought["order_id"]).json()["state"] == "PARTIALLY_REFUNDED"

    sub = control(fake, "subscriptions", {"product_id": "vip", "price_micros": 4_990_000})
    control(fake, f"subscriptions/{sub['purchase_token']}/events", {"event": "renew", "price_micros": 5_990_000})
    renewal = order(sub["order_id"] + "..0")
    assert renewal.status_code == 200, renewal.text
    check_schema(discovery, renewal.json(), schema, "Order")
    assert renewal.json()["total"] == {"currencyCode": "USD", "units": "5", "nanos": 990_000_000}
    assert order(sub["order_id"]).json()["total"]["units"] == "4"
    control(fake, f"subscriptions/{sub['purchase_token']}/events", {"event": "revoke"})
    assert order(sub["order_id"] + "..0").json()["state"] == "REFUNDED"
    assert order(sub["order_id"]).json()["state"] == "PROCESSED"
    assert order("GPA.0000-0000-0000-00000").status_code == 404
    unauthenticated = requests.get(f"{base}/androidpublisher/v3/applications/{PACKAGE}/orders/{sub['order_id']}",
                                   timeout=10)
    assert unauthenticated.status_code == 401


def test_a_withheld_push_is_never_sent_until_released_and_the_voided_list_still_shows_it(
        fake, credentials, discovery, receiver):
    base, _ = fake

    def pushes() -> dict[str, dict]:
        return {p["message_id"]: p for p in requests.get(base + "/fake/v1/pushes", timeout=10).json()["pushes"]}

    def received(message_id: str) -> int:
        return sum(1 for _, body in receiver.pushes if body["message"]["messageId"] == message_id)

    def wait_delivered(message_id: str) -> None:
        deadline = time.time() + 20
        while time.time() < deadline and not pushes()[message_id]["delivered"]:
            time.sleep(0.1)
        assert pushes()[message_id]["delivered"], pushes()[message_id]

    token = control(fake, "products", {"product_id": "gems"})["purchase_token"]
    before = set(pushes())
    assert control(fake, "pushes/withhold") == {"withholding": 1}
    void = control(fake, "voids", {"purchase_token": token, "reason": 7})
    (held_id,) = set(pushes()) - before
    held = pushes()[held_id]
    assert held["withheld"] and not held["delivered"] and held["attempts"] == []
    assert held["data"]["voidedPurchaseNotification"]["purchaseToken"] == token
    # Google's list shows the void all the same, shaped as the Discovery document says.
    listed = [v for v in voided_purchases(fake, credentials, discovery) if v["purchaseToken"] == token]
    assert [(v["orderId"], v["voidedReason"]) for v in listed] == [(void["orderId"], 7)]
    # Only the next message was withheld: the one after it is pushed as ever, and the withheld
    # one still is not.
    after = control(fake, "notifications/test")["message_id"]
    wait_delivered(after)
    assert pushes()[held_id]["withheld"] and received(held_id) == 0
    # Released, it arrives late, once (the receiver takes it at the first attempt).
    assert control(fake, f"pushes/{held_id}/release") == {"message_id": held_id, "released": True}
    wait_delivered(held_id)
    assert received(held_id) == 1 and not pushes()[held_id]["withheld"]
    again = requests.post(f"{base}/fake/v1/pushes/{held_id}/release", timeout=10)
    assert again.status_code == 409 and again.json()["code"] == "not_withheld"
    assert requests.post(f"{base}/fake/v1/pushes/1/release", timeout=10).status_code == 404
    assert requests.post(f"{base}/fake/v1/pushes/withhold", json={"count": 0}, timeout=10).status_code == 422
