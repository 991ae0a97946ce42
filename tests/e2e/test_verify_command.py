"""Issue 4: `storekeeper verify`, the support tool, run as a process on what an app logged."""

from __future__ import annotations

import json
import subprocess

from support import BUNDLE_ID, flip_char, tamper_jws_payload

GOLD = "com.example.tests.verify.gold"


def run(binary, *args, stdin=None):
    return subprocess.run([binary, "verify", *args], input=stdin, capture_output=True, text=True, timeout=30)


def test_prints_a_verified_transaction_and_refuses_a_tampered_one(binary, fake_appstore, tmp_path):
    purchase = fake_appstore.purchase(GOLD, "consumable")
    token = tmp_path / "transaction.jws"
    token.write_text(purchase["signed_transaction"])
    root = str(fake_appstore.root_pem)

    ok = run(binary, "--bundle-id", BUNDLE_ID, "--environment", "Production", "--root", root, str(token))
    assert ok.returncode == 0, ok.stderr
    decoded = json.loads(ok.stdout)
    assert json.dumps(decoded).count(purchase["transaction_id"]) >= 1
    assert GOLD in ok.stdout

    # From standard input too, as a support engineer pastes it.
    piped = run(binary, "--bundle-id", BUNDLE_ID, "--root", root, "-", stdin=purchase["signed_transaction"])
    assert piped.returncode == 0, piped.stderr

    header, payload, signature = purchase["signed_transaction"].split(".")
    forged = ".".join([header, payload, flip_char(signature, 10)])
    tampered = run(binary, "--bundle-id", BUNDLE_ID, "--root", root, "-", stdin=forged)
    assert tampered.returncode == 1
    assert tampered.stderr.strip() == "invalid_signature"
    edited = run(binary, "--bundle-id", BUNDLE_ID, "--root", root, "-",
                 stdin=tamper_jws_payload(purchase["signed_transaction"]))
    assert edited.returncode == 1 and edited.stdout == ""

    untrusted = run(binary, "--bundle-id", BUNDLE_ID, str(token))
    assert untrusted.returncode == 1
    assert "untrusted_root" in untrusted.stderr

    wrong_app = run(binary, "--bundle-id", "com.example.other", "--root", root, str(token))
    assert wrong_app.returncode == 1
    assert "bundle_id_mismatch" in wrong_app.stderr

    usage = run(binary)
    assert usage.returncode == 2


def test_prints_an_app_receipt_after_its_signature_checks_base64_or_der(binary, fake_appstore, tmp_path):
    import base64

    purchase = fake_appstore.purchase(GOLD, "consumable")
    root = str(fake_appstore.root_pem)
    text = tmp_path / "receipt.b64"
    text.write_text(purchase["receipt"] + "\n")
    raw = tmp_path / "receipt.der"
    raw.write_bytes(base64.b64decode(purchase["receipt"]))
    for path in (text, raw):
        ok = run(binary, "--bundle-id", BUNDLE_ID, "--root", root, str(path))
        assert ok.returncode == 0, ok.stderr
        decoded = json.loads(ok.stdout)
        assert decoded["kind"] == "app_receipt" and decoded["bundle_id"] == BUNDLE_ID
        assert decoded["creation_date"].endswith("Z")
        assert purchase["transaction_id"] in [p["transaction_id"] for p in decoded["purchases"]]

    # Altered after signing: the transaction id's last digit changed.
    der = base64.b64decode(purchase["receipt"])
    tid = purchase["transaction_id"].encode()
    other = tid[:-1] + (b"0" if tid[-1:] != b"0" else b"1")
    altered = tmp_path / "altered.der"
    altered.write_bytes(der.replace(tid, other))
    refused = run(binary, "--bundle-id", BUNDLE_ID, "--root", root, str(altered))
    assert refused.returncode == 1 and refused.stdout == ""
    assert refused.stderr.strip() == "invalid_signature"
    # Without the fake's root only Apple's is trusted.
    untrusted = run(binary, "--bundle-id", BUNDLE_ID, str(raw))
    assert untrusted.returncode == 1 and "untrusted_root" in untrusted.stderr
    wrong_app = run(binary, "--bundle-id", "com.example.other", "--root", root, str(raw))
    assert wrong_app.returncode == 1 and "bundle_id_mismatch" in wrong_app.stderr
