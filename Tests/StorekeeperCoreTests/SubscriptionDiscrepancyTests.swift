import AppStore
import Testing

@testable import StorekeeperCore

/// Where Storekeeper's record of a subscription disagrees with Apple's status, rule by rule.
@Suite struct SubscriptionDiscrepancyTests {
  static let day: Int64 = 86_400_000
  static let now: Int64 = 1_800_000_000_000

  static func transaction(
    _ id: String = "2", expires: Int64? = now + 30 * day, revoked: Int64? = nil
  ) -> VerifiedTransaction {
    VerifiedTransaction(
      transactionId: id, originalTransactionId: "1", bundleId: "b", productId: "vip",
      quantity: 1, purchaseDate: now, expiresDate: expires, revocationDate: revoked,
      environment: "Production")
  }

  static func stored(
    _ transactions: [String: StoredSubscription.Transaction] = [
      "2": .init(expiresMs: now + 30 * day)
    ], status: StorekeeperCore.SubscriptionStatus? = nil, grace: Int64? = nil
  ) -> StoredSubscription {
    StoredSubscription(
      originalTransactionId: "1", userId: "u", transactions: transactions, status: status,
      graceMs: grace)
  }

  static func apple(
    _ latest: VerifiedTransaction = transaction(), _ status: AppStore.SubscriptionStatus = .active,
    grace: Int64? = nil, family: Bool = false
  ) -> AppleSubscription {
    AppleSubscription(latest: latest, status: status, graceMs: grace, familyShared: family)
  }

  @Test func agreementNeedsNoRepair() {
    #expect(SubscriptionDiscrepancy.repairs(stored: Self.stored(), apple: Self.apple()).isEmpty)
    // Expired while Apple still retries billing: what GRACE_PERIOD_EXPIRED leaves.
    let lapsed = Self.transaction(expires: Self.now - Self.day)
    #expect(
      SubscriptionDiscrepancy.repairs(
        stored: Self.stored(["2": .init(expiresMs: Self.now - Self.day)], status: .expired),
        apple: Self.apple(lapsed, .billingRetry)
      ).isEmpty)
  }

  @Test func aLostExpiryAfterABillingRetryIsRepaired() {
    let lapsed = Self.transaction(expires: Self.now - Self.day)
    #expect(
      SubscriptionDiscrepancy.repairs(
        stored: Self.stored(["2": .init(expiresMs: Self.now - Self.day)], status: .billingRetry),
        apple: Self.apple(lapsed, .expired))
        == [.stateChanged(was: .billingRetry, wasGraceMs: nil, to: .expired, graceMs: nil)])
  }

  @Test func aRefundOrFamilyRevocationIsTakenBack() {
    let refunded = Self.transaction(revoked: Self.now)
    #expect(
      SubscriptionDiscrepancy.repairs(stored: Self.stored(), apple: Self.apple(refunded, .revoked))
        == [.revoked(refunded, .refunded, wasExpiresMs: Self.now + 30 * Self.day)])
    #expect(
      SubscriptionDiscrepancy.repairs(
        stored: Self.stored(), apple: Self.apple(refunded, .revoked, family: true)
      ).map(\.kind)
        == ["revoked"])
    let reversed = SubscriptionDiscrepancy.repairs(
      stored: Self.stored(["2": .init(expiresMs: Self.now + 30 * Self.day, revocationMs: Self.now)]
      ),
      apple: Self.apple())
    #expect(reversed == [.refundReversed(Self.transaction(), wasRevocationMs: Self.now)])
  }

  @Test func anUnknownPeriodIsARenewalAndAnUnknownRevokedOneIsNothing() {
    let renewal = Self.transaction("3", expires: Self.now + 60 * Self.day)
    #expect(
      SubscriptionDiscrepancy.repairs(
        stored: Self.stored(status: .billingRetry), apple: Self.apple(renewal))
        == [.renewed(renewal)])
    #expect(
      SubscriptionDiscrepancy.repairs(
        stored: Self.stored(), apple: Self.apple(Self.transaction("3", revoked: Self.now), .revoked)
      ).isEmpty)
  }

  @Test func anExpiryCutShortOrExtendedAndAGracePeriodAreApplied() {
    let cut = Self.transaction(expires: Self.now - 60_000)
    #expect(
      SubscriptionDiscrepancy.repairs(stored: Self.stored(), apple: Self.apple(cut, .expired))
        == [
          .expiryChanged(cut, wasMs: Self.now + 30 * Self.day),
          .stateChanged(was: nil, wasGraceMs: nil, to: .expired, graceMs: nil),
        ])
    let grace = Self.now + 3 * Self.day
    #expect(
      SubscriptionDiscrepancy.repairs(
        stored: Self.stored(), apple: Self.apple(cut, .billingGracePeriod, grace: grace)
      ).last == .stateChanged(was: nil, wasGraceMs: nil, to: .gracePeriod, graceMs: grace))
    // The same grace period already held: only a different end is a repair.
    let held = Self.stored(
      ["2": .init(expiresMs: Self.now - 60_000)], status: .gracePeriod, grace: grace)
    #expect(
      SubscriptionDiscrepancy.repairs(
        stored: held, apple: Self.apple(cut, .billingGracePeriod, grace: grace)
      ).isEmpty)
    #expect(
      SubscriptionDiscrepancy.repairs(stored: held, apple: Self.apple(cut, .expired)).map(\.kind)
        == ["state_changed"])
  }
}
