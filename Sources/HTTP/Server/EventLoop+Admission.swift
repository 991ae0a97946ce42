import CSystem
import StorekeeperLogging

#if canImport(Glibc)
  import Glibc
#endif

/// Admission at the connection cap. Idle keep-alive connections (and new ones that have sent
/// nothing yet) must not lock clients out: as nginx does, the longest-idle one is closed to
/// make room. Only a connection with nothing of a request received, nothing in flight and
/// nothing left to write is closed, so no request is ever lost to it; the client sees an
/// orderly close, exactly as at the idle timeout. Connections in the middle of a request —
/// slow clients trickling a head included, who stay bounded by the head and body timeouts —
/// are never closed for room; when every connection is like that, a new client gets 503.
extension EventLoop {
  /// Whether the connection holds nothing a client is waiting on or still sending.
  private func isIdle(_ connection: Connection) -> Bool {
    connection.phase == .idle && connection.parser.bufferedByteCount == 0
      && !connection.hasPendingOutput && !connection.closeAfterWrite && !connection.inputClosed
  }

  /// Puts a connection that just became idle at the newest end of the idle list; one that is
  /// no longer idle leaves it. Called after every step of a connection (`progress`).
  func updateIdleMembership(_ connection: Connection) {
    if isIdle(connection) { joinIdle(connection) } else { leaveIdle(connection) }
  }

  func joinIdle(_ connection: Connection) {
    guard !connection.isIdleListed else { return }
    idle.insert(connection)
    publishedIdleCount.store(idle.count, ordering: .relaxed)
  }

  func leaveIdle(_ connection: Connection) {
    guard connection.isIdleListed else { return }
    idle.remove(connection)
    publishedIdleCount.store(idle.count, ordering: .relaxed)
  }

  /// Closes this loop's longest-idle connection and keeps its slot for the caller. A
  /// connection whose socket already holds unread bytes (a request arriving, not yet read in
  /// this batch) is not idle: it leaves the list and its read event comes next.
  /// False when no connection here is idle.
  func evictOldestIdle() -> Bool {
    while let connection = idle.oldest {
      leaveIdle(connection)
      var byte: UInt8 = 0
      if recv(connection.fd, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT)) > 0 { continue }
      let logger = shared.logger
      if logger.isEnabled(.info) {
        logger.info(
          "closed the longest-idle connection to admit a new one",
          [
            "remote": .string(connection.remoteAddress),
            "idle_ms": .double(Double(now &- connection.idleSince) / 1_000_000),
          ])
      }
      closeConnection(connection, releasingSlot: false)
      return true
    }
    return false
  }

  /// At the cap with no idle connection on this loop: hand the new connection to the sibling
  /// showing the most idle ones, which decides with its own, current list. The counts are
  /// hints from other threads — a sibling that has just answered a request may not show that
  /// connection yet — so a sibling is asked even when none shows any; only a single loop
  /// refuses at once.
  func admitElsewhere(fd: Int32, peer: String) {
    var chosen: EventLoop?
    var most = 0
    for sibling in siblings {
      let count = sibling.publishedIdleCount.load(ordering: .relaxed)
      if chosen == nil || count > most {
        chosen = sibling
        most = count
      }
    }
    if let chosen, chosen.post(.adopt(fd: fd, peer: peer)) { return }
    refuse(fd)
  }

  /// A connection a sibling accepted at the cap: admitted if a slot has freed meanwhile or an
  /// idle connection here can be closed for it; otherwise 503.
  func adopt(fd: Int32, peer: String) {
    if !isShuttingDown && (shared.acquireConnection() || evictOldestIdle()) {
      register(fd: fd, peer: peer)
    } else {
      refuse(fd)
    }
  }
}
