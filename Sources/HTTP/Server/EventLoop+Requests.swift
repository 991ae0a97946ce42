import CSystem
import StorekeeperLogging

extension EventLoop {
  /// Output queued beyond this stops request processing until it drains (slow readers).
  private static let outputHighWater = 64 * 1024

  /// Parses buffered bytes and answers requests one at a time, in order. Immediate handlers
  /// answer on the spot, so a pipelined batch is answered with one write.
  /// - Returns: whether it stopped for output above the high-water mark (to go on once that
  ///   is written).
  @discardableResult
  func processInput(_ connection: Connection) -> Bool {
    while connection.phase == .idle || connection.phase == .body {
      if connection.closeAfterWrite { return false }
      if connection.output.count > Self.outputHighWater { return true }
      let event: RequestParser.Event?
      do {
        event = try connection.parser.next()
      } catch {
        reject(connection, error)
        return false
      }
      guard let event else { return false }
      // Consumed, so the head moves into the connection instead of being copied.
      switch consume event {
      case .head(let head):
        let sendContinue =
          head.expectsContinue && head.framing != .none && head.framing != .length(0)
          && connection.parser.bufferedByteCount == 0
        connection.head = consume head
        connection.phase = .body
        connection.headStart = 0
        connection.bodyStart = now
        connection.bodyReceived = 0
        // A body-rate deadline left by an earlier request must not judge this body before its
        // own grace period: cleared, `updateDeadline` sets this one's.
        connection.deadline = 0
        connection.body = []
        if sendContinue { ResponseEncoder.appendContinue(to: &connection.output) }
      case .body(let bytes):
        connection.bodyReceived += bytes.count
        guard chargeBody(connection) else {
          answerAndClose(connection, bodiesBusy())
          return false
        }
        // Grown as bytes arrive (doubling), never to the declared length up front: the budget
        // counts bytes received, and a declared megabyte costs nothing to send.
        if connection.body.isEmpty {
          connection.body = bytes
        } else {
          connection.body.append(contentsOf: bytes)
        }
      case .end:
        // Taken, not copied: the request takes over the head's strings and headers.
        guard let head = connection.head.take() else { return false }
        let body = connection.body
        connection.body = []
        connection.phase = .inFlight
        start(head: head, body: body, on: connection)
      }
    }
    return false
  }

  /// Routes a complete request: immediate handlers and routing errors answer now; async
  /// handlers, and deferrable ones that defer, run as tasks, on the task pool or on this loop
  /// (see `HandlerPlacement`), and hand their response back to this loop.
  private func start(
    head: consuming RequestHead, body: consuming [UInt8], on connection: Connection
  ) {
    let http10 = head.minorVersion == 0
    let keepAlive = head.isKeepAlive && !isShuttingDown
    // The head is consumed: its target and headers move into the request uncopied.
    var request = Request(
      method: head.method, target: head.target, headers: head.headers, body: body)
    request.isKeepAlive = keepAlive
    let requestId =
      RequestID.accept(request.headers["X-Request-Id"]) ?? RequestID.make(using: &random)
    // The access log names the route, never the raw path: path parameters such as trade
    // numbers act as credentials. Paths no route matched are logged masked (masking is only
    // paid for those: it walks the path character by character).
    connection.current = Connection.Current(
      method: request.method, path: "", requestId: requestId,
      started: now, keepAlive: keepAlive, http10: http10)
    switch shared.resolve(request.method, path: request.path, target: request.target) {
    case .notFound:
      connection.current?.path = LogRedaction.path(request.path)
      complete(connection, with: Router.notFound.response(requestId: requestId))
    case .methodNotAllowed(let allow):
      connection.current?.path = LogRedaction.path(request.path)
      complete(connection, with: Router.methodNotAllowed(allow).response(requestId: requestId))
    case .found(let handler, let parameters, let route):
      connection.current?.path = route
      var context = Context(
        requestId: requestId, parameters: parameters, logger: shared.logger,
        remoteAddress: connection.remoteAddress)
      context.route = route
      switch handler {
      case .immediate(let run):
        complete(connection, with: Router.run(run, request, context))
      case .async(let run, let placement):
        startTask(run, placement, request, context, http10: http10, on: connection)
      case .deferrable(let run, let placement):
        switch Router.run(run, request, context) {
        case .response(let response): complete(connection, with: response)
        case .later(let rest):
          startTask(rest, placement, request, context, http10: http10, on: connection)
        }
      }
    }
  }

