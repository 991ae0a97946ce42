/// Serialises a response head and body into a connection's output buffer.
enum ResponseEncoder {
  /// "HTTP/1.1 <status> <reason>\r\n" for every status, built once.
  private static let statusLines: [[UInt8]] = (0..<600).map {
    Array("HTTP/1.1 \($0) \(HTTPStatus.reason($0))\r\n".utf8)
  }
  private static let continueLine = Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)
  // Static strings, not arrays: appending one costs no reference counting (every response
  // takes several).
  private static let contentLength: StaticString = "Content-Length: "
  private static let requestId: StaticString = "X-Request-Id: "
  private static let connectionClose: StaticString = "Connection: close\r\n"
  private static let connectionKeepAlive: StaticString = "Connection: keep-alive\r\n"

  private static func append(_ text: StaticString, to out: inout [UInt8]) {
    text.withUTF8Buffer { out.append(contentsOf: $0) }
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
    default: false
    }
  }

  /// - Parameters:
  ///   - headRequest: the request was HEAD: `Content-Length` of the body, no body bytes.
  ///   - keepAlive: false writes `Connection: close`; `announceKeepAlive` writes
  ///     `Connection: keep-alive` (HTTP/1.0 clients that asked for it). A handler's own
  ///     `Connection: close` turns keep-alive off as well.
  /// - Returns: whether the connection stays open after this response.
  @discardableResult
  static func encode(
    _ response: Response, requestId id: String, date: [UInt8], headRequest: Bool,
    keepAlive: Bool, announceKeepAlive: Bool, into out: inout [UInt8]
  ) -> Bool {
    let status = (100..<600).contains(response.status) ? response.status : 500
    statusLines.withUnsafeBufferPointer { lines in
      lines[status].withUnsafeBufferPointer { out.append(contentsOf: $0) }
    }
    out.append(contentsOf: date)
    var keepAlive = keepAlive
    for (name, value) in response.headers {
      if isReserved(name) {
        if keepAlive && isConnection(name) && FieldLines.list(value).contains("close") {
          keepAlive = false
        }
        continue
      }
      appendField(name, value, to: &out)
    }
    append(requestId, to: &out)
    appendText(id, to: &out)
    out.append(13)
    out.append(10)
    if !keepAlive {
      append(connectionClose, to: &out)
    } else if announceKeepAlive {
      append(connectionKeepAlive, to: &out)
    }
    // 204 and 304 carry no body; 1xx are never produced by handlers.
    let bodyless = status == 204 || status == 304 || status < 200
    if !bodyless {
      append(contentLength, to: &out)
      appendDecimal(response.body.count, to: &out)
      out.append(13)
      out.append(10)
    }
    out.append(13)
    out.append(10)
    if !headRequest && !bodyless { out.append(contentsOf: response.body) }
    return keepAlive
  }

  private static func isConnection(_ name: String) -> Bool {
    name.utf8.count == 10 && HTTPHeaders.equalsIgnoringCase(name, "Connection")
  }

  /// "name: value\r\n", or nothing when either would split the response (CR, LF or NUL).
  /// Works on the strings' contiguous UTF-8: one bounds-free scan and one copy each.
  private static func appendField(_ name: String, _ value: String, to out: inout [UInt8]) {
    var name = name
    var value = value
    name.withUTF8 { n in
      value.withUTF8 { v in
        guard isSafe(n), isSafe(v) else { return }
        out.append(contentsOf: n)
        out.append(UInt8(ascii: ":"))
        out.append(UInt8(ascii: " "))
        out.append(contentsOf: v)
        out.append(13)
        out.append(10)
      }
    }
  }

  private static func appendText(_ text: String, to out: inout [UInt8]) {
    var text = text
    text.withUTF8 { out.append(contentsOf: $0) }
  }

  /// Header text must not carry CR, LF or NUL (response splitting).
  private static func isSafe(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
    for byte in bytes where byte <= 13 && (byte == 13 || byte == 10 || byte == 0) { return false }
    return true
  }

  private static func appendDecimal(_ value: Int, to out: inout [UInt8]) {
    if value < 10 {
      out.append(UInt8(ascii: "0") + UInt8(value))
      return
    }
    var digits:
      (
        UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
        UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8
      ) =
        (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
    var count = 0
    var v = value
    withUnsafeMutableBytes(of: &digits) { buffer in
      while v > 0 {
        buffer[count] = UInt8(ascii: "0") + UInt8(v % 10)
        v /= 10
        count += 1
      }
      for i in stride(from: count - 1, through: 0, by: -1) { out.append(buffer[i]) }
    }
  }
}
