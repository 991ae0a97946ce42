"""A dump restored into another cluster (pg_dump, pg_restore) keeps the xid8 values Storekeeper
stored (events.xid, chart_xid, the charts' rollup horizons) but not the counter of the cluster
that wrote them: the feed would hide events and strand cursors, chart passes would miss rows.
Storekeeper refuses such a database at start-up, naming the cause and INSTALL.md's section,
with exit 2, and starts once the counter is past them (simulated here by setting the values
ahead of the shared test cluster's counter, and back)."""

from __future__ import annotations

import subprocess

import pytest
import requests

from support import unique, wait_until

# Far past the shared cluster's counter, which every test's transactions move along.
AHEAD = "(pg_snapshot_xmax(pg_current_snapshot())::text::numeric + 100000000)::text::xid8"
PLACES = {
    "events.xid": (f"UPDATE events SET xid = {AHEAD}", "UPDATE events SET xid = '3'"),
    "chart_rollup_state.horizon": (f"UPDATE chart_rollup_state SET horizon = {AHEAD}",
                                   "UPDATE chart_rollup_state SET horizon = NULL"),
}


def ready(sk) -> bool:
    try:
        return requests.get(sk.url + "/readyz", timeout=2).status_code == 200
    except requests.RequestException:
        return False


def run(binary, command: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([str(binary), command], env=env, capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("place", ["events.xid", "chart_rollup_state.horizon"])
def test_a_database_holding_xids_ahead_of_its_cluster_is_refused_until_they_are_behind(
        binary, launcher, place):
    db = launcher.database()
    sk = launcher.storekeeper(db)
    user = unique("restored")
    r = sk.client.request("POST", f"/admin/v1/users/{user}/adjustments", admin=True,
                          json={"asset": "gold", "amount": 1, "reason": "before the dump"})
    assert r.status_code in (200, 201), r.text
    assert sk.terminate() == 0
    ahead, behind = PLACES[place]
    db.scalar(ahead)

    # serve either exits or becomes ready: it must exit, with 2 (the packaged unit does not
    # restart that), saying why.
    refused = launcher.storekeeper(db, start=False)
    refused.spawn()
    wait_until(lambda: not refused.running() or ready(refused), 60, "serve neither exited nor became ready")
    assert not refused.running(), "serve started on a database holding xids ahead of its cluster"
    assert refused.proc.returncode == 2, refused.log_tail()
    assert place in refused.log() and "INSTALL.md" in refused.log(), refused.log_tail()
    for command in ("migrate", "charts-backfill"):
        result = run(binary, command, sk.env)
        output = result.stdout + result.stderr
        assert result.returncode == 2, f"{command}: {output}"
        assert place in output and "INSTALL.md" in output and "charts-backfill" in output, output
    # Nothing was served or rebuilt: the horizon is still the one set.
    if place == "chart_rollup_state.horizon":
        assert db.scalar("SELECT horizon > pg_snapshot_xmax(pg_current_snapshot()) FROM chart_rollup_state") == "t"

    # Once the values are behind the counter again (what moving the counter does), it starts.
    db.scalar(behind)
    again = launcher.storekeeper(db)
    assert again.client.get("/readyz").status_code == 200