  /// Runs an async handler as a task, within the in-flight limit; its response comes back to
  /// this loop. A streamed body's producer runs in the same task.
  private func startTask(
    _ run: @escaping Handler, _ placement: HandlerPlacement, _ request: Request,
    _ context: Context, http10: Bool, on connection: Connection
  ) {
    guard shared.acquireInFlight() else {
      let busy = HTTPError(
        503, code: "overloaded", detail: "Too many requests in progress; retry shortly.",
        headers: ["Retry-After": String(shared.configuration.retryAfterSeconds)])
      complete(connection, with: busy.response(requestId: context.requestId))
      return
    }
    let fd = connection.fd
    let generation = connection.generation
    let shared = self.shared
    let operation: @Sendable () async -> Void = {
      let response = await Router.run(run, request, context)
      // HEAD answers what GET would: a streamed body to HTTP/1.0 is refused for both.
      if response.stream != nil, http10 {
        shared.releaseInFlight()
        self.deliver(
          fd: fd, generation: generation,
          Self.streamNeedsHTTP11.response(requestId: context.requestId))
        return
      }
      if let stream = response.stream, request.method != .head {
        // The producer runs in this task, which keeps its in-flight slot until the body is
        // done, and which the connection cancels when its client goes.
        let channel = StreamChannel(loop: self, fd: fd, generation: generation, shared: shared)
        self.deliver(fd: fd, generation: generation, response, channel: channel)
        await channel.run(stream.produce)
        shared.releaseInFlight()
        return
      }
      shared.releaseInFlight()
      self.deliver(fd: fd, generation: generation, response)
    }
    switch placement {
    case .taskPool: connection.current?.handler = Task(operation: operation)
    case .eventLoop:
      connection.current?.handler = Task(executorPreference: self, operation: operation)
    }
  }

  /// Hands a handler's response to its connection: at once on the loop's thread, else by mail.
  /// A channel the connection can no longer take is cancelled, so its producer stops.
  func deliver(
    fd: Int32, generation: UInt32, _ response: Response, channel: StreamChannel? = nil
  ) {
    guard isOnLoopThread else {
      if !post(.response(fd: fd, generation: generation, response, channel)) {
        channel?.cancel()
      }
      return
    }
    guard let connection = connection(fd: fd, generation: generation),
      connection.phase == .inFlight
    else {
      channel?.cancel()
      return
    }
    complete(connection, with: response, channel: channel)
    progress(connection)
  }

  /// A streamed body framed by the connection's close cannot be told from one cut short, so
  /// HTTP/1.0 clients are refused one.
  static let streamNeedsHTTP11 = HTTPError(
    505, code: "http_version_not_supported",
    detail: "This answer is streamed in chunks, which needs HTTP/1.1.")

  /// Writes the response of the request in flight and returns the connection to idle, or,
  /// for a streamed body, to `streaming` until its last chunk.
  func complete(
    _ connection: Connection, with response: Response, channel: StreamChannel? = nil
  ) {
    if response.stream != nil, channel == nil, connection.current?.method != .head {
      // Only an async handler's task can run a producer.
      shared.logger.error(
        "a streamed body from an immediate handler",
        ["route": .string(connection.current?.path ?? "-")])
      let failure = HTTPError.internalError.response(
        requestId: connection.current?.requestId ?? "-")
      complete(connection, with: failure)
      return
    }
    // The loop's clock is read as each event is taken up and after each batch, not while a
    // handler runs on the loop (an immediate one, or a loop-placed task's jobs): read it
    // again, so the access log and the latency histogram show what the request took, and a
    // handler that holds the loop is seen.
    now = csys_monotonic_ns()
    releaseBody(connection)
    guard let current = connection.current.take() else {
      channel?.cancel()
      return
    }
    // A client that half-closed after pipelining still gets an answer to every request it
    // sent before; the connection closes after the last of them.
    let moreInput = !connection.inputClosed || connection.parser.bufferedByteCount > 0
    let keepAliveAllowed = current.keepAlive && !isShuttingDown && moreInput
    dateCache.refresh()
    let (keepAlive, wireBytes) = writeResponse(
      response, requestId: current.requestId, headRequest: current.method == .head,
      keepAlive: keepAliveAllowed, announceKeepAlive: current.http10 && keepAliveAllowed,
      on: connection)
    if let channel {
      guard response.status != 204, response.status != 304 else {
        channel.cancel()
        if !keepAlive { connection.closeAfterWrite = true }
        connection.phase = .idle
        connection.idleSince = now
        logCompleted(current, status: response.status, bytes: 0, wireBytes: wireBytes, connection)
        return
      }
      connection.current = current
      connection.phase = .streaming
      connection.streaming = Connection.Streaming(
        channel: channel, status: response.status, keepAlive: keepAlive, wireBytes: wireBytes)
      return
    }
    if !keepAlive { connection.closeAfterWrite = true }
    connection.phase = .idle
    connection.idleSince = now
    if connection.parser.hasPartialHead { connection.headStart = now }
    logCompleted(
      current, status: response.status, bytes: response.body.count, wireBytes: wireBytes,
      connection)
  }

