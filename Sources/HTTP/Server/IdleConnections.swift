/// The loop's connections that wait for a request with nothing of one received, oldest first.
/// At the connection cap the oldest is closed to admit a new client, as nginx reuses its idle
/// keep-alive connections. Intrusive (the links live in `Connection`), so joining, leaving and
/// taking the oldest cost O(1) however many connections are open.
struct IdleConnections {
  // Uncounted, like the links (see `Connection.idleOlder`).
  private(set) unowned(unsafe) var oldest: Connection?
  private unowned(unsafe) var newest: Connection?
  private(set) var count = 0

  /// Puts the connection at the newest end; a member keeps its place (its idle time goes on).
  mutating func insert(_ connection: Connection) {
    guard !connection.isIdleListed else { return }
    connection.isIdleListed = true
    connection.idleOlder = newest
    connection.idleNewer = nil
    if let newest { newest.idleNewer = connection } else { oldest = connection }
    newest = connection
    count += 1
  }

  mutating func remove(_ connection: Connection) {
    guard connection.isIdleListed else { return }
    if let older = connection.idleOlder {
      older.idleNewer = connection.idleNewer
    } else {
      oldest = connection.idleNewer
    }
    if let newer = connection.idleNewer {
      newer.idleOlder = connection.idleOlder
    } else {
      newest = connection.idleOlder
    }
    connection.idleOlder = nil
    connection.idleNewer = nil
    connection.isIdleListed = false
    count -= 1
  }
}
