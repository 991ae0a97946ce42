import HTTP
import StorekeeperCore

/// The edge's half of `JSONCoding`: a value as a JSON response.
extension JSONCoding {
  static func response<T: Encodable>(_ value: T, status: Int = 200, headers: HTTPHeaders = .init())
    throws -> Response
  {
    var response = Response(status: status, headers: headers, body: try encode(value))
    response.headers.replaceOrAdd("Content-Type", "application/json")
    return response
  }
}
