extension EventLoop {
  /// Stops accepting and closes idle connections; connections with a request under way finish
  /// it (answered with `Connection: close`) until the deadline.
  func beginShutdown(deadline: UInt64) {
    guard !isShuttingDown else { return }
    shutdownDeadline = max(deadline, 1)
    if listener.isOpen {
      try? epoll.remove(listener.fd)
      listener.close()
    }
    for case let connection? in connections {
      switch connection.phase {
      case .idle where !connection.hasPendingOutput:
        closeConnection(connection)
      default:
        break
      }
    }
    if connectionCount == 0 { running = false }
  }
}
