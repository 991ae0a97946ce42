import StorekeeperCore

/// `/metrics` lines about the connections themselves: sessions each pool holds (what this
/// instance costs PgBouncer or PostgreSQL; the LISTEN session, one per instance, comes on top)
/// and, with a replica, its lag.
struct DatabaseMetrics: Sendable {
  let pools: DatabasePools

  func lines() async -> [String] {
    var lines = [
      "# HELP storekeeper_db_sessions Database sessions this instance holds open, by pool.",
      "# TYPE storekeeper_db_sessions gauge",
      "storekeeper_db_sessions{pool=\"primary\"} \(pools.primary.openSessions)",
    ]
    guard let replica = pools.replica else {
      // The heavy reads' own connections to the primary (or its pooler).
      lines.append("storekeeper_db_sessions{pool=\"reads\"} \(pools.reads.openSessions)")
      return lines
    }
    lines.append("storekeeper_db_sessions{pool=\"replica\"} \(replica.openSessions)")
    let lag = await ReplicaMonitor(replica: replica, primary: pools.primary).measure()
    lines += [
      "# HELP storekeeper_replica_up 1 when the read replica answers as a standby.",
      "# TYPE storekeeper_replica_up gauge",
      "storekeeper_replica_up \(lag.status == "streaming" ? 1 : 0)",
    ]
    if let bytes = lag.bytes {
      lines += [
        "# HELP storekeeper_replica_lag_bytes WAL the replica has not replayed yet (primary's position minus replayed).",
        "# TYPE storekeeper_replica_lag_bytes gauge",
        "storekeeper_replica_lag_bytes \(bytes)",
      ]
    }
    if let seconds = lag.seconds {
      lines += [
        "# HELP storekeeper_replica_lag_seconds Age of the last replayed transaction while WAL waits to be replayed; 0 when caught up.",
        "# TYPE storekeeper_replica_lag_seconds gauge",
        "storekeeper_replica_lag_seconds \(seconds)",
      ]
    }
    return lines
  }
}
