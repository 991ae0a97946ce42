import Postgres

/// Measures the read replica's lag on demand (for `/readyz` and `/metrics`): one statement on
/// the replica, one on the primary.
package struct ReplicaMonitor: Sendable {
  let replica: PostgresPool
  let primary: PostgresPool

  package init(replica: PostgresPool, primary: PostgresPool) {
    self.replica = replica
    self.primary = primary
  }

  package func measure() async -> ReplicaLag {
    let standby: PostgresRow?
    do {
      standby = try await replica.queryFirst(
        """
        SELECT pg_is_in_recovery() AS standby,
               pg_last_wal_replay_lsn()::text AS replayed,
               CASE WHEN NOT pg_is_in_recovery() THEN NULL
                    WHEN pg_last_wal_receive_lsn() IS NOT DISTINCT FROM pg_last_wal_replay_lsn()
                      THEN 0::float8
                    ELSE coalesce(extract(epoch FROM now() - pg_last_xact_replay_timestamp()), 0)::float8
               END AS seconds,
               CASE WHEN pg_is_in_recovery() THEN pg_is_wal_replay_paused() END AS paused
        """)
    } catch {
      return ReplicaLag(status: "unreachable")
    }
    guard let standby, (try? standby.decode("standby", as: Bool.self)) == true else {
      return ReplicaLag(status: "not_a_standby", seconds: 0, bytes: 0)
    }
    var lag = ReplicaLag(status: "streaming")
    lag.seconds = (try? standby.decodeIfPresent("seconds", as: Double.self)) ?? nil
    lag.replayPaused = (try? standby.decodeIfPresent("paused", as: Bool.self)) ?? nil
    if let replayed = (try? standby.decodeIfPresent("replayed", as: String.self)) ?? nil {
      // On the primary: its WAL position now, so an idle primary shows 0 once replayed.
      let row = try? await primary.queryFirst(
        """
        SELECT greatest(pg_wal_lsn_diff(pg_current_wal_lsn(), \(replayed)::pg_lsn), 0)::bigint
               AS bytes
        """)
      lag.bytes = row.flatMap { try? $0.decode("bytes", as: Int64.self) }
    }
    return lag
  }
}
