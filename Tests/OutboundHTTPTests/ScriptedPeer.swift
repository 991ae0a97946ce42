import Foundation
import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// A listening socket on 127.0.0.1 that answers each connection as `answer` says, on a thread
/// of its own: the peer the outbound client meets (a receiver, Apple, Google).
final class ScriptedPeer: Sendable {
  /// What to do with one request, given its request line and body.
  enum Reply: Sendable {
    case bytes([UInt8])
    /// Accept, read the request and never answer.
    case silence
  }

  let port: Int
  private let listener: Int32
  private let requests = Mutex<[(line: String, head: String, body: [UInt8])]>([])
  private let stopping = Atomic<Bool>(false)
  /// Signalled by the accepting thread once it has closed the listener.
  private let closed = DispatchSemaphore(value: 0)

  init(answer: @escaping @Sendable (_ line: String, _ body: [UInt8]) -> Reply) throws {
    let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    listener = socket
    var yes: Int32 = 1
    setsockopt(socket, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
        Glibc.bind(socket, pointer, length) == 0 && listen(socket, 128) == 0
          && getsockname(socket, pointer, &length) == 0
      }
    }
    guard bound else { throw POSIXError(.EADDRINUSE) }
    port = Int(UInt16(bigEndian: address.sin_port))
    // Only this thread closes the listener, after its last accept: closed from another thread,
    // the descriptor could be reused (by another test's listener) before this thread calls
    // accept again, and it would then take that listener's connections.
    Thread.detachNewThread { [self] in
      defer {
        close(socket)
        closed.signal()
      }
      while true {
        let client = accept(socket, nil, nil)
        if client < 0 {
          if errno == EINTR || errno == ECONNABORTED { continue }
          return
        }
        Thread.detachNewThread { self.serve(client, answer) }
      }
    }
  }

  /// Stops accepting and returns once the listener is closed (the accepting thread holds the
  /// peer, so this is not left to `deinit`). Shutting a listening socket down wakes its accept.
  func stop() {
    guard !stopping.exchange(true, ordering: .relaxed) else { return }
    shutdown(listener, Int32(SHUT_RDWR))
    closed.wait()
  }

  /// The requests seen so far: request line, header block, body.
  var seen: [(line: String, head: String, body: [UInt8])] { requests.withLock { $0 } }

  private func serve(
    _ client: Int32, _ answer: @Sendable (String, [UInt8]) -> Reply
  ) {
    defer { close(client) }
    var received: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65536)
    func read() -> Bool {
      let n = chunk.withUnsafeMutableBytes { recv(client, $0.baseAddress, $0.count, 0) }
      guard n > 0 else { return false }
      received += chunk[0..<n]
      return true
    }
    let separator = Array("\r\n\r\n".utf8)
    var headEnd: Int?
    while headEnd == nil {
      guard read() else { return }
      headEnd = received.indices.dropLast(3).first { Array(received[$0..<$0 + 4]) == separator }
    }
    guard let headEnd else { return }
    let head = String(decoding: received[..<headEnd], as: UTF8.self)
    let length =
      head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
      .flatMap { Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) } ?? 0
    while received.count < headEnd + 4 + length { guard read() else { return } }
    let body = Array(received[(headEnd + 4)..<(headEnd + 4 + length)])
    let line = String(head.prefix { $0 != "\r" })
    requests.withLock { $0.append((line, head, body)) }
    switch answer(line, body) {
    case .bytes(let bytes):
      var offset = 0
      while offset < bytes.count {
        let n = bytes.withUnsafeBytes {
          send(client, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL))
        }
        guard n > 0 else { return }
        offset += n
      }
    case .silence:
      while read() {}
    }
  }

  static func answer(status: String, headers: [String] = [], body: [UInt8] = []) -> Reply {
    let head =
      (["HTTP/1.1 \(status)", "Content-Length: \(body.count)", "Connection: close"]
      + headers).joined(separator: "\r\n")
    return .bytes(Array((head + "\r\n\r\n").utf8) + body)
  }
}
