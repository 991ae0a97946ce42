extension RequestParser {
  /// Finds the end of the head (the first empty line) and parses it, or checks the limits
  /// that can already be judged on a partial head.
  mutating func parseHeadIfComplete() throws(ParseError) -> RequestHead? {
    let outcome = buffer.withUnsafeBytes { raw in headScan.run(raw, start: &start) }
    switch outcome {
    case .failed(let error):
      throw error
    case .incomplete:
      try checkPartialHead()
      return nil
    case .complete(let end):
      let result = buffer.withUnsafeBytes { raw in
        Result { () throws(ParseError) -> RequestHead in
          try parseHead(UnsafeRawBufferPointer(rebasing: raw[start..<end]))
        }
      }
      let head = try result.get()
      headScan = HeadScan()
      consume(end - start)
      return head
    }
  }

  /// On a head still arriving: an overlong target is 414 as soon as it shows; otherwise a head
  /// past its size limit is 431. The scan counted the target, so nothing is read again.
  private func checkPartialHead() throws(ParseError) {
    if !headScan.sawRequestLine && headScan.targetLength > limits.maxTargetBytes {
      throw .targetTooLong
    }
    if bufferedByteCount > limits.maxHeadBytes { throw .headTooLarge }
  }

  /// Parses a complete head: request-line CRLF *(field-line CRLF) CRLF.
  private func parseHead(_ head: UnsafeRawBufferPointer) throws(ParseError) -> RequestHead {
    if head.count > limits.maxHeadBytes { throw .headTooLarge }
    let lineEnd = try crlf(in: head, from: 0)
    let line = UnsafeRawBufferPointer(rebasing: head[0..<lineEnd])
    let (method, target, minor) = try parseRequestLine(line)

    // Room for an app's usual headers at once: growing the list 1, 2, 4, 8 cost an
    // allocation and a copy at each step for every request with a few headers.
    var fields = FieldLines(capacity: 8)
    var position = lineEnd + 2
    while true {
      let end = try crlf(in: head, from: position)
      if end == position { break }
      try fields.parse(UnsafeRawBufferPointer(rebasing: head[position..<end]), limits: limits)
      position = end + 2
    }
    return try fields.makeHead(method: method, target: target, minor: minor, limits: limits)
  }

  /// The index of the CR ending the line at `from`; a CR not followed by LF is an error.
  private func crlf(in head: UnsafeRawBufferPointer, from: Int) throws(ParseError) -> Int {
    var end = from
    while head[end] != ByteClass.cr { end += 1 }
    guard end + 1 < head.count, head[end + 1] == ByteClass.lf else {
      throw .bad("Bare CR in the request head.")
    }
    return end
  }

  private func parseRequestLine(_ line: UnsafeRawBufferPointer) throws(ParseError) -> (
    HTTPMethod, String, Int
  ) {
    guard let sp1 = line.firstIndex(of: ByteClass.space), sp1 > 0 else {
      throw .bad("Malformed request-line.")
    }
    let methodBytes = UnsafeRawBufferPointer(rebasing: line[0..<sp1])
    for c in methodBytes where !ByteClass.isToken(c) { throw .bad("Invalid method.") }
    guard let sp2 = line[(sp1 + 1)...].firstIndex(of: ByteClass.space), sp2 > sp1 + 1 else {
      throw .bad("Malformed request-line.")
    }
    let targetBytes = UnsafeRawBufferPointer(rebasing: line[(sp1 + 1)..<sp2])
    for c in targetBytes where !ByteClass.isTarget(c) {
      throw .bad("Invalid character in request-target.")
    }
    let version = UnsafeRawBufferPointer(rebasing: line[(sp2 + 1)...])
    guard version.count == 8, version.starts(with: "HTTP/".utf8), version[6] == UInt8(ascii: "."),
      let major = digit(version[5]), let minor = digit(version[7])
    else { throw .bad("Malformed HTTP-version.") }
    guard major == 1, minor <= 1 else { throw .versionNotSupported }
    if targetBytes.count > limits.maxTargetBytes { throw .targetTooLong }
    let method = HTTPMethod.parse(token: methodBytes)
    let target = String(decoding: targetBytes, as: UTF8.self)
    try checkTargetForm(targetBytes, method: method)
    return (method, target, minor)
  }

  /// origin-form, absolute-form, or `*` for OPTIONS (RFC 9112 §3.2). CONNECT's
  /// authority-form (`host:port`) is refused like any other form: this server is no proxy, and
  /// the form names no resource here whose methods a 405 could list. CONNECT with a path gets
  /// the router's answer, as any method does.
  private func checkTargetForm(_ target: UnsafeRawBufferPointer, method: HTTPMethod)
    throws(ParseError)
  {
    if target[0] == UInt8(ascii: "/") { return }
    if target.count == 1 && target[0] == UInt8(ascii: "*") && method == .options { return }
    let lower = target.prefix(8).map { $0 | 0x20 }
    if lower.starts(with: "http://".utf8) || lower.starts(with: "https://".utf8) { return }
    if method.rawValue == "CONNECT" {
      throw .bad("CONNECT's authority-form is not accepted: this server is not a proxy.")
    }
    throw .bad("Invalid request-target form.")
  }

  private func digit(_ c: UInt8) -> Int? {
    c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9") ? Int(c - UInt8(ascii: "0")) : nil
  }
}
