import FakeAppStore
import Testing

@testable import AppStore

/// The memo of parsed headers keeps only headers whose chain verified: anyone may post a
/// notification, and its header is parsed before any trust is established.
@Suite struct HeaderMemoTests {
  @Test func aHeaderWhoseChainFailsIsNotRemembered() throws {
    let authority = try FakeCertificateAuthority()
    let verifier = try Fixtures.verifier(trusting: authority)
    let stranger = try FakeCertificateAuthority()
    #expect(
      verifier.verifyTransaction(try stranger.sign(Fixtures.transaction()))
        != .valid(Fixtures.transaction()))
    // A header that parses but whose chain is junk: three base64 "certificates".
    let junk = try authority.signJWS(
      payload: Fixtures.json(Fixtures.transaction()), x5cOverride: ["AAAA", "AAAA", "AAAA"])
    #expect(verifier.verifyTransaction(junk) == .invalid("invalid_certificate"))
    #expect(verifier.headers.count == 0)

    let expected = Fixtures.transaction()
    #expect(verifier.verifyTransaction(try authority.sign(expected)) == .valid(expected))
    #expect(verifier.headers.count == 1)
    // Told again, from the memo.
    #expect(verifier.verifyTransaction(try authority.sign(expected)) == .valid(expected))
    #expect(verifier.headers.count == 1)
  }
}
