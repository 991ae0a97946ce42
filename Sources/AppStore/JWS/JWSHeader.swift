import Digest
import Foundation
import JOSE
import TextSafety

/// The protected header of an App Store JWS, as decoded JSON.
struct JWSHeader: Decodable {
  var alg: String?
  var x5c: [String]?
}

/// A header that is usable for ES256 verification: the algorithm is right and the x5c holds
/// three base64 entries (leaf, intermediate, and a root that is never parsed: the chain ends at
/// a configured one). `fingerprint` is the SHA-256 of their concatenated DER.
struct ParsedHeader: Sendable {
  var certificates: [[UInt8]]
  var fingerprint: [UInt8]

  /// Parses a base64url header segment, or names the refusal.
  static func parse(_ segment: ArraySlice<UInt8>) -> Result<ParsedHeader, RefusalReason> {
    guard let json = Base64URL.decode(segment),
      StreamSafeText.isStreamSafe(json: json),
      let header = try? JSONDecoder().decode(JWSHeader.self, from: Data(json))
    else { return .failure(.malformedJWS) }
    guard header.alg == "ES256" else { return .failure(.unsupportedAlgorithm) }
    guard let x5c = header.x5c, x5c.count == 3 else {
      return .failure(.invalidCertificateChainLength)
    }
    var certificates: [[UInt8]] = []
    for entry in x5c {
      guard let der = Base64URL.decodeStandard(entry) else { return .failure(.invalidCertificate) }
      certificates.append(der)
    }
    let fingerprint = SHA256Digest.hash(certificates.flatMap { $0 })
    return .success(ParsedHeader(certificates: certificates, fingerprint: fingerprint))
  }
}
