import Postgres

/// What Storekeeper must tell Google once a purchase is credited, or Google refunds it after
/// three days: a one-time product that can be bought again (a consumable, a non-renewing pass)
/// is consumed, since Google sells a product again only once it is; a non-consumable is
/// acknowledged (consumed, it could be bought twice); a subscription acknowledged through
/// `purchases.subscriptions`.
package enum GoogleAcknowledgementAction: String, Sendable, PostgresEnum {
  case acknowledge
  case consume
  case acknowledgeSubscription = "acknowledge_subscription"

  /// What `purchase` of `product` still needs; nil when Google has it already.
  static func needed(for purchase: GooglePurchase, product: Product) -> Self? {
    switch purchase.kind {
    case .subscription: return purchase.acknowledged ? nil : .acknowledgeSubscription
    case .product:
      if product.type == .consumable || product.type == .nonRenewing {
        return purchase.consumed ? nil : .consume
      }
      return purchase.acknowledged ? nil : .acknowledge
    }
  }
}
