import CSystem
import StorekeeperLogging

#if canImport(Glibc)
  import Glibc
#endif

extension EventLoop {
  /// Accepts per wake-up are bounded so one busy listener cannot starve the connections.
  private static let acceptBatch = 64
  private static let overloaded: [UInt8] = {
    let problem = HTTPError(
      503, code: "too_many_connections", detail: "The server has too many open connections.",
      headers: ["Retry-After": "1"]
    ).response(requestId: "-")
    var out: [UInt8] = []
    ResponseEncoder.encode(
      problem, requestId: "-", date: UnsafeRawBufferPointer(start: nil, count: 0),
      headRequest: false, keepAlive: false,
      announceKeepAlive: false, into: &out)
    return out
  }()

  func acceptConnections() {
    if now < acceptPausedUntil { return }
    var peer = [CChar](repeating: 0, count: 64)
    for _ in 0..<Self.acceptBatch {
      let fd = csys_accept(listener.fd, &peer, peer.count)
      if fd < 0 {
        let code = csys_errno()
        switch code {
        case EAGAIN, EWOULDBLOCK: return
        case EINTR, ECONNABORTED, EPROTO: continue
        case EMFILE, ENFILE, ENOBUFS, ENOMEM:
          shedOneConnection(code)
          return
        default:
          shared.logger.error("accept failed", ["errno": .int(Int(code))])
          return
        }
      }
      let address = String(
        decoding: peer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
      if shared.acquireConnection() || evictOldestIdle() {
        register(fd: fd, peer: address)
      } else {
        admitElsewhere(fd: fd, peer: address)
      }
    }
  }

  /// Sends 503 `too_many_connections` and closes: every connection is busy.
  func refuse(_ fd: Int32) {
    Self.overloaded.withUnsafeBytes { _ = csys_send(fd, $0.baseAddress, $0.count) }
    close(fd)
  }

  /// Out of descriptors: the pending connection would make the listener ready forever. Free
  /// the reserve descriptor, accept and close one connection, and take the reserve back; if
  /// even that fails, stop accepting briefly.
  private func shedOneConnection(_ code: Int32) {
    shared.logger.warning(
      "out of file descriptors; refusing a connection", ["errno": .int(Int(code))])
    if reserveFD >= 0 {
      close(reserveFD)
      reserveFD = -1
      let fd = csys_accept(listener.fd, nil, 0)
      if fd >= 0 { close(fd) }
      reserveFD = open("/dev/null", O_RDONLY | O_CLOEXEC)
    }
    if reserveFD < 0 {
      acceptPausedUntil = now + 100_000_000
      setListenerInterest(false)
    }
  }

  func setListenerInterest(_ on: Bool) {
    guard listener.isOpen else { return }
    try? epoll.modify(
      listener.fd, events: on ? Epoll.readable : 0, data: Self.token(fd: listener.fd, generation: 0)
    )
  }

  func register(fd: Int32, peer: String) {
    _ = csys_set_nodelay(fd)
    let generation = nextGeneration
    nextGeneration = nextGeneration == UInt32.max ? 1 : nextGeneration + 1
    let connection = Connection(
      fd: fd, generation: generation, remoteAddress: peer, limits: limits, now: now,
      interest: Epoll.readable)
    do {
      try epoll.add(fd, events: Epoll.readable, data: Self.token(fd: fd, generation: generation))
    } catch {
      close(fd)
      shared.releaseConnection()
      return
    }
    if Int(fd) >= connections.count {
      connections.append(
        contentsOf: repeatElement(nil, count: Int(fd) + 1 - connections.count + 64))
    }
    connections[Int(fd)] = connection
    connectionCount += 1
    updateDeadline(connection)
    joinIdle(connection)
  }
}
