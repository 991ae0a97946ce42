"""Helpers shared by the end-to-end tests: processes (Storekeeper, the fake App Store), the
PostgreSQL server named by DATABASE_URL, an HTTP client that knows the API, and polling.

Everything here talks to real processes over real sockets; nothing is mocked.
"""

from __future__ import annotations

import base64
import json
import os
import random
import secrets
import signal
import socket
import subprocess
import threading
import time
import uuid
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable
from urllib.parse import parse_qs, quote, unquote, urlsplit, urlunsplit

import jwt
import pytest
import requests

REPO = Path(__file__).resolve().parents[2]
BUNDLE_ID = "com.example.storekeeper.tests"
ADMIN_NAME = "ops"
# The app's sign-in service every e2e Storekeeper trusts by default (APP_AUTH=jwt, HS256).
JWT_SECRET = "e2e-shared-secret-0123456789abcdef0123456789"
JWT_ISSUER = "https://login.e2e.example"
JWT_AUDIENCE = "storekeeper-e2e"
DEFAULT_USER = "e2e-user"

APPLE_TYPES = {
    "consumable": "Consumable",
    "non_consumable": "Non-Consumable",
    "auto_renewable": "Auto-Renewable Subscription",
    "non_renewing": "Non-Renewing Subscription",
}


# ---------------------------------------------------------------------------------------------
# Environment


def required_env(name: str) -> str:
    value = os.environ.get(name, "")
    if not value:
        pytest.fail(
            f"{name} is not set: run scripts/test, or export DATABASE_URL, STOREKEEPER_BIN, "
            "STOREKEEPER_TEST_PGDATA and STOREKEEPER_TEST_PGPORT yourself (STOREKEEPER_FAKE_BIN "
            "defaults to storekeeper-fake-appstore next to STOREKEEPER_BIN)",
            pytrace=False,
        )
    return value


_handed_out: set[int] = set()


def free_port() -> int:
    """A port nothing listens on, below the kernel's ephemeral range: a port the kernel hands
    out (bind to 0) can be taken by any outgoing connection before the server binds it."""
    low, _ = (int(x) for x in open("/proc/sys/net/ipv4/ip_local_port_range").read().split())
    for _ in range(1000):
        port = random.randrange(10000, max(10001, low))
        if port in _handed_out:
            continue
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
        _handed_out.add(port)
        return port
    raise RuntimeError("no free port below the ephemeral range")


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


