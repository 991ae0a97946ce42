import CSystem

#if canImport(Glibc)
  import Glibc
#endif

/// A bound, listening, non-blocking TCP socket. Each event loop has its own on the same port
/// (SO_REUSEPORT), so the kernel spreads connections over loops without a hand-off.
final class ListeningSocket {
  private(set) var fd: Int32
  let port: Int

  init(host: String, port: Int, backlog: Int32 = 1024, reusePort: Bool = true) throws(SystemError) {
    var bound: Int32 = 0
    let fd = csys_listen_tcp(host, Int32(port), backlog, reusePort ? 1 : 0, &bound)
    guard fd >= 0 else { throw SystemError(call: "listen(\(host):\(port))", errno: csys_errno()) }
    self.fd = fd
    self.port = Int(bound)
  }

  var isOpen: Bool { fd >= 0 }

  func close() {
    guard fd >= 0 else { return }
    Glibc.close(fd)
    fd = -1
  }

  deinit { close() }

  /// SO_REUSEPORT would let a second process bind a port already served and silently share its
  /// traffic; a bind without it first makes "address in use" an error again.
  static func ensureFree(host: String, port: Int) throws(SystemError) {
    guard port != 0 else { return }
    let probe = try ListeningSocket(host: host, port: port, backlog: 1, reusePort: false)
    probe.close()
  }
}
