/// An HTTP answer as `OutboundHTTPSession.exchange` returns it: whatever the status.
public struct OutboundHTTPAnswer: Sendable {
  public var status: Int
  /// Header fields by lowercased name (the last one when a name repeats).
  public var headers: [String: String]
  public var body: [UInt8]

  public init(status: Int, headers: [String: String] = [:], body: [UInt8]) {
    self.status = status
    self.headers = headers
    self.body = body
  }
}
