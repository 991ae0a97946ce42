/// Why a service account key file was refused; the text names the field to fix.
public enum ServiceAccountKeyError: Error, Equatable, Sendable, CustomStringConvertible {
  case unreadable(String)
  case tooLarge
  case notJSONObject
  case missing(String)
  case invalid(String, String)

  public var description: String {
    switch self {
    case .unreadable(let path): "the service account key file \(path) cannot be read"
    case .tooLarge: "the service account key file is larger than a key file can be"
    case .notJSONObject: "the service account key file is not a JSON object"
    case .missing(let field): "the service account key file has no \(field)"
    case .invalid(let field, let why): "the service account key file's \(field) \(why)"
    }
  }

  /// The field at fault, when one is.
  public var field: String? {
    switch self {
    case .missing(let field), .invalid(let field, _): field
    default: nil
    }
  }
}
