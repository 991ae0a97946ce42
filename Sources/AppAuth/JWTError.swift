/// Why a token was refused. The precise case goes to the log; the client hears only
/// `publicReason`, so an attacker learns nothing about which check it failed.
public enum JWTError: Error, Equatable, Sendable {
  case oversize
  case malformed(String)
  case unsupportedAlgorithm(String)
  /// No key with the token's `kid` (and algorithm) is known, even after a refetch.
  case unknownKey(String?)
  /// The key set could never be fetched: nothing verifies without keys.
  case keysUnavailable
  case badSignature
  case expired
  case notYetValid
  case wrongIssuer
  case wrongAudience
  case missingClaim(String)

  /// What the 401 answer may say: the same for every check the token fails, expiry included,
  /// so a caller cannot tell a forged token from an expired or mistargeted one (a client
  /// signs in again either way). Only keys that could never be fetched say so: that is the
  /// server's state, not anything about the token.
  public var publicReason: String {
    switch self {
    case .keysUnavailable: "the token cannot be checked right now"
    default: "the token is not valid"
    }
  }
}
