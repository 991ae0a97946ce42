/// Why a push body is not a Pub/Sub push of a developer notification, precisely, for the log
/// and the 400 answer (Pub/Sub redelivers a refused message, so a body this server can never
/// read should be answered so and recorded, not silently acknowledged).
public enum PubSubPushError: Error, Equatable, Sendable, CustomStringConvertible {
  case tooLarge(Int)
  case notJSONObject(String)
  /// A required field is absent; the path names it (`message.data`).
  case missing(String)
  /// A field has the wrong type or an impossible value.
  case invalid(String, String)
  /// `message.data` is not base64 or decodes to more than the limit.
  case undecodableData(String)
  /// None of the notification kinds, or more than one.
  case notificationKind(String)

  public var description: String {
    switch self {
    case .tooLarge(let limit): "the push body is larger than \(limit) bytes"
    case .notJSONObject(let what): "\(what) is not a JSON object"
    case .missing(let field): "\(field) is missing"
    case .invalid(let field, let why): "\(field) \(why)"
    case .undecodableData(let why): "message.data \(why)"
    case .notificationKind(let why): "the notification \(why)"
    }
  }
}
