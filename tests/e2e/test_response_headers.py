"""Issue 22: every answer says `X-Content-Type-Options: nosniff` (handlers', problems, and the
HTTP server's own 400s, 404s and 405s), and a 401 for an app token never says which check
failed: an expired token is answered exactly like a forged one."""

from __future__ import annotations

import socket
import time

import jwt
import requests

from support import JWT_AUDIENCE, JWT_ISSUER, mint, problem


def raw(sk, data: bytes) -> bytes:
    """Bytes sent as they are, for answers the parser gives before any route."""
    with socket.create_connection(("127.0.0.1", sk.port), timeout=10) as conn:
        conn.sendall(data)
        out = b""
        while b"\r\n\r\n" not in out:
            chunk = conn.recv(4096)
            if not chunk:
                break
            out += chunk
        return out


def test_every_answer_says_nosniff(storekeeper):
    sk = storekeeper(RATE_LIMIT_PER_ADDRESS="1/h,burst=40")
    api = sk.client
    answers = {
        "catalog 200": requests.get(sk.url + "/v1/products", timeout=10),
        "healthz": requests.get(sk.url + "/healthz", timeout=10),
        "readyz": requests.get(sk.url + "/readyz", timeout=10),
        "contract": requests.get(sk.url + "/openapi.yaml", timeout=10),
        "unknown route 404": requests.get(sk.url + "/nowhere", timeout=10),
        "method 405": requests.request("PATCH", sk.url + "/v1/products", timeout=10),
        "app 401": requests.get(sk.url + "/v1/users/u/entitlements", timeout=10),
        "admin 401": requests.get(sk.url + "/admin/v1/orders", timeout=10),
        "metrics 401": requests.get(sk.url + "/metrics", timeout=10),
        "metrics 200": api.get("/metrics", admin=True),
        "malformed json 400": requests.post(sk.url + "/v1/orders", data=b"{", timeout=10,
                                            headers={"Content-Type": "application/json",
                                                     "Authorization": f"Bearer {mint('u')}"}),
        "missing order 404": api.get("/v1/orders/20260101000000000000zzzz"),
        "console asset": requests.get(sk.url + "/admin/", timeout=10),
        "console redirect": requests.get(sk.url + "/admin", timeout=10, allow_redirects=False),
    }
    for name, r in answers.items():
        assert r.headers.get("X-Content-Type-Options") == "nosniff", (name, r.status_code, dict(r.headers))
        assert r.headers.get("X-Content-Type-Options", "").count("nosniff") == 1, name
    assert answers["catalog 200"].status_code == 200
    assert answers["console asset"].status_code == 200
    problem(answers["malformed json 400"], 400, "malformed_json")
    # Past the address's burst: the 429 says it too.
    for _ in range(60):
        limited = requests.get(sk.url + "/v1/products", timeout=10)
        if limited.status_code == 429:
            break
    assert limited.status_code == 429, "the burst never ran out"
    assert limited.headers.get("X-Content-Type-Options") == "nosniff"
    # The parser's own answers, before any route.
    for request in (b"GARBAGE\r\n\r\n", b"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n"):
        head = raw(sk, request)
        assert head.startswith(b"HTTP/1.1 4"), head
        assert b"\r\nX-Content-Type-Options: nosniff\r\n" in head, head


def test_an_expired_tokens_401_is_identical_to_a_bad_signatures(stack):
    now = int(time.time())
    expired = mint("u", exp=now - 3600)
    forged = jwt.encode({"sub": "u", "iss": JWT_ISSUER, "aud": JWT_AUDIENCE, "exp": now + 3600},
                        "not-the-secret-0123456789abcdefgh", algorithm="HS256")
    answers = [requests.get(stack.sk.url + "/v1/users/u/entitlements", timeout=10,
                            headers={"Authorization": f"Bearer {token}"}) for token in (expired, forged)]
    a, b = (problem(r, 401, "invalid_token") for r in answers)
    # Each answer names its own request; everything else is the same.
    assert a.pop("request_id") != b.pop("request_id")
    assert a == b, (a, b)
    assert "expire" not in answers[0].text.lower()
    assert answers[0].headers["WWW-Authenticate"] == answers[1].headers["WWW-Authenticate"]
    assert "error_description" not in answers[0].headers["WWW-Authenticate"]
    assert answers[0].headers["Content-Type"] == answers[1].headers["Content-Type"]
    # The log still says which check it was.
    assert "expired" in stack.sk.log()
