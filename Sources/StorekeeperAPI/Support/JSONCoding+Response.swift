import HTTP
import StorekeeperCore

/// The edge's half of `JSONCoding`: a value as a JSON response.
extension JSONCoding {
  static func response<T: Encodable>(_ value: T, status: Int = 200, headers: HTTPHeaders = .init())
    throws -> Response
  {
    response(json: try encode(value), status: status, headers: headers)
  }

  /// JSON written already (by one of the hot paths' own writers).
  static func response(json body: [UInt8], status: Int = 200, headers: HTTPHeaders = .init())
    -> Response
  {
    var response = Response(status: status, headers: headers, body: body)
    response.headers.replaceOrAdd("Content-Type", "application/json")
    return response
  }
}
