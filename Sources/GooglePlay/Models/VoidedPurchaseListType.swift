/// `type` of `purchases.voidedpurchases.list`.
public enum VoidedPurchaseListType: Int, Sendable {
  /// Google's default: one-time products only.
  case oneTimeProductsOnly = 0
  /// One-time products and subscriptions: what a server granting both must ask for.
  case includingSubscriptions = 1
}
