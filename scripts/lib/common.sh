# Shared by scripts/run, scripts/test and bench/*: installs what is missing and runs a private
# PostgreSQL cluster. Source it; it defines functions only.

# Debian packages the project needs to build, test and run.
STOREKEEPER_PACKAGES=(postgresql libpq-dev libssl-dev libcurl4-openssl-dev pkg-config openssl curl ca-certificates)

as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi
}

ensure_packages() {
  local missing=()
  for pkg in "$@"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "==> installing ${missing[*]}" >&2
  as_root apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
}

ensure_swift() {
  if ! command -v swift >/dev/null 2>&1; then
    [ -x /opt/swift/usr/bin/swift ] && export PATH="/opt/swift/usr/bin:$PATH"
  fi
  command -v swift >/dev/null 2>&1 || { echo "swift not found (expected on PATH or in /opt/swift)" >&2; return 1; }
}

pg_bindir() {
  local dir
  dir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
  [ -n "$dir" ] || { echo "PostgreSQL server binaries not found under /usr/lib/postgresql" >&2; return 1; }
  echo "$dir"
}

# PostgreSQL refuses to run as root: as root, the cluster belongs to the 'postgres' system user.
pg_user() {
  if [ "$(id -u)" = 0 ]; then echo postgres; else id -un; fi
}

as_pg_user() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

# A port nobody listens on, starting from $1.
free_port() {
  local port=$1
  while (echo >/dev/tcp/127.0.0.1/"$port") 2>/dev/null; do port=$((port + 1)); done
  echo "$port"
}

# pg_start DATADIR PORT: creates the cluster if needed and starts it on 127.0.0.1:PORT.
pg_start() {
  local data=$1 port=$2 bin
  bin=$(pg_bindir) || return 1
  mkdir -p "$data"
  if [ "$(id -u)" = 0 ]; then
    chown postgres:postgres "$data"
    # The postgres user must be able to reach the directory.
    local d=$data
    while [ "$d" != / ]; do d=$(dirname "$d"); chmod o+x "$d" 2>/dev/null || true; done
  fi
  chmod 700 "$data"
  if [ ! -f "$data/PG_VERSION" ]; then
    as_pg_user "$bin/initdb" -D "$data" -U storekeeper --auth=trust --encoding=UTF8 --locale=C.UTF-8 >/dev/null || return 1
  fi
  as_pg_user "$bin/pg_ctl" -D "$data" -l "$data/server.log" -w -t 60 \
    -o "-p $port -k $data -c listen_addresses=127.0.0.1 -c max_connections=${PG_MAX_CONNECTIONS:-200} -c fsync=${PG_FSYNC:-on}" start >/dev/null \
    || { cat "$data/server.log" >&2; return 1; }
}

pg_stop() {
  local data=$1 bin
  bin=$(pg_bindir) || return 1
  [ -f "$data/postmaster.pid" ] && as_pg_user "$bin/pg_ctl" -D "$data" -m fast -w stop >/dev/null 2>&1
  return 0
}

# pg_createdb PORT NAME: creates the database if it does not exist.
pg_createdb() {
  local port=$1 name=$2
  if ! psql -h 127.0.0.1 -p "$port" -U storekeeper -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname = '$name'" | grep -q 1; then
    psql -h 127.0.0.1 -p "$port" -U storekeeper -d postgres -qc "CREATE DATABASE \"$name\"" >/dev/null
  fi
}

# The directory's owner must be the PostgreSQL user (when root), reachable, and private.
pg_own_dir() {
  local dir=$1
  mkdir -p "$dir"
  if [ "$(id -u)" = 0 ]; then
    chown postgres:postgres "$dir"
    local d=$dir
    while [ "$d" != / ]; do d=$(dirname "$d"); chmod o+x "$d" 2>/dev/null || true; done
  fi
  chmod 700 "$dir"
}

# pg_start_replica PRIMARY_PORT DATADIR PORT: a hot-standby streaming replica of the cluster on
# PRIMARY_PORT (pg_basebackup -R; the primary's initdb defaults allow replication from
# 127.0.0.1 and wal_level is replica), started on 127.0.0.1:PORT. It streams from a replication
# slot of its own, so the primary keeps every WAL segment it has not replayed: the e2e suite
# creates many databases (each CREATE DATABASE logs the whole template), and a replica behind
# a recycled segment could never catch up.
pg_start_replica() {
  local primary=$1 data=$2 port=$3 bin
  bin=$(pg_bindir) || return 1
  pg_own_dir "$data"
  if [ ! -f "$data/PG_VERSION" ]; then
    as_pg_user "$bin/pg_basebackup" -h 127.0.0.1 -p "$primary" -U storekeeper -D "$data" \
      -R -X stream -C -S "replica_$port" -c fast 2> >(grep -v "skipping special file" >&2) >/dev/null || return 1
  fi
  as_pg_user "$bin/pg_ctl" -D "$data" -l "$data/server.log" -w -t 60 \
    -o "-p $port -k $data -c listen_addresses=127.0.0.1 -c max_connections=${PG_MAX_CONNECTIONS:-200} -c fsync=${PG_FSYNC:-on} -c hot_standby=on" \
    start >/dev/null || { cat "$data/server.log" >&2; return 1; }
}

# pgbouncer_start DIR PORT PRIMARY_PORT [MODE]: PgBouncer (Debian's) on 127.0.0.1:PORT in
# front of every database on PRIMARY_PORT, in transaction pooling mode unless told; config,
# log and pid file under DIR. The 'pgbouncer' admin database answers SHOW POOLS etc.
pgbouncer_start() {
  local dir=$1 port=$2 primary=$3 mode=${4:-transaction} i
  pg_own_dir "$dir"
  cat >"$dir/pgbouncer.ini" <<INI
[databases]
* = host=127.0.0.1 port=$primary
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $port
unix_socket_dir =
auth_type = trust
auth_file = $dir/users.txt
admin_users = storekeeper
pool_mode = $mode
max_client_conn = 2000
default_pool_size = 20
logfile = $dir/pgbouncer.log
pidfile = $dir/pgbouncer.pid
INI
  echo '"storekeeper" ""' >"$dir/users.txt"
  [ "$(id -u)" = 0 ] && chown postgres:postgres "$dir/pgbouncer.ini" "$dir/users.txt"
  as_pg_user "$(command -v pgbouncer || echo /usr/sbin/pgbouncer)" -d -q "$dir/pgbouncer.ini" || return 1
  for i in $(seq 1 100); do
    (echo >/dev/tcp/127.0.0.1/"$port") 2>/dev/null && return 0
    sleep 0.05
  done
  echo "PgBouncer did not start listening on $port" >&2
  cat "$dir/pgbouncer.log" >&2
  return 1
}

pgbouncer_stop() {
  local dir=$1 pid i
  [ -f "$dir/pgbouncer.pid" ] || return 0
  pid=$(cat "$dir/pgbouncer.pid")
  kill "$pid" 2>/dev/null || return 0
  for i in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.05; done
  kill -9 "$pid" 2>/dev/null
  return 0
}
