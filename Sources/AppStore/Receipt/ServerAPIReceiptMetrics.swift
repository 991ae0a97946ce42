import Synchronization

/// What the Server API receipt path cost at Apple, for `/metrics`: every call made under the
/// operator's key, and the receipts that reached their call limit before every transaction
/// they list was confirmed.
public final class ServerAPIReceiptMetrics: Sendable {
  private let calls = Atomic<Int>(0)
  private let limited = Atomic<Int>(0)

  public init() {}

  public var callsTotal: Int { calls.load(ordering: .relaxed) }
  public var callLimitReachedTotal: Int { limited.load(ordering: .relaxed) }

  func called() { calls.add(1, ordering: .relaxed) }
  func reachedLimit() { limited.add(1, ordering: .relaxed) }
}
