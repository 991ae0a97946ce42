/// A request method. Only the methods named here are routed; any other gets 501.
public struct HTTPMethod: Hashable, Sendable, CustomStringConvertible {
  public let rawValue: String

  public init(_ rawValue: String) { self.rawValue = rawValue }

  public static let get = HTTPMethod("GET")
  public static let head = HTTPMethod("HEAD")
  public static let post = HTTPMethod("POST")
  public static let put = HTTPMethod("PUT")
  public static let patch = HTTPMethod("PATCH")
  public static let delete = HTTPMethod("DELETE")
  public static let options = HTTPMethod("OPTIONS")

  /// The methods this server implements (RFC 9110 §9.1: anything else is 501).
  public static let known: [HTTPMethod] = [.get, .head, .post, .put, .patch, .delete, .options]

  public var description: String { rawValue }

  /// Maps request-line bytes to a shared static method, so the hot path allocates nothing.
  static func known(bytes: UnsafeRawBufferPointer) -> HTTPMethod? {
    switch bytes.count {
    case 3:
      if bytes.elementsEqual("GET".utf8) { return .get }
      if bytes.elementsEqual("PUT".utf8) { return .put }
    case 4:
      if bytes.elementsEqual("POST".utf8) { return .post }
      if bytes.elementsEqual("HEAD".utf8) { return .head }
    case 5: if bytes.elementsEqual("PATCH".utf8) { return .patch }
    case 6: if bytes.elementsEqual("DELETE".utf8) { return .delete }
    case 7: if bytes.elementsEqual("OPTIONS".utf8) { return .options }
    default: break
    }
    return nil
  }
}
