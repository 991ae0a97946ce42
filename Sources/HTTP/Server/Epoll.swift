import CSystem

#if canImport(Glibc)
  import Glibc
#endif

/// The epoll instance of one event loop. Each registration carries 64 bits of user data:
/// the fd in the low half and a generation in the high half (see `EventLoop.token`).
final class Epoll {
  static let readable = csys_EPOLLIN
  static let writable = csys_EPOLLOUT
  static let error = csys_EPOLLERR
  static let hangUp = csys_EPOLLHUP
  static let readHangUp = csys_EPOLLRDHUP

  let fd: Int32
  private let capacity = 256
  private let events: UnsafeMutablePointer<UInt32>
  private let data: UnsafeMutablePointer<UInt64>

  init() throws(SystemError) {
    let fd = csys_epoll_create()
    guard fd >= 0 else { throw SystemError(call: "epoll_create1", errno: csys_errno()) }
    self.fd = fd
    events = .allocate(capacity: capacity)
    data = .allocate(capacity: capacity)
  }

  deinit {
    close(fd)
    events.deallocate()
    data.deallocate()
  }

  func add(_ target: Int32, events mask: UInt32, data token: UInt64) throws(SystemError) {
    _ = try systemCall("epoll_ctl(ADD)") {
      csys_epoll_ctl(fd, csys_EPOLL_CTL_ADD, target, mask, token)
    }
  }

  func modify(_ target: Int32, events mask: UInt32, data token: UInt64) throws(SystemError) {
    _ = try systemCall("epoll_ctl(MOD)") {
      csys_epoll_ctl(fd, csys_EPOLL_CTL_MOD, target, mask, token)
    }
  }

  func remove(_ target: Int32) throws(SystemError) {
    _ = try systemCall("epoll_ctl(DEL)") { csys_epoll_ctl(fd, csys_EPOLL_CTL_DEL, target, 0, 0) }
  }

  /// Waits up to `timeoutMilliseconds` (-1: forever) and calls `body` per ready fd.
  func wait(timeoutMilliseconds: Int32, _ body: (UInt32, UInt64) -> Void) throws(SystemError) {
    let n: Int32
    switch try systemCall(
      "epoll_wait", { csys_epoll_wait(fd, events, data, Int32(capacity), timeoutMilliseconds) })
    {
    case .done(let count): n = count
    case .wouldBlock: n = 0
    }
    for i in 0..<Int(n) { body(events[i], data[i]) }
  }
}
