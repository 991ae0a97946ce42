#if canImport(Glibc)
  import Glibc
#endif

extension TestClient {
  /// A chunked body as it arrived, and whether its last chunk came (a cut body has none).
  struct ChunkedBody {
    var bytes: [UInt8]
    var complete: Bool
  }

  /// Reads a chunked body after `readResponse(head:)` returned its head (whose
  /// `Content-Length`-less framing leaves the buffer at the first chunk).
  func readChunkedBody() throws -> ChunkedBody {
    var body: [UInt8] = []
    while true {
      guard let line = try readLine() else { return ChunkedBody(bytes: body, complete: false) }
      guard let size = Int(line, radix: 16) else {
        throw ClientError(description: "bad chunk size line \(line)")
      }
      if size == 0 {
        guard try readLine() == "" else {
          throw ClientError(description: "trailers after last chunk")
        }
        return ChunkedBody(bytes: body, complete: true)
      }
      while buffer.count < size + 2 {
        guard try fill() else { return ChunkedBody(bytes: body, complete: false) }
      }
      guard buffer[size] == 13, buffer[size + 1] == 10 else {
        throw ClientError(description: "chunk of \(size) bytes not followed by CRLF")
      }
      body.append(contentsOf: buffer[0..<size])
      buffer.removeFirst(size + 2)
    }
  }

  /// One CRLF-ended line, or nil at end of stream.
  private func readLine() throws -> String? {
    while true {
      if let end = buffer.firstIndex(of: 10), end > 0, buffer[end - 1] == 13 {
        let line = String(decoding: buffer[0..<(end - 1)], as: UTF8.self)
        buffer.removeFirst(end + 1)
        return line
      }
      guard try fill() else { return nil }
    }
  }

  /// Shrinks the receive buffer, so a client that does not read fills the path quickly.
  func shrinkReceiveBuffer(to bytes: Int32) {
    var size = bytes
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
  }
}
