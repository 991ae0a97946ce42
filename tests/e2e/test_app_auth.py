"""Issue 10, who may do what: apps prove who the user is (APP_AUTH), and a user acts only for
themselves. Tokens are minted with PyJWT and keys made with cryptography, never with our code;
the JWKS is a real document served over HTTP from a thread here."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import subprocess
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import jwt
import pytest
import requests
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from jwt.algorithms import ECAlgorithm, RSAAlgorithm

from support import JWT_AUDIENCE, JWT_ISSUER, JWT_SECRET, free_port, mint, problem, unique

GOLD = "com.example.tests.auth.gold"


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def refused(r: requests.Response, code: str = "invalid_token") -> dict:
    body = problem(r, 401, code)
    assert r.headers.get("WWW-Authenticate", "").startswith("Bearer"), r.headers
    return body


class JWKSServer:
    """A sign-in service's key set, served for real; counts fetches."""

    def __init__(self):
        self.keys: list[dict] = []
        self.fetches = 0
        # Answers 404 with a page, as a URL with a typo in its path would.
        self.missing = False
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                server.fetches += 1
                if server.missing:
                    body = b"<html><body>Not Found</body></html>"
                    self.send_response(404)
                    self.send_header("Content-Type", "text/html")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                    return
                body = json.dumps({"keys": server.keys}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", free_port()), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_port}/.well-known/jwks.json"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def add(self, public_jwk: dict) -> None:
        self.keys = self.keys + [public_jwk]

    def close(self) -> None:
        self.httpd.shutdown()


def rsa_key(kid: str):
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    jwk = json.loads(RSAAlgorithm.to_jwk(key.public_key()))
    jwk.update(kid=kid, use="sig", alg="RS256")
    return key, jwk


def ec_key(kid: str):
    key = ec.generate_private_key(ec.SECP256R1())
    jwk = json.loads(ECAlgorithm.to_jwk(key.public_key()))
    jwk.update(kid=kid, use="sig")
    return key, jwk


def signed(key, alg: str, kid: str, sub: str, **claims) -> str:
    return mint(sub, secret=key, algorithm=alg, headers={"kid": kid}, **claims)


# ---------------------------------------------------------------------------------------------
# The default e2e instance: APP_AUTH=jwt with an HS256 secret


@pytest.fixture(scope="module", autouse=True)
def gold(api):
    api.put_product(GOLD, "consumable")


def order_for(api, user: str) -> dict:
    return api.create_order(user, GOLD)


def test_hs256_names_the_user_and_the_body_may_leave_it_out(stack):
    user = unique("hs")
    r = requests.post(stack.sk.url + "/v1/orders", json={"product_id": GOLD},
                      headers=bearer(mint(user)), timeout=10)
    assert r.status_code == 201, r.text
    assert r.json()["user_id"] == user
    r = requests.get(f"{stack.sk.url}/v1/users/{user}/entitlements", headers=bearer(mint(user)), timeout=10)
    assert r.status_code == 200, r.text


def test_no_credentials_are_401_with_www_authenticate(stack):
    for method, path, body in [("POST", "/v1/orders", {"user_id": "u", "product_id": GOLD}),
                               ("GET", "/v1/orders/20260101000000000ABCDEFGHIJKLMNOPQRST", None),
                               ("POST", "/v1/trade-reports", {"trade_no": "x", "trade_status": "TRADE_CLOSED"}),
                               ("POST", "/v1/receipts", {"receipt": "AAAA"}),
                               ("GET", "/v1/users/u/entitlements", None)]:
        r = requests.request(method, stack.sk.url + path, json=body, timeout=10)
        refused(r, "unauthorized")
        r = requests.request(method, stack.sk.url + path, json=body, headers={"Authorization": "Basic dTpw"},
                             timeout=10)
        refused(r, "unauthorized")
    # The catalog and operations stay public.
    assert requests.get(stack.sk.url + "/v1/products", timeout=10).status_code == 200
    assert requests.get(stack.sk.url + "/healthz", timeout=10).status_code == 200


@pytest.mark.parametrize("threat,token", [
    ("wrong issuer", lambda: mint("u", issuer="https://evil.example")),
    ("wrong audience", lambda: mint("u", audience="someone-else")),
    ("bad signature", lambda: mint("u", secret="another-secret-another-secret-0123456789")),
    ("expired", lambda: mint("u", exp=int(time.time()) - 120)),
    ("not yet valid", lambda: mint("u", nbf=int(time.time()) + 120)),
    ("no exp", lambda: mint("u", exp=None)),
    ("alg none", lambda: jwt.encode({"iss": JWT_ISSUER, "aud": JWT_AUDIENCE, "sub": "u",
                                     "exp": int(time.time()) + 600}, None, algorithm="none")),
    ("malformed", lambda: "not.a.jwt"),
    ("oversize", lambda: mint("u", padding="x" * 9000)),
])
def test_a_token_that_fails_a_check_is_401_without_saying_which(stack, threat, token):
    r = requests.get(stack.sk.url + "/v1/users/u/entitlements", headers=bearer(token()), timeout=10)
    body = refused(r)
    # A short reason at most: never which claim or key it was.
    assert body.get("detail") == "the token is not valid", (threat, body)


def test_leeway_is_honoured_and_an_audience_may_be_a_list(stack):
    now = int(time.time())
    for token in [mint("u", exp=now - 10), mint("u", nbf=now + 10), mint("u", audience=["other", JWT_AUDIENCE])]:
        r = requests.get(stack.sk.url + "/v1/users/u/entitlements", headers=bearer(token), timeout=10)
        assert r.status_code == 200, r.text


def test_a_user_naming_someone_else_is_403(stack):
    me, other = unique("me"), unique("other")
    r = requests.post(stack.sk.url + "/v1/orders", json={"user_id": other, "product_id": GOLD},
                      headers=bearer(mint(me)), timeout=10)
    problem(r, 403, "user_mismatch")
    r = requests.post(stack.sk.url + "/v1/receipts", json={"user_id": other, "receipt": "AAAA"},
                      headers=bearer(mint(me)), timeout=10)
    problem(r, 403, "user_mismatch")
    r = requests.get(f"{stack.sk.url}/v1/users/{other}/entitlements", headers=bearer(mint(me)), timeout=10)
    problem(r, 403, "user_mismatch")


def test_another_users_order_is_not_found_like_a_missing_one(stack):
    alice, mallory = unique("alice"), unique("mallory")
    order = order_for(stack.api, alice)
    missing = order["trade_no"][:-4] + "zzzz"
    purchase = stack.fake.purchase(GOLD, "consumable", app_account_token=order["app_account_token"])
    as_mallory = bearer(mint(mallory))

    def get(trade_no):
        return requests.get(f"{stack.sk.url}/v1/orders/{trade_no}", headers=as_mallory, timeout=10)

    def report(trade_no, **body):
        return requests.post(stack.sk.url + "/v1/trade-reports", headers=as_mallory, timeout=30,
                             json={"trade_no": trade_no, **body})

    paid = {"trade_status": "TRADE_SUCCESS", "signed_transaction": purchase["signed_transaction"]}
    closed = {"trade_status": "TRADE_CLOSED", "reason": "cancelled"}
    for call in (get, lambda t: report(t, **paid), lambda t: report(t, **closed)):
        theirs, nobodys = call(order["trade_no"]), call(missing)
        a, b = problem(theirs, 404, "order_not_found"), problem(nobodys, 404, "order_not_found")
        assert a["detail"].replace(order["trade_no"], "") == b["detail"].replace(missing, "")
    # Nothing happened to alice's order; she can still pay it.
    assert stack.api.order(order["trade_no"])["trade_status"] == "WAIT_BUYER_PAY"
    assert stack.api.balance(mallory) == 0
    r = stack.api.report(order["trade_no"], signed_transaction=purchase["signed_transaction"])
    assert r.status_code == 200, r.text
    assert stack.api.balance(alice) == 100


# ---------------------------------------------------------------------------------------------
# Keys from a JWKS URL


@pytest.fixture(scope="module")
def jwks():
    server = JWKSServer()
    yield server
    server.close()


@pytest.fixture(scope="module")
def keys(jwks):
    rsa_private, rsa_jwk = rsa_key("rsa-1")
    ec_private, ec_jwk = ec_key("ec-1")
    jwks.add(rsa_jwk)
    jwks.add(ec_jwk)
    pem = rsa_private.public_key().public_bytes(serialization.Encoding.PEM,
                                                serialization.PublicFormat.SubjectPublicKeyInfo)
    return {"rsa": rsa_private, "ec": ec_private, "rsa_pem": pem}


@pytest.fixture(scope="module")
def jwks_sk(module_storekeeper, jwks, keys):
    return module_storekeeper(APP_JWT_SECRET=None, APP_JWT_JWKS_URL=jwks.url,
                              APP_JWT_JWKS_REFETCH_INTERVAL="1s")


def entitlements(sk, token: str, user: str = "u") -> requests.Response:
    return requests.get(f"{sk.url}/v1/users/{user}/entitlements", headers=bearer(token), timeout=15)


def test_rs256_and_es256_from_the_key_set_are_accepted(jwks_sk, keys):
    assert entitlements(jwks_sk, signed(keys["rsa"], "RS256", "rsa-1", "u")).status_code == 200
    assert entitlements(jwks_sk, signed(keys["ec"], "ES256", "ec-1", "u")).status_code == 200
    # Signed by a key that is not in the set, under a known kid.
    stranger, _ = rsa_key("rsa-1")
    refused(entitlements(jwks_sk, signed(stranger, "RS256", "rsa-1", "u")))


def test_hs256_signed_with_the_rsa_public_key_is_refused(jwks_sk, keys):
    header = b64(json.dumps({"alg": "HS256", "typ": "JWT", "kid": "rsa-1"}).encode())
    payload = b64(json.dumps({"iss": JWT_ISSUER, "aud": JWT_AUDIENCE, "sub": "u",
                              "exp": int(time.time()) + 600}).encode())
    mac = hmac.new(keys["rsa_pem"], f"{header}.{payload}".encode(), hashlib.sha256).digest()
    refused(entitlements(jwks_sk, f"{header}.{payload}.{b64(mac)}"))
    # And an HS256 token with the e2e shared secret means nothing to a JWKS instance.
    refused(entitlements(jwks_sk, mint("u")))


def test_an_unknown_kid_refetches_at_most_once_per_interval(jwks_sk, jwks, keys):
    stranger, _ = rsa_key("nobody")
    time.sleep(1.2)
    before = jwks.fetches
    for _ in range(10):
        refused(entitlements(jwks_sk, signed(stranger, "RS256", f"kid-{unique('x')}", "u")))
    assert 1 <= jwks.fetches - before <= 2, (before, jwks.fetches)


def test_a_rotated_in_key_becomes_valid_after_the_refetch(jwks_sk, jwks):
    new_private, new_jwk = ec_key("ec-2")
    token = signed(new_private, "ES256", "ec-2", "u")
    time.sleep(1.2)
    refused(entitlements(jwks_sk, token))
    jwks.add(new_jwk)
    time.sleep(1.2)
    r = entitlements(jwks_sk, token)
    assert r.status_code == 200, r.text


def test_an_unreachable_key_set_fails_closed(storekeeper, keys):
    sk = storekeeper(APP_JWT_SECRET=None, APP_JWT_JWKS_URL=f"http://127.0.0.1:{free_port()}/jwks.json")
    refused(entitlements(sk, signed(keys["rsa"], "RS256", "rsa-1", "u")))
    # The catalog does not depend on it.
    assert requests.get(sk.url + "/v1/products", timeout=10).status_code == 200


def test_a_key_set_url_answering_404_is_said_at_start_up_in_readyz_and_in_metrics(storekeeper, keys):
    # A typo in APP_JWT_JWKS_URL's path: fetched at start-up (an error naming the variable, not
    # fatal), listed under /readyz's problems (still 200, as Google's and Apple's settings are)
    # and in /metrics, until a fetch succeeds.
    server = JWKSServer()
    try:
        server.missing = True
        sk = storekeeper(APP_JWT_SECRET=None, APP_JWT_JWKS_URL=server.url, APP_JWT_JWKS_REFETCH_INTERVAL="1s")
        assert server.fetches >= 1, "the key set should be fetched at start-up"
        errors = [line for line in sk.log_lines_json()
                  if line.get("level") == "error" and line.get("setting") == "APP_JWT_JWKS_URL"]
        assert errors and "404" in errors[0].get("error", ""), sk.log_tail()
        r = requests.get(sk.url + "/readyz", timeout=10)
        assert r.status_code == 200, r.text
        problems = [p for p in r.json().get("problems", []) if p["code"] == "app_jwt_jwks"]
        assert len(problems) == 1 and problems[0]["setting"] == "APP_JWT_JWKS_URL", r.json()
        assert "404" in problems[0]["detail"] and problems[0]["count"] >= 1, problems
        metrics = sk.client.get("/metrics", admin=True).text
        assert 'storekeeper_app_jwt_jwks_errors{setting="APP_JWT_JWKS_URL"} 1' in metrics, metrics
        assert "storekeeper_app_jwt_jwks_keys 0" in metrics
        refused(entitlements(sk, signed(keys["rsa"], "RS256", "rsa-1", "u")))

        # The issuer fixed: the next token fetches the set again, and the problem is gone.
        server.missing = False
        server.add(_public_jwk(keys["rsa"], "rsa-1"))
        time.sleep(1.2)
        assert entitlements(sk, signed(keys["rsa"], "RS256", "rsa-1", "u")).status_code == 200
        ready = requests.get(sk.url + "/readyz", timeout=10).json()
        assert not [p for p in ready.get("problems", []) if p["code"] == "app_jwt_jwks"], ready
        metrics = sk.client.get("/metrics", admin=True).text
        assert 'storekeeper_app_jwt_jwks_errors{setting="APP_JWT_JWKS_URL"} 0' in metrics, metrics
    finally:
        server.close()


def _public_jwk(private_key, kid: str) -> dict:
    jwk = json.loads(RSAAlgorithm.to_jwk(private_key.public_key()))
    jwk.update(kid=kid, use="sig", alg="RS256")
    return jwk


def test_a_reachable_key_set_makes_no_problem(jwks_sk):
    ready = requests.get(jwks_sk.url + "/readyz", timeout=10).json()
    assert "problems" not in ready or not [p for p in ready["problems"] if p["code"] == "app_jwt_jwks"], ready
    metrics = jwks_sk.client.get("/metrics", admin=True).text
    assert 'storekeeper_app_jwt_jwks_errors{setting="APP_JWT_JWKS_URL"} 0' in metrics, metrics
    held = next(l for l in metrics.splitlines() if l.startswith("storekeeper_app_jwt_jwks_keys "))
    assert int(held.split()[-1]) >= 2, held


# ---------------------------------------------------------------------------------------------
# api_key and none


def test_api_keys_plain_and_hashed_act_for_any_user(storekeeper):
    plain = "plain-key-" + "p" * 30
    hashed = "hashed-key-" + "h" * 30
    digest = hashlib.sha256(hashed.encode()).hexdigest()
    sk = storekeeper(APP_AUTH="api_key", APP_API_KEYS=f"shop:{plain},ci:sha256:{digest}", APP_JWT_SECRET=None)
    sk.client.put_product(GOLD, "consumable")
    for key in (plain, hashed):
        user = unique("any")
        r = requests.post(sk.url + "/v1/orders", json={"user_id": user, "product_id": GOLD},
                          headers=bearer(key), timeout=10)
        assert r.status_code == 201 and r.json()["user_id"] == user, r.text
        r = requests.get(f"{sk.url}/v1/orders/{r.json()['trade_no']}", headers=bearer(key), timeout=10)
        assert r.status_code == 200, r.text
    refused(requests.get(sk.url + "/v1/users/u/entitlements", headers=bearer(plain[:-1] + "q"), timeout=10))
    refused(requests.get(sk.url + "/v1/users/u/entitlements", headers=bearer(f"sha256:{digest}"), timeout=10))
    refused(requests.get(sk.url + "/v1/users/u/entitlements", timeout=10), "unauthorized")


def test_api_keys_listed_with_a_space_before_the_comma_all_work(storekeeper):
    first, second = "backend-" + "b" * 30, "other-" + "o" * 30
    sk = storekeeper(APP_AUTH="api_key", APP_API_KEYS=f"backend:{first} , other:{second}\n",
                     APP_JWT_SECRET=None)
    for key in (first, second):
        r = requests.get(sk.url + "/v1/users/u/entitlements", headers=bearer(key), timeout=10)
        assert r.status_code == 200, (key, r.text)


@pytest.mark.parametrize("variable,value", [
    ("APPLE_BUNDLE_ID", "com.example.storekeeper.tests\n"),
    ("APP_JWT_ISSUER", JWT_ISSUER + " "),
    ("APP_JWT_AUDIENCE", JWT_AUDIENCE + "\n"),
])
def test_an_identifier_with_stray_whitespace_stops_start_up_naming_it(launcher, binary, new_db, variable, value):
    env = launcher.env(new_db(), free_port(), **{variable: value})
    result = subprocess.run([binary, "serve"], env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 2, result.stdout + result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and variable in lines[0] and "whitespace" in lines[0], result.stderr


def test_none_warns_loudly_and_checks_nothing(storekeeper):
    sk = storekeeper(APP_AUTH="none")
    r = requests.get(sk.url + "/v1/users/anyone/entitlements", timeout=10)
    assert r.status_code == 200, r.text
    warnings = [line for line in sk.log_lines_json()
                if line.get("level") == "warning" and "APP_AUTH=none" in line.get("message", line.get("msg", ""))]
    assert warnings, sk.log_tail()


# ---------------------------------------------------------------------------------------------
# Start-up refusals


@pytest.mark.parametrize("overrides,variable", [
    ({"APP_AUTH": None}, "APP_AUTH"),
    ({"APP_JWT_ISSUER": None}, "APP_JWT_ISSUER"),
    ({"APP_JWT_SECRET": "too-short"}, "APP_JWT_SECRET"),
    ({"APP_JWT_JWKS_URL": "https://login.example/jwks"}, "APP_JWT_SECRET"),
    ({"APP_JWT_LEEWAY": "5m"}, "APP_JWT_LEEWAY"),
    ({"ALLOW_INSECURE_URLS": None}, "APPLE_VERIFY_RECEIPT_URL"),
    ({"APPLE_APP_APPLE_ID": None}, "APPLE_APP_APPLE_ID"),
    ({"APP_AUTH": "api_key", "APP_API_KEYS": "shop:short"}, "APP_API_KEYS"),
])
def test_start_up_refuses_what_is_unsafe_in_one_line(launcher, binary, new_db, overrides, variable):
    env = launcher.env(new_db(), free_port(), **overrides)
    result = subprocess.run([binary, "serve"], env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode != 0, result.stdout
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and variable in lines[0] and "configuration error" in lines[0], result.stderr
