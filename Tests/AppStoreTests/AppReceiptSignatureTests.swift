import Foundation
import Testing

@testable import AppStore
@testable import FakeAppStore

/// An app receipt is believed only once Apple's signature over it checks: the forgeries an
/// attacker can post instead (no signature at all, a CA of their own, an altered payload,
/// another app's receipt, a chain without Apple's markers, a chain not valid when the receipt
/// says it was made) are each refused before any id in them is read as a candidate.
@Suite struct AppReceiptSignatureTests {
  static let bundleId = "com.example.signature"
  static let created = Date(timeIntervalSinceNow: -3600)

  static func payload(
    bundleId: String = bundleId, created: Date? = created,
    transactionId: String = "2000000000000042"
  ) -> [UInt8] {
    var attributes = [
      FakeDER.attribute(2, FakeDER.utf8String(bundleId)),
      FakeDER.attribute(
        17,
        FakeDER.set([
          FakeDER.attribute(1701, FakeDER.integer(1)),
          FakeDER.attribute(1702, FakeDER.utf8String("gold.100")),
          FakeDER.attribute(1703, FakeDER.utf8String(transactionId)),
          FakeDER.attribute(1705, FakeDER.utf8String(transactionId)),
        ])),
    ]
    if let created {
      attributes.append(
        FakeDER.attribute(
          12,
          FakeDER.ia5String(
            FakeAppReceiptContainer.rfc3339(Int64(created.timeIntervalSince1970 * 1000)))))
    }
    return FakeDER.set(attributes)
  }

  static func verifier(trusting authority: FakeCertificateAuthority) throws
    -> AppReceiptSignatureVerifier
  {
    var configuration = AppStoreConfiguration(bundleId: bundleId)
    configuration.extraRootCertificatesPEM = [authority.rootCertificatePEM]
    return try AppReceiptSignatureVerifier(configuration: configuration)
  }