def wait_until(fn: Callable[[], Any], timeout: float, message: str, interval: float = 0.1) -> Any:
    """Polls `fn` until it returns something truthy; fails with `message` and the last value."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while True:
        last = fn()
        if last:
            return last
        if time.monotonic() >= deadline:
            pytest.fail(f"{message} (waited {timeout}s; last value: {last!r})", pytrace=False)
        time.sleep(interval)


def refreshed_metrics(api: Any, timeout: float = 30) -> str:
    """/metrics once a background refresh has begun and ended since the call. The counts over
    tables that grow (orders, notifications, token jobs by state; the webhook backlog) are
    recomputed every METRICS_REFRESH_INTERVAL, not per scrape: a refresh counted once the call
    began may have read the tables before it, the next one began after."""
    def refreshes(text: str) -> int:
        line = next(l for l in text.splitlines() if l.startswith("storekeeper_metrics_refreshes_total "))
        return int(line.split()[-1])

    def scrape() -> str:
        r = api.get("/metrics", admin=True)
        assert r.status_code == 200, r.text
        return r.text

    start = refreshes(scrape())

    def fresh() -> str | None:
        text = scrape()
        return text if refreshes(text) >= start + 2 else None
    return wait_until(fresh, timeout, "two background refreshes of /metrics")


# ---------------------------------------------------------------------------------------------
# PostgreSQL


class PgServer:
    """The PostgreSQL server DATABASE_URL points at; databases are made and dropped with psql."""

    def __init__(self, url: str):
        self.url = url
        parts = urlsplit(url)
        self.host = parts.hostname or "127.0.0.1"
        self.port = parts.port or 5432
        self.user = parts.username or "storekeeper"
        self.scheme = parts.scheme

    def url_for(self, database: str) -> str:
        netloc = f"{self.user}@{self.host}:{self.port}"
        return urlunsplit((self.scheme, netloc, "/" + database, "", ""))

    def psql(self, sql: str, database: str = "postgres", check: bool = True) -> str:
        result = subprocess.run(
            ["psql", "-h", self.host, "-p", str(self.port), "-U", self.user, "-d", database,
             "-X", "-q", "-tA", "-F", "\t", "-v", "ON_ERROR_STOP=1", "-c", sql],
            capture_output=True, text=True, timeout=60,
        )
        if check and result.returncode != 0:
            raise AssertionError(f"psql failed ({result.returncode}): {result.stderr.strip()}\nSQL: {sql}")
        return result.stdout

    def create_database(self, prefix: str = "e2e") -> "Database":
        name = f"{prefix}_{uuid.uuid4().hex[:10]}".lower()
        self.psql(f'CREATE DATABASE "{name}"')
        return Database(self, name)

    def drop_database(self, name: str) -> None:
        self.psql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)', check=False)


class Database:
    def __init__(self, server: PgServer, name: str):
        self.server = server
        self.name = name
        self.url = server.url_for(name)

    def rows(self, sql: str) -> list[list[str]]:
        out = self.server.psql(sql, database=self.name)
        return [line.split("\t") for line in out.splitlines() if line != ""]

    def scalar(self, sql: str) -> str | None:
        rows = self.rows(sql)
        return rows[0][0] if rows else None

    def drop(self) -> None:
        self.server.drop_database(self.name)

    @contextmanager
    def holding(self, lock_sql: str, end: str = "ROLLBACK"):
        """Runs `lock_sql` (a LOCK TABLE, a SELECT … FOR UPDATE) in a transaction of another
        session, returns once it holds, and rolls that transaction back on leaving (or ends it
        with `end`: "COMMIT" makes a late commit)."""
        locker = subprocess.Popen(
            ["psql", "-h", self.server.host, "-p", str(self.server.port), "-U", self.server.user,
             "-d", self.name, "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert locker.stdin and locker.stdout
        try:
            locker.stdin.write(f"BEGIN; {lock_sql}; SELECT 'locked';\n")
            locker.stdin.flush()
            # What lock_sql itself prints (a SELECT's rows) comes first.
            for line in locker.stdout:
                if line.strip() == "locked":
                    break
            else:
                raise AssertionError(f"could not hold: {lock_sql}")
            yield
        finally:
            locker.stdin.write(f"{end};\n")
            locker.stdin.close()
            locker.wait(timeout=10)


def pg_stop() -> None:
    data = required_env("STOREKEEPER_TEST_PGDATA")
    subprocess.run(["bash", "-c", f"source '{REPO}/scripts/lib/common.sh'; pg_stop '{data}'"],
                   check=True, timeout=120)


def pg_start() -> None:
    data = required_env("STOREKEEPER_TEST_PGDATA")
    port = required_env("STOREKEEPER_TEST_PGPORT")
    subprocess.run(
        ["bash", "-c", f"source '{REPO}/scripts/lib/common.sh'; PG_FSYNC=off pg_start '{data}' '{port}'"],
        check=True, timeout=120)


# ---------------------------------------------------------------------------------------------
# Processes


class Process:
    """A child process whose output goes to a log file (appended, so lines never clobber)."""

    registry: list["Process"] = []
    registry_lock = threading.Lock()

    def __init__(self, name: str, argv: list[str], env: dict[str, str], log_path: Path):
        self.name = name
        self.argv = argv
        self.env = env
        self.log_path = log_path
        self.proc: subprocess.Popen | None = None
        self.killed = False

    def spawn(self) -> None:
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        log = open(self.log_path, "ab")
        try:
            self.proc = subprocess.Popen(self.argv, env=self.env, stdout=log, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL)
        finally:
            log.close()
        with Process.registry_lock:
            Process.registry.append(self)

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def log(self) -> str:
        try:
            return self.log_path.read_bytes().replace(b"\0", b"").decode("utf-8", "replace")
        except FileNotFoundError:
            return ""

    def log_tail(self, lines: int = 60) -> str:
        return "\n".join(self.log().splitlines()[-lines:])

    def log_lines_json(self) -> list[dict]:
        out = []
        for line in self.log().splitlines():
            line = line.strip()
            if line.startswith("{"):
                try:
                    out.append(json.loads(line))
                except ValueError:
                    pass
        return out

    def signal(self, sig: int) -> None:
        if self.running():
            self.proc.send_signal(sig)

    def kill(self) -> None:
        """SIGKILL; the test said so, so teardown will not ask for a clean exit."""
        self.killed = True
        if self.running():
            self.proc.kill()
        if self.proc is not None:
            self.proc.wait(timeout=15)

    def terminate(self, timeout: float = 15) -> int:
        """SIGTERM and wait; returns the exit code (fails if it does not exit in time)."""
        assert self.proc is not None
        if self.running():
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=15)
            raise AssertionError(f"{self.name} did not exit within {timeout}s of SIGTERM\n{self.log_tail()}")

    def forget(self) -> None:
        with Process.registry_lock:
            if self in Process.registry:
                Process.registry.remove(self)


class Storekeeper(Process):
    def __init__(self, binary: str, env: dict[str, str], log_path: Path, port: int, name: str):
        super().__init__(name, [binary, "serve"], env, log_path)
        self.port = port
        self.url = f"http://127.0.0.1:{port}"
        # The first entry's token: `name:token`, perhaps with a `:read`/`:write` scope after it.
        self.admin_token = env.get("ADMIN_TOKENS", ":").split(",")[0].split(":")[1]
        self.client = Client(self.url, self.admin_token, bearer_for_env(env))

    def start(self, ready_timeout: float = 20) -> "Storekeeper":
        self.spawn()
        self.wait_ready(ready_timeout)
        return self

    def wait_ready(self, timeout: float = 20) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.running():
                raise AssertionError(
                    f"{self.name} exited with {self.proc.returncode} before it was ready\n{self.log_tail()}")
            try:
                if requests.get(self.url + "/readyz", timeout=2).status_code == 200:
                    return
            except requests.RequestException:
                pass
            time.sleep(0.05)
        raise AssertionError(f"{self.name} was not ready within {timeout}s\n{self.log_tail()}")

    def restart(self, ready_timeout: float = 20) -> "Storekeeper":
        """Starts the same configuration again (after a kill or a stop)."""
        assert not self.running()
        self.killed = False
        return self.start(ready_timeout)


class FakeAppStore(Process):
    def __init__(self, binary: str, port: int, root_out: Path, notify_url: str, log_path: Path,
                 retry_schedule: str | None = None, shared_secret: str | None = None):
        # The in-app purchase key its App Store Server API accepts, as App Store Connect issues it.
        self.api_key = root_out.with_name(root_out.stem + "-api.p8")
        self.api_key_id = "FAKEKEY001"
        self.api_issuer_id = "57246542-96fe-1a63-e053-0824d011072a"
        argv = [binary, "--port", str(port), "--root-cert-out", str(root_out),
                "--api-key-out", str(self.api_key), "--api-key-id", self.api_key_id,
                "--api-issuer-id", self.api_issuer_id]
        if notify_url:
            argv += ["--notify-url", notify_url]
        if retry_schedule:
            argv += ["--retry-schedule", retry_schedule]
        if shared_secret:
            argv += ["--shared-secret", shared_secret]
        super().__init__("fake-appstore", argv, dict(os.environ), log_path)
        self.port = port
        self.root_pem = root_out
        self.url = f"http://127.0.0.1:{port}"
        self.session = requests.Session()
        self.lock = threading.Lock()

    def start(self, timeout: float = 20) -> "FakeAppStore":
        self.spawn()
        expected = f"fake-appstore listening on 127.0.0.1:{self.port}"
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if expected in self.log():
                return self
            if not self.running():
                raise AssertionError(f"fake-appstore exited with {self.proc.returncode}\n{self.log_tail()}")
            time.sleep(0.05)
        raise AssertionError(f"fake-appstore did not print {expected!r} within {timeout}s\n{self.log_tail()}")

    def call(self, path: str, body: dict, expect: tuple[int, ...] | None = (200, 201)) -> dict:
        r = requests.post(self.url + path, json=body, timeout=30)
        if expect is not None:
            assert r.status_code in expect, f"fake {path} {body} -> {r.status_code} {r.text}"
        try:
            return r.json()
        except ValueError:
            return {"_status": r.status_code, "_text": r.text}

    def purchase(self, product_id: str, type: str, quantity: int = 1, app_account_token: str | None = None,
                 environment: str = "Production", apple_account: str | None = None,
                 expires_in_seconds: int | None = None, bundle_id: str = BUNDLE_ID,
                 receipt_style: str | None = None, storefront: str | None = None,
                 price: int | None = None, currency: str | None = None) -> dict:
        """A StoreKit purchase; `receipt` in the answer is the account's app receipt, or with
        `receipt_style="transaction"` the iOS 6-style receipt of this transaction alone.
        `storefront` (alpha-3), `price` (milliunits) and `currency` are what Apple signs."""
        body: dict[str, Any] = {
            "bundle_id": bundle_id,
            "product_id": product_id,
            "type": APPLE_TYPES.get(type, type),
            "quantity": quantity,
            "environment": environment,
        }
        for name, value in (("storefront", storefront), ("price", price), ("currency", currency)):
            if value is not None:
                body[name] = value
        if app_account_token is not None:
            body["app_account_token"] = app_account_token
        if apple_account is not None:
            body["apple_account"] = apple_account
        if expires_in_seconds is not None:
            body["expires_in_seconds"] = expires_in_seconds
        if receipt_style is not None:
            body["receipt_style"] = receipt_style
        return self.call("/fake/v1/purchases", body)

    def api_env(self) -> dict[str, str]:
        """Storekeeper settings that make it read this fake's notification history (and, with
        APPLE_RECEIPT_VERIFICATION at its default `auto`, judge app receipts through its Server API)."""
        return {"APPLE_API_KEY_FILE": str(self.api_key), "APPLE_API_KEY_ID": self.api_key_id,
                "APPLE_API_ISSUER_ID": self.api_issuer_id, "APPLE_API_URL": self.url,
                "APPLE_API_SANDBOX_URL": self.url + "/sandbox"}

    def transaction(self, transaction_id: str) -> dict:
        """The fake's record of a transaction as it stands now (its `app_account_token` among it)."""
        r = requests.get(f"{self.url}/fake/v1/transactions/{transaction_id}", timeout=30)
        assert r.status_code == 200, r.text
        return r.json()

    def consumption_calls(self, transaction_id: str) -> list[dict]:
        """The Send Consumption Information calls the fake received for a transaction, in order:
        each its `environment`, the `status` answered and the `body` as sent."""
        r = requests.get(f"{self.url}/fake/v1/consumption/{transaction_id}", timeout=30)
        assert r.status_code == 200, r.text
        return r.json()["calls"]

    def fail_consumption(self, count: int, status: int = 503) -> dict:
        """The next `count` Send Consumption Information calls are answered `status`."""
        return self.call("/fake/v1/consumption/faults", {"fail_next": count, "status": status})

    def calls(self) -> dict[str, int]:
        """How often verifyReceipt and the Server API's transaction lookups were called."""
        r = requests.get(f"{self.url}/fake/v1/calls", timeout=30)
        assert r.status_code == 200, r.text
        return r.json()

    def set_history_page_size(self, size: int) -> dict:
        """Transactions per Get Transaction History page (Apple's: 20)."""
        return self.call("/fake/v1/server-api", {"transaction_history_page_size": size})

    def set_notification_history_page_size(self, size: int) -> dict:
        """Notifications per Get Notification History page (Apple's: 20)."""
        return self.call("/fake/v1/server-api", {"notification_history_page_size": size})

    def delivery_history(self, notification_uuid: str) -> dict:
        """Every attempt to deliver the notification so far (Apple's `sendAttempts`)."""
        r = requests.get(f"{self.url}/fake/v1/notifications/{notification_uuid}", timeout=30)
        assert r.status_code == 200, r.text
        return r.json()

    def fault(self, mode: str, **kw: Any) -> dict:
        return self.call("/fake/v1/faults", {"mode": mode, **kw})

    def clear_faults(self) -> dict:
        return self.fault("none")

    def restore(self, transaction_id: str) -> dict:
        """A StoreKit 1 restore of a non-consumable: a new transaction id whose original is the
        purchase, in the account's app receipt (`app_receipt`) and with its own
        `transaction_receipt`; `signed_transaction` is the purchase's, as StoreKit 2 sees it."""
        return self.call("/fake/v1/restores", {"transaction_id": transaction_id})

    def refund(self, transaction_id: str, notification_type: str | None = None, deliver: bool = True,
               prorated_milliunits: int | None = None) -> dict:
        """REFUND (or `notification_type`); `prorated_milliunits`: Apple's REFUND_PRORATED of that
        share (40000 is 40%)."""
        body: dict[str, Any] = {"transaction_id": transaction_id, "deliver": deliver}
        if notification_type:
            body["notification_type"] = notification_type
        if prorated_milliunits is not None:
            body["revocation_type"] = "REFUND_PRORATED"
            body["revocation_percentage"] = prorated_milliunits
        return self.call("/fake/v1/refunds", body)

    def renewal(self, transaction_id: str, expires_in_seconds: int | None = None,
                notification_type: str | None = None, deliver: bool = True,
                product_id: str | None = None, app_account_token: str | None = None) -> dict:
        """A new period; with another product_id an upgrade, starting now (DID_CHANGE_RENEWAL_PREF)."""
        body: dict[str, Any] = {"transaction_id": transaction_id, "deliver": deliver}
        if product_id is not None:
            body["product_id"] = product_id
        if app_account_token is not None:
            body["app_account_token"] = app_account_token
        if expires_in_seconds is not None:
            body["expires_in_seconds"] = expires_in_seconds
        if notification_type:
            body["notification_type"] = notification_type
        return self.call("/fake/v1/renewals", body)

    def notification(self, notification_type: str, subtype: str | None = None,
                     transaction_id: str | None = None, grace_period_expires_in_seconds: int | None = None,
                     deliver: bool = True, **extra: Any) -> dict:
        body: dict[str, Any] = {"notification_type": notification_type, "deliver": deliver, **extra}
        if subtype:
            body["subtype"] = subtype
        if transaction_id:
            body["transaction_id"] = transaction_id
        if grace_period_expires_in_seconds is not None:
            body["grace_period_expires_in_seconds"] = grace_period_expires_in_seconds
        return self.call("/fake/v1/notifications", body)


