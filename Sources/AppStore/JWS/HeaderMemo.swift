import Synchronization

/// Remembers the parse of recently seen header segments. Apple signs every token of a period
/// with the same header (the x5c chain), so the base64 and JSON work of a 5 KB header is done
/// once instead of per token. Keyed by the exact segment bytes. Only a header whose chain
/// verified is remembered (the caller says so): anyone may post a notification, and a junk
/// header of 250 KB kept for each of the last `capacity` posts held megabytes and pushed
/// Apple's own header out. Trust itself stays with `ChainCache`.
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

  /// The header's parse, and whether it came from the memo (so `remember` has nothing to do).
  func parse(_ segment: ArraySlice<UInt8>) -> (Result<ParsedHeader, RefusalReason>, known: Bool) {
    if let known = state.withLock({ $0.entries[Key(segment)] }) { return (.success(known), true) }
    return (ParsedHeader.parse(segment), false)
  }

  /// Keeps the parse of a header whose chain verified.
  func remember(_ segment: ArraySlice<UInt8>, as parsed: ParsedHeader) {
    // Own copy of the bytes, so the memo never pins a whole token.
    let key = Key(segment)
    state.withLock { state in
      if state.entries.updateValue(parsed, forKey: key) == nil { state.order.append(key) }
      while state.order.count > capacity { state.entries[state.order.removeFirst()] = nil }
    }
  }

  /// How many headers are remembered.
  var count: Int { state.withLock { $0.entries.count } }

  /// Hashes the bytes in one call (an `[UInt8]` key would feed the hasher byte by byte).
  private struct Key: Hashable, Sendable {
    var bytes: [UInt8]

    init(_ segment: ArraySlice<UInt8>) {
      bytes = Array(segment)
    }

    func hash(into hasher: inout Hasher) {
      bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
    }
  }
}
