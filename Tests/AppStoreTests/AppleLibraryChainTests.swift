import Foundation
import Testing

@testable import AppStore

/// The certificate chains of Apple's `test_x509_verifiction.py` (app-store-server-library-python),
/// through `ChainVerifier` at Apple's EFFECTIVE_DATE, offline (Apple's tests without OCSP).
/// Apple answers VERIFICATION_FAILURE for each refusal; Storekeeper names the failed check.
@Suite struct AppleLibraryChainTests {
  static func certificate(_ base64: String) throws -> X509Certificate {
    try #require(Data(base64Encoded: base64).flatMap { X509Certificate(der: Array($0)) })
  }

  static func verifier(root: String = AppleLibraryVectors.testCA) throws -> ChainVerifier {
    ChainVerifier(trust: try TrustStore(roots: [try certificate(root)]))
  }

  static func verify(
    _ leaf: String, _ intermediate: String, root: String = AppleLibraryVectors.testCA,
    at seconds: Int64 = AppleLibraryVectors.effectiveDate
  ) throws -> Result<ChainVerifier.Verified, ChainVerifier.Failure> {
    try verifier(root: root).verify(
      leaf: try certificate(leaf), intermediate: try certificate(intermediate), at: seconds)
  }

  // test_valid_chain_without_ocsp
  @Test func acceptsApplesTestChain() throws {
    let result = try Self.verify(AppleLibraryVectors.leafCert, AppleLibraryVectors.intermediateCa)
    #expect(throws: Never.self) { try result.get() }
  }

  // test_valid_chain_invalid_intermediate_OID_without_OCSP
  @Test func refusesAnIntermediateWithoutApplesMarker() throws {
    let result = try Self.verify(
      AppleLibraryVectors.leafCertForIntermediateCaInvalidOid,
      AppleLibraryVectors.intermediateCaInvalidOid)
    #expect(throws: ChainVerifier.Failure.missingIntermediateOID) { try result.get() }
  }

  // test_valid_chain_invalid_leaf_OID_without_OCSP
  @Test func refusesALeafWithoutApplesMarker() throws {
    let result = try Self.verify(
      AppleLibraryVectors.leafCertInvalidOid, AppleLibraryVectors.intermediateCa)
    #expect(throws: ChainVerifier.Failure.missingLeafOID) { try result.get() }
  }

  // test_chain_different_than_root_certificate
  @Test func refusesApplesTestChainWhenApplesRealRootIsTheOnlyOneTrusted() throws {
    let result = try Self.verify(
      AppleLibraryVectors.leafCert, AppleLibraryVectors.intermediateCa,
      root: AppleLibraryVectors.realAppleRoot)
    #expect(throws: ChainVerifier.Failure.untrustedRoot) { try result.get() }
  }

  // test_valid_expired_chain
  @Test func refusesApplesTestChainAfterItExpired() throws {
    let result = try Self.verify(
      AppleLibraryVectors.leafCert, AppleLibraryVectors.intermediateCa, at: 2_280_946_846)
    #expect(throws: ChainVerifier.Failure.expired) { try result.get() }
  }

  // test_apple_chain_is_valid_with_ocsp_and_strict, offline: Apple's real receipt-signing leaf
  // and WWDR G6 intermediate under Apple Root CA - G3.
  @Test func acceptsApplesRealChain() throws {
    let result = try Self.verify(
      AppleLibraryVectors.realAppleSigningCertificate, AppleLibraryVectors.realAppleIntermediate,
      root: AppleLibraryVectors.realAppleRoot)
    #expect(throws: Never.self) { try result.get() }
  }

  // test_invalid_chain_length, test_invalid_base64_in_certificate_list and
  // test_invalid_data_in_certificate_list, through the verifier that reads the x5c header.
  @Test func refusesApplesMalformedCertificateLists() throws {
    var configuration = AppStoreConfiguration(bundleId: "com.example")
    configuration.allowedEnvironments = ["Sandbox"]
    configuration.extraRootCertificatesPEM = [AppleLibraryVectorTests.testCAPEM]
    let verifier = try SignedDataVerifier(configuration: configuration)
    func token(_ x5c: [String]) -> String {
      let header = #"{"alg":"ES256","x5c":["\#(x5c.joined(separator: #"",""#))"]}"#
      let payload = #"{"bundleId":"com.example","environment":"Sandbox","signedDate":1}"#
      return [header, payload].map { Data($0.utf8).base64EncodedString() }
        .map { $0.replacingOccurrences(of: "=", with: "") }.joined(separator: ".") + ".AAAA"
    }
    let (intermediate, root) = (AppleLibraryVectors.intermediateCa, AppleLibraryVectors.testCA)
    #expect(
      verifier.verifyTransaction(token([intermediate, root]))
        == .invalid("invalid_certificate_chain_length"))
    #expect(
      verifier.verifyTransaction(token(["abc", intermediate, root]))
        == .invalid("invalid_certificate"))
    #expect(
      verifier.verifyTransaction(
        token([Data("abc".utf8).base64EncodedString(), intermediate, root]))
        == .invalid("invalid_certificate"))
  }
}
