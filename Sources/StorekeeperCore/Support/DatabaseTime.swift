import Foundation
import Postgres
import StorekeeperLogging
import Synchronization

/// The time Storekeeper keeps: PostgreSQL's. The statements compare with the database's
/// `now()` (claims, leases, `first_attempt_at`), and every instance writes the times it reads
/// from its `WallClock` beside them (an event's state, the expiry sweep, a retry's due time):
/// read from each machine's own clock, one machine whose clock is ahead would write the
/// future for every instance to meet (a user's `last_state_at` keeps the latest time an append
/// used). So each instance anchors its clock on PostgreSQL's `clock_timestamp()`, read at the
/// midpoint of a round trip, and counts on from it with this machine's monotonic clock, which
/// no step of the wall clock moves; `serve` reads it again every `refreshIntervalMs`, so the
/// two clocks' drift never adds up. Before the first reading it is this machine's clock.
package final class DatabaseTime: Sendable {
  /// One reading of PostgreSQL's clock.
  package struct Anchor: Sendable {
    /// PostgreSQL's `clock_timestamp()`, and the instant on this machine's monotonic clock it
    /// is taken to be at (the middle of the round trip that read it).
    package var database: Date
    package var instant: ContinuousClock.Instant
    /// This machine's own clock minus PostgreSQL's at that instant, in ms (ahead: positive).
    package var offsetMs: Int64
    package var roundTrip: Duration
  }

  /// How far this machine's clock may be from PostgreSQL's before the log says so.
  package static let warnAfterMs: Int64 = 1_000
  /// How often `serve` reads PostgreSQL's clock again.
  package static let refreshIntervalMs: Int64 = 30_000
  /// Round trips taken per reading; the shortest one's midpoint is kept (the first may open
  /// the session, or prepare the statement).
  static let samples = 3
  /// A later reading slower than this is dropped: the middle of its round trip may be this far
  /// from when PostgreSQL read its clock, more than the monotonic clock drifts between readings.
  static let longestRoundTrip = Duration.seconds(1)

  private struct State {
    var anchor: Anchor?
    /// Whether the log said this machine's clock is off (said once, until it is right again).
    var warned = false
  }

  private let state = Mutex(State())
  private let local: @Sendable () -> Date
  private let logger: Logger

  /// `local` is this machine's clock (a test gives one that is wrong).
  package init(logger: Logger, local: @escaping @Sendable () -> Date = { Date() }) {
    self.logger = logger
    self.local = local
  }

  /// PostgreSQL's time now: the last reading plus the monotonic time elapsed since.
  package var now: Date {
    guard let anchor = state.withLock({ $0.anchor }) else { return local() }
    return anchor.database.addingTimeInterval(Self.seconds(ContinuousClock.now - anchor.instant))
  }

  /// The clock the domain reads.
  package var clock: WallClock { WallClock { [self] in now } }

  /// The reading in use; nil before the first.
  package var anchor: Anchor? { state.withLock { $0.anchor } }

  /// Reads PostgreSQL's clock and counts from it from now on; says in the log, once, when this
  /// machine's clock is more than `warnAfterMs` off, and when it is right again. Throws when
  /// the database cannot be read, keeping the previous reading.
  @discardableResult
  package func read(_ database: PostgresPool) async throws -> Anchor {
    // Every sample on one session: timed through the pool, a sample would count its wait for
    // a connection as round trip, and under load the anchor would land that much early.
    let best = try await database.withTransaction { tx in
      var shortest = try await sample(tx)
      for _ in 1..<Self.samples {
        let next = try await sample(tx)
        if next.roundTrip < shortest.roundTrip { shortest = next }
      }
      return shortest
    }
    let (kept, warn, cleared) = state.withLock { state -> (Bool, Bool, Bool) in
      guard state.anchor == nil || best.roundTrip <= Self.longestRoundTrip else {
        return (false, false, false)
      }
      state.anchor = best
      let off = abs(best.offsetMs) > Self.warnAfterMs
      let (warn, cleared) = (off && !state.warned, !off && state.warned)
      state.warned = off
      return (true, warn, cleared)
    }
    let fields: [String: LogValue] = [
      "offset_ms": .int(Int(best.offsetMs)),
      "round_trip_ms": .int(Self.milliseconds(best.roundTrip)),
    ]
    if !kept {
      logger.info("PostgreSQL's clock read too slowly; counting on from the last reading", fields)
    } else if warn {
      logger.warning(
        "this machine's clock differs from PostgreSQL's by more than a second; Storekeeper keeps PostgreSQL's time",
        fields)
    } else if cleared {
      logger.notice("this machine's clock agrees with PostgreSQL's again", fields)
    }
    return best
  }

  /// `read` for the periodic reading: a reading that fails keeps the previous one.
  package func refresh(_ database: PostgresPool) async {
    do { try await read(database) } catch {
      logger.warning(
        "PostgreSQL's clock could not be read; counting on from the last reading",
        ["error": .string("\(error)")])
    }
  }

  private func sample(_ session: any PostgresExecutor) async throws -> Anchor {
    let (localBefore, before) = (local(), ContinuousClock.now)
    let row = try await session.queryFirst(
      "SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::bigint AS us")
    let (after, localAfter) = (ContinuousClock.now, local())
    let micros: Int64 = try row?.decode("us") ?? 0
    let roundTrip = after - before
    let database = Date(timeIntervalSince1970: Double(micros) / 1_000_000)
    let localMiddle = localBefore.addingTimeInterval(localAfter.timeIntervalSince(localBefore) / 2)
    return Anchor(
      database: database, instant: before + roundTrip / 2,
      offsetMs: Int64((localMiddle.timeIntervalSince(database) * 1000).rounded()),
      roundTrip: roundTrip)
  }

  private static func seconds(_ duration: Duration) -> TimeInterval {
    let (seconds, attoseconds) = duration.components
    return TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18
  }

  private static func milliseconds(_ duration: Duration) -> Int {
    Int((seconds(duration) * 1000).rounded())
  }
}
