import AppStore
import Digest
import Foundation
import JOSE

/// A stand-in for Apple's signing PKI: a P-256 root, an intermediate carrying Apple's
/// intermediate marker and a leaf carrying Apple's leaf marker, and JWS signing with them.
///
/// The server trusts it only when its root is configured explicitly.
public final class FakeCertificateAuthority: Sendable {
  public let options: Options
  let root: FakeCertificate
  let intermediate: FakeCertificate
  let leaf: FakeCertificate
  let leafKey: FakeSigningKey

  public init(options: Options = .init()) throws {
    self.options = options
    let rootKey = try FakeSigningKey()
    let intermediateKey = try FakeSigningKey()
    leafKey = try FakeSigningKey()
    func profile(
      _ name: String, _ serial: Int, ca: Bool, pathLength: Int? = nil, oid: String?
    ) -> FakeCertificate.Profile {
      .init(
        commonName: name, serial: serial, isCA: ca, pathLength: pathLength, appleOID: oid,
        notBefore: options.notBefore, notAfter: options.notAfter)
    }
    let serial = Int.random(in: 1..<(1 << 40))
    root = try FakeCertificate(
      profile("Fake Apple Root CA - G3", serial, ca: true, oid: nil), key: rootKey, issuer: nil)
    intermediate = try FakeCertificate(
      profile(
        "Fake Apple Worldwide Developer Relations CA", serial + 1, ca: true, pathLength: 0,
        oid: options.intermediateHasAppleOID ? Options.appleIntermediateOID : nil),
      key: intermediateKey, issuer: (root, rootKey))
    leaf = try FakeCertificate(
      profile(
        "Fake Prod ECC Mac App Store and iTunes Store Receipt Signing", serial + 2, ca: false,
        oid: options.leafHasAppleOID ? Options.appleLeafOID : nil),
      key: leafKey, issuer: (intermediate, intermediateKey))
  }

  public var rootCertificatePEM: String { root.pem }

  /// Base64 DER of leaf, intermediate and root: the `x5c` this CA puts in its headers.
  public var certificateChainBase64: [String] { [leaf.base64, intermediate.base64, root.base64] }

  /// A compact JWS over `payload`, header `{"alg", "x5c": [leaf, intermediate, root]}`.
  /// `ES256` signs with the leaf key; `none` leaves the signature empty; any other algorithm
  /// name gets an HMAC-SHA256 keyed with the leaf certificate (the classic confusion forgery).
  public func signJWS(payload: [UInt8], x5cOverride: [String]? = nil, algorithm: String = "ES256")
    throws -> String
  {
    let header: [String: any Sendable] = [
      "alg": algorithm, "x5c": x5cOverride ?? certificateChainBase64,
    ]
    let headerJSON = try JSONSerialization.data(withJSONObject: header, options: [.sortedKeys])
    let signingInput = Base64URL.encode(headerJSON) + "." + Base64URL.encode(payload)
    let signature: [UInt8]
    switch algorithm {
    case "ES256": signature = try leafKey.signES256(Array(signingInput.utf8))
    case "none": signature = []
    default: signature = HMACSHA256.mac(key: leaf.der, message: signingInput.utf8)
    }
    return signingInput + "." + Base64URL.encode(signature)
  }

  /// Signs any encodable payload (e.g. a `JWSTransactionDecodedPayload`) with ES256.
  public func sign<Payload: Encodable>(_ payload: Payload) throws -> String {
    try signJWS(payload: Array(JSONEncoder().encode(payload)))
  }
}
