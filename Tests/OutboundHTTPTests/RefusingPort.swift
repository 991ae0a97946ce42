import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// A port on 127.0.0.1 that refuses every connection for as long as this lives: bound, so no
/// other test can be given it, but not listening, so a connection is reset at once. A stopped
/// listener's port would not do: a test running beside could be given that port next.
final class RefusingPort {
  let port: Int
  private let socket: Int32

  init() throws {
    let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
        Glibc.bind(socket, pointer, length) == 0 && getsockname(socket, pointer, &length) == 0
      }
    }
    guard socket >= 0, bound else {
      if socket >= 0 { close(socket) }
      throw POSIXError(.EADDRINUSE)
    }
    self.socket = socket
    port = Int(UInt16(bigEndian: address.sin_port))
  }

  deinit { close(socket) }
}
