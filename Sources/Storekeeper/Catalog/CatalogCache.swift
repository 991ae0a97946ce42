import StorekeeperLogging
import Synchronization

/// The in-memory catalog every instance serves. Reloads are coalesced: however many changes
/// are announced while one reload runs, exactly one more follows it.
final class CatalogCache: Sendable {
  private struct State {
    var snapshot = CatalogSnapshot.empty
    /// The ticket of the reload that produced `snapshot`; tickets are taken before reading.
    var snapshotTicket: UInt64 = 0
    var nextTicket: UInt64 = 0
    var reloading = false
    var reloadAgain = false
  }

  private let state = Mutex(State())
  private let repository: CatalogRepository
  private let logger: Logger

  init(repository: CatalogRepository, logger: Logger) {
    self.repository = repository
    self.logger = logger
  }

  var snapshot: CatalogSnapshot { state.withLock { $0.snapshot } }

  /// What `GET /v1/products` serves. Read in place under the lock: copying the whole snapshot
  /// per request retained and released its tables, shared by every event-loop thread.
  var list: CatalogSnapshot.Entry { state.withLock { $0.snapshot.list } }

  /// What `GET /v1/products/{product_id}` serves, read in place as `list` is.
  func entry(_ productId: String) -> CatalogSnapshot.Entry? {
    state.withLock { $0.snapshot.products[productId] }
  }

  /// Loads the active catalog now; throws if the database cannot be read.
  ///
  /// Two reloads may overlap (an admin write reloads at once while a NOTIFY-driven reload is
  /// still reading). One that started reading earlier may have seen older rows, so it never
  /// replaces the snapshot of one that started later: an admin reads their own write.
  func reload() async throws {
    let ticket = state.withLock { state -> UInt64 in
      state.nextTicket += 1
      return state.nextTicket
    }
    let products = try await repository.activeProducts()
    let snapshot = try CatalogSnapshot(products: products)
    state.withLock { state in
      guard ticket > state.snapshotTicket else { return }
      state.snapshot = snapshot
      state.snapshotTicket = ticket
    }
    logger.debug("catalog loaded", ["products": .int(products.count)])
  }

  /// Asks for a reload from a notification or a reconnect; never throws, retries on failure.
  func requestReload() {
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
