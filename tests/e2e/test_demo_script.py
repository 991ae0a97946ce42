"""Issue 5: `scripts/demo` walks seed 004's flow against a running Storekeeper and fake App Store
(here the test's own, on the demo catalog) and ends with the order settled."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from support import BUNDLE_ID

ROOT = Path(__file__).resolve().parents[2]


def test_the_demo_settles_an_order_and_shows_the_gold(binary, stack):
    seeded = subprocess.run([binary, "seed-demo"], env={**os.environ, "DATABASE_URL": stack.db.url},
                            capture_output=True, text=True, timeout=30)
    assert seeded.returncode == 0, seeded.stderr
    # The demo signs its user in with the instance's sign-in settings (scripts/run keeps them in .data/).
    env = {**os.environ, "STOREKEEPER_URL": stack.sk.url, "FAKE_APPSTORE_URL": stack.fake.url,
           "APPLE_BUNDLE_ID": BUNDLE_ID,
           **{k: stack.sk.env[k] for k in ("APP_JWT_SECRET", "APP_JWT_ISSUER", "APP_JWT_AUDIENCE")}}
    demo = subprocess.run([str(ROOT / "scripts/demo")], env=env, capture_output=True, text=True, timeout=60)
    assert demo.returncode == 0, demo.stderr[-3000:]
    out = demo.stderr
    assert '"trade_status": "WAIT_BUYER_PAY"' in out
    assert '"trade_status": "TRADE_SUCCESS"' in out
    assert '"gold": 60' in out
    assert "Done: order" in out and "settled." in out
    assert "Authorization: Bearer " in out
    trade_no = out.rsplit("Done: order ", 1)[1].split(" ")[0]
    order = stack.api.order(trade_no)
    assert order["trade_status"] == "TRADE_SUCCESS"
    # The demo resends its report: still one settlement, one credit.
    assert stack.api.balance(order["user_id"]) == 60


def test_with_the_fake_google_play_the_demo_buys_on_android_too(binary, launcher, tmp_path):
    from google_support import FakeGooglePlay

    google = FakeGooglePlay(tmp_path).start()
    try:
        stack = launcher.stack(**google.env_for_storekeeper())
        seeded = subprocess.run([binary, "seed-demo"], env={**os.environ, "DATABASE_URL": stack.db.url},
                                capture_output=True, text=True, timeout=30)
        assert seeded.returncode == 0, seeded.stderr
        env = {**os.environ, "STOREKEEPER_URL": stack.sk.url, "FAKE_APPSTORE_URL": stack.fake.url,
               "FAKE_GOOGLEPLAY_URL": google.base, "APPLE_BUNDLE_ID": BUNDLE_ID,
               **{k: stack.sk.env[k] for k in ("APP_JWT_SECRET", "APP_JWT_ISSUER", "APP_JWT_AUDIENCE")}}
        demo = subprocess.run([str(ROOT / "scripts/demo")], env=env, capture_output=True, text=True, timeout=60)
        assert demo.returncode == 0, demo.stderr[-3000:]
        out = demo.stderr
        assert '"store": "google_play"' in out and '"obfuscated_account_id"' in out
        android = out.rsplit("Android: order ", 1)[1].split(" ")[0]
        order = stack.api.order(android)
        assert order["trade_status"] == "TRADE_SUCCESS" and order["store"] == "google_play"
        # Apple's purchase and Google's, one ledger.
        assert stack.api.balance(order["user_id"]) == 120
    finally:
        google.terminate(15)
        google.forget()
