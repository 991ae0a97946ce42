/// Why a Google Play Developer API call brought no usable answer, told apart by what the
/// caller should do about it.
public enum GooglePlayFailure: Error, Equatable, Sendable {
  /// Worth trying again later (with backoff): no answer, the deadline, a 5xx, 429 (quota), or
  /// a 2xx that is not the documented JSON. `retryAfter` is Google's `Retry-After`, if sent.
  case retryable(RetryableCause, retryAfter: Duration?)
  /// 401 or 403, or the token endpoint refused the assertion: Google does not take this
  /// service account (wrong key file, no access to the app in Play Console). A configuration
  /// problem for the operator, never the customer's fault. `status` is nil when nothing could
  /// be sent (the key could not sign).
  case credentialsRefused(status: Int?, String)
  /// 404 or 410: Google does not know this purchase token (or product) for the package.
  case unknownToken(status: Int, String)
  /// 400: Google refused the request as malformed, or it could not be made at all (an id that
  /// cannot go in a URL); the same request will never succeed.
  case badRequest(String)
  /// Any other status.
  case unexpected(status: Int, String)

  public var isRetryable: Bool {
    if case .retryable = self { return true }
    return false
  }
}

/// What made a failure worth retrying.
public enum RetryableCause: Equatable, Sendable {
  case timeout
  case unreachable(String)
  /// 429 or a 5xx.
  case status(Int)
  /// A 2xx whose body is not what the Discovery document says.
  case unreadable(String)
}
