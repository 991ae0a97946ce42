import Foundation

/// What Google says in a refusal: the API's `{"error": {"code", "message", "status"}}`, or the
/// OAuth token endpoint's `{"error": "invalid_grant", "error_description"}`. Read for the
/// failure's text only; nil when the body is neither.
struct GoogleErrorBody: Sendable {
  var message: String
  /// The first of the API's `errors[].reason`, where it says why more precisely than the
  /// status (`purchaseTokenDoesNotMatchProductId`).
  var reason: String?

  init?(body: [UInt8]) {
    guard body.count <= 64 * 1024,
      let object = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any]
    else { return nil }
    if let error = object["error"] as? [String: Any] {
      let status = error["status"] as? String
      let text = error["message"] as? String
      guard status != nil || text != nil else { return nil }
      message = [status, text].compactMap { $0 }.joined(separator: ": ")
      reason = ((error["errors"] as? [Any])?.first as? [String: Any])?["reason"] as? String
    } else if let error = object["error"] as? String {
      message = [error, object["error_description"] as? String].compactMap { $0 }.joined(
        separator: ": ")
    } else {
      return nil
    }
  }

  /// Google's words, or a stand-in naming the status, clipped for logs.
  static func text(_ body: [UInt8], status: Int) -> String {
    let message = GoogleErrorBody(body: body)?.message ?? "HTTP \(status), no error body"
    return String(message.prefix(300))
  }
}
