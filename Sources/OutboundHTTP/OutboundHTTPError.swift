/// Why an `OutboundHTTPSession` request brought no HTTP answer; each caller words it in its
/// own error type.
public enum OutboundHTTPError: Error {
  /// The session's own deadline passed first.
  case deadlinePassed
  /// libcurl's error (a refused connection, a TLS failure, an answer cut short).
  case failed(any Error)
  /// An answer that is not HTTP.
  case notHTTP
}
