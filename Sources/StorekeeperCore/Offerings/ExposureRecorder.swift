import Postgres
import Synchronization

/// Records first exposures off the request's path: a request only appends to a buffer in
/// memory, and a background loop writes the buffer in one transaction per flush (the rows, and
/// an `experiment.exposed` event for each user seen for the first time). The primary key
/// (experiment, user) keeps the first exposure whichever instance or flush saw it first.
///
/// Memory is bounded: a user already recorded by this instance is skipped (a bounded set of
/// recent keys), and when `maxPending` exposures wait (the database unreachable), newer ones
/// are dropped and counted; a dropped user is recorded at their next exposure.
package final class ExposureRecorder: Sendable {
  private struct State {
    var pending: [(key: ExposureKey, exposure: Exposure)] = []
    /// Every key pending or written by this instance since it was last cleared: one probe
    /// (an insert that finds the key) decides a request, where a set of pending keys and one of
    /// written keys took two lookups of tables too large for the cache.
    var seen: Set<ExposureKey> = []
    /// How many keys in `seen` were written; at `maxRecent` the written ones are forgotten.
    var recentCount = 0
    var dropped: Int = 0
    var written: Int = 0
    /// Batches taken and not yet written or put back, and who waits for there to be none.
    var inFlight = 0
    var idle: [CheckedContinuation<Void, Never>] = []
  }

  private let state = Mutex(State())
  let database: PostgresPool
  let outbox: EventOutbox
  let maxPending: Int
  let maxRecent: Int
  /// Asks the flushing loop to run now (a full batch); nil: wait for its tick.
  private let wake: @Sendable () -> Void
  package let batchSize: Int

  package init(
    database: PostgresPool, outbox: EventOutbox, batchSize: Int = 500, maxPending: Int = 100_000,
    maxRecent: Int = 200_000, wake: @escaping @Sendable () -> Void = {}
  ) {
    self.database = database
    self.outbox = outbox
    self.batchSize = batchSize
    self.maxPending = maxPending
    self.maxRecent = maxRecent
    self.wake = wake
  }

  /// Called by the request that served the variant; never waits on the database.
  package func record(_ exposure: Exposure) {
    record(
      ExperimentAssignment.key(experimentId: exposure.experimentId, userId: exposure.userId)
    ) { exposure }
  }

  /// `key` is the assignment's (`ExperimentAssignment.key`); `exposure` is made only for a
  /// user not seen yet, so the common request, a user already recorded, builds nothing.
  package func record(_ key: ExposureKey, _ exposure: () -> Exposure) {
    let full = state.withLock { state -> Bool in
      guard state.seen.insert(key).inserted else { return false }
      guard state.pending.count < maxPending else {
        state.seen.remove(key)
        state.dropped += 1
        return false
      }
      state.pending.append((key, exposure()))
      return state.pending.count == batchSize
    }
    if full { wake() }
  }

  /// Exposures waiting, dropped since start, and first exposures written by this instance.
  package var counts: (pending: Int, dropped: Int, written: Int) {
    state.withLock { ($0.pending.count, $0.dropped, $0.written) }
  }

  /// Writes what is pending, `batchSize` at a time, and returns once no batch another flush
  /// took is still being written either (what was served before the call is in the database:
  /// a conclusion counts it); on failure the batch goes back to the front of the buffer and
  /// the error is thrown for the loop to log.
  package func flush() async throws {
    while true {
      let batch = state.withLock { state -> [(key: ExposureKey, exposure: Exposure)] in
        let batch = Array(state.pending.prefix(batchSize))
        state.pending.removeFirst(batch.count)
        if !batch.isEmpty { state.inFlight += 1 }
        return batch
      }
      guard !batch.isEmpty else { break }
      do {
        let written = try await write(batch.map(\.exposure))
        landed {
          if $0.recentCount + batch.count > maxRecent {
            // Forget what was written, not what still waits (nor this batch, as before).
            $0.seen.removeAll()
            for entry in $0.pending { $0.seen.insert(entry.key) }
            for (key, _) in batch { $0.seen.insert(key) }
            $0.recentCount = 0
          }
          $0.recentCount += batch.count
          $0.written += written
        }
      } catch {
        landed { $0.pending.insert(contentsOf: batch, at: 0) }
        throw error
      }
    }
    await withCheckedContinuation { (idle: CheckedContinuation<Void, Never>) in
      let now = state.withLock { state -> Bool in
        if state.inFlight == 0 { return true }
        state.idle.append(idle)
        return false
      }
      if now { idle.resume() }
    }
  }

  /// Ends a batch's flight with `change`, and wakes who waited for the last one.
  private func landed(_ change: (inout State) -> Void) {
    let waiting = state.withLock { state -> [CheckedContinuation<Void, Never>] in
      change(&state)
      state.inFlight -= 1
      guard state.inFlight == 0 else { return [] }
      defer { state.idle = [] }
      return state.idle
    }
    for waiter in waiting { waiter.resume() }
  }

  /// One transaction: the users' event sequences locked in one order (two instances flushing
  /// the same users wait instead of deadlocking), the exposures inserted where none exists,
  /// and an event for each row inserted. A row another instance wrote first with a later time
  /// (its flush came first, this one's was retried) takes the earlier time, so the window
  /// counts from when the user was really first exposed; no second event is written. Returns
  /// how many were first exposures. An exposure of
  /// an experiment that is no longer running (concluded meanwhile) is kept: it was served.
  func write(_ batch: [Exposure]) async throws -> Int {
    let json = try JSONCoding.text(batch)
    // The events are appended by the same statement that inserts the rows, one round trip a
    // batch rather than one per user (a fresh audience is a batch of 500 first exposures).
    let event: PostgresQuery = """
      jsonb_build_array(jsonb_build_object('type', \(EventType.experimentExposed.rawValue)::text,
        'data', jsonb_build_object('experiment_id', experiment_id, 'variant', variant,
          'exposed_at', \(unescaped: SQLTime.text("exposed_at")))))
      """
    var query: PostgresQuery = """
      WITH inserted AS (
        INSERT INTO experiment_exposures (experiment_id, user_id, variant, exposed_at)
        SELECT x->>'experiment_id', x->>'user_id', x->>'variant',
               to_timestamp((x->>'at_ms')::bigint / 1000.0)
        FROM jsonb_array_elements(\(json)::jsonb) x
        WHERE EXISTS (SELECT 1 FROM experiments e WHERE e.experiment_id = x->>'experiment_id')
        ORDER BY x->>'user_id'
        ON CONFLICT (experiment_id, user_id) DO UPDATE SET exposed_at = EXCLUDED.exposed_at
          WHERE EXCLUDED.exposed_at < experiment_exposures.exposed_at
        RETURNING experiment_id, user_id, variant, exposed_at, xmax = 0 AS fresh
      )
      """
    query.append(" SELECT ")
    query.append(try outbox.call(user: "i.user_id", events: event))
    query.append(" AS written FROM (SELECT * FROM inserted WHERE fresh ORDER BY user_id) i")
    return try await database.withTransaction { [query] tx in
      try await outbox.lock(batch.map(\.userId), on: tx)
      return try await tx.query(query).count
    }
  }
}
