import Foundation
import JOSE

/// A JWKS document (RFC 7517 §5) read into the keys this server can use: RSA keys for RS256
/// and P-256 keys for ES256, for signing. Symmetric (`oct`) keys and keys for other uses or
/// algorithms are skipped, never guessed at.
public enum JWKSet {
  struct Document: Decodable {
    var keys: [Entry]
  }

  struct Entry: Decodable {
    var kty: String
    var kid: String?
    var use: String?
    var alg: String?
    var n: String?
    var e: String?
    var crv: String?
    var x: String?
    var y: String?
  }

  /// The usable keys, or nil when the bytes are not a JWKS document at all.
  public static func keys(from bytes: [UInt8]) -> [JWTKey]? {
    guard let document = try? JSONDecoder().decode(Document.self, from: Data(bytes)) else {
      return nil
    }
    return document.keys.compactMap(key)
  }

  static func key(_ entry: Entry) -> JWTKey? {
    if let use = entry.use, use != "sig" { return nil }
    switch entry.kty {
    case "RSA":
      guard entry.alg == nil || entry.alg == JWTAlgorithm.rs256.rawValue,
        let n = entry.n.flatMap({ Base64URL.decode($0[...]) }),
        let e = entry.e.flatMap({ Base64URL.decode($0[...]) }),
        let key = JWKPublicKey.rsa(modulus: n, exponent: e)
      else { return nil }
      return JWTKey(id: entry.kid, algorithm: .rs256, material: .publicKey(key))
    case "EC":
      guard entry.crv == "P-256", entry.alg == nil || entry.alg == JWTAlgorithm.es256.rawValue,
        let x = entry.x.flatMap({ Base64URL.decode($0[...]) }),
        let y = entry.y.flatMap({ Base64URL.decode($0[...]) }),
        let key = JWKPublicKey.p256(x: x, y: y)
      else { return nil }
      return JWTKey(id: entry.kid, algorithm: .es256, material: .publicKey(key))
    default:
      return nil
    }
  }
}
