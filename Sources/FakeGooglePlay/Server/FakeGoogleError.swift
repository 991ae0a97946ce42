import Foundation
import HTTP

/// Google's error bodies: the API's `{"error": {"code", "message", "status", "errors"}}`
/// and the OAuth token endpoint's `{"error", "error_description"}`.
enum FakeGoogleError {
  static func api(
    _ code: Int, _ message: String, reason: String? = nil, headers: HTTPHeaders = .init()
  ) -> Response {
    let status =
      switch code {
      case 400: "INVALID_ARGUMENT"
      case 401: "UNAUTHENTICATED"
      case 403: "PERMISSION_DENIED"
      case 404: "NOT_FOUND"
      case 409: "ABORTED"
      case 410: "NOT_FOUND"
      case 429: "RESOURCE_EXHAUSTED"
      case 503: "UNAVAILABLE"
      case 500...599: "INTERNAL"
      default: "UNKNOWN"
      }
    let body: [String: Any] = [
      "error": [
        "code": code, "message": message, "status": status,
        "errors": [["message": message, "domain": "androidpublisher", "reason": reason ?? status]],
      ] as [String: Any]
    ]
    return json(body, status: code, headers: headers)
  }

  static func oauth(_ error: String, _ description: String, status: Int = 400) -> Response {
    json(["error": error, "error_description": description], status: status)
  }

  static func json(_ object: Any, status: Int = 200, headers: HTTPHeaders = .init()) -> Response {
    var headers = headers
    headers.replaceOrAdd("Content-Type", "application/json; charset=UTF-8")
    let data =
      (try? JSONSerialization.data(
        withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data("{}".utf8)
    return Response(status: status, headers: headers, body: [UInt8](data))
  }
}
