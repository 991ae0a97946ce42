/// Writing a streamed body (`BodyStream`): pieces move from the producer's channel into the
/// connection's output, framed as chunks, only while the output holds less than the stream's
/// bound; what is held is reported back to the channel, which is what lets the producer go on.
extension EventLoop {
  /// Moves what the producer has made to the socket, as far as the bound allows. Called at
  /// the start of every `progress`: after a write event, after the channel's wake-up.
  func pumpStream(_ connection: Connection) {
    guard connection.phase == .streaming, let channel = connection.streaming?.channel else {
      return
    }
    while true {
      if connection.hasPendingOutput {
        flush(connection)
        // A failed send closed the connection, which cancelled the channel.
        guard connections[Int(connection.fd)] === connection else { return }
      }
      let held = connection.output.count - connection.outputOffset
      if held >= channel.bound {
        channel.report(held: held)
        return
      }
      let (pieces, end) = channel.take()
      for piece in pieces {
        ResponseEncoder.appendChunk(piece, to: &connection.output)
        connection.streaming?.bodyBytes += piece.count
        connection.streaming?.wireBytes += piece.count
      }
      if let end {
        finishStream(connection, end)
        return
      }
      if pieces.isEmpty {
        channel.report(held: held)
        return
      }
    }
  }

  /// The producer is done: the last chunk, or, if it failed, a body cut short and the
  /// connection closed after what was sent, so the client sees no last chunk.
  private func finishStream(_ connection: Connection, _ end: StreamChannel.End) {
    guard let streaming = connection.streaming.take(), let current = connection.current.take()
    else { return }
    var keepAlive = false
    var cut = false
    switch end {
    case .finished:
      ResponseEncoder.appendLastChunk(to: &connection.output)
      let moreInput = !connection.inputClosed || connection.parser.bufferedByteCount > 0
      keepAlive = streaming.keepAlive && !isShuttingDown && moreInput
    case .failed(let error):
      cut = true
      shared.logger.error(
        "streamed body failed after its head",
        [
          "error": .string(error), "route": .string(current.path),
          "request_id": .string(current.requestId), "bytes": .int(streaming.bodyBytes),
        ])
    }
    if !keepAlive { connection.closeAfterWrite = true }
    connection.phase = .idle
    connection.idleSince = now
    if connection.parser.hasPartialHead { connection.headStart = now }
    logCompleted(
      current, status: streaming.status, bytes: streaming.bodyBytes,
      wireBytes: streaming.wireBytes + (cut ? 0 : 5), connection, cut: cut)
  }

  /// The connection closes mid-stream (the client went, or a write timed out): the producer's
  /// writes throw from now on, and the access log says the body was cut short.
  func abandonStream(_ connection: Connection) {
    guard let streaming = connection.streaming.take() else { return }
    streaming.channel.cancel()
    guard let current = connection.current else { return }
    logCompleted(
      current, status: streaming.status, bytes: streaming.bodyBytes,
      wireBytes: streaming.wireBytes, connection, cut: true)
  }
}
