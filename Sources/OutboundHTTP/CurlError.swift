import CCurl

/// libcurl's reason a request brought no answer (a refused connection, a TLS failure, a name
/// that does not resolve), as `OutboundHTTPError.failed` carries it.
public struct CurlError: Error, CustomStringConvertible {
  public let code: Int
  public let detail: String

  init(code: CURLcode, detail: String = "") {
    self.code = Int(code.rawValue)
    self.detail = detail.isEmpty ? String(cString: curl_easy_strerror(code)) : detail
  }

  /// No connection was made (refused, unreachable, a name that does not resolve): nothing
  /// was sent.
  public var couldNotConnect: Bool {
    matches(CURLE_COULDNT_CONNECT, CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY)
  }

  /// The peer closed the connection without a byte of an answer.
  public var gotNothing: Bool { matches(CURLE_GOT_NOTHING) }

  /// The connection broke while the answer was being sent or read.
  public var cutShort: Bool { matches(CURLE_RECV_ERROR, CURLE_SEND_ERROR, CURLE_PARTIAL_FILE) }

  /// What came back is not HTTP.
  public var unreadableAnswer: Bool { matches(CURLE_WEIRD_SERVER_REPLY, CURLE_HTTP2, CURLE_HTTP3) }

  private func matches(_ codes: CURLcode...) -> Bool {
    codes.contains { Int($0.rawValue) == code }
  }

  public var description: String { "curl error \(code): \(detail)" }
}
