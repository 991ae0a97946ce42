import StorekeeperLogging
import Synchronization

extension Router {
  /// Routes and runs one request in-process, exactly as the server would but without sockets:
  /// error mapping, `X-Request-Id`, and HEAD (body dropped, `Content-Length` kept).
  public func handle(_ request: Request, remoteAddress: String = "test") async -> Response {
    var generator = SystemRandomNumberGenerator()
    let requestId =
      RequestID.accept(request.headers["X-Request-Id"]) ?? RequestID.make(using: &generator)
    var response: Response
    switch resolve(request.method, path: request.path, target: request.target) {
    case .notFound:
      response = Self.notFound.response(requestId: requestId)
    case .methodNotAllowed(let allow):
      response = Self.methodNotAllowed(allow).response(requestId: requestId)
    case .found(let handler, let parameters, let route):
      var routed = Context(
        requestId: requestId, parameters: parameters, logger: logger, remoteAddress: remoteAddress)
      routed.route = route
      let context = routed
      switch handler {
      case .immediate(let run):
        response = Self.run(run, request, context)
      case .async(let run, _):
        response = await Self.run(run, request, context)
      case .deferrable(let run, _):
        switch Self.run(run, request, context) {
        case .response(let answer): response = answer
        case .later(let rest): response = await Self.run(rest, request, context)
        }
      }
    }
    response.headers.replaceOrAdd("X-Request-Id", requestId)
    if let stream = response.stream {
      // In-process, a streamed body is collected whole: its bytes, not its pacing, are tested.
      response.stream = nil
      if request.method != .head {
        let collected = Mutex<[UInt8]>([])
        do {
          try await stream.produce(
            BodyWriter { piece in collected.withLock { $0.append(contentsOf: piece) } })
        } catch {
          return Self.failure(
            error, request: request, context: Context(requestId: requestId, logger: logger))
        }
        response.body = collected.withLock { $0 }
      }
    }
    if request.method == .head {
      if !response.headers.contains("Content-Length") {
        response.headers.replaceOrAdd("Content-Length", String(response.body.count))
      }
      response.body = []
    }
    return response
  }

  static let notFound = HTTPError(404, code: "not_found", detail: "No resource at this path.")

  static func methodNotAllowed(_ allow: String) -> HTTPError {
    HTTPError(
      405, code: "method_not_allowed", detail: "The method is not allowed on this resource.",
      headers: ["Allow": allow])
  }

  static func run(_ handler: ImmediateHandler, _ request: Request, _ context: Context) -> Response {
    do {
      return try handler(request, context)
    } catch {
      return failure(error, request: request, context: context)
    }
  }

  /// A deferrable handler's error is its answer, now.
  static func run(_ handler: DeferrableHandler, _ request: Request, _ context: Context)
    -> ImmediateOutcome
  {
    do {
      return try handler(request, context)
    } catch {
      return .response(failure(error, request: request, context: context))
    }
  }

  static func run(_ handler: Handler, _ request: Request, _ context: Context) async -> Response {
    do {
      return try await handler(request, context)
    } catch {
      return failure(error, request: request, context: context)
    }
  }

  /// An `HTTPError` speaks for itself; anything else is logged and answered with a bare 500.
  static func failure(_ error: any Error, request: Request, context: Context) -> Response {
    if let error = error as? HTTPError { return error.response(requestId: context.requestId) }
    if HTTPError.isDeparture(error) {
      context.logger.info(
        "client left before its answer",
        ["error": .string(String(describing: error)), "route": .string(context.route)])
      return HTTPError.clientClosed.response(requestId: context.requestId)
    }
    context.logger.error(
      "handler failed",
      [
        "error": .string(String(describing: error)), "method": .string(request.method.rawValue),
        "route": .string(context.route),
      ])
    return HTTPError.internalError.response(requestId: context.requestId)
  }
}
