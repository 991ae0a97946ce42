extension EventLoop {
  private static let bodyRateCheckInterval: UInt64 = 1_000_000_000

  /// Sets the connection's single deadline. The queue only gets a new entry when the deadline
  /// moves earlier; later deadlines are picked up when the old entry comes due.
  func setDeadline(_ connection: Connection, at deadline: UInt64, kind: Connection.DeadlineKind) {
    connection.deadline = deadline
    connection.deadlineKind = kind
    guard deadline != 0 else { return }
    if connection.scheduledAt == 0 || deadline < connection.scheduledAt {
      deadlines.push(.init(at: deadline, fd: connection.fd, generation: connection.generation))
      connection.scheduledAt = deadline
    }
  }

  /// Picks the deadline that fits what the connection is doing.
  func updateDeadline(_ connection: Connection) {
    if connection.hasPendingOutput {
      setDeadline(
        connection, at: connection.lastWriteProgress + shared.idleTimeoutNs,
        kind: .write)
      return
    }
    switch connection.phase {
    case .idle:
      if connection.parser.hasPartialHead {
        if connection.headStart == 0 { connection.headStart = now }
        setDeadline(
          connection, at: connection.headStart + shared.headTimeoutNs, kind: .head)
      } else {
        setDeadline(
          connection, at: connection.idleSince + shared.idleTimeoutNs, kind: .idle)
      }
    case .body:
      if connection.deadlineKind != .bodyRate || connection.deadline == 0 {
        setDeadline(
          connection, at: connection.bodyStart + shared.bodyRateGracePeriodNs,
          kind: .bodyRate)
      }
    case .inFlight, .streaming:
      // A producer between pieces (a page being read) has no deadline of ours; a client not
      // reading what it made has the write deadline above.
      setDeadline(connection, at: 0, kind: .idle)
    case .lingering:
      break
    }
  }

  /// Milliseconds until the nearest deadline (rounded up), -1 when there is none.
  func nextTimeout() -> Int32 {
    var nearest = deadlines.next?.at ?? 0
    if isShuttingDown && (nearest == 0 || shutdownDeadline < nearest) { nearest = shutdownDeadline }
    if acceptPausedUntil != 0 && (nearest == 0 || acceptPausedUntil < nearest) {
      nearest = acceptPausedUntil
    }
    if nearest == 0 { return -1 }
    if nearest <= now { return 0 }
    let milliseconds = (nearest - now + 999_999) / 1_000_000
    return Int32(min(milliseconds, UInt64(Int32.max)))
  }

  func runTimers() {
    if acceptPausedUntil != 0 && now >= acceptPausedUntil {
      acceptPausedUntil = 0
      setListenerInterest(true)
    }
    while let entry = deadlines.next, entry.at <= now {
      _ = deadlines.pop()
      guard let connection = connection(fd: entry.fd, generation: entry.generation),
        connection.scheduledAt == entry.at
      else { continue }
      connection.scheduledAt = 0
      guard connection.deadline != 0 else { continue }
      if connection.deadline > now {
        setDeadline(connection, at: connection.deadline, kind: connection.deadlineKind)
        continue
      }
      fire(connection)
    }
  }

  private func fire(_ connection: Connection) {
    switch connection.deadlineKind {
    case .idle, .write, .linger:
      closeConnection(connection)
    case .head:
      timedOut(connection, detail: "The request head took too long to arrive.")
    case .bodyRate:
      let elapsed = now - connection.bodyStart
      let required = UInt64(shared.configuration.minBodyBytesPerSecond) * elapsed / 1_000_000_000
      if UInt64(connection.bodyReceived) < required {
        timedOut(connection, detail: "The request body is arriving too slowly.")
      } else {
        setDeadline(connection, at: now + Self.bodyRateCheckInterval, kind: .bodyRate)
      }
    }
  }
}
