/// `acknowledgementState` of `SubscriptionPurchaseV2` (a string enum there, unlike the integer
/// of `ProductPurchase`).
public enum SubscriptionAcknowledgementState: String, Sendable, CaseIterable {
  case unspecified = "ACKNOWLEDGEMENT_STATE_UNSPECIFIED"
  case pending = "ACKNOWLEDGEMENT_STATE_PENDING"
  case acknowledged = "ACKNOWLEDGEMENT_STATE_ACKNOWLEDGED"
}
