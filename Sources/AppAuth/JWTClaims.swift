/// The registered claims this server checks (RFC 7519 §4.1). `aud` may be one string or an
/// array; times are NumericDate (seconds, possibly fractional).
public struct JWTClaims: Decodable, Sendable {
  public var iss: String?
  public var sub: String?
  public var aud: [String]
  public var exp: Double?
  public var nbf: Double?

  enum CodingKeys: String, CodingKey {
    case iss, sub, aud, exp, nbf
  }

  public init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: CodingKeys.self)
    iss = try container.decodeIfPresent(String.self, forKey: .iss)
    sub = try container.decodeIfPresent(String.self, forKey: .sub)
    exp = try container.decodeIfPresent(Double.self, forKey: .exp)
    nbf = try container.decodeIfPresent(Double.self, forKey: .nbf)
    if let one = try? container.decodeIfPresent(String.self, forKey: .aud) {
      aud = [one]
    } else {
      aud = try container.decodeIfPresent([String].self, forKey: .aud) ?? []
    }
  }
}
