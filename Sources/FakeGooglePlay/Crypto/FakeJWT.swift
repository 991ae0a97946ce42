import Foundation
import JOSE

/// Compact JWS helpers the fake needs on both sides: sign its OIDC tokens, read the
/// assertions clients present.
enum FakeJWT {
  static func sign(header: [String: Any], claims: [String: Any], key: FakeRSAKey) throws -> String {
    let options: JSONSerialization.WritingOptions = [.sortedKeys, .withoutEscapingSlashes]
    let input =
      Base64URL.encode(try JSONSerialization.data(withJSONObject: header, options: options)) + "."
      + Base64URL.encode(try JSONSerialization.data(withJSONObject: claims, options: options))
    return input + "." + Base64URL.encode(try key.signRS256(Array(input.utf8)))
  }

  struct Parsed {
    var header: [String: Any]
    var claims: [String: Any]
    var signingInput: [UInt8]
    var signature: [UInt8]
  }

  static func parse(_ token: String) -> Parsed? {
    let parts = token.split(separator: ".", omittingEmptySubsequences: false)
    guard token.utf8.count <= 16 * 1024, parts.count == 3,
      let headerBytes = Base64URL.decode(parts[0]), let claimBytes = Base64URL.decode(parts[1]),
      let signature = Base64URL.decode(parts[2]),
      let header = try? JSONSerialization.jsonObject(with: Data(headerBytes)) as? [String: Any],
      let claims = try? JSONSerialization.jsonObject(with: Data(claimBytes)) as? [String: Any]
    else { return nil }
    return Parsed(
      header: header, claims: claims,
      signingInput: Array(parts[0].utf8) + [UInt8(ascii: ".")] + Array(parts[1].utf8),
      signature: signature)
  }
}
