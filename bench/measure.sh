# Rate and latency of one measured run, for bench/*/run (source after bench/lib.sh). Every
# function prints "rate p50_ms p99_ms errors" on one line.

# wrk_measure URL CONNECTIONS DURATION [SCRIPT]: wrk's rate and latency percentiles; errors are
# non-2xx/3xx answers plus socket errors (a benchmark that counts refusals as speed is wrong).
wrk_measure() {
  local script=()
  [ -n "${4:-}" ] && script=(-s "$4")
  wrk -t2 -c"$2" -d"$3" --latency "${script[@]}" "$1" | awk '
    function ms(v) {
      if (v ~ /us$/) return v / 1000
      if (v ~ /ms$/) return v + 0
      if (v ~ /s$/) return v * 1000
      return v + 0
    }
    /Requests\/sec/ { rate = $2 }
    $1 == "50%" { p50 = ms($2) }
    $1 == "99%" { p99 = ms($2) }
    /Non-2xx or 3xx responses/ { nonok = $NF; errors += $NF; kinds = kinds " non-2xx=" $NF }
    # A script that counts every answer but 200 (bench/reports) says so; that count replaces
    # the non-2xx one, which it includes.
    /^Not-200 responses:/ { not200 = $NF; counted = 1 }
    /Socket errors/ {
      gsub(/,/, ""); errors += $4 + $6 + $8 + $10
      kinds = kinds " connect=" $4 " read=" $6 " write=" $8 " timeout=" $10
    }
    END {
      if (counted) { errors += not200 - nonok; kinds = kinds " not-200=" not200 }
      # Which kind the errors were goes to stderr: a refusal and a client timeout under a
      # loaded machine call for different conclusions.
      if (errors > 0) printf "wrk errors against %s:%s\n", url, kinds > "/dev/stderr"
      printf "%.0f %.2f %.2f %d\n", rate, p50, p99, errors
    }' url="$1"
}

# pgbench_measure CLIENTS SECONDS SCRIPT DATABASE [pgbench options…]: transactions per second
# (without connection time) and the latency percentiles of every transaction (pgbench -l).
pgbench_measure() {
  local clients=$1 seconds=$2 file=$3 database=$4
  shift 4
  local logs
  logs=$(mktemp -d "$BENCH_TMP/pgbench.XXXXXX")
  local out
  out=$(cd "$logs" && pgbench -n -h 127.0.0.1 -p "$BENCH_PG_PORT" -U storekeeper -c "$clients" -j 2 \
    -T "$seconds" -l --log-prefix="$logs/tx" "$@" -f "$file" "$database" 2>"$logs/stderr") || {
    echo "pgbench failed:" >&2
    cat "$logs/stderr" >&2
    echo "0 0 0 1"
    return 0
  }
  local tps failed
  tps=$(awk '/^tps/ { print $3; exit }' <<<"$out")
  failed=$(awk '/number of failed transactions/ { print $5; exit }' <<<"$out")
  cat "$logs"/tx.* | awk '{ print $3 }' | sort -n | awk -v tps="$tps" -v failed="${failed:-0}" '
    { v[NR] = $1 }
    END {
      p50 = NR ? v[int((NR - 1) * 0.50) + 1] : 0
      p99 = NR ? v[int((NR - 1) * 0.99) + 1] : 0
      printf "%.0f %.2f %.2f %d\n", tps, p50 / 1000, p99 / 1000, failed
    }'
  rm -rf "$logs"
}

# spread VALUES…: "min–max" of the values.
spread() {
  printf '%s\n' "$@" | sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%s–%s", lo, hi }'
}
