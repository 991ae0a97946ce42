"""Issue 11, promotional offers: `POST /v1/offers/signature` signs a subscription's offer for
the signed-in user as Apple documents, with the in-app purchase key the fake App Store wrote.
Each signature is checked here with python3-cryptography and the key's public half only, over
the payload rebuilt from Apple's description (not from Storekeeper's code). Offers are signed
for the app's current or former subscribers only (`OFFER_ELIGIBILITY`, default `subscribers`)."""

from __future__ import annotations

import base64
import re
import time
import uuid

import pytest
import requests
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec

from support import BUNDLE_ID, buy, error_fields, free_port, problem, unique, user_headers

VIP = "com.example.tests.offers.vip.monthly"
GOLD = "com.example.tests.offers.gold"
SEPARATOR = "\u2063"


def offer_stack(launcher, **env):
    """A Storekeeper that signs offers with the fake's key (APPLE_API_KEY_*), and its catalog."""
    port = free_port()
    fake = launcher.fake(notify_port=port)
    sk = launcher.storekeeper(launcher.database(), fake=fake, port=port, **{**fake.api_env(), **env})
    sk.client.put_product(VIP, type="auto_renewable")
    sk.client.put_product(GOLD)
    return sk, fake


def public_key(fake) -> ec.EllipticCurvePublicKey:
    private = serialization.load_pem_private_key(fake.api_key.read_bytes(), password=None)
    assert isinstance(private, ec.EllipticCurvePrivateKey) and private.curve.name == "secp256r1"
    return private.public_key()


def apple_payload(key_id: str, product_id: str, offer_id: str, token: str, nonce: str, ts: int) -> bytes:
    """Apple's "Generating a signature for promotional offers", field by field."""
    return SEPARATOR.join([BUNDLE_ID, key_id, product_id, offer_id, token, nonce, str(ts)]).encode("utf-8")


def verifies(key: ec.EllipticCurvePublicKey, signature_b64: str, payload: bytes) -> bool:
    try:
        key.verify(base64.b64decode(signature_b64, validate=True), payload, ec.ECDSA(hashes.SHA256()))
        return True
    except InvalidSignature:
        return False


def sign(sk, user: str | None, body: dict, headers: dict | None = None) -> requests.Response:
    h = dict(headers if headers is not None else user_headers(user))
    return requests.post(sk.url + "/v1/offers/signature", json=body, headers=h, timeout=10)


def subscriber(sk, fake, prefix: str = "offers") -> str:
    """A user who has bought the subscription once (it has lapsed since)."""
    user = unique(prefix)
    buy(sk.client, fake, user, VIP, type="auto_renewable", expires_in_seconds=-3600)
    return user


def order_token(sk, user: str) -> str:
    """The token of a new order of `user` for the subscription: what an offer is signed for."""
    return sk.client.create_order(user, VIP)["app_account_token"]


UUID_RE = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")


def test_a_signed_in_user_gets_a_signature_apple_would_verify(launcher):
    sk, fake = offer_stack(launcher)
    key = public_key(fake)
    user = subscriber(sk, fake)
    token = order_token(sk, user)
    before = int(time.time() * 1000)
    r = sign(sk, user, {"product_id": VIP, "offer_id": "winback_50.v-1", "app_account_token": token})
    after = int(time.time() * 1000)
    assert r.status_code == 200, r.text
    body = r.json()
    assert set(body) == {"key_identifier", "nonce", "timestamp", "signature", "app_account_token"}, body
    assert body["key_identifier"] == fake.api_key_id
    assert UUID_RE.match(body["nonce"]), body
    assert before <= body["timestamp"] <= after
    payload = apple_payload(fake.api_key_id, VIP, "winback_50.v-1", token, body["nonce"], body["timestamp"])
    assert verifies(key, body["signature"], payload)
    # Bound to every field: another offer, token or time does not verify.
    for changed in (apple_payload(fake.api_key_id, VIP, "winback_51", token, body["nonce"], body["timestamp"]),
                    apple_payload(fake.api_key_id, VIP, "winback_50.v-1", "", body["nonce"], body["timestamp"]),
                    apple_payload(fake.api_key_id, VIP, "winback_50.v-1", token, body["nonce"], body["timestamp"] + 1)):
        assert not verifies(key, body["signature"], changed)

    # Naming oneself is fine; the nonce is fresh every time; the app account token is signed
    # in lowercase and echoed for the purchase to carry.
    token = token.upper()
    again = sign(sk, user, {"user_id": user, "product_id": VIP, "offer_id": "winback_50.v-1",
                            "app_account_token": token})
    assert again.status_code == 200, again.text
    second = again.json()
    assert second["nonce"] != body["nonce"]
    assert second["app_account_token"] == token.lower()
    assert verifies(key, second["signature"], apple_payload(
        fake.api_key_id, VIP, "winback_50.v-1", token.lower(), second["nonce"], second["timestamp"]))


