import AppStore
import FakeAppStore
import Foundation
import JOSE
import Testing

@Suite struct SignedTransactionForgeryTests {
  let authority: FakeCertificateAuthority
  let verifier: SignedDataVerifier

  init() throws {
    authority = try FakeCertificateAuthority()
    verifier = try Fixtures.verifier(trusting: authority)
  }

  @Test func acceptsATransactionSignedByATrustedChain() throws {
    let expected = Fixtures.transaction()
    let result = verifier.verifyTransaction(try authority.sign(expected))
    #expect(result == .valid(expected))
  }

  @Test func refusesAlgorithmNone() throws {
    let token = try authority.signJWS(
      payload: Fixtures.json(Fixtures.transaction()), algorithm: "none")
    #expect(verifier.verifyTransaction(token) == .invalid("unsupported_algorithm"))
  }

  @Test func refusesHS256KeyedWithTheCertificate() throws {
    let token = try authority.signJWS(
      payload: Fixtures.json(Fixtures.transaction()), algorithm: "HS256")
    #expect(verifier.verifyTransaction(token) == .invalid("unsupported_algorithm"))
  }

  @Test func refusesAChainOfTwoCertificates() throws {
    let chain = authority.certificateChainBase64
    let token = try authority.signJWS(
      payload: Fixtures.json(Fixtures.transaction()), x5cOverride: [chain[0], chain[1]])
    #expect(verifier.verifyTransaction(token) == .invalid("invalid_certificate_chain_length"))
  }

  @Test func refusesAChainUnderAnUntrustedRoot() throws {
    let stranger = try FakeCertificateAuthority()
    let token = try stranger.sign(Fixtures.transaction())
    #expect(verifier.verifyTransaction(token) == .invalid("untrusted_root"))
  }

  @Test func refusesAStrangersChainThatPresentsTheTrustedRoot() throws {
    let stranger = try FakeCertificateAuthority()
    let mixed = [
      stranger.certificateChainBase64[0], stranger.certificateChainBase64[1],
      authority.certificateChainBase64[2],
    ]
    let token = try stranger.signJWS(
      payload: Fixtures.json(Fixtures.transaction()), x5cOverride: mixed)
    let result = verifier.verifyTransaction(token)
    #expect(result == .invalid("untrusted_root") || result == .invalid("invalid_certificate"))
  }

  @Test func refusesAnIntermediateWithoutApplesMarker() throws {
    let forger = try FakeCertificateAuthority(options: .init(intermediateHasAppleOID: false))
    let token = try forger.sign(Fixtures.transaction())
    #expect(
      try Fixtures.verifier(trusting: forger).verifyTransaction(token)
        == .invalid("missing_intermediate_oid"))
  }

  @Test func refusesALeafWithoutApplesMarker() throws {
    let forger = try FakeCertificateAuthority(options: .init(leafHasAppleOID: false))
    let token = try forger.sign(Fixtures.transaction())
    #expect(
      try Fixtures.verifier(trusting: forger).verifyTransaction(token)
        == .invalid("missing_leaf_oid"))
  }

  @Test func refusesATamperedPayloadUnderTheOriginalSignature() throws {
    let token = try authority.sign(Fixtures.transaction())
    var richer = Fixtures.transaction()
    richer.quantity = 10
    let forged = token.replacingSegment(1, with: Base64URL.encode(try Fixtures.json(richer)))
    #expect(verifier.verifyTransaction(forged) == .invalid("invalid_signature"))
  }

  @Test func refusesATamperedSignature() throws {
    let token = try authority.sign(Fixtures.transaction())
    var signature = try #require(Base64URL.decode(Substring(token.segment(2))))
    signature[17] ^= 0x01
    let forged = token.replacingSegment(2, with: Base64URL.encode(signature))
    #expect(verifier.verifyTransaction(forged) == .invalid("invalid_signature"))
  }

  @Test func refusesAChainThatExpiredBeforeTheSignedDate() throws {
    let expired = try FakeCertificateAuthority(
      options: .init(
        notBefore: Date(timeIntervalSinceNow: -3 * 86_400),
        notAfter: Date(timeIntervalSinceNow: -86_400)))
    let token = try expired.sign(Fixtures.transaction())
    #expect(
      try Fixtures.verifier(trusting: expired).verifyTransaction(token)
        == .invalid("certificate_expired"))
  }

  @Test func refusesAnotherAppsBundleId() throws {
    let token = try authority.sign(Fixtures.transaction(bundleId: "com.example.other"))
    #expect(verifier.verifyTransaction(token) == .invalid("bundle_id_mismatch"))
  }

  @Test func refusesTheXcodeEnvironmentEvenWhenConfigured() throws {
    let permissive = try Fixtures.verifier(
      trusting: authority, environments: ["Production", "Sandbox", "Xcode"])
    let token = try authority.sign(Fixtures.transaction(environment: "Xcode"))
    #expect(permissive.verifyTransaction(token) == .invalid("environment_not_allowed"))
    let local = try authority.sign(Fixtures.transaction(environment: "LocalTesting"))
    #expect(permissive.verifyTransaction(local) == .invalid("environment_not_allowed"))
  }

  @Test func refusesSandboxWhenOnlyProductionIsAllowed() throws {
    let productionOnly = try Fixtures.verifier(trusting: authority, environments: ["Production"])
    let token = try authority.sign(Fixtures.transaction(environment: "Sandbox"))
    #expect(productionOnly.verifyTransaction(token) == .invalid("environment_not_allowed"))
  }

  @Test func refusesTokensThatAreNotCompactJWS() {
    for garbage in ["", "abc", "a.b", "a.b.c.d", "!!!.e30.AA", "e30.@@.AA"] {
      #expect(verifier.verifyTransaction(garbage) == .invalid("malformed_jws"), "\(garbage)")
    }
  }

  @Test func refusesAPayloadWithoutABundleIdAsAnotherAppsAsApplesLibraryDoes() throws {
    let token = try authority.signJWS(
      payload: Array(#"{"signedDate":\#(Fixtures.nowMilliseconds)}"#.utf8))
    #expect(verifier.verifyTransaction(token) == .invalid("bundle_id_mismatch"))
  }

  @Test func refusesAPayloadThatIsNoJSONObject() throws {
    let token = try authority.signJWS(payload: Array("[1]".utf8))
    #expect(verifier.verifyTransaction(token) == .invalid("malformed_payload"))
  }

  @Test func refusesAnUnreadableCertificate() throws {
    let chain = authority.certificateChainBase64
    let token = try authority.signJWS(
      payload: Fixtures.json(Fixtures.transaction()), x5cOverride: ["AAAA", chain[1], chain[2]])
    #expect(verifier.verifyTransaction(token) == .invalid("invalid_certificate"))
  }

  @Test func rootsAreTrustedOnlyWhenConfigured() throws {
    let appleOnly = try SignedDataVerifier(
      configuration: AppStoreConfiguration(bundleId: Fixtures.bundleId))
    #expect(
      appleOnly.verifyTransaction(try authority.sign(Fixtures.transaction()))
        == .invalid("untrusted_root"))
  }

  @Test func refusesAnUnreadableExtraRootAtStartUp() {
    var configuration = AppStoreConfiguration(bundleId: Fixtures.bundleId)
    configuration.extraRootCertificatesPEM = ["not a certificate"]
    #expect(throws: AppStoreConfigurationError.invalidRootCertificate(index: 0)) {
      try SignedDataVerifier(configuration: configuration)
    }
  }
}
