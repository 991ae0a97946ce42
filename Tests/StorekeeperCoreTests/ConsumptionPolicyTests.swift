import AppStore
import Testing

@testable import StorekeeperCore

/// The answer to a consumption request keeps to Apple's rules whatever the policy: a prorated
/// refund of a one-time purchase needs a share above 0, a subscription gets no share, and an
/// undelivered purchase's share is 0.
@Suite struct ConsumptionPolicyTests {
  func facts(
    delivered: Bool = true, type: ProductType = .consumable, credited: Int64, used: Int64
  ) -> ConsumptionFacts {
    ConsumptionFacts(
      userId: "u", consented: true, delivered: delivered, productType: type, credited: credited,
      used: used)
  }

  @Test func theShareIsWhatIsUsedOfWhatThePurchaseCredited() {
    #expect(facts(credited: 100, used: 30).milliunits == 30_000)
    #expect(facts(credited: 3, used: 1).milliunits == 33_334)
    #expect(facts(credited: 1_000_000, used: 1).milliunits == 1, "anything used is not nothing")
    #expect(facts(credited: 1_000_000, used: 999_999).milliunits == 99_999, "nor all of it")
    #expect(facts(credited: 100, used: 0).milliunits == 0)
    #expect(facts(credited: 100, used: 100).milliunits == 100_000)
    #expect(facts(delivered: false, credited: 100, used: 0).milliunits == 0)
    #expect(facts(type: .autoRenewable, credited: 0, used: 0).milliunits == nil)
    #expect(facts(type: .nonConsumable, credited: 0, used: 0).milliunits == nil)
  }

  @Test func byConsumptionFollowsTheShare() {
    let policy = ConsumptionPolicy(refundPreference: .byConsumption)
    #expect(policy.preference(milliunits: 0, subscription: false) == .grantFull)
    #expect(policy.preference(milliunits: 40_000, subscription: false) == .grantProrated)
    #expect(policy.preference(milliunits: 100_000, subscription: false) == .decline)
    #expect(policy.preference(milliunits: nil, subscription: true) == nil)
  }

  @Test func proratedWithNothingSpentIsAFullRefund() {
    let policy = ConsumptionPolicy(refundPreference: .grantProrated)
    #expect(policy.preference(milliunits: 0, subscription: false) == .grantFull)
    #expect(policy.preference(milliunits: 1, subscription: false) == .grantProrated)
    #expect(policy.preference(milliunits: nil, subscription: true) == .grantProrated)
    #expect(ConsumptionPolicy().preference(milliunits: 50_000, subscription: false) == nil)
  }

  @Test func proratedNeverSendsAShareAppleRefuses() {
    // Apple takes GRANT_PRORATED for a one-time purchase only with a share in (0, 100000).
    let policy = ConsumptionPolicy(refundPreference: .grantProrated)
    #expect(policy.preference(milliunits: 100_000, subscription: false) == .decline)
    #expect(policy.preference(milliunits: 99_999, subscription: false) == .grantProrated)
    #expect(policy.preference(milliunits: nil, subscription: false) == nil)
  }
}