  /// The metrics hook and the access log line of an answered request.
  func logCompleted(
    _ current: Connection.Current, status: Int, bytes: Int, wireBytes: Int,
    _ connection: Connection, cut: Bool = false
  ) {
    shared.observer?.requestCompleted(
      method: current.method, status: status, nanoseconds: now &- current.started)
    let logger = shared.logger
    if logger.isEnabled(.info) {
      var fields: [String: LogValue] = [
        "method": .string(current.method.rawValue), "path": .string(current.path),
        "status": .int(status),
        "duration_ms": .double(Double(now &- current.started) / 1_000_000),
        "request_id": .string(current.requestId), "bytes": .int(bytes),
        "remote": .string(connection.remoteAddress),
        "wire_bytes": .int(wireBytes),
      ]
      if cut { fields["body_cut_short"] = .bool(true) }
      logger.info("request", fields)
    }
  }

  /// A request that cannot be parsed: answer with the parser's status and close, since the
  /// rest of the stream can no longer be framed.
  func reject(_ connection: Connection, _ error: ParseError) {
    answerAndClose(connection, HTTPError(error.status, code: error.code, detail: error.detail))
  }

  /// Answers the request being read with `problem` and closes the connection after it.
  private func answerAndClose(_ connection: Connection, _ problem: HTTPError) {
    let requestId = RequestID.make(using: &random)
    connection.current = Connection.Current(
      method: connection.head?.method ?? HTTPMethod("-"),
      path: connection.head.map { LogRedaction.path($0.target) } ?? "-",
      requestId: requestId, started: now, keepAlive: false, http10: false)
    complete(connection, with: problem.response(requestId: requestId))
    // What arrived of the body is not kept while the connection lingers.
    connection.body = []
    connection.head = nil
  }

  /// Charges the body's bytes past its free part to the server's shared budget (see
  /// `ServerConfiguration.maxBufferedBodyBytes`); false when they do not fit.
  private func chargeBody(_ connection: Connection) -> Bool {
    let owed =
      connection.bodyReceived - shared.configuration.bodyBytesAlwaysHeld - connection.bodyCharge
    guard owed > 0 else { return true }
    guard shared.acquireBodyBytes(owed) else { return false }
    connection.bodyCharge += owed
    return true
  }

  /// Gives the budget back: the request was answered (its handler no longer needs the body)
  /// or the connection closed.
  func releaseBody(_ connection: Connection) {
    guard connection.bodyCharge > 0 else { return }
    shared.releaseBodyBytes(connection.bodyCharge)
    connection.bodyCharge = 0
  }

  private func bodiesBusy() -> HTTPError {
    HTTPError(
      503, code: "overloaded",
      detail: "The server holds as many large request bodies as it can; retry shortly.",
      headers: ["Retry-After": String(shared.configuration.retryAfterSeconds)])
  }

  /// The head of a slow request timed out, or its body is arriving too slowly.
  func timedOut(_ connection: Connection, detail: String) {
    reject(connection, ParseError(408, "request_timeout", detail))
    progress(connection)
  }
}
