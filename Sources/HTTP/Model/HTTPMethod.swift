/// A request method: any token (RFC 9110 §9.1; methods are case-sensitive). A method no route
/// has on an existing path is answered 405 with `Allow`, whether it is standard (TRACE,
/// CONNECT) or made up, so one rule covers every method the server has no handler for.
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

  /// The methods routes are written with, in the order `Allow` lists them.
  public static let known: [HTTPMethod] = [.get, .head, .post, .put, .patch, .delete, .options]

  public var description: String { rawValue }

  /// Maps request-line bytes (already checked to be a token) to a method: the routed ones are
  /// shared statics, so the hot path allocates nothing; any other token gets its own string.
  static func parse(token bytes: UnsafeRawBufferPointer) -> HTTPMethod {
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
    return HTTPMethod(String(decoding: bytes, as: UTF8.self))
  }
}
