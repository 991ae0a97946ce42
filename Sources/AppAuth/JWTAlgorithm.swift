/// The JWS algorithms a token may be signed with. A key has exactly one, and a token is
/// checked only against keys of the algorithm its header names: an RSA public key can never
/// become an HMAC secret (RFC 8725 §2.1).
public enum JWTAlgorithm: String, Sendable, CaseIterable {
  case hs256 = "HS256"
  case rs256 = "RS256"
  case es256 = "ES256"
}
