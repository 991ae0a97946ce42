# Shared by scripts/run, scripts/test and bench/*: installs what is missing and runs a private
# PostgreSQL cluster. Source it; it defines functions only.

# Debian packages the project needs to build, test and run.
STOREKEEPER_PACKAGES=(postgresql libpq-dev libssl-dev pkg-config openssl curl)

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
    -o "-p $port -k $data -c listen_addresses=127.0.0.1 -c max_connections=200 -c fsync=${PG_FSYNC:-on}" start >/dev/null \
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
