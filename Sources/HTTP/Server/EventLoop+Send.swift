import CSystem

/// Writing a response. The common case — nothing queued before it, no pipelined request
/// after it — is sent at once by one `sendmsg`: the head from the loop's `headBuffer`, the
/// body from the response's own storage, neither copied into the connection. Whatever the
/// socket does not take, and every other case, goes through the connection's output buffer
/// and `flush`, in order.
extension EventLoop {
  /// - Returns: whether the connection stays open after this response, and the bytes it
  ///   puts on the wire.
  func writeResponse(
    _ response: Response, requestId: String, headRequest: Bool, keepAlive: Bool,
    announceKeepAlive: Bool, on connection: Connection
  ) -> (keepAlive: Bool, wireBytes: Int) {
    if !connection.hasPendingOutput && connection.parser.bufferedByteCount == 0 {
      var writer = HeadWriter(headBuffer)
      let head = dateCache.withLine { date in
        ResponseEncoder.writeHead(
          response, requestId: requestId, date: date, headRequest: headRequest,
          keepAlive: keepAlive, announceKeepAlive: announceKeepAlive, into: &writer)
      }
      if writer.fits {
        let headBytes = UnsafeRawBufferPointer(rebasing: headBuffer[0..<writer.count])
        let body = head.includesBody ? response.body : []
        sendNow(head: headBytes, body: body, on: connection)
        return (head.keepAlive, headBytes.count + body.count)
      }
    }
    let before = connection.output.count
    let stays = dateCache.withLine { date in
      ResponseEncoder.encode(
        response, requestId: requestId, date: date, headRequest: headRequest,
        keepAlive: keepAlive, announceKeepAlive: announceKeepAlive, into: &connection.output)
    }
    return (stays, connection.output.count - before)
  }

  /// Sends head and body with one system call and queues what the socket did not take. A
  /// failed send queues everything: `flush` meets the error again and closes the connection
  /// at a point where closing is safe.
  private func sendNow(head: UnsafeRawBufferPointer, body: [UInt8], on connection: Connection) {
    var sent = 0
    body.withUnsafeBytes { body in
      let result = try? systemCall("sendmsg") {
        csys_writev2(connection.fd, head.baseAddress, head.count, body.baseAddress, body.count)
      }
      if case .done(let n) = result { sent = n }
    }
    if sent > 0 { connection.lastWriteProgress = now }
    if sent >= head.count + body.count { return }
    if sent < head.count {
      connection.output.append(contentsOf: head[sent...])
      connection.output.append(contentsOf: body)
    } else {
      connection.output.append(contentsOf: body[(sent - head.count)...])
    }
  }
}
