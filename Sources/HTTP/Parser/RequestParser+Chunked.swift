extension RequestParser {
  /// chunked-body = *chunk last-chunk trailer-section CRLF (RFC 9112 §7.1).
  mutating func stepChunked() throws(ParseError) -> Event? {
    while true {
      switch state {
      case .chunkSize:
        guard let line = try takeLine(maxLength: 1024, what: "chunk-size line") else { return nil }
        let size = try parseChunkSize(line)
        // The framing counts with the data: a mebibyte in one-byte chunks is six on the wire
        // and a hundred thousand events, which the limit is there to bound.
        bodyTotal += line.count + 2 + (size > 0 ? size + 2 : 0)
        if bodyTotal > limits.maxBodyBytes { throw .bodyTooLarge }
        if size == 0 {
          state = .trailers
          trailers = HTTPHeaders()
          trailerBytes = 0
          continue
        }
        state = .chunkData(remaining: size)
      case .chunkData(let remaining):
        guard let chunk = take(upTo: remaining) else { return nil }
        state =
          chunk.count == remaining ? .chunkDataEnd : .chunkData(remaining: remaining - chunk.count)
        return .body(chunk)
      case .chunkDataEnd:
        guard bufferedByteCount >= 2 else { return nil }
        guard buffer[start] == ByteClass.cr, buffer[start + 1] == ByteClass.lf else {
          throw .bad("Chunk data not followed by CRLF.")
        }
        consume(2)
        state = .chunkSize
      case .trailers:
        let remainingBudget = limits.maxHeadBytes - trailerBytes
        guard let line = try takeLine(maxLength: remainingBudget, what: "trailer section") else {
          return nil
        }
        trailerBytes += line.count + 2
        if line.isEmpty {
          state = .head
          let done = trailers
          trailers = HTTPHeaders()
          return .end(trailers: done)
        }
        var fields = FieldLines()
        fields.count = trailers.count
        let limits = self.limits
        try line.withUnsafeBytes { raw in
          Result { () throws(ParseError) in try fields.parse(raw, limits: limits) }
        }.get()
        for (name, value) in fields.headers { trailers.add(name, value) }
      default:
        return nil
      }
    }
  }

  /// Consumes one CRLF-terminated line and returns it without the CRLF; nil if incomplete.
  /// Resumes where the previous call stopped, so a line dribbled byte by byte is scanned once.
  private mutating func takeLine(maxLength: Int, what: String) throws(ParseError) -> [UInt8]? {
    var i = start + lineScanned
    while i < buffer.count && buffer[i] != ByteClass.lf { i += 1 }
    guard i < buffer.count else {
      lineScanned = i - start
      if bufferedByteCount > maxLength {
        throw what == "trailer section" ? .headTooLarge : .bad("The \(what) is too long.")
      }
      return nil
    }
    guard i > start, buffer[i - 1] == ByteClass.cr else {
      throw .bad("Lines must end with CRLF (bare LF).")
    }
    lineScanned = 0
    let line = Array(buffer[start..<(i - 1)])
    if line.count + 2 > maxLength {
      throw what == "trailer section" ? .headTooLarge : .bad("The \(what) is too long.")
    }
    if line.contains(ByteClass.cr) { throw .bad("Bare CR in the \(what).") }
    consume(i + 1 - start)
    return line
  }

  /// chunk-size [ chunk-ext ]: hex digits, then optionally BWS ";" extensions (ignored).
  private func parseChunkSize(_ line: [UInt8]) throws(ParseError) -> Int {
    var size = 0
    var i = 0
    while i < line.count, let digit = ByteClass.hexValue(line[i]) {
      size = size * 16 + digit
      // Checked per digit so a long size cannot overflow before the limit check.
      if size > limits.maxBodyBytes { throw .bodyTooLarge }
      i += 1
    }
    guard i > 0 else { throw .bad("Invalid chunk size.") }
    while i < line.count && ByteClass.isWhitespace(line[i]) { i += 1 }
    if i < line.count {
      guard line[i] == UInt8(ascii: ";") else { throw .bad("Invalid chunk size.") }
      for c in line[i...] where !ByteClass.isFieldValue(c) {
        throw .bad("Invalid character in a chunk extension.")
      }
    }
    return size
  }
}
