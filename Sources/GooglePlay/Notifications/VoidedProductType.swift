/// `productType` of a `VoidedPurchaseNotification`.
public enum VoidedProductType: Int, Sendable, CaseIterable {
  case subscription = 1
  case oneTime = 2
}

/// `refundType` of a `VoidedPurchaseNotification`.
public enum VoidedRefundType: Int, Sendable, CaseIterable {
  case fullRefund = 1
  /// Part of a multi-quantity purchase; `voidedQuantity` in the voided purchases list says how
  /// many.
  case quantityBasedPartialRefund = 2
}
