/// The loop's connections that wait for a request with nothing of one received, oldest first.
/// At the connection cap the oldest is closed to admit a new client, as nginx reuses its idle
/// keep-alive connections. Intrusive (the links live in `Connection`), so joining, leaving and
/// taking the oldest cost O(1) however many connections are open.
///
/// Links are `Unmanaged` and followed with `_withUnsafeGuaranteedRef`, so linking and
/// unlinking — twice per request — touch no reference count.
struct IdleConnections {
  private var first: Unmanaged<Connection>?
  private var last: Unmanaged<Connection>?
  private(set) var count = 0

  /// The longest-idle connection.
  var oldest: Connection? { first?.takeUnretainedValue() }

  /// Puts the connection at the newest end; a member keeps its place (its idle time goes on).
  mutating func insert(_ connection: Connection) {
    guard !connection.isIdleListed else { return }
    let link = Unmanaged.passUnretained(connection)
    connection.isIdleListed = true
    connection.idleOlder = last
    connection.idleNewer = nil
    if let last {
      last._withUnsafeGuaranteedRef { $0.idleNewer = link }
    } else {
      first = link
    }
    last = link
    count += 1
  }

  mutating func remove(_ connection: Connection) {
    guard connection.isIdleListed else { return }
    let older = connection.idleOlder
    let newer = connection.idleNewer
    if let older {
      older._withUnsafeGuaranteedRef { $0.idleNewer = newer }
    } else {
      first = newer
    }
    if let newer {
      newer._withUnsafeGuaranteedRef { $0.idleOlder = older }
    } else {
      last = older
    }
    connection.idleOlder = nil
    connection.idleNewer = nil
    connection.isIdleListed = false
    count -= 1
  }
}
