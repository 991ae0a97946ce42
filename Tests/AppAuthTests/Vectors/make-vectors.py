#!/usr/bin/python3
"""Writes vectors.json: keys and tokens made by PyJWT (an implementation independent of ours)
for Tests/AppAuthTests. Run it again only to change the vectors; the output is committed.
Needs Debian's python3-jwt and python3-cryptography."""

import base64
import hashlib
import hmac
import json
from pathlib import Path

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from jwt.algorithms import ECAlgorithm, RSAAlgorithm

NOW = 1_800_000_000
ISS = "https://login.example.com"
AUD = "storekeeper-tests"
SECRET = "0123456789abcdef0123456789abcdef-test-secret"


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


rsa_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
ec_key = ec.generate_private_key(ec.SECP256R1())
rsa_jwk = json.loads(RSAAlgorithm.to_jwk(rsa_key.public_key()))
ec_jwk = json.loads(ECAlgorithm.to_jwk(ec_key.public_key()))
rsa_jwk.update(kid="rsa-1", use="sig", alg="RS256")
ec_jwk.update(kid="ec-1", use="sig")
claims = {"iss": ISS, "aud": AUD, "sub": "user-42", "exp": NOW + 3600, "iat": NOW}


def sign(key, alg, kid=None, **overrides):
    body = {**claims, **overrides}
    body = {k: v for k, v in body.items() if v is not None}
    return jwt.encode(body, key, algorithm=alg, headers={"kid": kid} if kid else None)


def hs_with(secret: bytes, kid: str) -> str:
    """HS256 signed by hand with any bytes as the secret (PyJWT refuses a public key)."""
    header = b64(json.dumps({"alg": "HS256", "typ": "JWT", "kid": kid}).encode())
    payload = b64(json.dumps(claims).encode())
    mac = hmac.new(secret, f"{header}.{payload}".encode(), hashlib.sha256).digest()
    return f"{header}.{payload}.{b64(mac)}"


rsa_pem = rsa_key.public_key().public_bytes(serialization.Encoding.PEM,
                                            serialization.PublicFormat.SubjectPublicKeyInfo)
unsigned = b64(json.dumps({"alg": "none", "typ": "JWT"}).encode()) + "." + b64(json.dumps(claims).encode()) + "."
other_rsa = rsa.generate_private_key(public_exponent=65537, key_size=2048)

vectors = {
    "now": NOW, "issuer": ISS, "audience": AUD, "secret": SECRET,
    "jwks": {"keys": [rsa_jwk, ec_jwk, {"kty": "oct", "kid": "sym", "k": b64(b"x" * 32)}]},
    "valid": {
        "rs256": sign(rsa_key, "RS256", "rsa-1"),
        "es256": sign(ec_key, "ES256", "ec-1"),
        "hs256": sign(SECRET, "HS256"),
        "audience_array": sign(SECRET, "HS256", aud=["other", AUD]),
        "expired_within_leeway": sign(SECRET, "HS256", exp=NOW - 10),
        "nbf_within_leeway": sign(SECRET, "HS256", nbf=NOW + 10),
    },
    "invalid": {
        "wrong_issuer": sign(SECRET, "HS256", iss="https://evil.example.com"),
        "wrong_audience": sign(SECRET, "HS256", aud="someone-else"),
        "expired": sign(SECRET, "HS256", exp=NOW - 100),
        "not_yet_valid": sign(SECRET, "HS256", nbf=NOW + 100),
        "no_exp": sign(SECRET, "HS256", exp=None),
        "no_sub": sign(SECRET, "HS256", sub=None),
        "wrong_secret": sign("another-secret-another-secret-123", "HS256"),
        "rs256_other_key": sign(other_rsa, "RS256", "rsa-1"),
        "es256_signed_by_rsa_kid": sign(ec_key, "ES256", "rsa-1"),
        "alg_none": unsigned,
        "hs256_with_rsa_pem_as_secret": hs_with(rsa_pem, "rsa-1"),
        "hs256_with_rsa_modulus_as_secret": hs_with(base64.urlsafe_b64decode(rsa_jwk["n"] + "=="), "rsa-1"),
        "unknown_kid": sign(rsa_key, "RS256", "rsa-2"),
    },
}
Path(__file__).with_name("vectors.json").write_text(json.dumps(vectors, indent=1) + "\n")
