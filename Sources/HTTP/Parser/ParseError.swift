/// Why a request could not be parsed, with the status it is answered with. After any parse
/// error the connection is closed: the framing of what follows can no longer be trusted.
public struct ParseError: Error, Equatable, Sendable, CustomStringConvertible {
  public var status: Int
  /// A stable machine code for the problem body.
  public var code: String
  public var detail: String

  public init(_ status: Int, _ code: String, _ detail: String) {
    self.status = status
    self.code = code
    self.detail = detail
  }

  public var description: String { "\(status) \(code): \(detail)" }

  static func bad(_ detail: String) -> ParseError { ParseError(400, "bad_request", detail) }
  static let notARequest = ParseError(
    400, "bad_request", "The bytes received cannot begin an HTTP request.")
  static let headTooLarge = ParseError(
    431, "header_fields_too_large", "The request head exceeds the server's limit.")
  static let tooManyHeaders = ParseError(
    431, "header_fields_too_large", "The request has more header fields than the server allows.")
  static let targetTooLong = ParseError(
    414, "uri_too_long", "The request-target exceeds the server's limit.")
  static let bodyTooLarge = ParseError(
    413, "content_too_large", "The request body exceeds the server's limit.")
  static let codingNotImplemented = ParseError(
    501, "transfer_coding_not_implemented", "Only the chunked transfer coding is supported.")
  static let versionNotSupported = ParseError(
    505, "http_version_not_supported", "Only HTTP/1.0 and HTTP/1.1 are supported.")
}
