"""The fake Google Play for the Google e2e tests: started for real, its key file handed to
Storekeeper, and an independent client (google-auth's service account credentials over plain
requests) to read what Google holds, so a test never trusts Storekeeper's own client to say
what Google was told."""

from __future__ import annotations

import glob
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import requests

from support import Process, free_port, wait_until

PACKAGE = "com.example.storekeeper"
SCOPE = "https://www.googleapis.com/auth/androidpublisher"


def import_google_auth():
    venv = os.environ.get("STOREKEEPER_GOOGLE_VENV", "")
    for site in glob.glob(os.path.join(venv, "lib", "python3*", "site-packages")) if venv else []:
        if site not in sys.path:
            sys.path.append(site)
    try:
        from google.auth.transport.requests import Request
        from google.oauth2 import service_account
    except ImportError as error:
        pytest.fail(f"google-auth not importable ({error}); run scripts/test, or set "
                    "STOREKEEPER_GOOGLE_VENV to a virtualenv holding it", pytrace=False)
    return service_account, Request


def fake_googleplay_binary() -> str:
    path = os.environ.get("STOREKEEPER_FAKE_GOOGLEPLAY_BIN")
    if not path and os.environ.get("STOREKEEPER_BIN"):
        path = str(Path(os.environ["STOREKEEPER_BIN"]).parent / "storekeeper-fake-googleplay")
    if not path or not os.access(path, os.X_OK):
        pytest.fail(f"no fake Google Play binary ({path!r}): set STOREKEEPER_FAKE_GOOGLEPLAY_BIN "
                    "or STOREKEEPER_BIN", pytrace=False)
    return path


class FakeGooglePlay(Process):
    def __init__(self, workdir: Path, name: str = "fake-googleplay", extra: list[str] | None = None):
        self.key_file = workdir / f"{name}-service-account.json"
        argv = [fake_googleplay_binary(), "--port", "0", "--key-out", str(self.key_file),
                "--package-name", PACKAGE, "--log-level", "info"] + (extra or [])
        super().__init__(name, argv, dict(os.environ), workdir / f"{name}.log")
        self.base = ""
        self._credentials = None

    def start(self) -> "FakeGooglePlay":
        self.proc = subprocess.Popen(self.argv, stdout=subprocess.PIPE, stderr=open(self.log_path, "w"),
                                     text=True, env=self.env)
        Process.registry.append(self)
        line = self.proc.stdout.readline().strip()
        assert line.startswith("fake-googleplay listening on 127.0.0.1:"), (line, self.log_tail())
        self.base = "http://" + line.rsplit(" ", 1)[1]
        # Whatever else it prints goes on to the log, so a full pipe never stalls it.
        def drain(stream=self.proc.stdout, path=self.log_path):
            with open(path, "a") as log:
                for rest in stream:
                    log.write(rest)
        threading.Thread(target=drain, daemon=True).start()
        return self

    def env_for_storekeeper(self) -> dict[str, str]:
        return {"GOOGLE_PLAY_PACKAGE_NAME": PACKAGE,
                "GOOGLE_PLAY_SERVICE_ACCOUNT_FILE": str(self.key_file),
                "GOOGLE_PLAY_API_URL": self.base}

    def control(self, path: str, body: dict | None = None) -> dict:
        r = requests.post(f"{self.base}/fake/v1/{path}", json=body or {}, timeout=10)
        assert r.status_code in (200, 201), r.text
        return r.json()

    def pushes(self) -> dict[str, dict]:
        """What the fake published, by message id: delivered, withheld, attempts, data."""
        r = requests.get(f"{self.base}/fake/v1/pushes", timeout=10)
        assert r.status_code == 200, r.text
        return {p["message_id"]: p for p in r.json()["pushes"]}

    def buy(self, product_id: str, **fields) -> dict:
        return self.control("products", {"product_id": product_id, **fields})

    def subscribe(self, product_id: str, **fields) -> dict:
        return self.control("subscriptions", {"product_id": product_id, **fields})

    def fault(self, status: int, count: int | None = None, **fields) -> None:
        body = {"status": status, **fields}
        if count is not None:
            body["count"] = count
        self.control("faults", body)

    def clear_faults(self) -> None:
        self.control("faults", {"clear": True})

    def api(self, path: str, check: bool = True) -> dict | None:
        """GET on the Developer API as Google's own library authenticates (an injected fault
        hits these reads too: with `check` False they answer None then)."""
        if self._credentials is None or not self._credentials.valid:
            service_account, Request = import_google_auth()
            self._credentials = service_account.Credentials.from_service_account_file(
                str(self.key_file), scopes=[SCOPE])
            self._credentials.refresh(Request())
        r = requests.get(f"{self.base}/androidpublisher/v3/applications/{PACKAGE}/purchases/{path}",
                         headers={"Authorization": f"Bearer {self._credentials.token}"}, timeout=10)
        if not check and r.status_code != 200:
            return None
        assert r.status_code == 200, r.text
        return r.json()

    def product_purchase(self, product_id: str, token: str, check: bool = True) -> dict | None:
        return self.api(f"products/{product_id}/tokens/{token}", check)

    def subscription(self, token: str) -> dict:
        return self.api(f"subscriptionsv2/tokens/{token}")

    def wait_acknowledged(self, product_id: str, token: str, consumed: bool, timeout: float = 20) -> dict:
        def done():
            purchase = self.product_purchase(product_id, token, check=False)
            key = "consumptionState" if consumed else "acknowledgementState"
            return purchase if purchase and purchase.get(key) == 1 else None
        return wait_until(done, timeout, f"{product_id} {'consumed' if consumed else 'acknowledged'}")


# The push subscription the e2e suite configures: its audience and its service account.
PUSH_AUDIENCE = "https://storekeeper.test/v1/google/notifications"
PUSH_EMAIL = "pubsub-push@fake-project.iam.gserviceaccount.com"


def start_pushing_fake(workdir: Path) -> FakeGooglePlay:
    """A fake Google Play that pushes its notifications, as Pub/Sub would, to a Storekeeper the
    test starts on `fake.storekeeper_port`."""
    port = free_port()
    fake = FakeGooglePlay(workdir, extra=[
        "--push-url", f"http://127.0.0.1:{port}/v1/google/notifications", "--push-audience", PUSH_AUDIENCE,
        "--push-email", PUSH_EMAIL, "--push-min-backoff", "0.2"]).start()
    fake.storekeeper_port = port
    return fake


def push_env(fake: FakeGooglePlay) -> dict[str, str]:
    """Storekeeper's settings to use the fake and trust the pushes it signs."""
    return {**fake.env_for_storekeeper(), "GOOGLE_PUBSUB_AUDIENCE": PUSH_AUDIENCE,
            "GOOGLE_PUBSUB_SERVICE_ACCOUNT": PUSH_EMAIL, "GOOGLE_OIDC_JWKS_URL": fake.base + "/oauth2/v3/certs"}
