import Synchronization

/// How many statements a pool has sent to the server, `BEGIN` and `COMMIT` included: each is
/// one round trip. Tests read it to hold a path to its budget; `/metrics` could export it.
public final class PostgresRoundTrips: Sendable {
  private let value = Atomic<Int>(0)

  public init() {}

  public var count: Int { value.load(ordering: .relaxed) }

  func add() { value.add(1, ordering: .relaxed) }
}
