import CSystem

#if canImport(Glibc)
  import Glibc
#endif

/// Wakes an event loop from another thread; the loop polls it like any other fd.
final class EventFD: Sendable {
  let fd: Int32

  init() throws(SystemError) {
    let fd = csys_eventfd()
    guard fd >= 0 else { throw SystemError(call: "eventfd", errno: csys_errno()) }
    self.fd = fd
  }

  deinit { close(fd) }

  /// Safe from any thread. A full counter (EAGAIN) already means "awake", so it is ignored.
  func signal() { _ = csys_eventfd_signal(fd) }

  func drain() { _ = csys_eventfd_drain(fd) }
}
