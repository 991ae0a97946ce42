/// Why an `OutboundHTTPSession` request brought no HTTP answer; each caller words it in its
/// own error type.
public enum OutboundHTTPError: Error {
  /// The session's own deadline passed first.
  case deadlinePassed
  /// URLSession's error (its own timeout, a refused connection, a TLS failure).
  case failed(any Error)
  /// An answer that is not HTTP.
  case notHTTP
}
