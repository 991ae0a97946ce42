import Postgres

/// What Storekeeper must tell Google once a purchase is credited, or Google refunds it after
/// three days: a consumable is consumed (so it can be bought again), another one-time product
/// acknowledged, a subscription acknowledged through `purchases.subscriptions`.
package enum GoogleAcknowledgementAction: String, Sendable, PostgresEnum {
  case acknowledge
  case consume
  case acknowledgeSubscription = "acknowledge_subscription"

  /// What `purchase` of `product` still needs; nil when Google has it already.
  static func needed(for purchase: GooglePurchase, product: Product) -> Self? {
    switch purchase.kind {
    case .subscription: return purchase.acknowledged ? nil : .acknowledgeSubscription
    case .product:
      if product.type == .consumable { return purchase.consumed ? nil : .consume }
      return purchase.acknowledged ? nil : .acknowledge
    }
  }
}
