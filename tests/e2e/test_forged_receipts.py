"""A receipt is proof only when Apple signed it (issue 22). With an App Store Server API key
configured, a forged app receipt naming a victim's transaction id used to make Storekeeper
fetch the victim's purchase from Apple and credit it to the attacker. Each forgery below is
refused in every receipt mode before any id in it is asked about, the victim keeps their
purchase, and one genuine receipt costs a bounded number of Apple calls."""

from __future__ import annotations

import base64
import datetime

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import pkcs7
from cryptography.x509.oid import NameOID

from support import BUNDLE_ID, unique

P = "com.example.tests.forged."
GOLD = P + "gold"
MODES = ["server_api", "auto", "verify_receipt"]


# --- DER, by hand: what an attacker writes --------------------------------------------------

def der(tag: int, content: bytes) -> bytes:
    n = len(content)
    if n < 0x80:
        length = bytes([n])
    else:
        raw = n.to_bytes((n.bit_length() + 7) // 8, "big")
        length = bytes([0x80 | len(raw)]) + raw
    return bytes([tag]) + length + content


def integer(value: int) -> bytes:
    return der(0x02, value.to_bytes(max(1, (value.bit_length() + 8) // 8), "big"))


def attribute(kind: int, value: bytes) -> bytes:
    return der(0x30, integer(kind) + integer(1) + der(0x04, value))


def payload(transaction_ids: list[str], bundle_id: str = BUNDLE_ID) -> bytes:
    created = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    members = [attribute(2, der(0x0C, bundle_id.encode())), attribute(12, der(0x16, created.encode()))]
    for tid in transaction_ids:
        purchase = der(0x31, b"".join([
            attribute(1701, integer(1)),
            attribute(1702, der(0x0C, GOLD.encode())),
            attribute(1703, der(0x0C, tid.encode())),
            attribute(1705, der(0x0C, tid.encode())),
        ]))
        members.append(attribute(17, purchase))
    return der(0x31, b"".join(sorted(members)))


def unsigned_container(content: bytes) -> str:
    """PKCS#7 signedData with no certificates and no SignerInfo: the container of the attack."""
    signed_data_oid = bytes.fromhex("06092a864886f70d010702")
    data_oid = bytes.fromhex("06092a864886f70d010701")
    inner = der(0x30, data_oid + der(0xA0, der(0x04, content)))
    signed = der(0x30, integer(1) + der(0x31, b"") + inner + der(0x31, b""))
    return base64.b64encode(der(0x30, signed_data_oid + der(0xA0, signed))).decode()


APPLE_INTERMEDIATE = x509.ObjectIdentifier("1.2.840.113635.100.6.2.1")
APPLE_LEAF = x509.ObjectIdentifier("1.2.840.113635.100.6.11.1")


def own_ca_container(content: bytes) -> str:
    """Signed as Apple signs, markers and all, by a root of the attacker's own."""
    now = datetime.datetime.now(datetime.timezone.utc)

    def cert(name: str, key, issuer_name: str, issuer_key, ca: bool, marker):
        builder = (x509.CertificateBuilder()
                   .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)]))
                   .issuer_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, issuer_name)]))
                   .public_key(key.public_key()).serial_number(x509.random_serial_number())
                   .not_valid_before(now - datetime.timedelta(days=1))
                   .not_valid_after(now + datetime.timedelta(days=30))
                   .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
        if marker is not None:
            builder = builder.add_extension(x509.UnrecognizedExtension(marker, b"\x05\x00"), critical=False)
        return builder.sign(issuer_key, hashes.SHA256())

    root_key, mid_key, leaf_key = (ec.generate_private_key(ec.SECP256R1()) for _ in range(3))
    root = cert("Apple Root CA", root_key, "Apple Root CA", root_key, True, None)
    mid = cert("Apple Worldwide Developer Relations Certification Authority", mid_key,
               "Apple Root CA", root_key, True, APPLE_INTERMEDIATE)
    leaf = cert("Mac App Store and iTunes Store Receipt Signing", leaf_key,
                "Apple Worldwide Developer Relations Certification Authority", mid_key, False, APPLE_LEAF)
    signed = (pkcs7.PKCS7SignatureBuilder().set_data(content)
              .add_signer(leaf, leaf_key, hashes.SHA256())
              .add_certificate(mid).add_certificate(root)
              .sign(serialization.Encoding.DER, [pkcs7.PKCS7Options.Binary]))
    return base64.b64encode(signed).decode()


def altered(genuine: str, own_id: str, victim_id: str) -> str:
    """The attacker's own genuine receipt with the victim's transaction id written over theirs."""
    raw = base64.b64decode(genuine)
    assert len(own_id) == len(victim_id) and own_id.encode() in raw
    return base64.b64encode(raw.replace(own_id.encode(), victim_id.encode())).decode()


