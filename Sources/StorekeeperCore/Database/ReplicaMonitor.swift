import Postgres
import Synchronization

/// Measures the read replica's lag on demand (for `/readyz` and `/metrics`): one statement on
/// the replica, one on the primary, within `limit`.
package struct ReplicaMonitor: Sendable {
  let replica: PostgresPool
  let primary: PostgresPool
  /// How long a measurement may take. A replica that accepts connections but never answers
  /// (frozen, or behind a black-holing network) would otherwise hold every readiness probe
  /// past its own timeout, and take instances whose primary is fine out of rotation.
  let limit: Duration

  package init(replica: PostgresPool, primary: PostgresPool, limit: Duration = .milliseconds(500)) {
    self.replica = replica
    self.primary = primary
    self.limit = limit
  }

  /// The lag, or `timeout` when it could not be measured within `limit`. The measurement
  /// left behind is cancelled, not awaited (a connection attempt may not notice at once).
  package func measure() async -> ReplicaLag {
    let answer = FirstAnswer()
    return await withCheckedContinuation { continuation in
      answer.wait(continuation)
      let work = Task { _ = answer.give(await measureNow()) }
      Task { [limit] in
        try? await Task.sleep(for: limit)
        if answer.give(ReplicaLag(status: "timeout")) { work.cancel() }
      }
    }
  }

  /// The measurement's or the timer's answer, whichever comes first; the other is dropped.
  private final class FirstAnswer: Sendable {
    private let waiting = Mutex<CheckedContinuation<ReplicaLag, Never>?>(nil)

    func wait(_ continuation: CheckedContinuation<ReplicaLag, Never>) {
      waiting.withLock { $0 = continuation }
    }

    func give(_ lag: ReplicaLag) -> Bool {
      guard let continuation = waiting.withLock({ $0.take() }) else { return false }
      continuation.resume(returning: lag)
      return true
    }
  }

  private func measureNow() async -> ReplicaLag {
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
