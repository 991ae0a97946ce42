import AppStore
import COpenSSL
import Foundation
import Testing

/// Promotional offer signatures as Apple checks them: over the exact payload Apple documents,
/// verified here with OpenSSL and only the key's public half.
@Suite struct PromotionalOfferSignerTests {
  /// A key made with `openssl genpkey` (PKCS#8 PEM, as App Store Connect's `.p8`); tests only.
  static let pem = """
    -----BEGIN PRIVATE KEY-----
    MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgMr6hGJUikDnwRwyC
    AsEnvlxSsTDu5V1BXcVRPlonn12hRANCAATxkyHtekI0c8jteFZfjSfLGdKCTN58
    qHNpfYZicJ3OU/KwTPRxpvHCUKrSAzN5kR+HMVrpV3DlGl0iRFpXfyug
    -----END PRIVATE KEY-----
    """

  static func signer() throws -> PromotionalOfferSigner {
    let key = try #require(P256PrivateKey(pem: pem))
    return PromotionalOfferSigner(key: key, keyId: "OFFERKEY01", bundleId: "com.example.app")
  }

  /// Verifies a DER ECDSA signature over `message` with the public key derived from `pem`.
  static func verify(der: [UInt8], message: [UInt8]) throws -> Bool {
    let bytes = Array(pem.utf8)
    let bio = try #require(BIO_new_mem_buf(bytes, Int32(bytes.count)))
    defer { BIO_free(bio) }
    let privateKey = try #require(PEM_read_bio_PrivateKey(bio, nil, nil, nil))
    defer { EVP_PKEY_free(privateKey) }
    // Only the public half goes on: serialise it as SubjectPublicKeyInfo and read it back.
    var spki: UnsafeMutablePointer<UInt8>?
    let length = i2d_PUBKEY(privateKey, &spki)
    let encoded = try #require(spki)
    defer { CRYPTO_free(encoded, #file, #line) }
    var cursor: UnsafePointer<UInt8>? = UnsafePointer(encoded)
    let publicKey = try #require(d2i_PUBKEY(nil, &cursor, Int(length)))
    defer { EVP_PKEY_free(publicKey) }
    let context = try #require(EVP_MD_CTX_new())
    defer { EVP_MD_CTX_free(context) }
    guard EVP_DigestVerifyInit(context, nil, EVP_sha256(), nil, publicKey) == 1 else {
      return false
    }
    return EVP_DigestVerify(context, der, der.count, message, message.count) == 1
  }

  @Test func thePayloadIsApplesFieldsJoinedByTheInvisibleSeparator() throws {
    let payload = try Self.signer().payload(
      productId: "com.example.vip.monthly", offerId: "winback_50",
      appAccountToken: "2E5A1F4C-7B3D-4C8E-9A0B-1C2D3E4F5A6B",
      nonce: "A1B2C3D4-E5F6-4789-8ABC-DEF012345678", timestamp: 1_767_225_600_000)
    let expected =
      "com.example.app\u{2063}OFFERKEY01\u{2063}com.example.vip.monthly\u{2063}winback_50"
      + "\u{2063}2e5a1f4c-7b3d-4c8e-9a0b-1c2d3e4f5a6b\u{2063}a1b2c3d4-e5f6-4789-8abc-def012345678"
      + "\u{2063}1767225600000"
    #expect(payload == Array(expected.utf8))
    // U+2063 is three bytes in UTF-8.
    #expect(payload.count == expected.unicodeScalars.count + 6 * 2)
  }

  @Test func anAbsentAppAccountTokenIsAnEmptyField() throws {
    let payload = try Self.signer().payload(
      productId: "p", offerId: "o", appAccountToken: nil,
      nonce: "a1b2c3d4-e5f6-4789-8abc-def012345678", timestamp: 5)
    let text = String(decoding: payload, as: UTF8.self)
    #expect(text.components(separatedBy: "\u{2063}")[4] == "")
    #expect(text.components(separatedBy: "\u{2063}").count == 7)
  }

  @Test func theSignatureVerifiesOverTheExactPayloadWithThePublicKey() throws {
    let signer = try Self.signer()
    let nonce = UUID().uuidString
    let signed = try #require(
      signer.sign(
        productId: "com.example.vip.monthly", offerId: "winback_50",
        appAccountToken: "2E5A1F4C-7B3D-4C8E-9A0B-1C2D3E4F5A6B", nonce: nonce,
        timestamp: 1_767_225_600_000))
    #expect(signed.keyIdentifier == "OFFERKEY01")
    #expect(signed.nonce == nonce.lowercased())
    #expect(signed.timestamp == 1_767_225_600_000)
    #expect(signed.appAccountToken == "2e5a1f4c-7b3d-4c8e-9a0b-1c2d3e4f5a6b")
    let der = try #require(Data(base64Encoded: signed.signature).map { Array($0) })
    #expect(der.first == 0x30, "DER SEQUENCE, not a raw R‖S")
    let payload = signer.payload(
      productId: "com.example.vip.monthly", offerId: "winback_50",
      appAccountToken: signed.appAccountToken, nonce: signed.nonce, timestamp: signed.timestamp)
    #expect(try Self.verify(der: der, message: payload))
    // Any other offer, product or time does not verify.
    let other = signer.payload(
      productId: "com.example.vip.monthly", offerId: "winback_51",
      appAccountToken: signed.appAccountToken, nonce: signed.nonce, timestamp: signed.timestamp)
    #expect(try !Self.verify(der: der, message: other))
  }

  @Test func aKeyThatIsNotP256IsRefused() {
    #expect(P256PrivateKey(pem: "not a key") == nil)
  }
}
