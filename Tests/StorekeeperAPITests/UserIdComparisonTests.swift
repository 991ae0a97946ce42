import Testing

@testable import StorekeeperAPI
@testable import StorekeeperCore

/// User ids are compared as PostgreSQL compares them, byte for byte: look-alikes that Swift's
/// `String ==` would call one string (canonical equivalents) or that a reader would (full-width
/// letters, a zero-width space) are different users everywhere the edge decides.
@Suite struct UserIdComparisonTests {
  static let precomposed = "jos\u{e9}"
  static let lookAlikes: [(String, String)] = [
    ("jose\u{301}", precomposed),  // canonically equivalent: Swift's == says equal
    ("\u{ff4a}\u{ff4f}\u{ff53}\u{ff45}", "jose"),  // full-width
    ("jo\u{200b}se", "jose"),  // zero-width space
  ]

  @Test func lookAlikeIdsAreDifferentUsers() {
    #expect("jose\u{301}" == Self.precomposed, "the trap: Swift calls these one string")
    for (a, b) in Self.lookAlikes {
      #expect(!UserId.same(a, b), "\(Array(a.utf8)) vs \(Array(b.utf8))")
      #expect(!UserId.may(a, actFor: b))
      #expect(UserId.key(a) != UserId.key(b))
      #expect(Caller.user(a) != Caller.user(b))
      #expect(UserId.same(a, a) && UserId.may(a, actFor: a) && UserId.may(nil, actFor: a))
      #expect(UserId.key(a) == UserId.key(String(decoding: Array(a.utf8), as: UTF8.self)))
    }
    #expect(!UserId.same(nil, "jose") && !UserId.same("jose", nil))
  }

  @Test func keysOfPlainIdsAreTheIdsAndEscapingIsUnambiguous() {
    #expect(UserId.key("guest:1234") == "guest:1234")
    #expect(UserId.key("%C3%A9") != UserId.key("\u{e9}"))
    #expect(UserId.key("\u{e9}") == "%C3%A9")
  }

  @Test func aLookAlikeUserSpendsABucketOfItsOwn() {
    for (a, b) in Self.lookAlikes {
      let limiter = RateLimiter(
        perAddress: nil, perUser: RateSpec(perSecond: 1, burst: 1), maxKeys: 100,
        clientAddress: ClientAddress(), nowNs: { 0 })
      #expect(limiter.take(userId: b)?.allowed == true)
      #expect(limiter.take(userId: b)?.allowed == false)
      #expect(limiter.take(userId: a)?.allowed == true, "\(Array(a.utf8)) is not \(b)")
    }
  }

  @Test func aSignedInUserMayNotNameALookAlike() throws {
    let auth = AppAuthenticator(mode: .none)
    for (a, b) in Self.lookAlikes {
      #expect(throws: (any Error).self) { try auth.user(.user(a), named: b) }
      #expect(try auth.user(.user(a), named: a) == a)
    }
  }
}
