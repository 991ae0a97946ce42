import Postgres

/// A Google Play purchase as the domain sees it once the Developer API has answered for it:
/// a one-time product (`purchases.products.get`) or a subscription (`subscriptionsv2.get`).
package struct GooglePurchase: Sendable, Equatable {
  package enum Kind: String, Sendable, PostgresEnum {
    case product
    case subscription
  }

  package var token: String
  package var packageName: String
  package var kind: Kind
  /// The id Google knows the product by (the subscription id for a subscription).
  package var googleProductId: String
  package var basePlanId: String?
  /// Google's `orderId` (`GPA.…`); for a subscription, its line item's latest successful order.
  /// Falls back to the token when Google names none, so an order always has a transaction id.
  package var orderId: String
  package var quantity: Int32
  package var obfuscatedAccountId: String?
  /// A license tester's purchase: sandbox money, handled as `SANDBOX_POLICY` says.
  package var isTest: Bool
  package var purchaseTimeMs: Int64
  package var expiryTimeMs: Int64?
  package var linkedPurchaseToken: String?
  /// `purchased` for a one-time product; the `subscriptionState` for a subscription.
  package var state: String
  package var acknowledged: Bool
  package var consumed: Bool
  /// What Google bills for it, in micros of `currency`, when its answer says: a subscription's
  /// recurring price (`subscriptionsv2`). `purchases.products` reports no price, so a one-time
  /// product has none (docs/CHARTS.md).
  package var priceMicros: Int64? = nil
  package var currency: String? = nil
  /// When Google says it became PURCHASED (`productsv2`'s `purchaseCompletionTime`), read only
  /// for a one-time product bought more than a day before it is credited
  /// (`GooglePurchaseVerifier.completion`): Google's three days to acknowledge start there.
  package var completedAtMs: Int64? = nil

  /// The ledger's and the order's spelling of who paid.
  package var environment: String { isTest ? "Sandbox" : "Production" }
}
