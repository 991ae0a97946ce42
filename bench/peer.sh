# The FastAPI peer of ../shared/bench-peer (FastAPI + uvicorn with uvloop and httptools +
# asyncpg), the service a team would otherwise write, for bench/*/run (source after
# bench/lib.sh). Its PyPI packages (the versions the figures in docs were measured with) go
# into a virtualenv kept between runs; BENCH_PEER_VENV names another.

BENCH_PEER_DIR=${BENCH_PEER_DIR:-$PWD/../shared/bench-peer}
BENCH_PEER_VENV=${BENCH_PEER_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/storekeeper-bench/peer-venv}

bench_peer_setup() {
  ensure_packages python3-venv
  [ -f "$BENCH_PEER_DIR/app.py" ] || { echo "no peer at $BENCH_PEER_DIR" >&2; return 1; }
  if [ ! -x "$BENCH_PEER_VENV/bin/uvicorn" ]; then
    echo "==> installing the peer's packages into $BENCH_PEER_VENV" >&2
    /usr/bin/python3 -m venv "$BENCH_PEER_VENV"
    "$BENCH_PEER_VENV/bin/pip" install -q --disable-pip-version-check \
      fastapi==0.165.0 'uvicorn[standard]==0.54.0' asyncpg==0.32.0 >&2
  fi
}

# bench_peer POOL_SIZE: the peer (2 workers, POOL_SIZE sessions each) on database `peer` of the
# run's PostgreSQL; sets BENCH_PEER_PORT.
bench_peer() {
  pg_createdb "$BENCH_PG_PORT" peer
  psql -h 127.0.0.1 -p "$BENCH_PG_PORT" -U storekeeper -d peer -qf "$BENCH_PEER_DIR/schema.sql" >/dev/null
  BENCH_PEER_PORT=$(free_port 19100)
  PG_DSN="postgresql://storekeeper@127.0.0.1:$BENCH_PG_PORT/peer" POOL_SIZE=$1 \
    "$BENCH_PEER_VENV/bin/uvicorn" app:app --app-dir "$BENCH_PEER_DIR" --host 127.0.0.1 \
    --port "$BENCH_PEER_PORT" --workers 2 --loop uvloop --http httptools --no-access-log \
    --log-level warning >"$BENCH_TMP/peer.log" 2>&1 &
  BENCH_PIDS+=($!)
  bench_wait "$BENCH_PEER_PORT" /v1/products
}
