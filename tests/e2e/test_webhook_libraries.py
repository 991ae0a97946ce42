"""Issue 26: a receiver verifies Storekeeper's webhooks with a library it already has, not code
of ours. stripe-python's `WebhookSignature.verify_header` checks `Storekeeper-Signature`, and
Standard Webhooks' `Webhook.verify` (PyPI `standardwebhooks`) checks the `webhook-id`,
`webhook-timestamp` and `webhook-signature` headers, both keyed with the one `whsec_…` secret
the admin API hands out, through a rotation's overlap; both refuse a forgery.

The libraries run in their own interpreter (tests/e2e/webhook_library_verifier.py under
WEBHOOK_LIBRARIES_PYTHON, which scripts/test installs with both pinned). Like every e2e test,
this fails rather than skips without them (tests/e2e/README)."""

from __future__ import annotations

import base64
import json
import os
import subprocess
from pathlib import Path

import pytest

from support import unique, wait_until
from test_webhooks import FAST, Receiver, create_endpoint, header, insert_event, signatures

VERIFIER = str(Path(__file__).with_name("webhook_library_verifier.py"))


def libraries_python() -> str:
    path = os.environ.get("WEBHOOK_LIBRARIES_PYTHON", "")
    if not path:
        pytest.fail("WEBHOOK_LIBRARIES_PYTHON is not set: name a python that has the stripe and "
                    "standardwebhooks packages (scripts/test installs one)", pytrace=False)
    return path


def verdicts(items: list[dict]) -> list[dict]:
    """Each library's verdict on each (request, secret), from the libraries' own interpreter."""
    done = subprocess.run([libraries_python(), VERIFIER], input=json.dumps({"items": items}),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def item(request: dict, secret: str, body: bytes | None = None, **headers: str) -> dict:
    sent = {**request["headers"], **{k.replace("_", "-"): v for k, v in headers.items()}}
    return {"secret": secret, "headers": sent,
            "body_base64": base64.b64encode(request["body"] if body is None else body).decode()}


def test_stripe_and_standard_webhooks_verify_every_delivery_through_a_rotation(launcher):
    sk = launcher.storekeeper(WEBHOOK_SECRET_OVERLAP="1h", **FAST)
    api, db = sk.client, launcher.databases[-1]
    receiver = Receiver()
    try:
        endpoint = create_endpoint(api, receiver.url)
        old = endpoint["secret"]
        user = unique("wh-libraries")
        before_id, _ = insert_event(db, user)
        wait_until(lambda: len(receiver.events()) == 1, 20, "a delivery before the rotation")
        r = api.post(f"/admin/v1/webhook-endpoints/{endpoint['id']}/rotate-secret", admin=True)
        assert r.status_code == 200, r.text
        new = r.json()["secret"]
        during_id, _ = insert_event(db, user)
        wait_until(lambda: len(receiver.events()) == 2, 20, "a delivery during the overlap")
        before, during = receiver.requests

        # The Standard Webhooks headers: the event's id, the same timestamp the Stripe-style
        # header signs, one `v1,<base64>` per signing secret, space-separated.
        for request, event_id, count in ((before, before_id, 1), (during, during_id, 2)):
            assert header(request, "webhook-id") == event_id == header(request, "storekeeper-event-id")
            t, _ = signatures(header(request, "storekeeper-signature"))
            assert header(request, "webhook-timestamp") == str(t)
            entries = header(request, "webhook-signature").split(" ")
            assert len(entries) == count, entries
            assert all(e.startswith("v1,") and len(base64.b64decode(e[3:], validate=True)) == 32
                       for e in entries)

        cases = [
            ("before the rotation, its secret", item(before, old), "ok"),
            ("during the overlap, the new secret", item(during, new), "ok"),
            ("during the overlap, the old secret", item(during, old), "ok"),
            ("before the rotation, a secret made after it", item(before, new), "refused"),
            ("someone else's secret", item(before, "whsec_" + "0" * 64), "refused"),
            ("a body changed in transit", item(before, old, body=before["body"].replace(b"gold", b"gild")),
             "refused"),
        ]
        results = verdicts([case for _, case, _ in cases])
        for (what, _, expected), result in zip(cases, results):
            assert result["stripe"].startswith(expected), (what, result)
            assert result["standard"].startswith(expected), (what, result)
        assert results[0]["standard_payload"] == before["event"]
        assert results[1]["standard_payload"] == during["event"]

        # Standard Webhooks signs the id too: another event's id on this body is a forgery
        # there, while the Stripe-style signature (which never covered it) still holds.
        [swapped] = verdicts([item(before, old, webhook_id=during_id)])
        assert swapped["stripe"] == "ok" and swapped["standard"].startswith("refused"), swapped
    finally:
        receiver.close()