def make_throwaway_root(directory: Path) -> Path:
    """A CA certificate nobody signs with: for instances that must start without the fake."""
    directory.mkdir(parents=True, exist_ok=True)
    pem = directory / "unused-root.pem"
    if not pem.exists():
        subprocess.run(
            ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
             "-nodes", "-subj", "/CN=storekeeper e2e unused root", "-days", "30",
             "-keyout", str(directory / "unused-root.key"), "-out", str(pem)],
            check=True, capture_output=True, timeout=60)
    return pem


# ---------------------------------------------------------------------------------------------
# App credentials


def mint(sub: str, secret: str = JWT_SECRET, issuer: str = JWT_ISSUER, audience: Any = JWT_AUDIENCE,
         lifetime: int = 600, algorithm: str = "HS256", headers: dict | None = None, **claims: Any) -> str:
    """A token from the app's sign-in service, made with PyJWT (not our code)."""
    now = int(time.time())
    body = {"iss": issuer, "aud": audience, "sub": sub, "iat": now, "exp": now + lifetime, **claims}
    return jwt.encode({k: v for k, v in body.items() if v is not None}, secret, algorithm=algorithm,
                      headers=headers)


def user_headers(user_id: str | None) -> dict[str, str]:
    """What an app signed in as `user_id` sends (the default e2e sign-in service)."""
    return {"Authorization": f"Bearer {mint(user_id or DEFAULT_USER)}"}