  @Test func aReceiptSignedAsAppleSignsVerifiesAndSaysWhatItLists() throws {
    let authority = try FakeCertificateAuthority()
    let der = try authority.signPKCS7(Self.payload())
    guard case .signed(let receipt) = try Self.verifier(trusting: authority).check(der: der) else {
      Issue.record("expected the receipt to verify")
      return
    }
    #expect(receipt.contents.bundleId == Self.bundleId)
    #expect(receipt.contents.transactionIds == ["2000000000000042"])
    #expect(receipt.contents.creationDate == Int64(Self.created.timeIntervalSince1970))
    #expect(receipt.signer.contains("Receipt Signing"))
    // The same from base64, as a client posts it.
    #expect(
      try Self.verifier(trusting: authority).check(base64: Data(der).base64EncodedString())
        == .signed(receipt))
  }

  @Test func aContainerWithNoSignatureIsRefused() throws {
    // ContentInfo { signedData, SignedData { 1, {}, { data, [0] payload }, signerInfos {} } }:
    // what the attack posted, no certificates and no SignerInfo.
    let signedDataOID: [UInt8] = [0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x07, 0x02]
    let dataOID: [UInt8] = [0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x07, 0x01]
    let inner = FakeDER.sequence([
      dataOID, FakeDER.element(0xA0, FakeDER.octetString(Self.payload())),
    ])
    let signedData = FakeDER.sequence([
      FakeDER.integer(1), FakeDER.set([]), inner, FakeDER.set([]),
    ])
    let der = FakeDER.sequence([signedDataOID, FakeDER.element(0xA0, signedData)])
    // It is a PKCS#7 container that reads: only its signature is missing.
    #expect(AppReceiptReader.read(der: der)?.transactionIds == ["2000000000000042"])
    let authority = try FakeCertificateAuthority()
    #expect(try Self.verifier(trusting: authority).check(der: der) == .refused(.invalidSignature))
  }

  @Test func aReceiptSignedByAnotherAuthorityIsRefused() throws {
    let trusted = try FakeCertificateAuthority()
    let attacker = try FakeCertificateAuthority()
    let der = try attacker.signPKCS7(Self.payload())
    let check = try Self.verifier(trusting: trusted).check(der: der)
    // The attacker's chain names a root like the trusted one's, but it is not that root.
    #expect(check == .refused(.invalidCertificate) || check == .refused(.untrustedRoot))
    // And with only Apple's own root, as in production.
    let production = try AppReceiptSignatureVerifier(
      configuration: AppStoreConfiguration(bundleId: Self.bundleId))
    #expect(production.check(der: der) == .refused(.untrustedRoot))
  }

  @Test func anAlteredPayloadIsRefusedWhateverItNowSays() throws {
    let authority = try FakeCertificateAuthority()
    var der = try authority.signPKCS7(Self.payload(transactionId: "2000000000000042"))
    // Another transaction id of the same length, written over the signed one.
    let original = Array("2000000000000042".utf8)
    let index = try #require(
      (0...(der.count - original.count)).first {
        Array(der[$0..<($0 + original.count)]) == original
      })
    der.replaceSubrange(index..<(index + original.count), with: Array("2000000000000099".utf8))
    #expect(AppReceiptReader.read(der: der)?.transactionIds == ["2000000000000099"])
    #expect(try Self.verifier(trusting: authority).check(der: der) == .refused(.invalidSignature))
  }

  @Test func anotherAppsReceiptIsRefused() throws {
    let authority = try FakeCertificateAuthority()
    let der = try authority.signPKCS7(Self.payload(bundleId: "com.example.other"))
    #expect(try Self.verifier(trusting: authority).check(der: der) == .refused(.bundleIdMismatch))
  }

  @Test func aChainWithoutApplesMarkersIsRefused() throws {
    let noLeafMarker = try FakeCertificateAuthority(options: .init(leafHasAppleOID: false))
    #expect(
      try Self.verifier(trusting: noLeafMarker).check(der: noLeafMarker.signPKCS7(Self.payload()))
        == .refused(.missingLeafOID))
    let noIntermediateMarker = try FakeCertificateAuthority(
      options: .init(intermediateHasAppleOID: false))
    #expect(
      try Self.verifier(trusting: noIntermediateMarker).check(
        der: noIntermediateMarker.signPKCS7(Self.payload())) == .refused(.missingIntermediateOID))
  }

  @Test func theChainIsJudgedAtTheReceiptsCreationDate() throws {
    // A chain that expired yesterday still vouches for a receipt made while it was valid, as
    // Apple's SHA-1 chain does for receipts made before January 2025.
    let expired = try FakeCertificateAuthority(
      options: .init(
        notBefore: Date(timeIntervalSinceNow: -30 * 86_400),
        notAfter: Date(timeIntervalSinceNow: -86_400)))
    let lastWeek = Date(timeIntervalSinceNow: -7 * 86_400)
    guard
      case .signed = try Self.verifier(trusting: expired).check(
        der: expired.signPKCS7(Self.payload(created: lastWeek)))
    else {
      Issue.record("a receipt made while its chain was valid must verify")
      return
    }
    // A receipt claiming a date when its chain was not valid is refused, before or after.
    #expect(
      try Self.verifier(trusting: expired).check(der: expired.signPKCS7(Self.payload()))
        == .refused(.certificateExpired))
    #expect(
      try Self.verifier(trusting: expired).check(
        der: expired.signPKCS7(Self.payload(created: Date(timeIntervalSinceNow: -60 * 86_400))))
        == .refused(.certificateExpired))
    // No creation date: nothing to judge the chain at.
    let authority = try FakeCertificateAuthority()
    #expect(
      try Self.verifier(trusting: authority).check(
        der: authority.signPKCS7(Self.payload(created: nil))) == .refused(.malformedReceipt))
  }

  @Test func whatIsNoPKCS7IsLeftToVerifyReceiptAndGarbageNeverCrashes() throws {
    let authority = try FakeCertificateAuthority()
    let verifier = try Self.verifier(trusting: authority)
    #expect(
      verifier.check(base64: Data("FAKE-TX-RECEIPT:1...".utf8).base64EncodedString())
        == .notAppReceipt)
    #expect(verifier.check(base64: "%%%") == .refused(.malformedReceipt))
    let der = try authority.signPKCS7(Self.payload())
    for length in stride(from: 0, to: der.count, by: 5) {
      guard case .signed = verifier.check(der: Array(der.prefix(length))) else { continue }
      Issue.record("a truncated receipt verified at \(length) bytes")
    }
    // Trailing bytes after a valid container: not the container that was signed.
    #expect(verifier.check(der: der + [0x00]) == .notAppReceipt)
  }

  @Test func receiptDatesAreReadAsApplesRFC3339() {
    #expect(RFC3339.seconds("2015-08-13T07:50:46Z") == 1_439_452_246)
    #expect(RFC3339.seconds("2015-08-13T07:50:46.123Z") == 1_439_452_246)
    #expect(RFC3339.seconds("2015-08-13T09:50:46+02:00") == 1_439_452_246)
    for bad in [
      "", "2015-08-13", "2015-13-13T07:50:46Z", "2015-08-13T07:50:46", "x015-08-13T07:50:46Z",
      "2015-08-13T07:50:46Zjunk", "2015-08-13T07:50:46.Z",
    ] {
      #expect(RFC3339.seconds(bad) == nil, "\(bad)")
    }
  }
}