# --- the tests ------------------------------------------------------------------------------

def stack(launcher, mode: str, **env):
    fake = launcher.fake(notify_port=None)
    db = launcher.database()
    sk = launcher.storekeeper(db, fake=fake, APPLE_RECEIPT_VERIFICATION=mode, **fake.api_env(), **env)
    sk.client.put_product(GOLD, grants={"balance": {"gold": 100}})
    sk.db = db
    return sk, fake


@pytest.mark.parametrize("mode", MODES)
def test_forged_receipts_take_nothing_and_the_victim_keeps_their_purchase(launcher, mode):
    sk, fake = stack(launcher, mode)
    api = sk.client
    victim, attacker = unique("victim"), unique("attacker")
    # The victim's purchase carries no order token (a lost order call, or an app that sets a
    # per-user appAccountToken of its own): before its owner reports it, it belongs to nobody.
    bought = fake.purchase(GOLD, "consumable", apple_account=unique("victim-apple"))
    victim_id = bought["transaction_id"]
    # The attacker's own genuine receipt of this app, to alter, and one of another app.
    mine = fake.purchase(GOLD, "consumable", apple_account=unique("attacker-apple"))
    elsewhere = fake.purchase(GOLD, "consumable", apple_account=unique("attacker-apple"),
                              bundle_id="com.example.other.app")
    # Each forgery, and the check that must refuse it: every one but the last names this app.
    forgeries = {
        "unsigned": (unsigned_container(payload([victim_id])), {"invalid_signature"}),
        "own_ca": (own_ca_container(payload([victim_id])), {"untrusted_root", "invalid_certificate"}),
        "altered": (altered(mine["receipt"], mine["transaction_id"], victim_id), {"invalid_signature"}),
        "other_app": (elsewhere["receipt"], {"bundle_id_mismatch"}),
    }
    before = fake.calls()
    order = api.create_order(attacker, GOLD)
    for name, (receipt, reasons) in forgeries.items():
        for r in (api.receipts(receipt=receipt, user_id=attacker),
                  api.report(order["trade_no"], receipt=receipt)):
            assert r.status_code == 422, (name, r.text)
            assert r.headers["Content-Type"].startswith("application/problem+json"), name
            assert any(reason in r.json()["detail"] for reason in reasons), (name, r.text)
    assert api.balance(attacker) == 0
    assert api.order(order["trade_no"])["trade_status"] == "WAIT_BUYER_PAY"
    # Nobody was asked about the victim's transaction. (The notification history is read by
    # the recovery pass the server runs at start, whenever that comes; it names no purchase.)
    after = fake.calls()
    asked = {k: after[k] - before.get(k, 0) for k in after if k != "notification_history"}
    assert asked == {k: 0 for k in asked}, after
    # A refused proof leaves its hash and size on its reports, never its bytes.
    assert sk.db.scalar("SELECT count(*) FROM proofs") == "0"
    sizes = sk.db.rows("SELECT DISTINCT proof_size FROM trade_reports WHERE outcome = 'invalid'")
    assert sorted(int(row[0]) for row in sizes) == sorted({len(r) for r, _ in forgeries.values()}), sizes

    r = api.receipts(receipt=bought["receipt"], user_id=victim)
    assert r.status_code == 200, r.text
    assert [t["status"] for t in r.json()["transactions"]] == ["settled"], r.text
    assert api.balance(victim) == 100


def test_one_receipt_costs_at_most_its_apple_call_limit(launcher):
    sk, fake = stack(launcher, "server_api", RECEIPT_APPLE_CALL_LIMIT="6")
    api = sk.client
    fake.set_history_page_size(1)
    account = unique("big-apple")
    receipt = None
    for _ in range(12):
        receipt = fake.purchase(GOLD, "consumable", apple_account=account)["receipt"]
    user = unique("big")
    before = fake.calls()
    r = api.receipts(receipt=receipt, user_id=user)
    assert r.status_code == 200, r.text
    after = fake.calls()
    spent = sum(after[k] - before.get(k, 0) for k in ("transaction_history", "transaction_info"))
    assert spent == 6, (before, after)
    # Half the calls read history (one purchase a page), the rest looked the others up: the
    # receipt was judged on the six it could confirm, and the rest waits for another post.
    settled = [t for t in r.json()["transactions"] if t["status"] == "settled"]
    assert len(settled) == 6, r.text
    assert api.balance(user) == 600
    metrics = api.get("/metrics", admin=True).text
    assert "storekeeper_receipt_apple_calls_total 6" in metrics, metrics
    assert "storekeeper_receipt_apple_call_limit_reached_total 1" in metrics, metrics
    assert "reached its limit of Apple calls" in sk.log()
