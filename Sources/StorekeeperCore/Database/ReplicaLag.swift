/// How far the read replica is behind the primary, as `/readyz` and `/metrics` report it.
///
/// `bytes` is the primary's current WAL position minus the replica's replayed position: the
/// authoritative measure, right even when the primary is idle or the replica has stopped
/// receiving. `seconds` is 0 when the replica has replayed everything it received, else the
/// age of the last transaction it replayed — `now() - pg_last_xact_replay_timestamp()` alone
/// would grow while an idle primary commits nothing, which is no lag at all.
package struct ReplicaLag: Encodable, Sendable {
  /// `streaming` (a standby answering), `not_a_standby` (the URL reaches a server that is not
  /// in recovery: it cannot lag, but it is not a replica either), `unreachable`, `timeout`
  /// (no answer within the monitor's limit).
  package var status: String
  package var seconds: Double?
  package var bytes: Int64?
  /// True while replay is paused (`pg_wal_replay_pause()`): lag then grows on purpose.
  var replayPaused: Bool?

  private enum CodingKeys: String, CodingKey {
    case status
    case seconds = "lag_seconds"
    case bytes = "lag_bytes"
    case replayPaused = "replay_paused"
  }
}
