import Synchronization

/// Remembers the parse of recently seen header segments. Apple signs every token of a period
/// with the same header (the x5c chain), so the base64 and JSON work of a 5 KB header is done
/// once instead of per token. Keyed by the exact segment bytes: it caches parsing only, never
/// trust, which stays with `ChainCache`.
final class HeaderMemo: Sendable {
  private struct State {
    var entries: [Key: ParsedHeader] = [:]
    var order: [Key] = []
  }

  private let capacity: Int
  private let state = Mutex(State())

  init(capacity: Int) {
    self.capacity = max(1, capacity)
  }

  func parse(_ segment: ArraySlice<UInt8>) -> Result<ParsedHeader, RefusalReason> {
    // Own copy of the bytes, so the memo never pins a whole token.
    let key = Key(bytes: Array(segment))
    if let known = state.withLock({ $0.entries[key] }) { return .success(known) }
    let result = ParsedHeader.parse(segment)
    if case .success(let parsed) = result {
      state.withLock { state in
        if state.entries.updateValue(parsed, forKey: key) == nil { state.order.append(key) }
        while state.order.count > capacity { state.entries[state.order.removeFirst()] = nil }
      }
    }
    return result
  }

  /// Hashes the bytes in one call (an `[UInt8]` key would feed the hasher byte by byte).
  private struct Key: Hashable, Sendable {
    var bytes: [UInt8]

    func hash(into hasher: inout Hasher) {
      bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
    }
  }
}
