"""`POST /v1/google/notifications`, Google Play's Pub/Sub push endpoint, end to end.

Two setups. For authentication, Storekeeper trusts a JWKS this test serves and every token is
minted here by PyJWT (never by Storekeeper's code nor the fake's): a valid one, and forged,
foreign-audience, other-principal, unverified-email, wrong-issuer and expired ones; a key
rotated in the JWKS is found by refetching it for the unknown kid. For effects, the fake Google
Play pushes to Storekeeper with OIDC tokens signed by the JWKS it serves, retrying like Pub/Sub,
and Storekeeper reads each purchase back from the fake's Developer API."""

from __future__ import annotations

import base64
import json
import socket
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import jwt
import pytest
import requests
from cryptography.hazmat.primitives.asymmetric import rsa

from google_support import PACKAGE, PUSH_AUDIENCE, PUSH_EMAIL, start_pushing_fake
from support import problem, refreshed_metrics, unique, wait_until

AUDIENCE = PUSH_AUDIENCE


class KeySetServer:
    """Google's certs endpoint as far as Storekeeper can tell: RSA keys PyJWT made."""

    def __init__(self):
        self.keys: dict[str, rsa.RSAPrivateKey] = {}
        self.fetches = 0
        self.add_key()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                outer.fetches += 1
                body = json.dumps({"keys": [
                    {**json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(key.public_key())),
                     "kid": kid, "alg": "RS256", "use": "sig"}
                    for kid, key in outer.keys.items()]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/oauth2/v3/certs"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def add_key(self) -> str:
        kid = uuid.uuid4().hex
        self.keys[kid] = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        return kid

    def token(self, kid: str | None = None, key=None, **overrides) -> str:
        kid = kid or next(iter(self.keys))
        now = int(time.time())
        claims = {"iss": "https://accounts.google.com", "aud": AUDIENCE, "email": PUSH_EMAIL,
                  "email_verified": True, "sub": "1234567890", "iat": now, "exp": now + 3600}
        claims.update(overrides)
        claims = {k: v for k, v in claims.items() if v is not None}
        return jwt.encode(claims, key or self.keys[kid], algorithm="RS256", headers={"kid": kid})


def push_body(notification: dict, message_id: str | None = None, package: str = PACKAGE) -> dict:
    data = {"version": "1.0", "packageName": package, "eventTimeMillis": str(int(time.time() * 1000)),
            **notification}
    return {"message": {"data": base64.b64encode(json.dumps(data).encode()).decode(),
                        "messageId": message_id or uuid.uuid4().hex, "attributes": {},
                        "publishTime": "2026-01-01T00:00:00.000Z"},
            "subscription": "projects/fake-project/subscriptions/play-rtdn"}


def post_push(sk, body: dict, token: str | None) -> requests.Response:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return requests.post(sk.url + "/v1/google/notifications", json=body, headers=headers, timeout=10)


@pytest.fixture(scope="module")
def jwks():
    server = KeySetServer()
    yield server
    server.server.shutdown()


@pytest.fixture(scope="module")
def google(tmp_path_factory):
    fake = start_pushing_fake(tmp_path_factory.mktemp("google-rtdn"))
    yield fake
    fake.terminate(15)
    fake.forget()


@pytest.fixture(scope="module")
def hand_sk(module_launcher, module_storekeeper, google, jwks):
    """Trusts the test's JWKS: every push is made by hand."""
    db = module_launcher.database()
    sk = module_storekeeper(db, **google.env_for_storekeeper(), GOOGLE_PUBSUB_AUDIENCE=AUDIENCE,
                            GOOGLE_PUBSUB_SERVICE_ACCOUNT=PUSH_EMAIL, GOOGLE_OIDC_JWKS_URL=jwks.url)
    sk.client.put_product("g.gold", "consumable", grants={"balance": {"gold": 100}})
    sk.db = db
    return sk


@pytest.fixture(scope="module")
def sk(module_storekeeper, google):
    """The fake pushes to this one, with tokens its own JWKS verifies."""
    sk = module_storekeeper(port=google.storekeeper_port, **google.env_for_storekeeper(),
                            GOOGLE_PUBSUB_AUDIENCE=AUDIENCE, GOOGLE_PUBSUB_SERVICE_ACCOUNT=PUSH_EMAIL,
                            GOOGLE_OIDC_JWKS_URL=google.base + "/oauth2/v3/certs")
    sk.client.put_product("g.gold", "consumable", grants={"balance": {"gold": 100}})
    sk.client.put_product("g.vip", "auto_renewable", grants={"entitlement": "vip"})
    return sk


def test_forged_foreign_and_other_principals_tokens_are_refused(hand_sk, jwks):
    body = push_body({"testNotification": {"version": "1.0"}})
    forged_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    kid = next(iter(jwks.keys))
    for token in [
        None,
        "not-a-jwt",
        jwks.token(kid=kid, key=forged_key),
        jwks.token(aud="https://someone-else.example/push"),
        jwks.token(email="attacker@evil-project.iam.gserviceaccount.com"),
        jwks.token(email_verified=False),
        jwks.token(iss="https://evil.example"),
        jwks.token(exp=int(time.time()) - 3600, iat=int(time.time()) - 7200),
        jwt.encode({"iss": "https://accounts.google.com", "aud": AUDIENCE, "email": PUSH_EMAIL,
                    "email_verified": True, "iat": int(time.time()), "exp": int(time.time()) + 600},
                   "a-shared-secret", algorithm="HS256", headers={"kid": kid}),
    ]:
        problem(post_push(hand_sk, body, token), 401, "push_unauthenticated")
    assert post_push(hand_sk, body, jwks.token()).status_code == 200


def test_a_caller_without_a_valid_token_is_401_whatever_the_body(hand_sk, jwks):
    # The caller is checked before the body is judged: without a valid token, a body too large
    # for a push or not declared JSON is 401 like any other, as the contract says.
    url = hand_sk.url + "/v1/google/notifications"
    oversize = json.dumps({"message": {"data": "A" * 70_000}})
    bodies = [(oversize, "application/json"), ("x", "text/plain"), ("{}", "application/xml")]
    for token in (None, "not-a-jwt", jwks.token(aud="https://someone-else.example/push")):
        for data, media in bodies:
            headers = {"Content-Type": media}
            if token is not None:
                headers["Authorization"] = f"Bearer {token}"
            problem(requests.post(url, data=data, headers=headers, timeout=10), 401, "push_unauthenticated")
    # Pub/Sub's own token: then the body is judged.
    signed = {"Authorization": f"Bearer {jwks.token()}"}
    problem(requests.post(url, data=oversize, headers={**signed, "Content-Type": "application/json"},
                          timeout=10), 413, "content_too_large")
    problem(requests.post(url, data="x", headers={**signed, "Content-Type": "text/plain"}, timeout=10),
            415, "unsupported_media_type")
    # Only the server's own limit (1 MiB, declared) comes first: the HTTP layer answers it from
    # the head, before any route runs, and reads none of the body.
    host, port = hand_sk.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as s:
        s.sendall(b"POST /v1/google/notifications HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                  b"Content-Length: 2000000\r\n\r\n")
        head = s.recv(4096).decode("latin-1")
    assert head.startswith("HTTP/1.1 413"), head
    assert "content_too_large" in head, head


def test_a_forged_voided_notification_takes_nothing_back(hand_sk, google, jwks):
    user = unique("g-forged-void")
    order = hand_sk.client.post("/v1/orders", json={"user_id": user, "product_id": "g.gold",
                                                    "store": "google_play"}).json()
    bought = google.buy("g.gold", obfuscated_account_id=order["obfuscated_account_id"])
    r = hand_sk.client.post("/v1/trade-reports", json={"trade_no": order["trade_no"], "trade_status": "TRADE_SUCCESS",
                                                       "purchase_token": bought["purchase_token"]})
    assert r.status_code == 200, r.text
    void = push_body({"voidedPurchaseNotification": {"purchaseToken": bought["purchase_token"],
                                                     "orderId": bought["order_id"], "productType": 2,
                                                     "refundType": 1}})
    # Unsigned or signed by anyone but the push account: refused outright.
    forged = jwks.token(key=rsa.generate_private_key(public_exponent=65537, key_size=2048))
    problem(post_push(hand_sk, void, forged), 401, "push_unauthenticated")
    # Even authenticated, a void Google does not list is no void.
    stored = post_push(hand_sk, void, jwks.token())
    assert stored.status_code == 200
    message = void["message"]["messageId"]
    wait_until(lambda: hand_sk_result(hand_sk, message) == "not_voided_at_google", 20,
               "the push was applied and found no void at Google")
    assert hand_sk.client.balance(user) == 100
    assert hand_sk.client.order(order["trade_no"])["trade_status"] == "TRADE_SUCCESS"


def vip_subscription(sk, google, user: str) -> tuple[dict, dict]:
    """An order for `g.vip` and the hourly subscription Google made for it (not reported yet)."""
    sk.client.put_product("g.vip", "auto_renewable", grants={"entitlement": "vip"})
    order = sk.client.post("/v1/orders", json={"user_id": user, "product_id": "g.vip",
                                               "store": "google_play"}).json()
    bought = google.subscribe("g.vip", obfuscated_account_id=order["obfuscated_account_id"],
                              period_seconds=3600)
    return order, bought


def test_refunding_a_period_before_the_credited_one_takes_nothing_back(hand_sk, google, jwks):
    # The app reported after a renewal, so Storekeeper credited the renewal's order ("..0") and
    # never the first one. Google refunding that first period alone leaves the subscription
    # active: the paid access stays, and so does every later renewal.
    user = unique("g-early-void")
    order, bought = vip_subscription(hand_sk, google, user)
    token, first_order = bought["purchase_token"], bought["order_id"]
    google.control(f"subscriptions/{token}/events", {"event": "renew"})
    r = hand_sk.client.post("/v1/trade-reports", json={"trade_no": order["trade_no"], "trade_status": "TRADE_SUCCESS",
                                                       "purchase_token": token})
    assert r.status_code == 200, r.text
    assert r.json()["order"]["transaction_id"] == first_order + "..0"
    google.control("voids", {"purchase_token": token, "order_id": first_order})
    void = push_body({"voidedPurchaseNotification": {"purchaseToken": token, "orderId": first_order,
                                                     "productType": 1, "refundType": 1}})
    assert post_push(hand_sk, void, jwks.token()).status_code == 200
    wait_until(lambda: hand_sk_result(hand_sk, void["message"]["messageId"]) == "not_credited", 20,
               "the void was applied and found the period was never credited")
    assert hand_sk.client.order(order["trade_no"])["trade_status"] == "TRADE_SUCCESS"
    assert any(e["entitlement"] == "vip" for e in hand_sk.client.entitlements(user)["entitlements"])
    assert hand_sk.db.scalar(f"SELECT revoked_at IS NULL FROM google_purchases WHERE purchase_token = '{token}'")


def test_a_revocation_push_for_a_subscription_that_simply_ran_out_takes_nothing_back(hand_sk, google, jwks):
    # Expired is how Google shows a revoked subscription and one that ran out alike: an
    # authenticated SUBSCRIPTION_REVOKED (anyone who may publish to the topic can send one) is
    # believed only when Google lists the refund a revocation makes; here it lists none.
    user = unique("g-ran-out")
    order, bought = vip_subscription(hand_sk, google, user)
    token = bought["purchase_token"]
    r = hand_sk.client.post("/v1/trade-reports", json={"trade_no": order["trade_no"], "trade_status": "TRADE_SUCCESS",
                                                       "purchase_token": token})
    assert r.status_code == 200, r.text
    google.control(f"subscriptions/{token}/events", {"event": "expire"})
    revoked = push_body({"subscriptionNotification": {"version": "1.0", "notificationType": 12,
                                                      "purchaseToken": token,
                                                      "subscriptionId": "g.vip"}})
    assert post_push(hand_sk, revoked, jwks.token()).status_code == 200
    wait_until(lambda: hand_sk_result(hand_sk, revoked["message"]["messageId"]) == "not_revoked_at_google",
               20, "the push was applied and found no revocation at Google")
    assert hand_sk.client.order(order["trade_no"])["trade_status"] == "TRADE_SUCCESS"
    assert hand_sk.db.scalar(f"SELECT revoked_at IS NULL FROM google_purchases WHERE purchase_token = '{token}'") == "t"
    assert [e for e in hand_sk.client.get("/admin/v1/events", admin=True, params={"user_id": user}).json()["events"]
            if e["type"] == "purchase.refunded"] == []


def hand_sk_result(sk, message_id: str) -> str | None:
    return sk.db.scalar(f"SELECT result FROM google_notifications WHERE message_id = '{message_id}'")


def test_an_unknown_kid_refetches_the_jwks_once_the_key_rotates(hand_sk, jwks):
    # Known keys are served from the cache; an unknown kid refetches, at most once per 30 s
    # (so a flood of made-up kids cannot make Storekeeper hammer Google): wait that out.
    assert post_push(hand_sk, push_body({"testNotification": {"version": "1.0"}}), jwks.token()).status_code == 200
    before = jwks.fetches
    time.sleep(31)
    kid = jwks.add_key()
    r = post_push(hand_sk, push_body({"testNotification": {"version": "1.0"}}), jwks.token(kid=kid))
    assert r.status_code == 200, r.text
    assert jwks.fetches == before + 1


def test_duplicates_are_stored_once_and_other_packages_and_unknown_tokens_have_no_effect(hand_sk, jwks):
    message = uuid.uuid4().hex
    body = push_body({"oneTimeProductNotification": {"version": "1.0", "notificationType": 1,
                                                     "purchaseToken": "never-seen-token", "sku": "g.gold"}},
                     message_id=message)
    first = post_push(hand_sk, body, jwks.token())
    second = post_push(hand_sk, body, jwks.token())
    assert first.json() == {"status": "stored"} and second.json() == {"status": "duplicate"}
    other = push_body({"oneTimeProductNotification": {"version": "1.0", "notificationType": 1,
                                                      "purchaseToken": "x", "sku": "g.gold"}},
                      package="com.someone.else")
    assert post_push(hand_sk, other, jwks.token()).status_code == 200
    problem(requests.post(hand_sk.url + "/v1/google/notifications", data=b"{}",
                          headers={"Authorization": f"Bearer {jwks.token()}",
                                   "Content-Type": "application/json"}, timeout=10), 400, "invalid_push")


def test_pushes_from_one_address_are_never_rate_limited(module_launcher, module_storekeeper, google, jwks):
    # Pub/Sub pushes in bursts from Google's shared addresses and redelivers a 429 later, which
    # delays refunds and renewals; the OIDC token is what keeps others out, as Apple's
    # signature does on its route.
    sk = module_storekeeper(module_launcher.database(), **google.env_for_storekeeper(),
                            GOOGLE_PUBSUB_AUDIENCE=AUDIENCE, GOOGLE_PUBSUB_SERVICE_ACCOUNT=PUSH_EMAIL,
                            GOOGLE_OIDC_JWKS_URL=jwks.url, RATE_LIMIT_PER_ADDRESS="1/min,burst=1")
    for _ in range(3):
        body = push_body({"oneTimeProductNotification": {"version": "1.0", "notificationType": 1,
                                                         "purchaseToken": "never-seen-token", "sku": "g.gold"}})
        r = post_push(sk, body, jwks.token())
        assert r.status_code == 200 and "RateLimit-Limit" not in r.headers, (r.status_code, r.text)
    # The same address is held to its limit on app routes.
    assert requests.get(sk.url + "/v1/products", timeout=10).status_code == 200
    problem(requests.get(sk.url + "/v1/products", timeout=10), 429, "rate_limited")


def test_a_push_that_is_not_json_or_that_postgresql_could_not_store_is_a_400_not_a_500(hand_sk, jwks):
    # Pub/Sub redelivers a 5xx for a week; what can never be stored is the push's fault.
    good = push_body({"testNotification": {"version": "1.0"}})
    as_text = requests.post(hand_sk.url + "/v1/google/notifications", data=json.dumps(good),
                            headers={"Authorization": f"Bearer {jwks.token()}", "Content-Type": "text/plain"},
                            timeout=10)
    problem(as_text, 415, "unsupported_media_type")
    nul = push_body({"testNotification": {"version": "1.0"}}, message_id="a\u0000b")
    problem(post_push(hand_sk, nul, jwks.token()), 400, "invalid_push")
    late = push_body({"testNotification": {"version": "1.0"}})
    data = json.loads(base64.b64decode(late["message"]["data"]))
    data["eventTimeMillis"] = "99999999999999999"
    late["message"]["data"] = base64.b64encode(json.dumps(data).encode()).decode()
    problem(post_push(hand_sk, late, jwks.token()), 400, "invalid_push")
    assert post_push(hand_sk, good, jwks.token()).json() == {"status": "stored"}


def google_order(sk, user: str, product: str) -> dict:
    r = sk.client.post("/v1/orders", json={"user_id": user, "product_id": product, "store": "google_play"})
    assert r.status_code == 201, r.text
    return r.json()


def report(sk, trade_no: str, token: str) -> requests.Response:
    return sk.client.post("/v1/trade-reports", json={"trade_no": trade_no, "trade_status": "TRADE_SUCCESS",
                                                     "purchase_token": token})


def events_of(sk, user: str) -> list[dict]:
    r = sk.client.get("/admin/v1/events", admin=True, params={"user_id": user})
    assert r.status_code == 200, r.text
    return r.json()["events"]


def test_a_pending_purchase_is_granted_when_googles_push_says_it_completed(sk, google):
    user = unique("g-rtdn-pending")
    order = google_order(sk, user, "g.gold")
    bought = google.buy("g.gold", state="pending", obfuscated_account_id=order["obfuscated_account_id"])
    assert report(sk, order["trade_no"], bought["purchase_token"]).status_code == 202
    google.control(f"products/{bought['purchase_token']}/complete")
    wait_until(lambda: sk.client.order(order["trade_no"])["trade_status"] == "TRADE_SUCCESS", 30,
               "granted after the push")
    assert sk.client.balance(user) == 100


def test_a_void_of_a_purchase_google_gave_no_order_id_is_applied_by_its_token(sk, google):
    # A promo code's purchase has no order id, and its void's push carries an empty one: it was
    # refused as unreadable, and Pub/Sub would have delivered it again for a week.
    user = unique("g-rtdn-void-promo")
    order = google_order(sk, user, "g.gold")
    bought = google.buy("g.gold", obfuscated_account_id=order["obfuscated_account_id"], no_order=True)
    assert report(sk, order["trade_no"], bought["purchase_token"]).status_code == 200
    assert sk.client.balance(user) == 100
    google.control("voids", {"purchase_token": bought["purchase_token"], "reason": 1})
    wait_until(lambda: sk.client.order(order["trade_no"])["trade_status"] == "TRADE_CLOSED", 30,
               "refunded by the voided notification")
    assert sk.client.balance(user) == 0
    assert "must not be empty" not in sk.log()


def test_a_void_pushed_by_google_reverses_the_credit_through_the_ledger(sk, google):
    user = unique("g-rtdn-void")
    order = google_order(sk, user, "g.gold")
    bought = google.buy("g.gold", obfuscated_account_id=order["obfuscated_account_id"])
    assert report(sk, order["trade_no"], bought["purchase_token"]).status_code == 200
    assert sk.client.balance(user) == 100
    google.control("voids", {"purchase_token": bought["purchase_token"], "reason": 1})
    wait_until(lambda: sk.client.order(order["trade_no"])["trade_status"] == "TRADE_CLOSED", 30,
               "refunded by the voided notification")
    assert sk.client.order(order["trade_no"])["close_reason"] == "refunded"
    assert sk.client.balance(user) == 0
    refunded = [e for e in events_of(sk, user) if e["type"] == "purchase.refunded"]
    assert refunded and refunded[0]["data"]["store"] == "google_play"


def pushed_env(google) -> dict[str, str]:
    """A Storekeeper the fake pushes to, with tokens its own JWKS verifies."""
    return {**google.env_for_storekeeper(), "GOOGLE_PUBSUB_AUDIENCE": AUDIENCE,
            "GOOGLE_PUBSUB_SERVICE_ACCOUNT": PUSH_EMAIL, "GOOGLE_OIDC_JWKS_URL": google.base + "/oauth2/v3/certs"}


def bought_gold(sk, google, user: str) -> tuple[dict, str]:
    """`g.gold` in the catalog, bought by `user` and reported: the order and its purchase token."""
    sk.client.put_product("g.gold", "consumable", grants={"balance": {"gold": 100}})
    order = google_order(sk, user, "g.gold")
    token = google.buy("g.gold", obfuscated_account_id=order["obfuscated_account_id"])["purchase_token"]
    assert report(sk, order["trade_no"], token).status_code == 200
    return order, token


def test_a_void_whose_database_session_dies_mid_apply_is_applied_again(launcher, tmp_path):
    # Pub/Sub was answered when the push was stored, so only Storekeeper can apply it again:
    # a session cut mid-apply (a restart, a failover) left it failed for good, the credit
    # spendable until the hourly sweep.
    google = start_pushing_fake(tmp_path)
    try:
        db = launcher.database()
        sk = launcher.storekeeper(db, port=google.storekeeper_port, **pushed_env(google))
        user = unique("g-void-cut")
        order, token = bought_gold(sk, google, user)
        with db.holding(f"SELECT 1 FROM google_purchases WHERE purchase_token = '{token}' FOR UPDATE"):
            google.control("voids", {"purchase_token": token, "reason": 1})
            waiting = wait_until(lambda: db.scalar(
                "SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database() "
                "AND query ILIKE '%google_purchases%'"), 30, "the void waiting on the purchase's row")
            assert db.scalar(f"SELECT pg_terminate_backend({waiting})") == "t"
        wait_until(lambda: sk.client.order(order["trade_no"])["trade_status"] == "TRADE_CLOSED", 60,
                   "the void applied again")
        assert sk.client.balance(user) == 0
        assert db.scalar("SELECT count(*) FROM google_notifications WHERE state = 'failed'") == "0"
        metrics = refreshed_metrics(sk.client)
        assert 'storekeeper_google_notifications{state="failed"} 0' in metrics
    finally:
        google.terminate(15)
        google.forget()


def test_a_void_refused_by_a_lock_timeout_is_applied_once_the_lock_is_gone(launcher, tmp_path):
    # A refusal that passes (a lock held past the role's lock_timeout; a statement timeout, a
    # full disk, a node a failover made read-only alike) left the push failed for good, the
    # voided credit spendable until the hourly sweep.
    google = start_pushing_fake(tmp_path)
    try:
        db = launcher.database()
        sk = launcher.storekeeper(db, port=google.storekeeper_port, **pushed_env(google),
                                  DATABASE_URL=db.url + "?options=-c%20lock_timeout%3D1s")
        user = unique("g-void-locked")
        order, token = bought_gold(sk, google, user)
        with db.holding(f"SELECT 1 FROM google_purchases WHERE purchase_token = '{token}' FOR UPDATE"):
            google.control("voids", {"purchase_token": token, "reason": 1})
            refused = wait_until(lambda: db.rows(
                "SELECT state, result FROM google_notifications WHERE result LIKE '%55P03%'"), 60,
                "the void never met the lock")
            assert refused[0][0] == "pending", refused
            assert sk.client.balance(user) == 100
        wait_until(lambda: sk.client.order(order["trade_no"])["trade_status"] == "TRADE_CLOSED", 60,
                   "the void applied once the lock was gone")
        assert sk.client.balance(user) == 0
        assert db.scalar("SELECT count(*) FROM google_notifications WHERE state = 'failed'") == "0"
    finally:
        google.terminate(15)
        google.forget()


def vip(sk, user: str) -> dict | None:
    return next((e for e in sk.client.entitlements(user)["entitlements"] if e["entitlement"] == "vip"), None)


def subscribe(sk, google, user: str, **fields) -> tuple[dict, str]:
    order = google_order(sk, user, "g.vip")
    bought = google.subscribe("g.vip", obfuscated_account_id=order["obfuscated_account_id"], **fields)
    r = report(sk, order["trade_no"], bought["purchase_token"])
    assert r.status_code == 200, r.text
    return order, bought["purchase_token"]


def test_a_renewal_extends_and_pays_an_order_of_its_own(sk, google):
    user = unique("g-rtdn-renew")
    _, token = subscribe(sk, google, user, period_seconds=3600)
    first = vip(sk, user)["expires_at"]
    google.control(f"subscriptions/{token}/events", {"event": "renew"})
    wait_until(lambda: (vip(sk, user) or {}).get("expires_at", "") > first, 30, "extended by the renewal")
    renewals = [o for o in sk.client.admin_orders(user_id=user) if o["origin"] == "renewal"]
    assert len(renewals) == 1 and renewals[0]["store"] == "google_play"
    assert renewals[0]["transaction_id"] == google.subscription(token)["lineItems"][0]["latestSuccessfulOrderId"]
    assert any(e["type"] == "subscription.renewed" for e in events_of(sk, user))


def test_a_cancellation_and_a_restart_are_told_and_keep_access(sk, google):
    # Canceled is renewal turned off: access lasts to the period's end, and the backend hears
    # it (a win-back flow starts there); restarted before the end, it hears renewal is on.
    user = unique("g-rtdn-cancel")
    _, token = subscribe(sk, google, user, period_seconds=3600)
    google.control(f"subscriptions/{token}/events", {"event": "cancel"})
    wait_until(lambda: [e for e in events_of(sk, user) if e["type"] == "subscription.auto_renew_changed"], 30,
               "the cancellation told")
    assert vip(sk, user) is not None
    google.control(f"subscriptions/{token}/events", {"event": "restart"})
    wait_until(lambda: len([e for e in events_of(sk, user) if e["type"] == "subscription.auto_renew_changed"]) == 2,
               30, "the restart told")
    changes = [e["data"] for e in events_of(sk, user) if e["type"] == "subscription.auto_renew_changed"]
    assert [(c["auto_renew"], c["store"], c["product_id"]) for c in changes] == [
        (False, "google_play", "g.vip"), (True, "google_play", "g.vip")], changes
    assert vip(sk, user) is not None


def test_on_hold_stops_granting_and_recovery_grants_again(sk, google):
    user = unique("g-rtdn-hold")
    _, token = subscribe(sk, google, user)
    assert vip(sk, user) is not None
    google.control(f"subscriptions/{token}/events", {"event": "hold"})
    wait_until(lambda: vip(sk, user) is None, 30, "no access while on hold")
    google.control(f"subscriptions/{token}/events", {"event": "recover"})
    wait_until(lambda: vip(sk, user) is not None, 30, "access again once recovered")


def test_an_upgrade_by_another_app_user_tells_the_first_user_their_access_ended(sk, google):
    # One Google account signed in to the app as two users: B's upgrade replaces A's purchase.
    # A's access ends in B's report, and A's events say so (their last user_state is what
    # their entitlements read).
    a, b = unique("g-rtdn-upgrade-a"), unique("g-rtdn-upgrade-b")
    _, old_token = subscribe(sk, google, a)
    assert vip(sk, a) is not None
    sk.client.put_product("g.vip.plus", "auto_renewable", grants={"entitlement": "vip_plus"})
    order = google_order(sk, b, "g.vip.plus")
    bought = google.subscribe("g.vip.plus", obfuscated_account_id=order["obfuscated_account_id"],
                              linked_purchase_token=old_token)
    assert report(sk, order["trade_no"], bought["purchase_token"]).status_code == 200
    assert vip(sk, a) is None
    events = events_of(sk, a)
    assert events[-1]["type"] == "entitlement.revoked", [e["type"] for e in events]
    assert events[-1]["user_state"] == sk.client.entitlements(a)


def test_an_upgrade_retires_the_purchase_it_replaces(sk, google):
    user = unique("g-rtdn-upgrade")
    _, old_token = subscribe(sk, google, user)
    sk.client.put_product("g.vip.plus", "auto_renewable", grants={"entitlement": "vip_plus"})
    order = google_order(sk, user, "g.vip.plus")
    bought = google.subscribe("g.vip.plus", obfuscated_account_id=order["obfuscated_account_id"],
                              linked_purchase_token=old_token)
    assert report(sk, order["trade_no"], bought["purchase_token"]).status_code == 200
    state = sk.client.entitlements(user)
    names = {e["entitlement"] for e in state["entitlements"]}
    assert "vip_plus" in names and "vip" not in names