def test_a_dedicated_offer_key_is_used_before_the_api_key(launcher, tmp_path):
    port = free_port()
    fake = launcher.fake(notify_port=port)
    # The fake's key under another id stands for a separate subscription key.
    sk = launcher.storekeeper(launcher.database(), fake=fake, port=port,
                              APPLE_OFFER_KEY_FILE=str(fake.api_key), APPLE_OFFER_KEY_ID="OFFERKEY42")
    sk.client.put_product(VIP, type="auto_renewable")
    user = subscriber(sk, fake)
    token = order_token(sk, user)
    r = sign(sk, user, {"product_id": VIP, "offer_id": "intro", "app_account_token": token})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["key_identifier"] == "OFFERKEY42"
    assert verifies(public_key(fake), body["signature"], apple_payload(
        "OFFERKEY42", VIP, "intro", token, body["nonce"], body["timestamp"]))


def test_refusals_say_why_in_a_problem(launcher):
    sk, _ = offer_stack(launcher)
    user = unique("offers")
    # No credentials, a bad token.
    problem(sign(sk, None, {"product_id": VIP, "offer_id": "intro"}, headers={}), 401, "unauthorized")
    problem(sign(sk, None, {"product_id": VIP, "offer_id": "intro"},
                 headers={"Authorization": "Bearer not.a.token"}), 401, "invalid_token")
    # Another user named.
    problem(sign(sk, user, {"user_id": unique("someone-else"), "product_id": VIP, "offer_id": "intro"}),
            403, "user_mismatch")
    # Unknown product; a product that is not a subscription.
    problem(sign(sk, user, {"product_id": "com.example.tests.offers.nothing", "offer_id": "intro"}),
            404, "product_not_found")
    problem(sign(sk, user, {"product_id": GOLD, "offer_id": "intro"}), 422, "product_not_subscription")
    # Offer ids outside 1-64 of [A-Za-z0-9._-], a token that is no UUID, unknown fields.
    for bad in ("", "a b", "x" * 65, "offer/1", "é"):
        body = problem(sign(sk, user, {"product_id": VIP, "offer_id": bad}), 422, "validation_failed")
        assert "offer_id" in error_fields(body), body
    body = problem(sign(sk, user, {"product_id": VIP, "offer_id": "intro", "app_account_token": "nope"}),
                   422, "validation_failed")
    assert "app_account_token" in error_fields(body), body
    problem(sign(sk, user, {"product_id": VIP}), 422, "validation_failed")
    problem(sign(sk, user, {"product_id": VIP, "offer_id": "intro", "extra": 1}), 422, "validation_failed")


def test_only_the_apps_current_or_former_subscribers_get_an_offer_signed(launcher):
    # Every offer id is listed to any app by StoreKit: signed for anyone, a retention discount
    # would be anyone's. Apple leaves eligibility to this server.
    sk, fake = offer_stack(launcher)
    newcomer = unique("offers-new")
    problem(sign(sk, newcomer, {"product_id": VIP, "offer_id": "winback_50"}), 403, "offer_not_eligible")
    buyer = unique("offers-gold")
    buy(sk.client, fake, buyer, GOLD)
    problem(sign(sk, buyer, {"product_id": VIP, "offer_id": "winback_50"}), 403, "offer_not_eligible")
    # A subscriber whose purchase was refunded is a former subscriber.
    refunded = unique("offers-refunded")
    _, purchase, _ = buy(sk.client, fake, refunded, VIP, type="auto_renewable", expires_in_seconds=3600)
    assert fake.refund(purchase["transaction_id"])["delivered_status"] == 200
    assert sign(sk, refunded, {"product_id": VIP, "offer_id": "winback_50",
                               "app_account_token": order_token(sk, refunded)}).status_code == 200
    # A request that is wrong in itself is refused for that first.
    problem(sign(sk, newcomer, {"product_id": GOLD, "offer_id": "x"}), 422, "product_not_subscription")

    # An app that decides eligibility itself says so.
    open_sk, _ = offer_stack(launcher, OFFER_ELIGIBILITY="anyone")
    assert sign(open_sk, newcomer, {"product_id": VIP, "offer_id": "winback_50"}).status_code == 200


