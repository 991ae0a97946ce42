"""Checks webhook deliveries with the two libraries a receiver is likely to have, for
tests/e2e/test_webhook_libraries.py: stripe-python's `WebhookSignature.verify_header` over
`Storekeeper-Signature`, and Standard Webhooks' `Webhook.verify` (PyPI `standardwebhooks`) over
the `webhook-*` headers. It runs under the interpreter that has them (scripts/test's
virtualenv, WEBHOOK_LIBRARIES_PYTHON), not pytest's.

stdin: {"items": [{"secret", "body_base64", "headers": {name: value}}]}
stdout: one answer per item, in order: {"stripe": "ok" or the library's error,
"standard": "ok" or the library's error, "standard_payload": the body it returned parsed}."""

from __future__ import annotations

import base64
import json
import sys

import stripe
from standardwebhooks import Webhook


def check(item: dict) -> dict:
    body = base64.b64decode(item["body_base64"])
    # A receiver's framework hands headers over in any case; neither library may depend on it.
    headers = {k.lower(): v for k, v in item["headers"].items()}
    answer: dict = {}
    try:
        stripe.WebhookSignature.verify_header(
            body.decode("utf-8"), headers.get("storekeeper-signature", ""), item["secret"], tolerance=300)
        answer["stripe"] = "ok"
    except stripe.SignatureVerificationError as error:
        answer["stripe"] = f"refused: {error}"
    try:
        answer["standard_payload"] = Webhook(item["secret"]).verify(body, headers)
        answer["standard"] = "ok"
    except Exception as error:  # the library's WebhookVerificationError, or a malformed header
        answer["standard"] = f"refused: {type(error).__name__}: {error}"
    return answer


def main() -> None:
    request = json.load(sys.stdin)
    json.dump([check(item) for item in request["items"]], sys.stdout)


if __name__ == "__main__":
    sys.exit(main())
