"""Runs Apple's own `SignedDataVerifier` (PyPI `app-store-server-library`) over signed data, for
tests/e2e/test_apple_library_accepts_fake.py. It runs under the interpreter that has the library
(scripts/test's virtualenv, APPLE_LIBRARY_PYTHON), not pytest's, so neither interpreter's
`cryptography` shadows the other's.

stdin: {"root_der_base64", "environment", "bundle_id", "app_apple_id", "items": [{"kind", "jws"}]}
where kind is transaction, renewal_info, notification or app_transaction. stdout: one answer per item, in order:
{"status": "OK" or the library's VerificationStatus name, "payload": the decoded payload or null}.
"""

from __future__ import annotations

import base64
import json
import sys

import attr
from appstoreserverlibrary.models.Environment import Environment
from appstoreserverlibrary.signed_data_verifier import SignedDataVerifier, VerificationException


def plain(value):
    """The decoded model as JSON: attrs classes to dicts, enums to their raw values."""
    if attr.has(type(value)):
        return {k: plain(v) for k, v in attr.asdict(value, recurse=False).items() if v is not None}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if hasattr(value, "value"):
        return value.value
    return value


def main() -> None:
    request = json.load(sys.stdin)
    # Offline, as Storekeeper verifies: no OCSP. Strict X.509 checks stay at the library's default.
    verifier = SignedDataVerifier(
        root_certificates=[base64.b64decode(request["root_der_base64"])],
        enable_online_checks=False,
        environment=Environment(request["environment"]),
        bundle_id=request["bundle_id"],
        app_apple_id=request.get("app_apple_id"),
    )
    methods = {
        "transaction": verifier.verify_and_decode_signed_transaction,
        "renewal_info": verifier.verify_and_decode_renewal_info,
        "notification": verifier.verify_and_decode_notification,
        "app_transaction": verifier.verify_and_decode_app_transaction,
    }
    answers = []
    for item in request["items"]:
        try:
            decoded = methods[item["kind"]](item["jws"])
            answers.append({"status": "OK", "payload": plain(decoded)})
        except VerificationException as e:
            answers.append({"status": e.status.name, "payload": None})
    json.dump(answers, sys.stdout)


if __name__ == "__main__":
    main()
