/// The pool's bookkeeping, always read and written under the pool's lock.
struct PostgresPoolState {
  /// What a waiting caller is handed: a free session, or the right to open one.
  enum Lease: Sendable {
    case connection(PostgresConnection)
    case slot
  }

  struct Waiter {
    var id: Int
    var continuation: CheckedContinuation<Lease, any Error>
  }

  var idle: [PostgresConnection] = []
  /// Sessions counted against the bound: idle, lent out, and being opened.
  var open = 0
  /// FIFO; short (bounded by concurrent requests), so removing from the front is cheap enough.
  var waiters: [Waiter] = []
  var nextWaiterID = 0
  var closed = false

  /// Takes an idle session or a free slot, or nil when the caller has to wait.
  mutating func take(maxConnections: Int) -> Lease? {
    if let connection = idle.popLast() { return .connection(connection) }
    if open < maxConnections {
      open += 1
      return .slot
    }
    return nil
  }

  /// Returns a session (or, when `connection` is nil, its slot) and says which waiter, if
  /// any, gets it.
  mutating func give(back connection: PostgresConnection?) -> (Waiter, Lease)? {
    if closed {
      open -= 1
      return nil
    }
    if !waiters.isEmpty {
      let waiter = waiters.removeFirst()
      return (waiter, connection.map { .connection($0) } ?? .slot)
    }
    if let connection {
      idle.append(connection)
    } else {
      open -= 1
    }
    return nil
  }

  mutating func removeWaiter(id: Int) -> Waiter? {
    guard let index = waiters.firstIndex(where: { $0.id == id }) else { return nil }
    return waiters.remove(at: index)
  }
}
