/// Why a push's OIDC token was refused, each check its own case for the log. The push is
/// answered 401/403 either way; which check failed is not the sender's to learn.
public enum PushTokenRefusal: Error, Equatable, Sendable {
  case missingBearer
  case oversize
  case malformed(String)
  case unsupportedAlgorithm(String)
  /// No key with the token's `kid`, even after a refetch.
  case unknownKey(String?)
  /// Google's key set could never be fetched: nothing verifies without it (fail closed).
  case keysUnavailable
  case badSignature
  case expired
  /// `iat` later than now (beyond the leeway).
  case issuedInFuture
  case wrongIssuer(String?)
  case wrongAudience
  /// Another principal's token: any Google account can mint one for any audience.
  case wrongEmail(String?)
  case emailNotVerified
  case missingClaim(String)

  /// Whether the refusal is about this server's state (no keys) rather than the token: worth
  /// a 503 so Pub/Sub retries, instead of a 401.
  public var isServerSide: Bool { self == .keysUnavailable }
}
