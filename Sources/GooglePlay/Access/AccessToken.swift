import Foundation

/// An OAuth 2.0 access token from the token endpoint, with when this server stops using it.
public struct AccessToken: Sendable, Equatable {
  public var value: String
  /// Shortly before Google's `expires_in` runs out, so a token is never sent as it expires.
  public var usableUntil: Date

  /// The token endpoint's answer (RFC 6749 §5.1).
  struct Answer: Decodable {
    var access_token: String
    var expires_in: Double
    var token_type: String?
  }
}
