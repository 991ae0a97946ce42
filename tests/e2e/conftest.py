"""Fixtures for the end-to-end tests: fresh databases, Storekeeper processes and the fake App
Store, started for real and stopped with SIGTERM (each must exit 0 unless the test killed it).

The suite runs sequentially (no xdist): some tests stop the shared PostgreSQL server.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from support import (
    BUNDLE_ID,
    JWT_AUDIENCE,
    JWT_ISSUER,
    JWT_SECRET,
    REPO,
    Client,
    Database,
    FakeAppStore,
    PgServer,
    Process,
    Storekeeper,
    admin_tokens,
    free_port,
    make_throwaway_root,
    required_env,
)

PASSED_ENV = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "TZ")


@dataclass
class Stack:
    """A Storekeeper wired to a fake App Store (which notifies it) on a fresh database."""

    sk: Storekeeper
    fake: FakeAppStore
    db: Database

    @property
    def api(self) -> Client:
        return self.sk.client


class Launcher:
    """Starts processes and databases; stops and drops them all at `close`."""

    def __init__(self, binary: str, fake_binary: str, pg: PgServer, workdir: Path, unused_root: Path,
                 label: str):
        self.binary = binary
        self.fake_binary = fake_binary
        self.pg = pg
        self.workdir = workdir
        self.unused_root = unused_root
        self.label = label
        self.storekeepers: list[Storekeeper] = []
        self.fakes: list[FakeAppStore] = []
        self.databases: list[Database] = []
        self.counter = 0

    def database(self) -> Database:
        db = self.pg.create_database("e2e")
        self.databases.append(db)
        return db

    def env(self, db: Database, port: int, fake: FakeAppStore | None = None, **overrides: Any) -> dict[str, str]:
        token, tokens = admin_tokens()
        receipt_base = fake.url if fake else f"http://127.0.0.1:{free_port()}"
        env = {k: os.environ[k] for k in PASSED_ENV if k in os.environ}
        env.update({
            "DATABASE_URL": db.url,
            "PORT": str(port),
            "HOST": "127.0.0.1",
            "APPLE_BUNDLE_ID": BUNDLE_ID,
            "ADMIN_TOKENS": tokens,
            "APPLE_ENVIRONMENTS": "production,sandbox",
            "APPLE_ROOT_CERTS": str(fake.root_pem if fake else self.unused_root),
            "APPLE_VERIFY_RECEIPT_URL": receipt_base + "/verifyReceipt",
            "APPLE_VERIFY_RECEIPT_SANDBOX_URL": receipt_base + "/sandbox/verifyReceipt",
            "APPLE_TIMEOUT": "2s",
            "REPORT_RETRY_BASE": "1s",
            "SWEEP_INTERVAL": "1s",
            # The counts /metrics keeps in memory are recomputed this often (support.refreshed_metrics).
            "METRICS_REFRESH_INTERVAL": "1s",
            "LOG_LEVEL": "info",
            "MIGRATIONS_DIR": str(REPO / "Migrations"),
            "OPENAPI_PATH": str(REPO / "openapi.yaml"),
            "CONSOLE_DIR": str(REPO / "Console"),
            "EVENT_LOOPS": "2",
            # Apps prove their user with the default e2e sign-in service's tokens (support.mint).
            "APP_AUTH": "jwt",
            "APP_JWT_SECRET": JWT_SECRET,
            "APP_JWT_ISSUER": JWT_ISSUER,
            "APP_JWT_AUDIENCE": JWT_AUDIENCE,
            # The fake App Store's app id, which its production notifications carry.
            "APPLE_APP_APPLE_ID": "1234567890",
            "ALLOW_INSECURE_URLS": "1",
            # Every test and schemathesis send from 127.0.0.1, often for one user: the abuse
            # limits are set out of their way here, and test_abuse_limits.py sets them low.
            "RATE_LIMIT_PER_ADDRESS": "100000/s,burst=100000",
            "RATE_LIMIT_PER_USER": "100000/s,burst=100000",
            "PROOF_BYTES_PER_USER": "100000MB/s,burst=100000MB",
            "MAX_OPEN_ORDERS_PER_USER": "1000",
            "VERIFY_CONCURRENCY": "64",
            "VERIFY_RECEIPT_CONCURRENCY": "64",
        })
        for key, value in overrides.items():
            if value is None:
                env.pop(key, None)
            else:
                env[key] = str(value)
        return env

    def storekeeper(self, db: Database | None = None, fake: FakeAppStore | None = None,
                    port: int | None = None, start: bool = True, share_admin_with: Storekeeper | None = None,
                    **env: Any) -> Storekeeper:
        """Starts `storekeeper serve` (on a fresh database unless one is given); waits for /readyz."""
        db = db or self.database()
        port = port or free_port()
        full_env = self.env(db, port, fake, **env)
        if share_admin_with is not None:
            full_env["ADMIN_TOKENS"] = share_admin_with.env["ADMIN_TOKENS"]
        self.counter += 1
        name = f"storekeeper-{self.counter}"
        sk = Storekeeper(self.binary, full_env, self.workdir / f"{name}.log", port, name)
        self.storekeepers.append(sk)
        if start:
            sk.start()
        return sk

    def fake(self, notify_port: int | None, retry_schedule: str | None = None,
             shared_secret: str | None = None) -> FakeAppStore:
        port = free_port()
        self.counter += 1
        notify = f"http://127.0.0.1:{notify_port}/v1/apple/notifications" if notify_port else ""
        fake = FakeAppStore(self.fake_binary, port, self.workdir / f"fake-{self.counter}-root.pem", notify,
                            self.workdir / f"fake-{self.counter}.log", retry_schedule, shared_secret)
        self.fakes.append(fake)
        return fake.start()

    def stack(self, db: Database | None = None, retry_schedule: str | None = None,
              api_key: bool = False, **env: Any) -> Stack:
        """With `api_key`, Storekeeper holds the fake's App Store Server API key (which the
        default `APPLE_RECEIPT_VERIFICATION=auto` then uses for receipts)."""
        port = free_port()
        fake = self.fake(notify_port=port, retry_schedule=retry_schedule)
        db = db or self.database()
        if api_key:
            env = {**fake.api_env(), **env}
        sk = self.storekeeper(db, fake=fake, port=port, **env)
        return Stack(sk, fake, db)

    def close(self) -> None:
        problems: list[str] = []
        for sk in self.storekeepers:
            if sk.proc is None:
                sk.forget()
                continue
            if sk.killed or sk.proc.returncode is not None and not sk.running():
                sk.forget()
                continue
            try:
                code = sk.terminate(15)
                if code != 0:
                    problems.append(f"{sk.name} exited with {code} after SIGTERM\n{sk.log_tail(40)}")
            except AssertionError as e:
                problems.append(str(e))
            sk.forget()
        for fake in self.fakes:
            if fake.running():
                try:
                    fake.terminate(15)
                except AssertionError:
                    pass
            fake.forget()
        for db in self.databases:
            db.drop()
        if problems:
            raise AssertionError("\n\n".join(problems))


# ---------------------------------------------------------------------------------------------
# Session


@pytest.fixture(scope="session")
def pg_server() -> PgServer:
    return PgServer(required_env("DATABASE_URL"))


@pytest.fixture(scope="session")
def binary() -> str:
    path = required_env("STOREKEEPER_BIN")
    if not os.access(path, os.X_OK):
        pytest.fail(f"STOREKEEPER_BIN={path} is not an executable", pytrace=False)
    return path


@pytest.fixture(scope="session")
def fake_binary(binary) -> str:
    """The fake App Store's executable: STOREKEEPER_FAKE_BIN, else the one next to storekeeper
    (both products build into the same directory)."""
    path = os.environ.get("STOREKEEPER_FAKE_BIN") or str(Path(binary).parent / "storekeeper-fake-appstore")
    if not os.access(path, os.X_OK):
        pytest.fail(f"STOREKEEPER_FAKE_BIN={path} is not an executable "
                    "(swift build --product storekeeper-fake-appstore)", pytrace=False)
    return path


@pytest.fixture(scope="session")
def unused_root(tmp_path_factory) -> Path:
    return make_throwaway_root(tmp_path_factory.mktemp("roots"))


# ---------------------------------------------------------------------------------------------
# Per module and per test


@pytest.fixture(scope="module")
def module_launcher(request, binary, fake_binary, pg_server, unused_root, tmp_path_factory):
    workdir = tmp_path_factory.mktemp(Path(request.module.__file__).stem)
    launcher = Launcher(binary, fake_binary, pg_server, workdir, unused_root, request.module.__name__)
    yield launcher
    launcher.close()


@pytest.fixture
def launcher(request, binary, fake_binary, pg_server, unused_root, tmp_path):
    launcher = Launcher(binary, fake_binary, pg_server, tmp_path, unused_root, request.node.name)
    yield launcher
    launcher.close()


@pytest.fixture(scope="module")
def fresh_db(module_launcher) -> Database:
    """A database of its own for the module, dropped at its end."""
    return module_launcher.database()


@pytest.fixture
def new_db(launcher):
    """Factory: a database of its own for this test, dropped at its end."""
    return launcher.database


@pytest.fixture
def storekeeper(launcher):
    """Factory: `storekeeper(db=None, fake=None, **ENV)` starts an instance for this test."""
    return launcher.storekeeper


@pytest.fixture(scope="module")
def module_storekeeper(module_launcher):
    """Factory like `storekeeper`, whose instances live until the module ends."""
    return module_launcher.storekeeper


@pytest.fixture(scope="module")
def stack(module_launcher) -> Stack:
    """One fake App Store and one Storekeeper (notified by it) on a fresh database, per module."""
    return module_launcher.stack()


@pytest.fixture(scope="module")
def fake_appstore(stack) -> FakeAppStore:
    return stack.fake


@pytest.fixture(scope="module")
def api(stack) -> Client:
    return stack.api


# ---------------------------------------------------------------------------------------------
# Logs of the processes involved, attached to every failure


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.failed:
        for process in list(Process.registry):
            report.sections.append(
                (f"{process.name} log ({process.log_path})", process.log_tail(80)))
