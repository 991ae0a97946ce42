"""The release tarball (scripts/release) as an operator installs it (docs/INSTALL.md): unpacked
into an empty directory, its binaries run without the Swift toolchain, from another working
directory, with no MIGRATIONS_DIR, OPENAPI_PATH or CONSOLE_DIR, under the restrictions its
systemd unit sets (release_sandbox.py), against the test PostgreSQL; and `systemd-analyze
verify` accepts the unit.

STOREKEEPER_RELEASE_TARBALL names the tarball (scripts/test builds it). Needs root, for the
private mount namespace (`unshare --mount`); as another user it runs in a user namespace
(`unshare --user --map-root-user --mount`) and stays that namespace's root.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import requests

from support import REPO, PgServer, Storekeeper, admin_tokens, free_port, required_env

SANDBOX = Path(__file__).with_name("release_sandbox.py")
INSTALLED = "/opt/storekeeper"
# The system Python: python3-seccomp is Debian's.
SYSTEM_PYTHON = "/usr/bin/python3"


def toolchain_dir() -> Path:
    """The Swift toolchain's root (/opt/swift), from `swift` on PATH."""
    swift = shutil.which("swift")
    if swift is None:
        pytest.fail("swift is not on PATH: the toolchain to hide is unknown", pytrace=False)
    return Path(os.path.realpath(swift)).parents[2]


@pytest.fixture(scope="module")
def tarball() -> Path:
    path = Path(required_env("STOREKEEPER_RELEASE_TARBALL"))
    if not path.is_file():
        pytest.fail(f"STOREKEEPER_RELEASE_TARBALL={path} is not a file (scripts/release)", pytrace=False)
    return path


@pytest.fixture(scope="module")
def release(tarball, tmp_path_factory) -> Path:
    """The tarball unpacked into an empty directory that `nobody` can read."""
    where = tmp_path_factory.mktemp("release")
    # As docs/INSTALL.md unpacks it.
    subprocess.run(["tar", "-xzf", str(tarball), "-C", str(where)], check=True, timeout=120)
    tops = os.listdir(where)
    assert tops == [tarball.name.removesuffix(".tar.gz")], tops
    root = where / tops[0]
    for directory in [where, *where.parents]:
        if directory == Path("/"):
            break
        directory.chmod(directory.stat().st_mode | 0o055)
    return root


def version_file() -> str:
    return (REPO / "VERSION").read_text().strip()


def sandboxed(release: Path, *command: str) -> list[str]:
    unshare = ["unshare", "--mount", "--propagation", "private"]
    extra = []
    if os.geteuid() != 0:
        unshare = ["unshare", "--user", "--map-root-user", "--mount", "--propagation", "private"]
        extra = ["--no-user"]
    return [*unshare, SYSTEM_PYTHON, str(SANDBOX), "--release", str(release),
            "--unit", str(release / "storekeeper.service"), "--hide", str(toolchain_dir()), *extra,
            "--", *command]


def example_env(release: Path) -> dict[str, str]:
    env = {}
    for line in (release / "storekeeper.env.example").read_text().splitlines():
        if line and not line.startswith("#"):
            key, value = line.split("=", 1)
            env[key] = value
    return env


def test_the_tarball_holds_the_binaries_the_files_and_their_checksums(tarball, release):
    sums = (tarball.parent / "SHA256SUMS").read_text()
    digest = hashlib.sha256(tarball.read_bytes()).hexdigest()
    assert f"{digest}  {tarball.name}" in sums.splitlines()
    listed = {}
    for line in (release / "SHA256SUMS").read_text().splitlines():
        digest, name = line.split("  ", 1)
        listed[name] = digest
    files = {str(p.relative_to(release)) for p in release.rglob("*") if p.is_file()} - {"SHA256SUMS"}
    assert set(listed) == files
    for name, digest in listed.items():
        assert hashlib.sha256((release / name).read_bytes()).hexdigest() == digest, name
    for name in ("bin/storekeeper", "bin/storekeeper-fake-appstore"):
        assert os.access(release / name, os.X_OK), name
    share = release / "share/storekeeper"
    migrations = sorted(p.name for p in (REPO / "Migrations").rglob("*.sql"))
    assert sorted(p.name for p in (share / "Migrations").rglob("*.sql")) == migrations
    assert list((share / "Migrations/repeatable").glob("*.sql"))
    assert (share / "Console/index.html").is_file()
    assert (share / "openapi.yaml").read_bytes() == (REPO / "openapi.yaml").read_bytes()
    assert (release / "docs/INSTALL.md").is_file()


def test_the_binaries_need_nothing_from_the_toolchain(release):
    toolchain = str(toolchain_dir())
    for name in ("storekeeper", "storekeeper-fake-appstore"):
        out = subprocess.run(["ldd", str(release / "bin" / name)], capture_output=True, text=True,
                             check=True).stdout
        assert toolchain not in out, out
        assert "not found" not in out, out
        assert not re.search(r"libswift|libFoundation|libdispatch|libBlocksRuntime", out), out
        # What the operator installs: libpq5, libssl3, libcurl4 (docs/INSTALL.md).
        for library in ("libpq.so.5", "libcurl.so.4") if name == "storekeeper" else ():
            assert library in out, out