def test_a_subscribers_signature_is_only_for_their_own_unpaid_order(launcher):
    # Apple checks only that the purchase carries the token it signs: signed without one, or
    # for another user's order, a subscriber's signature would be anyone's discount.
    sk, fake = offer_stack(launcher)
    former, newcomer = subscriber(sk, fake), unique("offers-newcomer")
    body = problem(sign(sk, former, {"product_id": VIP, "offer_id": "winback_50"}), 422, "validation_failed")
    assert error_fields(body) == {"app_account_token"}, body
    problem(sign(sk, former, {"product_id": VIP, "offer_id": "winback_50",
                              "app_account_token": order_token(sk, newcomer)}), 403, "offer_not_eligible")
    problem(sign(sk, former, {"product_id": VIP, "offer_id": "winback_50",
                              "app_account_token": str(uuid.uuid4())}), 403, "offer_not_eligible")
    gold = sk.client.create_order(former, GOLD)["app_account_token"]
    problem(sign(sk, former, {"product_id": VIP, "offer_id": "winback_50", "app_account_token": gold}),
            403, "offer_not_eligible")
    # An order already paid is no purchase to come.
    paid, _, _ = buy(sk.client, fake, former, VIP, type="auto_renewable", expires_in_seconds=3600)
    problem(sign(sk, former, {"product_id": VIP, "offer_id": "winback_50",
                              "app_account_token": paid["app_account_token"]}), 403, "offer_not_eligible")
    assert sign(sk, former, {"product_id": VIP, "offer_id": "winback_50",
                             "app_account_token": order_token(sk, former)}).status_code == 200


def test_an_unknown_eligibility_stops_the_start(binary, launcher, fresh_db):
    import subprocess
    env = launcher.env(fresh_db, 1, OFFER_ELIGIBILITY="everyone")
    result = subprocess.run([binary, "serve"], env=env, capture_output=True, text=True, timeout=20)
    assert result.returncode != 0
    assert "OFFER_ELIGIBILITY" in result.stdout + result.stderr


def test_without_a_key_offers_are_off_and_say_so(launcher):
    sk = launcher.storekeeper()
    sk.client.put_product(VIP, type="auto_renewable")
    problem(sign(sk, unique("offers"), {"product_id": VIP, "offer_id": "intro"}), 503, "offers_not_configured")
    assert "promotional offers are off" in sk.log()


@pytest.mark.parametrize("policy", ["record_only", "credit"])
def test_a_sandbox_subscription_makes_a_subscriber_only_where_sandbox_purchases_count(launcher, policy):
    # A TestFlight tester's subscription is free. Under record_only it credits nothing, so it
    # must not make them eligible for a discount on the real subscription either; under credit
    # (the default) sandbox purchases count as real ones, offers included.
    sk, fake = offer_stack(launcher, APPLE_ENVIRONMENTS="production,sandbox", SANDBOX_POLICY=policy)
    user = unique(f"offers-sandbox-{policy}")
    buy(sk.client, fake, user, VIP, type="auto_renewable", environment="Sandbox", expires_in_seconds=-3600)
    r = sign(sk, user, {"product_id": VIP, "offer_id": "winback_50", "app_account_token": order_token(sk, user)})
    if policy == "record_only":
        assert r.status_code == 403 and r.json()["code"] == "offer_not_eligible", r.text
        buy(sk.client, fake, user, VIP, type="auto_renewable", expires_in_seconds=-3600)
        r = sign(sk, user, {"product_id": VIP, "offer_id": "winback_50", "app_account_token": order_token(sk, user)})
    assert r.status_code == 200, r.text
