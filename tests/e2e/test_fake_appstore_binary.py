"""The fake App Store is an executable of its own (`storekeeper-fake-appstore`): the shipped
`storekeeper` refuses the old subcommand and carries none of the fake's code or certificate
authority."""

from __future__ import annotations

import subprocess
from pathlib import Path

# Bytes only the fake's code carries: its Swift module name (in every mangled symbol and type
# name of that module) and the common name of the root certificate it makes.
MARKERS = (b"FakeAppStore", b"Fake Apple Root CA")


def test_storekeeper_refuses_the_fake_appstore_subcommand_with_its_usage(binary, tmp_path):
    root = tmp_path / "root.pem"
    result = subprocess.run([binary, "fake-appstore", "--port", "0", "--root-cert-out", str(root)],
                            capture_output=True, text=True, timeout=30)
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith("usage: storekeeper <command>"), result.stderr
    assert "fake" not in result.stderr
    assert result.stdout == ""
    assert not root.exists()


def test_the_storekeeper_binary_carries_no_fake_app_store(binary, fake_binary):
    shipped = Path(binary).read_bytes()
    fake = Path(fake_binary).read_bytes()
    for marker in MARKERS:
        # The fake's own binary has each one, so finding none in storekeeper means something.
        assert marker in fake, f"{marker!r} is no marker: {fake_binary} lacks it too"
        assert marker not in shipped, f"{binary} contains {marker!r}"


def test_the_fake_app_store_binary_names_itself_in_its_usage(fake_binary):
    result = subprocess.run([fake_binary, "--bogus"], capture_output=True, text=True, timeout=30)
    assert result.returncode == 2
    assert "usage: storekeeper-fake-appstore --port N" in result.stderr
