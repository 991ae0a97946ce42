import Foundation

/// A response. `Content-Length`, `Date`, `Connection` and `X-Request-Id` are written by the
/// server; a handler sets only what is specific to it.
public struct Response: Sendable {
  public var status: Int
  public var headers: HTTPHeaders
  public var body: [UInt8]

  public init(status: Int = 200, headers: HTTPHeaders = .init(), body: [UInt8] = []) {
    self.status = status
    self.headers = headers
    self.body = body
  }

  /// Encodes `value` with a plain `JSONEncoder`; key naming (snake_case) is the caller's job.
  public static func json<T: Encodable>(_ value: T, status: Int = 200) throws -> Response {
    let data = try JSONEncoder().encode(value)
    return Response(
      status: status, headers: ["Content-Type": "application/json"], body: [UInt8](data))
  }

  /// A UTF-8 text response.
  public static func text(_ text: String, status: Int = 200) -> Response {
    Response(
      status: status, headers: ["Content-Type": "text/plain; charset=utf-8"], body: Array(text.utf8)
    )
  }
}
