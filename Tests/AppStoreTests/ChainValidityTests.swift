import AppStore
import FakeAppStore
import Foundation
import Testing

/// The chain must be valid when Apple signed, not now: a genuine token outlives its leaf.
@Suite struct ChainValidityTests {
  static let day: Int64 = 86_400_000

  /// A CA whose certificates were valid from 30 to 10 days ago.
  let lapsed: FakeCertificateAuthority
  let verifier: SignedDataVerifier

  init() throws {
    lapsed = try FakeCertificateAuthority(
      options: .init(
        notBefore: Date(timeIntervalSinceNow: -30 * 86_400),
        notAfter: Date(timeIntervalSinceNow: -10 * 86_400)))
    verifier = try Fixtures.verifier(trusting: lapsed)
  }

  @Test func acceptsATokenSignedWhileTheNowExpiredChainWasValid() throws {
    let signedDate = Fixtures.nowMilliseconds - 20 * Self.day
    let token = try lapsed.sign(Fixtures.transaction(signedDate: signedDate))
    #expect(verifier.verifyTransaction(token).value?.signedDate == signedDate)
  }

  /// As Apple's library does: a payload that does not say when it was signed is checked now.
  @Test func checksAPayloadWithoutSignedDateAtTheVerifiersNow() throws {
    let token = try lapsed.signJWS(
      payload: Array(#"{"bundleId":"\#(Fixtures.bundleId)","environment":"Sandbox"}"#.utf8))
    #expect(verifier.verifyTransaction(token) == .invalid("certificate_expired"))
    let back = Int64(Date().timeIntervalSince1970) - 20 * 86_400
    let then = try SignedDataVerifier(
      configuration: Fixtures.configuration(trusting: lapsed), now: { back })
    #expect(then.verifyTransaction(token).value?.bundleId == Fixtures.bundleId)
  }

  /// The date is read before anything is verified: any Int64 is refused, none traps (one near
  /// Int64.min stopped the process from an unauthenticated notification).
  @Test func aSignedDateAtEitherEndOfInt64IsRefusedNotATrap() throws {
    for signedDate in [Int64.min, .min + 998, .max] {
      let token = try lapsed.signJWS(
        payload: Array(
          #"{"bundleId":"\#(Fixtures.bundleId)","environment":"Sandbox","signedDate":\#(signedDate)}"#
            .utf8))
      let result = verifier.verifyTransaction(token)
      #expect(
        result == .invalid("certificate_expired") || result == .invalid("invalid_certificate"))
    }
  }

  @Test func rechecksACachedChainForASignedDateOutsideItsWindow() throws {
    let inside = try lapsed.sign(
      Fixtures.transaction(signedDate: Fixtures.nowMilliseconds - 20 * Self.day))
    #expect(verifier.verifyTransaction(inside).value != nil)
    // Same chain, now cached; a later signedDate falls outside the window and must fail.
    let after = try lapsed.sign(
      Fixtures.transaction(signedDate: Fixtures.nowMilliseconds - 5 * Self.day))
    #expect(verifier.verifyTransaction(after) == .invalid("certificate_expired"))
    let before = try lapsed.sign(
      Fixtures.transaction(signedDate: Fixtures.nowMilliseconds - 40 * Self.day))
    #expect(verifier.verifyTransaction(before) == .invalid("certificate_expired"))
    // And the cached chain still serves dates inside it.
    #expect(verifier.verifyTransaction(inside).value != nil)
  }

  @Test func aCachedChainStillChecksEverySignature() throws {
    let authority = try FakeCertificateAuthority()
    let verifier = try Fixtures.verifier(trusting: authority)
    let first = try authority.sign(Fixtures.transaction(transactionId: "1"))
    #expect(verifier.verifyTransaction(first).value != nil)
    let second = try authority.sign(Fixtures.transaction(transactionId: "2"))
    let forged = second.replacingSegment(2, with: first.segment(2))
    #expect(verifier.verifyTransaction(forged) == .invalid("invalid_signature"))
    #expect(verifier.verifyTransaction(second).value?.transactionId == "2")
  }

  @Test func verifiesConcurrentlyFromManyTasks() async throws {
    let authority = try FakeCertificateAuthority()
    let verifier = try Fixtures.verifier(trusting: authority)
    let tokens = try (0..<16).map {
      try authority.sign(Fixtures.transaction(transactionId: "\($0)"))
    }
    let accepted = await withTaskGroup(of: Bool.self) { group in
      for (index, token) in tokens.enumerated() {
        group.addTask { verifier.verifyTransaction(token).value?.transactionId == "\(index)" }
      }
      return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
    }
    #expect(accepted == tokens.count)
  }
}
