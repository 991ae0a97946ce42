import AppStore

/// What a consumption answer says beyond the ledger's facts: `CONSUMPTION_REFUND_PREFERENCE`
/// and `CONSUMPTION_SAMPLE_CONTENT_PROVIDED`.
package struct ConsumptionPolicy: Sendable, Equatable {
  package enum RefundPreference: String, Sendable, CaseIterable {
    /// Say nothing about a preference.
    case none
    case decline
    case grantFull = "grant_full"
    case grantProrated = "grant_prorated"
    /// From the share spent: nothing spent asks for a full refund, all of it declines, a part
    /// asks for a prorated one; left out when the share is not known.
    case byConsumption = "by_consumption"
  }

  package var refundPreference: RefundPreference = .none
  package var sampleContentProvided = false

  package init(refundPreference: RefundPreference = .none, sampleContentProvided: Bool = false) {
    self.refundPreference = refundPreference
    self.sampleContentProvided = sampleContentProvided
  }

  /// Apple's preference for a purchase whose consumed share is `milliunits` (nil: not known or
  /// not Apple's to be told, as for a subscription). Apple wants a share above 0 and below
  /// 100000 with `GRANT_PRORATED` for a one-time purchase (a subscription gets none): with
  /// nothing consumed, prorated is in full; with all of it, prorated is nothing (decline); with
  /// the share not known, no preference is said.
  func preference(milliunits: Int32?, subscription: Bool) -> ConsumptionInformation
    .RefundPreference?
  {
    switch refundPreference {
    case .none: return nil
    case .decline: return .decline
    case .grantFull: return .grantFull
    case .grantProrated:
      if subscription { return .grantProrated }
      guard let milliunits else { return nil }
      if milliunits == 0 { return .grantFull }
      if milliunits >= ConsumptionInformation.wholeMilliunits { return .decline }
      return .grantProrated
    case .byConsumption:
      guard let milliunits else { return nil }
      if milliunits == 0 { return .grantFull }
      if milliunits >= ConsumptionInformation.wholeMilliunits { return .decline }
      return .grantProrated
    }
  }
}