APP_PATHS = ("/v1/orders", "/v1/trade-reports", "/v1/receipts", "/v1/users/", "/v1/offers/")


def valid_user_id(user_id: str) -> bool:
    """Storekeeper's rule: 1-128 characters, no control characters."""
    return 1 <= len(user_id) <= 128 and not any(
        ord(c) < 0x20 or ord(c) == 0x7F or 0x80 <= ord(c) <= 0x9F for c in user_id)


def bearer_for_env(env: dict[str, str]) -> Callable[[str], str] | None:
    """How a client of a Storekeeper with this environment proves who the user is."""
    mode = env.get("APP_AUTH", "none")
    if mode == "jwt" and env.get("APP_JWT_SECRET"):
        secret, issuer, audience = env["APP_JWT_SECRET"], env["APP_JWT_ISSUER"], env["APP_JWT_AUDIENCE"]
        return lambda user: mint(user, secret=secret, issuer=issuer, audience=audience)
    if mode == "api_key":
        for entry in env.get("APP_API_KEYS", "").split(","):
            name, _, key = entry.partition(":")
            if key and not key.startswith("sha256:"):
                return lambda user, key=key: key
    return None


# ---------------------------------------------------------------------------------------------
# HTTP client


class Client:
    """Thin wrapper over requests with the API's paths; one session per thread."""

    def __init__(self, base: str, admin_token: str, bearer: Callable[[str], str] | None = None):
        self.base = base
        self.admin_token = admin_token
        # Makes the credential of the user an app call acts for (None: APP_AUTH=none).
        self.bearer = bearer
        self.owners: dict[str, str] = {}
        self._local = threading.local()

    def session(self) -> requests.Session:
        s = getattr(self._local, "session", None)
        if s is None:
            s = requests.Session()
            self._local.session = s
        return s

    def request(self, method: str, path: str, admin: bool = False, headers: dict | None = None,
                timeout: float = 30, user: str | None = None, auth: bool = True,
                **kw: Any) -> requests.Response:
        """`user`: the user an app call acts for; by default the one it names (body `user_id`,
        the path's user, or the owner of the trade number it names). `auth=False` sends no
        credentials."""
        h = dict(headers or {})
        if admin:
            h["Authorization"] = f"Bearer {self.admin_token}"
        elif auth and self.bearer and "Authorization" not in h and path.startswith(APP_PATHS):
            h["Authorization"] = f"Bearer {self.bearer(user or self.user_for(path, kw))}"
        r = self.session().request(method, self.base + path, headers=h, timeout=timeout, **kw)
        if method == "POST" and path == "/v1/orders" and r.status_code == 201:
            body = r.json()
            self.owners[body["trade_no"]] = body["user_id"]
        return r

    def user_for(self, path: str, kw: dict) -> str:
        """The user an app call names, as a signed-in app would be signed in."""
        fields: dict[str, Any] = {}
        if isinstance(kw.get("json"), dict):
            fields = kw["json"]
        elif isinstance(kw.get("data"), (bytes, str)):
            raw = kw["data"].decode("utf-8", "replace") if isinstance(kw["data"], bytes) else kw["data"]
            try:
                parsed = json.loads(raw)
                fields = parsed if isinstance(parsed, dict) else {}
            except ValueError:
                fields = {k: v[0] for k, v in parse_qs(raw).items()}
        if isinstance(fields.get("user_id"), str):
            # A user id no sign-in service would issue (tests of its validation): signed in as
            # someone else, so the request still reaches the check it is about.
            return fields["user_id"] if valid_user_id(fields["user_id"]) else DEFAULT_USER
        if path.startswith("/v1/users/"):
            named = unquote(path.split("/")[3])
            return named if valid_user_id(named) else DEFAULT_USER
        trade_no = fields.get("trade_no")
        if path.startswith("/v1/orders/"):
            trade_no = unquote(path.split("/")[3].split("?")[0])
        if isinstance(trade_no, str):
            return self.owner(trade_no)
        return DEFAULT_USER

    def owner(self, trade_no: str) -> str:
        """Whose order it is (asked once of the admin API; a missing order: the default user)."""
        if trade_no not in self.owners:
            r = self.get(f"/admin/v1/orders/{quote(trade_no, safe='')}", admin=True)
            if r.status_code != 200:
                return DEFAULT_USER
            self.owners[trade_no] = r.json()["order"]["user_id"]
        return self.owners[trade_no]

    def get(self, path: str, **kw: Any) -> requests.Response:
        return self.request("GET", path, **kw)

    def post(self, path: str, **kw: Any) -> requests.Response:
        return self.request("POST", path, **kw)

    # Catalog and admin

    def put_product(self, product_id: str, type: str = "consumable", price: str = "6.00",
                    currency: str = "USD", title: str | None = None, sort_order: int = 0,
                    grants: dict | None = None, content: dict | None = None, description: str = "",
                    active: bool = True) -> dict:
        if grants is None:
            grants = default_grants(type)
        body = {
            "type": type, "title": title or product_id, "description": description, "price": price,
            "currency": currency, "sort_order": sort_order, "active": active, "grants": grants,
            "content": content if content is not None else {"message": f"thanks for {product_id}"},
        }
        r = self.request("PUT", f"/admin/v1/products/{product_id}", admin=True, json=body)
        assert r.status_code in (200, 201), f"PUT {product_id}: {r.status_code} {r.text}"
        return r.json()

    # Orders and settlement

    def create_order(self, user_id: str, product_id: str, quantity: int | None = None,
                     key: str | None = None) -> dict:
        r = self.post_order(user_id, product_id, quantity, key)
        assert r.status_code == 201, f"POST /v1/orders: {r.status_code} {r.text}"
        return r.json()

    def post_order(self, user_id: str, product_id: str, quantity: int | None = None,
                   key: str | None = None) -> requests.Response:
        body: dict[str, Any] = {"user_id": user_id, "product_id": product_id}
        if quantity is not None:
            body["quantity"] = quantity
        headers = {"Idempotency-Key": key} if key else {}
        return self.post("/v1/orders", json=body, headers=headers)

    def order(self, trade_no: str) -> dict:
        r = self.get(f"/v1/orders/{trade_no}")
        assert r.status_code == 200, f"GET order {trade_no}: {r.status_code} {r.text}"
        return r.json()

    def admin_order(self, trade_no: str) -> dict:
        r = self.get(f"/admin/v1/orders/{trade_no}", admin=True)
        assert r.status_code == 200, f"GET admin order {trade_no}: {r.status_code} {r.text}"
        return r.json()

    def admin_pages(self, path: str, key: str, **query: Any) -> list[dict]:
        """Every item of an admin listing matching the filters, following the cursor."""
        out: list[dict] = []
        cursor = None
        while True:
            params = dict(query)
            if cursor:
                params["cursor"] = cursor
            r = self.get(path, admin=True, params=params)
            assert r.status_code == 200, r.text
            page = r.json()
            out += page[key]
            cursor = page.get("next_cursor")
            if not cursor:
                return out

    def admin_orders(self, **query: Any) -> list[dict]:
        return self.admin_pages("/admin/v1/orders", "orders", **query)

    def report(self, trade_no: str, trade_status: str = "TRADE_SUCCESS", receipt: str | None = None,
               signed_transaction: str | None = None, reason: str | None = None,
               timeout: float = 30) -> requests.Response:
        body: dict[str, Any] = {"trade_no": trade_no, "trade_status": trade_status}
        if receipt is not None:
            body["receipt"] = receipt
        if signed_transaction is not None:
            body["signed_transaction"] = signed_transaction
        if reason is not None:
            body["reason"] = reason
        return self.post("/v1/trade-reports", json=body, timeout=timeout)

    def receipts(self, receipt: str | None = None, user_id: str | None = None,
                 signed_transaction: str | None = None, product_id: str | None = None) -> requests.Response:
        body: dict[str, Any] = {}
        if user_id is not None:
            body["user_id"] = user_id
        if receipt is not None:
            body["receipt"] = receipt
        if signed_transaction is not None:
            body["signed_transaction"] = signed_transaction
        if product_id is not None:
            body["product_id"] = product_id
        return self.post("/v1/receipts", json=body)

    def entitlements(self, user_id: str) -> dict:
        r = self.get(f"/v1/users/{quote(user_id, safe='')}/entitlements")
        assert r.status_code == 200, f"entitlements {user_id}: {r.status_code} {r.text}"
        return r.json()

    def balance(self, user_id: str, asset: str = "gold") -> int:
        return int(self.entitlements(user_id)["balances"].get(asset, 0))

    def notifications(self, **query: Any) -> list[dict]:
        r = self.get("/admin/v1/notifications", admin=True, params=query)
        assert r.status_code == 200, r.text
        return r.json()["notifications"]

    def post_notification(self, signed_payload: str) -> requests.Response:
        return self.post("/v1/apple/notifications", json={"signedPayload": signed_payload})


