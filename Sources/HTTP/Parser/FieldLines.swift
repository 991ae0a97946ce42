import TextSafety

/// Collects field lines while they are parsed, keeping what framing needs (Host,
/// Content-Length, Transfer-Encoding, Connection, Expect) so no second pass is needed.
struct FieldLines {
  var headers: HTTPHeaders
  var count = 0
  var hostCount = 0
  var contentLengths: [String] = []
  var transferCodings: [String] = []
  var sawTransferEncoding = false
  var connectionClose = false
  var connectionKeepAlive = false
  var expectsContinue = false

  init(capacity: Int = 0) { headers = HTTPHeaders(capacity: capacity) }

  /// Parses one field line: field-name ":" OWS field-value OWS. No obs-fold, no whitespace
  /// before the colon, no control characters in the value.
  mutating func parse(_ line: UnsafeRawBufferPointer, limits: ParserLimits) throws(ParseError) {
    count += 1
    if count > limits.maxHeaderCount { throw .tooManyHeaders }
    if ByteClass.isWhitespace(line[0]) { throw .bad("Obsolete line folding is not accepted.") }
    guard let colon = line.firstIndex(of: ByteClass.colon), colon > 0 else {
      throw .bad("Malformed header field.")
    }
    for c in line[0..<colon] where !ByteClass.isToken(c) {
      throw ByteClass.isWhitespace(c)
        ? .bad("Whitespace before the colon of a header field.")
        : .bad("Invalid character in a header field name.")
    }
    var valueStart = colon + 1
    var valueEnd = line.count
    while valueStart < valueEnd && ByteClass.isWhitespace(line[valueStart]) { valueStart += 1 }
    while valueEnd > valueStart && ByteClass.isWhitespace(line[valueEnd - 1]) { valueEnd -= 1 }
    // U+0300, the first combining mark, begins with 0xCC: below it no run of marks can be.
    var mayHoldMarks = false
    for c in line[valueStart..<valueEnd] {
      guard ByteClass.isFieldValue(c) else {
        throw .bad("Invalid character in a header field value.")
      }
      if c >= 0xCC { mayHoldMarks = true }
    }
    let nameBytes = UnsafeRawBufferPointer(rebasing: line[0..<colon])
    let valueBytes = UnsafeRawBufferPointer(rebasing: line[valueStart..<valueEnd])
    let value = String(decoding: valueBytes, as: UTF8.self)
    // Compared and hashed by canonical equivalence later: a long run of combining marks would
    // cost quadratic time on the event loop (`StreamSafeText`).
    guard !mayHoldMarks || StreamSafeText.isStreamSafe(value) else {
      throw .bad("A header field value holds too many combining marks in a row.")
    }
    headers.add(
      limits.sharedFieldNames.name(nameBytes) ?? String(decoding: nameBytes, as: UTF8.self), value)
    try note(name: nameBytes, value: value)
  }

  private mutating func note(name: UnsafeRawBufferPointer, value: String) throws(ParseError) {
    switch name.count {
    case 4 where ByteClass.equalsLowercase(name, "host"):
      hostCount += 1
    case 6 where ByteClass.equalsLowercase(name, "expect"):
      if value.lowercased() == "100-continue" { expectsContinue = true }
    case 10 where ByteClass.equalsLowercase(name, "connection"):
      for option in Self.list(value) {
        if option == "close" { connectionClose = true }
        if option == "keep-alive" { connectionKeepAlive = true }
      }
    case 14 where ByteClass.equalsLowercase(name, "content-length"):
      contentLengths.append(
        contentsOf: value.split(separator: ",", omittingEmptySubsequences: false).map {
          String($0.trimmingWhitespace())
        })
    case 17 where ByteClass.equalsLowercase(name, "transfer-encoding"):
      sawTransferEncoding = true
      transferCodings.append(contentsOf: Self.list(value))
    default:
      break
    }
  }

  /// A comma-separated list, lowercased, empty elements dropped (RFC 9110 §5.6.1).
  static func list(_ value: String) -> [String] {
    value.split(separator: ",").map { $0.trimmingWhitespace().lowercased() }.filter { !$0.isEmpty }
  }

  /// Applies the framing rules of RFC 9112 §6 and the Host rule of RFC 9112 §3.2.
  func makeHead(method: HTTPMethod, target: String, minor: Int, limits: ParserLimits)
    throws(ParseError) -> RequestHead
  {
    if minor == 1 && hostCount != 1 || hostCount > 1 {
      throw .bad(hostCount == 0 ? "Missing Host header." : "Duplicate Host header.")
    }
    var framing = BodyFraming.none
    if sawTransferEncoding {
      if !contentLengths.isEmpty { throw .bad("Both Content-Length and Transfer-Encoding.") }
      if minor == 0 { throw .bad("Transfer-Encoding in an HTTP/1.0 request.") }
      for coding in transferCodings
      where coding.isEmpty || !coding.utf8.allSatisfy(ByteClass.isToken) {
        throw .bad("Malformed Transfer-Encoding.")
      }
      if transferCodings.contains(where: { $0 != "chunked" }) { throw .codingNotImplemented }
      guard transferCodings.count == 1 else { throw .bad("Malformed Transfer-Encoding.") }
      framing = .chunked
    } else if let first = contentLengths.first {
      guard contentLengths.allSatisfy({ $0 == first }) else {
        throw .bad("Conflicting Content-Length values.")
      }
      guard !first.isEmpty, first.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
        throw .bad("Invalid Content-Length.")
      }
      // Digits only, so a failed conversion means a number too large for any limit.
      guard let length = Int(first), length <= limits.maxBodyBytes else { throw .bodyTooLarge }
      framing = .length(length)
    }
    let keepAlive = minor == 1 ? !connectionClose : (connectionKeepAlive && !connectionClose)
    // RFC 9110 §10.1.1: an HTTP/1.0 request's 100-continue MUST be ignored; a 1.0 client
    // knows no 1xx and would take the interim answer for the final one.
    return RequestHead(
      method: method, target: target, minorVersion: minor, headers: headers,
      isKeepAlive: keepAlive, expectsContinue: expectsContinue && minor == 1, framing: framing)
  }
}

extension Substring {
  func trimmingWhitespace() -> Substring {
    var s = self
    while let c = s.first, c == " " || c == "\t" { s.removeFirst() }
    while let c = s.last, c == " " || c == "\t" { s.removeLast() }
    return s
  }
}
