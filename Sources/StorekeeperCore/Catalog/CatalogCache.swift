import StorekeeperLogging
import Synchronization

/// The in-memory catalog every instance serves: the active products (with their storefront
/// prices, the offerings and placements built on them: `CatalogContents`), and what the edge
/// makes of them once per change (`Encoded`: its bodies, so that requests only copy bytes). Reloads are
/// coalesced: however many changes are announced while one reload runs, exactly one more
/// follows it.
package final class CatalogCache<Encoded: Sendable>: Sendable {
  /// The active products by id, and their encoding.
  package struct Snapshot: Sendable {
    package var byId: [String: Product]
    var encoded: Encoded
  }

  private struct State {
    var snapshot: Snapshot
    /// The ticket of the reload that produced `snapshot`; tickets are taken before reading.
    var snapshotTicket: UInt64 = 0
    var nextTicket: UInt64 = 0
    var reloading = false
    var reloadAgain = false
  }

  private let state: Mutex<State>
  private let repository: CatalogRepository
  private let encode: @Sendable (CatalogContents) throws -> Encoded
  private let logger: Logger

  /// `encode` makes the edge's form of the contents (of none before the first load).
  package init(
    repository: CatalogRepository, logger: Logger,
    encode: @escaping @Sendable (CatalogContents) throws -> Encoded
  ) rethrows {
    self.repository = repository
    self.encode = encode
    self.logger = logger
    state = Mutex(State(snapshot: Snapshot(byId: [:], encoded: try encode(.empty))))
  }

  package var snapshot: Snapshot { state.withLock { $0.snapshot } }

  /// Reads the encoding in place under the lock: copying the whole snapshot per request
  /// retained and released its tables, shared by every event-loop thread.
  package func read<T>(_ body: (borrowing Encoded) -> T) -> T {
    state.withLock { body($0.snapshot.encoded) }
  }

  /// Loads the active catalog now; throws if the database cannot be read.
  ///
  /// Two reloads may overlap (an admin write reloads at once while a NOTIFY-driven reload is
  /// still reading). One that started reading earlier may have seen older rows, so it never
  /// replaces the snapshot of one that started later: an admin reads their own write.
  package func reload() async throws {
    let ticket = state.withLock { state -> UInt64 in
      state.nextTicket += 1
      return state.nextTicket
    }
    let contents = try await repository.contents()
    let products = contents.products
    let snapshot = Snapshot(
      byId: Dictionary(products.map { ($0.productId, $0) }, uniquingKeysWith: { $1 }),
      encoded: try encode(contents))
    state.withLock { state in
      guard ticket > state.snapshotTicket else { return }
      state.snapshot = snapshot
      state.snapshotTicket = ticket
    }
    logger.debug("catalog loaded", ["products": .int(products.count)])
  }

  /// Asks for a reload from a notification or a reconnect; never throws, retries on failure.
  package func requestReload() {
    let start = state.withLock { state -> Bool in
      if state.reloading {
        state.reloadAgain = true
        return false
      }
      state.reloading = true
      return true
    }
    guard start else { return }
    Task {
      var attempt = 0
      while true {
        do {
          try await reload()
          attempt = 0
        } catch {
          attempt += 1
          logger.warning(
            "catalog reload failed", ["error": .string("\(error)"), "attempt": .int(attempt)])
          try? await Task.sleep(for: .milliseconds(min(5000, 100 * (1 << min(attempt, 6)))))
          continue
        }
        let again = state.withLock { state -> Bool in
          if state.reloadAgain {
            state.reloadAgain = false
            return true
          }
          state.reloading = false
          return false
        }
        if !again { return }
      }
    }
  }
}
