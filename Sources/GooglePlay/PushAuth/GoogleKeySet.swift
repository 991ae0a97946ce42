import Foundation
import JOSE

/// Google's OIDC signing keys as a JWKS document (`https://www.googleapis.com/oauth2/v3/certs`):
/// the RSA keys for RS256 signatures, by `kid`. Keys for other uses or algorithms are skipped.
enum GoogleKeySet {
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
  }

  /// Usable keys by id, or nil when the bytes are not a JWKS document.
  static func keys(from bytes: [UInt8]) -> [String: RSAPublicKey]? {
    guard let document = try? JSONDecoder().decode(Document.self, from: Data(bytes)) else {
      return nil
    }
    var keys: [String: RSAPublicKey] = [:]
    for entry in document.keys {
      guard entry.kty == "RSA", entry.use == nil || entry.use == "sig",
        entry.alg == nil || entry.alg == "RS256", let kid = entry.kid, !kid.isEmpty,
        let n = entry.n.flatMap({ Base64URL.decode($0[...]) }),
        let e = entry.e.flatMap({ Base64URL.decode($0[...]) }),
        let key = RSAPublicKey.make(modulus: n, exponent: e)
      else { continue }
      keys[kid] = key
    }
    return keys
  }
}
