/// A parsed HTTP request with its whole body in memory (bodies are capped by
/// `ServerConfiguration.maxBodyBytes`).
public struct Request: Sendable {
  public var method: HTTPMethod
  /// The raw request-target as sent.
  public var target: String
  /// The percent-decoded path, without the query.
  public var path: String
  /// Percent-decoded query parameters (`+` read as a space), first value per key.
  public var query: [String: String]
  public var headers: HTTPHeaders
  public var body: [UInt8]
  /// Whether the connection stays open after this request's response.
  public var isKeepAlive: Bool

  public init(
    method: HTTPMethod, target: String, headers: HTTPHeaders = .init(), body: [UInt8] = []
  ) {
    self.method = method
    self.target = target
    let split = RequestTarget(target)
    self.path = split.path
    self.query = split.query
    self.headers = headers
    self.body = body
    self.isKeepAlive = true
  }
}
