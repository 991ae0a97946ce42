/// How the body of a request is delimited (RFC 9112 §6.3).
public enum BodyFraming: Equatable, Sendable {
  case none
  case length(Int)
  case chunked
}

/// The request line and header section, validated.
public struct RequestHead: Sendable {
  public var method: HTTPMethod
  public var target: String
  /// 0 for HTTP/1.0, 1 for HTTP/1.1.
  public var minorVersion: Int
  public var headers: HTTPHeaders
  /// HTTP/1.1 unless `Connection: close`; HTTP/1.0 only with `Connection: keep-alive`.
  public var isKeepAlive: Bool
  /// `Expect: 100-continue` was sent.
  public var expectsContinue: Bool
  public var framing: BodyFraming
}