def test_version_answers_without_the_toolchain(release, tarball):
    result = subprocess.run(
        sandboxed(release, f"{INSTALLED}/bin/storekeeper", "--version"),
        capture_output=True, text=True, timeout=60, env={"PATH": "/usr/bin:/bin"})
    assert result.returncode == 0, result.stderr
    commit = re.escape(release.joinpath("BUILD").read_text().split("commit ")[1].strip())
    assert re.fullmatch(rf"storekeeper {re.escape(version_file())} \(commit {commit}\)\n",
                        result.stdout), result.stdout
    assert re.fullmatch(r"[0-9a-f]{7,}(-dirty)?", commit.replace("\\", ""))
    assert f"-{version_file()}-linux-" in tarball.name


def test_serve_migrates_and_serves_the_console_and_the_catalog_from_its_own_files(release, tmp_path):
    pg = PgServer(required_env("DATABASE_URL"))
    db = pg.create_database("release")
    try:
        port = free_port()
        token, tokens = admin_tokens()
        # The example environment file as shipped, with this test's database, port and admin.
        env = {**example_env(release), "DATABASE_URL": db.url, "PORT": str(port),
               "ADMIN_TOKENS": tokens, "EVENT_LOOPS": "2"}
        assert not {"MIGRATIONS_DIR", "OPENAPI_PATH", "CONSOLE_DIR"} & set(env)
        sk = Storekeeper(f"{INSTALLED}/bin/storekeeper", env, tmp_path / "storekeeper.log", port,
                         "release-storekeeper")
        sk.argv = sandboxed(release, f"{INSTALLED}/bin/storekeeper", "serve")
        sk.start(ready_timeout=60)
        try:
            ready = requests.get(sk.url + "/readyz", timeout=10)
            assert ready.status_code == 200, ready.text
            assert ready.json()["version"] == version_file()
            console = requests.get(sk.url + "/admin/", timeout=10)
            assert console.status_code == 200
            assert console.headers["Content-Type"].startswith("text/html")
            assert console.content == (release / "share/storekeeper/Console/index.html").read_bytes()
            catalog = requests.get(sk.url + "/v1/products", timeout=10)
            assert catalog.status_code == 200, catalog.text
            contract = requests.get(sk.url + "/openapi.yaml", timeout=10)
            assert contract.content == (release / "share/storekeeper/openapi.yaml").read_bytes()
            admin = requests.get(sk.url + "/admin/v1/products", timeout=10,
                                 headers={"Authorization": f"Bearer {token}"})
            assert admin.status_code == 200, admin.text
            # Migrations/repeatable/ came from the release too.
            assert db.scalar("SELECT count(*) FROM pg_proc "
                             "WHERE proname = 'storekeeper_append_events'") == "1"
        finally:
            code = sk.terminate(30)
            sk.forget()
        assert code == 0, sk.log_tail()
    finally:
        db.drop()


def test_systemd_accepts_the_unit(release, tmp_path):
    """`systemd-analyze verify` needs ExecStart's binary to exist: a copy of the unit points
    at the unpacked one; everything else is verified as shipped."""
    unit = (release / "storekeeper.service").read_text()
    assert f"ExecStart={INSTALLED}/bin/storekeeper serve" in unit
    copy = tmp_path / "storekeeper.service"
    copy.write_text(unit.replace(f"ExecStart={INSTALLED}/", f"ExecStart={release}/"))
    result = subprocess.run(["systemd-analyze", "verify", str(copy)], capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
    noise = [line for line in (result.stdout + result.stderr).splitlines()
             if "storekeeper.service" in line]
    assert noise == [], "\n".join(noise)
    # systemd's own score of the confinement: 0 is the most confined, 10 none at all.
    security = subprocess.run(["systemd-analyze", "security", "--offline=true", "--threshold=20",
                               str(copy)], capture_output=True, text=True, timeout=60)
    assert security.returncode == 0, security.stdout[-3000:] + security.stderr
    settings = {}
    for line in unit.splitlines():
        if "=" in line and not line.startswith("#"):
            key, value = line.split("=", 1)
            settings[key] = value
    for key, value in {"User": "storekeeper", "Restart": "on-failure", "KillSignal": "SIGTERM",
                       "NoNewPrivileges": "yes", "ProtectSystem": "strict",
                       "MemoryDenyWriteExecute": "yes", "CapabilityBoundingSet": "",
                       "EnvironmentFile": "/etc/storekeeper/storekeeper.env"}.items():
        assert settings.get(key) == value, key
    # Above MAX_CONNECTIONS' default (10000), and longer than the graceful stop (10 s + 10 s).
    assert int(settings["LimitNOFILE"]) > 10_000
    assert int(settings["TimeoutStopSec"].removesuffix("s")) > 20
