import CSystem
import StorekeeperLogging

#if canImport(Glibc)
  import Glibc
#endif

extension EventLoop {
  /// Bytes a connection may hold unparsed before the loop stops reading from it (pipelined
  /// requests waiting behind a slow one).
  var readPauseThreshold: Int { max(limits.maxHeadBytes, readBufferSize) }

  func handle(_ connection: Connection, events: UInt32) {
    if events & Epoll.error != 0 {
      closeConnection(connection)
      return
    }
    if events & Epoll.writable != 0 {
      flush(connection)
      if connections[Int(connection.fd)] !== connection { return }
    }
    if events & Epoll.readable != 0 {
      read(connection)
    } else if events & Epoll.hangUp != 0 {
      // Both directions are gone and nothing is registered to read: nothing can be sent.
      closeConnection(connection)
      return
    }
    if connections[Int(connection.fd)] === connection { progress(connection) }
  }

  private func read(_ connection: Connection) {
    for _ in 0..<4 {
      let result: IOResult<Int>
      do {
        result = try systemCall("read") {
          Glibc.read(connection.fd, readBuffer.baseAddress, readBufferSize)
        }
      } catch {
        // ECONNRESET and friends: the peer is gone.
        closeConnection(connection)
        return
      }
      switch result {
      case .wouldBlock:
        return
      case .done(0):
        connection.inputClosed = true
        // The client closed (or half-closed) with no request of its own waiting behind this
        // one: as Go's net/http does, the handler's task is cancelled. Every handler is safe to
        // stop at any point (a kill -9 is worse), and a client that asks again is answered
        // from what was committed.
        if connection.phase == .inFlight && connection.parser.bufferedByteCount == 0 {
          connection.current?.handler?.cancel()
        }
        // Likewise a streamed body nobody will read: its producer stops now, not when a
        // send finally fails.
        if connection.phase == .streaming && connection.parser.bufferedByteCount == 0 {
          closeConnection(connection)
        }
        return
      case .done(let n):
        if connection.phase == .lingering { continue }
        // A head's clock starts at its first byte, not at empty lines before it (RFC 9112
        // §2.2): the parser skips those, leaving nothing buffered but a stale start.
        if connection.phase == .idle && !connection.parser.hasPartialHead {
          connection.headStart = now
        }
        connection.parser.feed(UnsafeRawBufferPointer(rebasing: readBuffer[0..<n]))
        // Busy until `progress` finds it idle again, then the newest idle one.
        leaveIdle(connection)
        if n < readBufferSize || connection.parser.bufferedByteCount >= readPauseThreshold {
          return
        }
      }
    }
  }

  /// Runs whatever the connection can do now: parse and answer buffered requests, write,
  /// close when finished, then refresh epoll interest and the deadline.
  func progress(_ connection: Connection) {
    if connection.phase == .lingering {
      if connection.inputClosed { closeConnection(connection) }
      return
    }
    pumpStream(connection)
    guard connections[Int(connection.fd)] === connection else { return }
    while true {
      let pausedForOutput = processInput(connection)
      if connection.hasPendingOutput { flush(connection) }
      guard connections[Int(connection.fd)] === connection else { return }
      // Requests waiting behind a large answer (a streamed body's last chunks) go on once
      // it is written; otherwise its write event would be the only thing to wake them.
      guard pausedForOutput && !connection.hasPendingOutput else { break }
    }
    if !connection.hasPendingOutput {
      if connection.closeAfterWrite {
        finish(connection)
        return
      }
      if connection.inputClosed && connection.phase != .inFlight
        && connection.phase != .streaming
      {
        // Nothing more will arrive and nothing is being answered (a partial request is lost).
        closeConnection(connection)
        return
      }
      if isShuttingDown && connection.phase == .idle && !connection.parser.hasPartialHead {
        closeConnection(connection)
        return
      }
    }
    connection.releaseSpareBuffers()
    updateInterest(connection)
    updateDeadline(connection)
    if connections[Int(connection.fd)] === connection { updateIdleMembership(connection) }
  }

  /// Writes pending output; on a partial write, waits for EPOLLOUT (registered by
  /// `updateInterest`) instead of blocking.
  func flush(_ connection: Connection) {
    while connection.hasPendingOutput {
      let result: IOResult<Int>
      do {
        result = try connection.output.withUnsafeBytes { bytes in
          try systemCall("send") {
            csys_send(
              connection.fd, bytes.baseAddress! + connection.outputOffset,
              bytes.count - connection.outputOffset)
          }
        }
      } catch {
        closeConnection(connection)
        return
      }
      switch result {
      case .wouldBlock:
        return
      case .done(let n):
        connection.outputOffset += n
        connection.lastWriteProgress = now
      }
    }
    // Keep the storage for what follows in this batch or stream, unless it is large;
    // `releaseSpareBuffers` trims it once the connection has nothing left to send.
    if connection.output.capacity > 256 * 1024 {
      connection.output = []
    } else {
      connection.output.removeAll(keepingCapacity: true)
    }
    connection.outputOffset = 0
  }

  func updateInterest(_ connection: Connection) {
    var wanted: UInt32 = 0
    if !connection.inputClosed && connection.parser.bufferedByteCount < readPauseThreshold {
      wanted |= Epoll.readable
    }
    if connection.hasPendingOutput { wanted |= Epoll.writable }
    guard wanted != connection.interest else { return }
    connection.interest = wanted
    do {
      try epoll.modify(
        connection.fd, events: wanted,
        data: Self.token(fd: connection.fd, generation: connection.generation))
    } catch {
      closeConnection(connection)
    }
  }

  /// After a final response: if the peer already stopped sending, close; otherwise shut our
  /// side and drain for a moment so the response is not lost to a reset.
  private func finish(_ connection: Connection) {
    if connection.inputClosed {
      closeConnection(connection)
      return
    }
    shutdown(connection.fd, Int32(SHUT_WR))
    connection.phase = .lingering
    leaveIdle(connection)
    connection.interest = Epoll.readable
    try? epoll.modify(
      connection.fd, events: Epoll.readable,
      data: Self.token(fd: connection.fd, generation: connection.generation))
    setDeadline(connection, at: now + 2_000_000_000, kind: .linger)
  }

  /// `releasingSlot: false` keeps the connection's place under the cap for a new one.
  func closeConnection(_ connection: Connection, releasingSlot: Bool = true) {
    guard connections[Int(connection.fd)] === connection else { return }
    connection.current?.handler?.cancel()
    if connection.streaming != nil { abandonStream(connection) }
    releaseBody(connection)
    leaveIdle(connection)
    connections[Int(connection.fd)] = nil
    close(connection.fd)
    connectionCount -= 1
    if releasingSlot { shared.releaseConnection() }
  }

  func closeAll() {
    for case let connection? in connections { closeConnection(connection) }
    listener.close()
  }
}
