"""Issue 26: Apple's own `SignedDataVerifier` (PyPI `app-store-server-library`), given only the
fake App Store's root, accepts what the fake signs: transactions, renewal infos and
notifications, in the sandbox and in production, with its strict X.509 checks on (which need
the authority key identifiers Apple's certificates carry). The library is an independent check:
nothing of it is reimplemented here.

`scripts/test` installs the library into its virtualenv and names that interpreter in
APPLE_LIBRARY_PYTHON. By hand: `python3 -m venv /tmp/v && /tmp/v/bin/pip install
app-store-server-library` and `APPLE_LIBRARY_PYTHON=/tmp/v/bin/python`."""

from __future__ import annotations

import base64
import json
import os
import ssl
import subprocess
import uuid
from pathlib import Path

import pytest

from support import BUNDLE_ID, jws_payload, unique

HERE = Path(__file__).resolve().parent
# What the fake puts in its production notifications (its --app-apple-id default).
FAKE_APP_APPLE_ID = 1234567890


def apple_python() -> str:
    # Like every e2e test, this fails rather than skips without what it needs (tests/e2e/README).
    path = os.environ.get("APPLE_LIBRARY_PYTHON", "")
    if not path:
        pytest.fail("APPLE_LIBRARY_PYTHON is not set: name a python that has Apple's "
                    "app-store-server-library (scripts/test installs one)", pytrace=False)
    return path


def apple_verify(root_pem: Path, environment: str, items: list[tuple[str, str]],
                 bundle_id: str = BUNDLE_ID, app_apple_id: int | None = FAKE_APP_APPLE_ID) -> list[dict]:
    """Apple's verdict on each (kind, jws), from the library in its own interpreter."""
    der = ssl.PEM_cert_to_DER_cert(root_pem.read_text())
    request = {"root_der_base64": base64.b64encode(der).decode(), "environment": environment,
               "bundle_id": bundle_id, "app_apple_id": app_apple_id,
               "items": [{"kind": kind, "jws": jws} for kind, jws in items]}
    done = subprocess.run([apple_python(), str(HERE / "apple_library_verifier.py")],
                          input=json.dumps(request), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    answers = json.loads(done.stdout)
    assert len(answers) == len(items)
    return answers


def accepted(answer: dict) -> dict:
    assert answer["status"] == "OK", answer
    return answer["payload"]


@pytest.fixture(scope="module")
def fake(module_launcher):
    # Nothing is delivered: every notification is read from the control API's answer.
    apple_python()
    return module_launcher.fake(notify_port=None)


@pytest.mark.parametrize("environment", ["Sandbox", "Production"])
def test_apple_library_accepts_the_fake_s_transactions(fake, environment):
    account = str(uuid.uuid4())
    consumable = fake.purchase(unique("gold"), "consumable", quantity=2, app_account_token=account,
                               environment=environment)
    subscription = fake.purchase(unique("club"), "auto_renewable", environment=environment,
                                 expires_in_seconds=3600)

    answers = apple_verify(fake.root_pem, environment, [
        ("transaction", consumable["signed_transaction"]),
        ("transaction", subscription["signed_transaction"]),
    ])
    first, second = (accepted(a) for a in answers)
    assert first["transactionId"] == consumable["transaction_id"]
    assert (first["bundleId"], first["environment"], first["quantity"]) == (BUNDLE_ID, environment, 2)
    assert first["appAccountToken"] == account
    assert first["type"] == "Consumable"
    assert second["transactionId"] == subscription["transaction_id"]
    assert second["type"] == "Auto-Renewable Subscription"


@pytest.mark.parametrize("environment", ["Sandbox", "Production"])
def test_apple_library_accepts_the_fake_s_notifications_and_the_renewal_info_they_carry(fake, environment):
    purchase = fake.purchase(unique("club"), "auto_renewable", environment=environment,
                             expires_in_seconds=3600)
    renewal = fake.renewal(purchase["transaction_id"], expires_in_seconds=30 * 86400, deliver=False)
    refund = fake.refund(purchase["transaction_id"], deliver=False)
    test_note = fake.notification("TEST", bundle_id=BUNDLE_ID, environment=environment, deliver=False)
    data = jws_payload(renewal["signed_payload"])["data"]
    assert data["signedRenewalInfo"], data

    answers = apple_verify(fake.root_pem, environment, [
        ("notification", renewal["signed_payload"]),
        ("transaction", data["signedTransactionInfo"]),
        ("renewal_info", data["signedRenewalInfo"]),
        ("notification", refund["signed_payload"]),
        ("notification", test_note["signed_payload"]),
    ])
    note, transaction, renewal_info, refunded, tested = (accepted(a) for a in answers)
    assert note["notificationType"] == "DID_RENEW"
    assert note["notificationUUID"] == renewal["notification_uuid"]
    assert note["data"]["bundleId"] == BUNDLE_ID
    assert transaction["transactionId"] == renewal["transaction_id"]
    assert transaction["originalTransactionId"] == purchase["transaction_id"]
    assert renewal_info["originalTransactionId"] == purchase["transaction_id"]
    assert renewal_info["environment"] == environment
    # Apple's 2025 fields, as Apple's models read them.
    assert renewal_info["appTransactionId"] == purchase["app_transaction_id"]
    assert transaction["appTransactionId"] == purchase["app_transaction_id"]
    assert refunded["notificationType"] == "REFUND"
    assert tested["notificationType"] == "TEST"


def test_apple_library_refuses_the_fake_under_another_root_or_for_another_app(fake, unused_root):
    # The acceptance above means something: the same library refuses the same data when it
    # trusts another root, names another app, or expects another environment.
    purchase = fake.purchase(unique("gold"), "consumable", environment="Sandbox")
    note = fake.notification("TEST", bundle_id=BUNDLE_ID, environment="Sandbox", deliver=False)
    signed = [("transaction", purchase["signed_transaction"]), ("notification", note["signed_payload"])]

    other_root = apple_verify(unused_root, "Sandbox", signed)
    assert [a["status"] for a in other_root] == ["VERIFICATION_FAILURE"] * 2, other_root
    other_app = apple_verify(fake.root_pem, "Sandbox", signed, bundle_id=BUNDLE_ID + ".other")
    assert [a["status"] for a in other_app] == ["INVALID_APP_IDENTIFIER"] * 2, other_app
    # A sandbox notification carries no appAppleId, which a Production verifier checks first.
    production = apple_verify(fake.root_pem, "Production", signed)
    assert [a["status"] for a in production] == ["INVALID_ENVIRONMENT", "INVALID_APP_IDENTIFIER"], production
