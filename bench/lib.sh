# Shared by bench/*/run: a release build, a throwaway PostgreSQL, Storekeeper, nginx, wrk.
# Source after scripts/lib/common.sh. Every bench prints its figures and the ratio against a
# baseline measured in the same run, on the same machine, with the same settings.

bench_setup() {
  ensure_packages "${STOREKEEPER_PACKAGES[@]}" wrk nginx-light
  ensure_swift
  BENCH_TMP=$(mktemp -d /tmp/storekeeper-bench.XXXXXX)
  BENCH_PIDS=()
  trap bench_cleanup EXIT
  # BENCH_BIN: a release binary built before (another commit's, for a before/after pair of
  # runs back to back) instead of building this tree's.
  if [ -n "${BENCH_BIN:-}" ]; then
    [ -x "$BENCH_BIN" ] || { echo "BENCH_BIN $BENCH_BIN is not an executable" >&2; return 1; }
    return 0
  fi
  swift build -c release --product storekeeper >&2
  BENCH_BIN="$(swift build -c release --show-bin-path)/storekeeper"
}

bench_cleanup() {
  for pid in "${BENCH_PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  [ -n "${BENCH_PG_PORT:-}" ] && pg_stop "$BENCH_TMP/pg"
  rm -rf "$BENCH_TMP"
}

# Starts PostgreSQL (fsync on, as in production) and a database; sets DATABASE_URL.
bench_postgres() {
  BENCH_PG_PORT=$(free_port 26432)
  # Room for every side of a 64-connection run at once: two servers' pools, the peer's and
  # pgbench's sessions (200 ran out at 64 connections).
  PG_MAX_CONNECTIONS=${PG_MAX_CONNECTIONS:-400} pg_start "$BENCH_TMP/pg" "$BENCH_PG_PORT"
  pg_createdb "$BENCH_PG_PORT" bench
  export DATABASE_URL="postgresql://storekeeper@127.0.0.1:$BENCH_PG_PORT/bench"
}

# Starts Storekeeper (release, access log off) on a free port; sets BENCH_PORT.
bench_storekeeper() {
  BENCH_PORT=$(free_port 18580)
  BENCH_ADMIN_TOKEN=$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')
  # APP_AUTH=none: the benchmarks measure the server, not token checks (a private network).
  # wrk sends everything from one address, far past any limit a real client would meet: the
  # rate limits are off here (the open-order cap stays at its default; the Lua script spreads
  # orders over enough users to stay under it).
  RATE_LIMIT_PER_ADDRESS=${RATE_LIMIT_PER_ADDRESS:-off} RATE_LIMIT_PER_USER=${RATE_LIMIT_PER_USER:-off} \
  HOST=127.0.0.1 PORT=$BENCH_PORT APPLE_BUNDLE_ID=com.example.bench LOG_LEVEL=warning \
    APP_AUTH=none APPLE_APP_APPLE_ID=1234567890 \
    ADMIN_TOKENS="bench:$BENCH_ADMIN_TOKEN" MIGRATIONS_DIR="$PWD/Migrations" OPENAPI_PATH="$PWD/openapi.yaml" \
    "$BENCH_BIN" serve >"$BENCH_TMP/storekeeper.log" 2>&1 &
  BENCH_PIDS+=($!)
  bench_wait "$BENCH_PORT" /readyz
}

# bench_nginx ROOT_DIR: nginx serving ROOT_DIR statically with the same worker count.
# BENCH_NGINX_CONNECTIONS: connections per worker (default 4096).
bench_nginx() {
  BENCH_NGINX_PORT=$(free_port 18680)
  local tmp=$BENCH_TMP
  cat >"$tmp/nginx.conf" <<CONF
daemon off;
worker_processes $(nproc);
pid $tmp/nginx.pid;
error_log $tmp/nginx-error.log warn;
worker_rlimit_nofile $((2 * ${BENCH_NGINX_CONNECTIONS:-4096} + 64));
events { worker_connections ${BENCH_NGINX_CONNECTIONS:-4096}; }
http {
  access_log off;
  client_body_temp_path $tmp/body;
  proxy_temp_path $tmp/proxy;
  fastcgi_temp_path $tmp/fastcgi;
  uwsgi_temp_path $tmp/uwsgi;
  scgi_temp_path $tmp/scgi;
  keepalive_requests 100000000;
  etag on;
  server {
    listen 127.0.0.1:$BENCH_NGINX_PORT;
    root $1;
    default_type application/json;
    add_header Cache-Control no-cache;
  }
}
CONF
  nginx -c "$tmp/nginx.conf" -p "$tmp" 2>"$tmp/nginx.stderr" &
  BENCH_PIDS+=($!)
}

bench_wait() {
  for _ in $(seq 150); do
    curl -sf "http://127.0.0.1:$1$2" >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  echo "nothing answers on port $1$2" >&2
  cat "$BENCH_TMP"/*.log >&2 2>/dev/null || true
  return 1
}

# wrk_rate URL CONNECTIONS DURATION [SCRIPT]: requests per second.
wrk_rate() {
  local script=()
  [ -n "${4:-}" ] && script=(-s "$4")
  wrk -t2 -c"$2" -d"$3" "${script[@]}" "$1" | awk '/Requests\/sec/ { print $2 }'
}

best() { awk -v a="$1" -v b="$2" 'BEGIN { print (b > a ? b : a) }'; }

# cpu_ticks PID...: CPU clock ticks (getconf CLK_TCK per second) the processes have used so
# far, all threads; a process already gone counts 0.
cpu_ticks() {
  local total=0 pid
  for pid in "$@"; do total=$((total + $(awk '{ print $14 + $15 }' "/proc/$pid/stat" 2>/dev/null || echo 0))); done
  echo "$total"
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }
