import StorekeeperLogging

/// An error a handler throws to answer with a specific status and a stable machine `code`;
/// it becomes an RFC 9457 `application/problem+json` body.
public struct HTTPError: Error, Sendable {
  public var status: Int
  public var code: String
  public var title: String
  public var detail: String?
  public var fields: [FieldError]
  /// Extra response headers, e.g. `Allow` or `Retry-After`.
  public var headers: HTTPHeaders
  /// Extension members of the problem (RFC 9457 §3.2), each a name and its value as JSON text
  /// the thrower wrote, e.g. `("balance", "40")`.
  public var members: [(name: String, json: String)] = []

  public init(
    _ status: Int, code: String, detail: String? = nil, fields: [FieldError] = [],
    headers: HTTPHeaders = .init()
  ) {
    self.status = status
    self.code = code
    self.title = HTTPStatus.reason(status)
    self.detail = detail
    self.fields = fields
    self.headers = headers
  }

  /// The problem+json response; `type` is `about:blank` (the `code` carries the meaning).
  public func response(requestId: String) -> Response {
    var body = "{\"type\":\"about:blank\",\"title\":"
    JSONString.append(title, to: &body)
    body += ",\"status\":\(status)"
    if let detail {
      body += ",\"detail\":"
      JSONString.append(detail, to: &body)
    }
    body += ",\"code\":"
    JSONString.append(code, to: &body)
    if !fields.isEmpty {
      body += ",\"errors\":["
      for (i, field) in fields.enumerated() {
        if i > 0 { body += "," }
        body += "{\"field\":"
        JSONString.append(field.field, to: &body)
        body += ",\"message\":"
        JSONString.append(field.message, to: &body)
        body += "}"
      }
      body += "]"
    }
    for member in members {
      body += ","
      JSONString.append(member.name, to: &body)
      body += ":" + member.json
    }
    body += ",\"request_id\":"
    JSONString.append(requestId, to: &body)
    body += "}"
    var headers = self.headers
    headers.replaceOrAdd("Content-Type", "application/problem+json")
    return Response(status: status, headers: headers, body: Array(body.utf8))
  }
}

extension HTTPError {
  /// The body every unexpected failure gets: nothing about what went wrong inside.
  static let internalError = HTTPError(
    500, code: "internal_error", detail: "The server could not complete the request.")

  /// The answer to a request whose client left (closed or half-closed the connection) while it
  /// ran: its task was cancelled, and the statement or wait it was in failed for that reason,
  /// not the server's. nginx's 499, a 4xx, so it is counted as the client's doing; a
  /// half-closed client that still reads gets it.
  public static let clientClosed = HTTPError(
    499, code: "client_closed_request",
    detail: "The connection was closed before the answer; the request was stopped.")

  /// Whether `error`, thrown while the current task was cancelled, is that cancellation's
  /// doing: then it is `clientClosed` and logged as the client's departure, not as a failure.
  public static func isDeparture(_ error: any Error) -> Bool {
    Task.isCancelled && !(error is HTTPError)
  }
}