def default_grants(type: str) -> dict:
    return {
        "consumable": {"balance": {"gold": 100}},
        "non_consumable": {},
        "auto_renewable": {"entitlement": "vip"},
        "non_renewing": {"entitlement": "vip", "duration_days": 30},
    }[type]


def problem(r: requests.Response, status: int, code: str | None = None) -> dict:
    """Asserts an RFC 9457 problem with `status` (and `code`) and returns its body."""
    assert r.status_code == status, f"expected {status} {code}, got {r.status_code}: {r.text}"
    assert r.headers.get("Content-Type", "").startswith("application/problem+json"), r.headers
    body = r.json()
    assert body["status"] == status
    for key in ("type", "title", "code"):
        assert key in body, body
    if code is not None:
        assert body["code"] == code, body
    return body


def error_fields(body: dict) -> set[str]:
    return {e["field"] for e in body.get("errors", [])}


def flip_char(text: str, index: int) -> str:
    """Replaces one base64url character with another valid one, so only the content changes."""
    c = text[index]
    replacement = "A" if c != "A" else "B"
    return text[:index] + replacement + text[index + 1:]


def tamper_jws_payload(jws: str) -> str:
    header, payload, signature = jws.split(".")
    return ".".join([header, flip_char(payload, len(payload) // 2), signature])


def jws_payload(jws: str) -> dict:
    part = jws.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))


def admin_tokens() -> tuple[str, str]:
    token = secrets.token_hex(16)
    return token, f"{ADMIN_NAME}:{token}"


def buy(api: Client, fake: FakeAppStore, user_id: str, product_id: str, type: str = "consumable",
        quantity: int = 1, proof: str = "signed_transaction", apple_account: str | None = None,
        environment: str = "Production", expires_in_seconds: int | None = None,
        expect: int = 200, receipt_style: str | None = None, price: int | None = None,
        currency: str | None = None) -> tuple[dict, dict, requests.Response]:
    """Seed 004's flow: order, StoreKit purchase with the order's token, TRADE_SUCCESS report.
    `price` (milliunits) and `currency` are what Apple signs (the fake's default: 6.00 USD)."""
    order = api.create_order(user_id, product_id, quantity=quantity if quantity != 1 else None)
    purchase = fake.purchase(product_id, type, quantity=quantity, app_account_token=order["app_account_token"],
                             apple_account=apple_account, environment=environment,
                             expires_in_seconds=expires_in_seconds, receipt_style=receipt_style,
                             price=price, currency=currency)
    r = api.report(order["trade_no"], **{proof: purchase[proof]})
    if expect is not None:
        assert r.status_code == expect, f"report {order['trade_no']}: {r.status_code} {r.text}"
    return order, purchase, r


def wait_for_order(api: Client, trade_no: str, status: str, timeout: float = 15) -> dict:
    return wait_until(lambda: (lambda o: o if o["trade_status"] == status else None)(api.order(trade_no)),
                      timeout, f"order {trade_no} did not become {status}")


def form_post(api: Client, path: str, fields: list[tuple[str, str]]) -> requests.Response:
    """A naive form post like seed 000's: values are NOT percent-encoded."""
    body = "&".join(f"{k}={v}" for k, v in fields)
    return api.post(path, data=body.encode(), headers={"Content-Type": "application/x-www-form-urlencoded"})
