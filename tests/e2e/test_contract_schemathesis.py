"""The contract: schemathesis (4.x) generates requests from openapi.yaml, positive and negative,
including its stateful phase (chains of calls linked through responses), sends them to a real
Storekeeper wired to the fake App Store with the demo catalog, and runs every check it has. Any
failure fails the suite.

`scripts/test` installs schemathesis into a virtualenv and names it in SCHEMATHESIS. The run is
bounded (SCHEMATHESIS_MAX_EXAMPLES examples per operation, 10 by default; about a minute) and
reproducible (deterministic generation, which keeps no example database between runs). The few
answers no schema can express are allowed in `schemathesis.toml`, which a manual run from the
repository root reads too:

    schemathesis run --checks all -n 50 -H "Authorization: Bearer $(cat .data/admin-token)" \\
      http://127.0.0.1:8080/openapi.yaml
"""

from __future__ import annotations

import os
import subprocess

from google_support import FakeGooglePlay
from support import REPO, free_port, mint, required_env


def config_for(directory, admin_token: str) -> str:
    """The repository's schemathesis.toml with both credentials added. Every undeclared method,
    TRACE and QUERY among them, is 405 with `Allow`, so schemathesis probes them all."""
    config = (REPO / "schemathesis.toml").read_text()
    # Each operation gets the credentials its security scheme names: the admin token for admin
    # routes, a signed-in user's JWT for app routes (so a user_id other than its sub is 403).
    config += (f'\n[auth.openapi.adminToken]\nbearer = "{admin_token}"\n'
               f'\n[auth.openapi.appUser]\nbearer = "{mint("schemathesis-user", lifetime=3600)}"\n')
    path = directory / "schemathesis.toml"
    path.write_text(config)
    return str(path)


def test_schemathesis_finds_nothing(launcher, binary, tmp_path):
    schemathesis = required_env("SCHEMATHESIS")
    examples = os.environ.get("SCHEMATHESIS_MAX_EXAMPLES", "10")
    # schemathesis sends wrong tokens on purpose (ignored_auth); with the default limit the
    # address would soon be refused (429) and every later admin request would test nothing.
    port = free_port()
    fake = launcher.fake(notify_port=port)
    # Google Play on, against its fake, so its routes answer for real (not 503 off); pushes
    # carry no token Storekeeper trusts, so they are 401.
    google = FakeGooglePlay(tmp_path).start()
    google_env = {**google.env_for_storekeeper(),
                  "GOOGLE_PUBSUB_AUDIENCE": "https://storekeeper.test/v1/google/notifications",
                  "GOOGLE_PUBSUB_SERVICE_ACCOUNT": "push@fake-project.iam.gserviceaccount.com",
                  "GOOGLE_OIDC_JWKS_URL": google.base + "/oauth2/v3/certs"}
    # The fake's in-app purchase key signs promotional offers, so signOffer answers 200.
    sk = launcher.storekeeper(launcher.database(), fake=fake, port=port, ADMIN_AUTH_FAILURE_LIMIT=1000000,
                              APPLE_OFFER_KEY_FILE=str(fake.api_key), APPLE_OFFER_KEY_ID=fake.api_key_id,
                              # Webhook endpoints it registers point anywhere: attempts end fast.
                              WEBHOOK_TIMEOUT="2s", **google_env)
    seeded = subprocess.run([binary, "seed-demo"], env=sk.env, capture_output=True, text=True, timeout=60)
    assert seeded.returncode == 0, seeded.stderr

    argv = [
        schemathesis, "--config-file", config_for(tmp_path, sk.admin_token),
        "run", f"{sk.url}/openapi.yaml", "--url", sk.url,
        "--checks", "all", "--phases", "examples,coverage,fuzzing,stateful",
        "--max-examples", examples, "--generation-deterministic",
        "--no-color", "--request-timeout", "30",
    ]
    result = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=900,
                            env={**os.environ, "NO_COLOR": "1"})
    output = result.stdout + result.stderr
    (tmp_path / "schemathesis.log").write_text(output)
    summary = [line for line in output.splitlines() if "generated" in line or " in " in line and "=" in line]
    print("\n".join(summary))
    google.terminate(15)
    google.forget()
    assert result.returncode == 0, f"schemathesis found problems:\n{output[-30000:]}"
    assert "Stateful" in output, "the stateful phase did not run"
