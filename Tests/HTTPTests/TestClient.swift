import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// A blocking TCP client for live tests, with a receive timeout so a broken server fails a
/// test instead of hanging it.
/// Used by one thread at a time (tests hand it between `offPool` blocks sequentially).
final class TestClient: @unchecked Sendable {
  struct ClientError: Error, CustomStringConvertible {
    var description: String
  }

  struct Reply {
    var status: Int
    var headers: [(String, String)]
    var body: [UInt8]

    func header(_ name: String) -> String? {
      headers.first { $0.0.lowercased() == name.lowercased() }?.1
    }
    var text: String { String(decoding: body, as: UTF8.self) }
  }

  private(set) var fd: Int32
  var buffer: [UInt8] = []

  /// Connects to 127.0.0.1:port; throws if refused.
  init(port: Int, timeoutSeconds: Int = 30) throws {
    fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw ClientError(description: "socket failed") }
    var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let result = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
    guard result == 0 else {
      let code = errno
      Glibc.close(fd)
      throw ClientError(description: "connect failed: errno \(code)")
    }
  }

  deinit { if fd >= 0 { Glibc.close(fd) } }

  /// Closes the socket, both directions, as a client that gives up does.
  func close() {
    guard fd >= 0 else { return }
    Glibc.close(fd)
    fd = -1
  }

  func send(_ text: String) throws { try send(Array(text.utf8)) }

  func send(_ bytes: [UInt8]) throws {
    var offset = 0
    while offset < bytes.count {
      let n = bytes.withUnsafeBytes {
        Glibc.send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL))
      }
      guard n > 0 else { throw ClientError(description: "send failed: errno \(errno)") }
      offset += n
    }
  }

  /// Ends the client's side of the stream (a half-close); replies can still be read.
  func shutdownWrite() { _ = shutdown(fd, Int32(SHUT_WR)) }

  /// Reads more bytes; false at end of stream (or reset).
  func fill() throws -> Bool {
    var chunk = [UInt8](repeating: 0, count: 65536)
    let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
    if n > 0 {
      buffer.append(contentsOf: chunk[0..<n])
      return true
    }
    if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
      throw ClientError(description: "timed out waiting for the server")
    }
    return false
  }

  /// Reads one response. `head` says the request was HEAD (no body follows).
  func readResponse(head: Bool = false) throws -> Reply {
    var end: Int?
    while true {
      if let range = find([13, 10, 13, 10]) {
        end = range
        break
      }
      guard try fill() else { throw ClientError(description: "closed before a response head") }
    }
    guard let headEnd = end else { throw ClientError(description: "no head") }
    let headText = String(decoding: buffer[0..<headEnd], as: UTF8.self)
    buffer.removeFirst(headEnd + 4)
    var lines = headText.components(separatedBy: "\r\n")
    let statusLine = lines.removeFirst().split(separator: " ")
    guard statusLine.count >= 2, let status = Int(statusLine[1]) else {
      throw ClientError(description: "bad status line \(headText)")
    }
    let headers = lines.compactMap { line -> (String, String)? in
      guard let colon = line.firstIndex(of: ":") else { return nil }
      return (
        String(line[..<colon]),
        line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
      )
    }
    var reply = Reply(status: status, headers: headers, body: [])
    if status == 100 { return reply }
    let length = head ? 0 : Int(reply.header("Content-Length") ?? "0") ?? 0
    while buffer.count < length {
      guard try fill() else { throw ClientError(description: "closed inside a body") }
    }
    reply.body = Array(buffer[0..<length])
    buffer.removeFirst(length)
    return reply
  }

  /// True when the server closes the connection (EOF or reset) with nothing more sent.
  func isClosedByServer() throws -> Bool {
    if !buffer.isEmpty { return false }
    var byte: UInt8 = 0
    let n = recv(fd, &byte, 1, 0)
    if n == 0 { return true }
    if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { return false }
    return n < 0
  }

  private func find(_ needle: [UInt8]) -> Int? {
    guard buffer.count >= needle.count else { return nil }
    for i in 0...(buffer.count - needle.count) where buffer[i] == needle[0] {
      if Array(buffer[i..<(i + needle.count)]) == needle { return i }
    }
    return nil
  }
}
