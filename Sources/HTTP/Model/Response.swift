import Foundation

/// A response. `Content-Length` (or `Transfer-Encoding`), `Date`, `Connection` and
/// `X-Request-Id` are written by the server; a handler sets only what is specific to it.
public struct Response: Sendable {
  public var status: Int
  public var headers: HTTPHeaders
  public var body: [UInt8]
  /// A body made after the head (`body` is then unused): sent chunked, with no
  /// `Content-Length`.
  public var stream: BodyStream?

  public init(status: Int = 200, headers: HTTPHeaders = .init(), body: [UInt8] = []) {
    self.status = status
    self.headers = headers
    self.body = body
  }

  public init(status: Int = 200, headers: HTTPHeaders = .init(), stream: BodyStream) {
    self.status = status
    self.headers = headers
    self.body = []
    self.stream = stream
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
