import Synchronization

/// Chains already verified, keyed by the SHA-256 of their concatenated DER, so a token signed
/// by a known chain costs one ES256 check. Bounded; the oldest entry leaves first.
final class ChainCache: Sendable {
  private struct State {
    var entries: [[UInt8]: ChainVerifier.Verified] = [:]
    var order: [[UInt8]] = []
  }

  private let capacity: Int
  private let state = Mutex(State())

  init(capacity: Int) {
    self.capacity = max(1, capacity)
  }

  /// The cached chain for `fingerprint` if `seconds` lies in the span it was found valid for.
  func lookup(_ fingerprint: [UInt8], at seconds: Int64) -> ChainVerifier.Verified? {
    state.withLock { state in
      guard let entry = state.entries[fingerprint],
        entry.validFrom <= seconds, seconds <= entry.validUntil
      else { return nil }
      return entry
    }
  }

  func store(_ verified: ChainVerifier.Verified, for fingerprint: [UInt8]) {
    state.withLock { state in
      if state.entries.updateValue(verified, forKey: fingerprint) == nil {
        state.order.append(fingerprint)
      }
      while state.order.count > capacity {
        state.entries[state.order.removeFirst()] = nil
      }
    }
  }

  var count: Int { state.withLock { $0.entries.count } }
}
