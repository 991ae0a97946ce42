/// Serialises a response head: status line, `Date`, the handler's headers, `X-Request-Id`,
/// `X-Content-Type-Options: nosniff`, `Connection` and `Content-Length` (`Transfer-Encoding:
/// chunked` for a streamed body), then the blank line. The body follows as it is, or in chunks.
enum ResponseEncoder {
  private static let continueLine = Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)
  // Static strings, not arrays: writing one costs no reference counting (every response
  // takes several).
  private static let contentLength: StaticString = "Content-Length: "
  private static let requestId: StaticString = "X-Request-Id: "
  /// On every answer, written here once for all: a handler's, a problem, and the server's own
  /// 400s, 404s and 503s alike, so no browser ever guesses a type the answer did not declare.
  private static let noSniff: StaticString = "X-Content-Type-Options: nosniff\r\n"
  private static let connectionClose: StaticString = "Connection: close\r\n"
  private static let connectionKeepAlive: StaticString = "Connection: keep-alive\r\n"
  private static let chunked: StaticString = "Transfer-Encoding: chunked\r\n"
  private static let lastChunk: StaticString = "0\r\n\r\n"

  /// What the head decided.
  struct Head {
    /// Whether the connection stays open after this response.
    var keepAlive: Bool
    /// Whether the body follows the head (not after HEAD, nor with 204, 304 or 1xx).
    var includesBody: Bool
  }

  static func appendContinue(to out: inout [UInt8]) { out.append(contentsOf: continueLine) }

  /// Headers the server owns; a handler's copies are dropped.
  private static func isReserved(_ name: String) -> Bool {
    switch name.utf8.count {
    case 4: HTTPHeaders.equalsIgnoringCase(name, "Date")
    case 10: HTTPHeaders.equalsIgnoringCase(name, "Connection")
    case 12: HTTPHeaders.equalsIgnoringCase(name, "X-Request-Id")
    case 14: HTTPHeaders.equalsIgnoringCase(name, "Content-Length")
    case 17: HTTPHeaders.equalsIgnoringCase(name, "Transfer-Encoding")
    case 22: HTTPHeaders.equalsIgnoringCase(name, "X-Content-Type-Options")
    default: false
    }
  }

  /// Writes the head of `response`.
  /// - Parameters:
  ///   - date: the whole `Date` line, CRLF included.
  ///   - headRequest: the request was HEAD: `Content-Length` of the body, no body bytes.
  ///   - keepAlive: false writes `Connection: close`; `announceKeepAlive` writes
  ///     `Connection: keep-alive` (HTTP/1.0 clients that asked for it). A handler's own
  ///     `Connection: close` turns keep-alive off as well.
  static func writeHead(
    _ response: Response, requestId id: String, date: UnsafeRawBufferPointer, headRequest: Bool,
    keepAlive: Bool, announceKeepAlive: Bool, into out: inout HeadWriter
  ) -> Head {
    let status = (100..<600).contains(response.status) ? response.status : 500
    out.write(StatusLines.shared.line(status))
    out.write(date)
    var keepAlive = keepAlive
    response.headers.forEachField { name, value in
      if isReserved(name) {
        if keepAlive && isConnection(name) && FieldLines.list(value).contains("close") {
          keepAlive = false
        }
        return
      }
      writeField(name, value, to: &out)
    }
    out.write(requestId)
    id.withUTF8Bytes { out.write($0) }
    out.writeCRLF()
    out.write(noSniff)
    if !keepAlive {
      out.write(connectionClose)
    } else if announceKeepAlive {
      out.write(connectionKeepAlive)
    }
    // 204 and 304 carry no body; 1xx are never produced by handlers.
    let bodyless = status == 204 || status == 304 || status < 200
    if !bodyless {
      if response.stream != nil {
        // Also after HEAD: the head a GET would get, whose body is never made.
        out.write(chunked)
      } else {
        out.write(contentLength)
        out.writeDecimal(response.body.count)
        out.writeCRLF()
      }
    }
    out.writeCRLF()
    return Head(keepAlive: keepAlive, includesBody: !headRequest && !bodyless)
  }

  /// Head and body appended to `out`, for bytes that are queued rather than sent at once.
  /// - Returns: whether the connection stays open after this response.
  @discardableResult
  static func encode(
    _ response: Response, requestId id: String, date: UnsafeRawBufferPointer, headRequest: Bool,
    keepAlive: Bool, announceKeepAlive: Bool, into out: inout [UInt8]
  ) -> Bool {
    // A first pass with no room measures the head; the second writes it in place.
    var measure = HeadWriter(UnsafeMutableRawBufferPointer(start: nil, count: 0))
    var head = writeHead(
      response, requestId: id, date: date, headRequest: headRequest, keepAlive: keepAlive,
      announceKeepAlive: announceKeepAlive, into: &measure)
    let start = out.count
    out.append(contentsOf: repeatElement(0, count: measure.count))
    out.withUnsafeMutableBytes { raw in
      var writer = HeadWriter(UnsafeMutableRawBufferPointer(rebasing: raw[start...]))
      head = writeHead(
        response, requestId: id, date: date, headRequest: headRequest, keepAlive: keepAlive,
        announceKeepAlive: announceKeepAlive, into: &writer)
    }
    if head.includesBody { out.append(contentsOf: response.body) }
    return head.keepAlive
  }

  /// One piece of a streamed body as a chunk: its size in hex, CRLF, the bytes, CRLF.
  static func appendChunk(_ bytes: [UInt8], to out: inout [UInt8]) {
    let digits = Array(String(bytes.count, radix: 16).utf8)
    out.append(contentsOf: digits)
    out.append(13)
    out.append(10)
    out.append(contentsOf: bytes)
    out.append(13)
    out.append(10)
  }

  /// The last chunk, with no trailers: the body is complete.
  static func appendLastChunk(to out: inout [UInt8]) {
    lastChunk.withUTF8Buffer { out.append(contentsOf: $0) }
  }

  private static func isConnection(_ name: String) -> Bool {
    name.utf8.count == 10 && HTTPHeaders.equalsIgnoringCase(name, "Connection")
  }

  /// "name: value\r\n", or nothing when either would split the response (CR, LF or NUL).
  /// Works on the strings' contiguous UTF-8: one bounds-free scan and one copy each.
  private static func writeField(_ name: String, _ value: String, to out: inout HeadWriter) {
    name.withUTF8Bytes { n in
      value.withUTF8Bytes { v in
        guard isSafe(n), isSafe(v) else { return }
        out.write(n)
        out.write(UInt8(ascii: ":"))
        out.write(UInt8(ascii: " "))
        out.write(v)
        out.writeCRLF()
      }
    }
  }

  /// Header text must not carry CR, LF or NUL (response splitting).
  private static func isSafe(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
    for byte in bytes where byte <= 13 && (byte == 13 || byte == 10 || byte == 0) { return false }
    return true
  }
}
