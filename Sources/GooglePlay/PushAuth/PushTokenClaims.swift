/// The claims of a Pub/Sub push's OIDC token that are checked, as Google issues them: an ID
/// token for the push subscription's service account.
public struct PushTokenClaims: Sendable, Equatable {
  public var issuer: String
  public var audience: String
  public var email: String
  public var subject: String?
  public var issuedAt: Int64
  public var expiresAt: Int64
}
